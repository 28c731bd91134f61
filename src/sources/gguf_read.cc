// GGUF headers over a ByteSource (see gguf_read.h): a first bounded read, then more only as
// the parser asks; split sets read part by part and checked against their split.* keys
// (llama.cpp gguf-split: split.no is 0-based, split.count the parts, split.tensors.count the
// tensors of the whole set).
#include "sources/gguf_read.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/text.h"

namespace vramfit {
namespace {

bool ContainsNoCase(std::string_view s, std::string_view x) {
  return std::search(s.begin(), s.end(), x.begin(), x.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         }) != s.end();
}

// A split part's split.* key as an integer, or an error naming the part and the key.
Result<int64_t> SplitKey(const GgufFile& f, std::string_view key) {
  int64_t v = 0;
  if (!f.Int(key, &v)) {
    return Status::Corrupt(fmt::format("{}: a split part without an integer {}", f.origin, key));
  }
  return v;
}

Status CheckPart(const GgufFile& f, int index, int count) {
  auto no = SplitKey(f, "split.no");
  if (!no.ok()) return no.status();
  auto n = SplitKey(f, "split.count");
  if (!n.ok()) return n.status();
  if (*no != index || *n != count) {
    return Status::Corrupt(fmt::format(
        "{}: split.no {} and split.count {}, expected {} and {} from the file name", f.origin,
        *no, *n, index, count));
  }
  return Status::Ok();
}

}  // namespace

bool IsMmprojName(std::string_view name) {
  return ContainsNoCase(name, "mmproj") && name.ends_with(".gguf");
}

Result<GgufFile> ReadGgufHeader(const ByteSource& src, std::string_view file,
                                uint64_t* bytes_read) {
  auto size = src.Size(file);
  if (!size.ok()) return size.status();
  const std::string label = src.NameOf(file);
  std::string buf;
  uint64_t want = std::min<uint64_t>(*size, kGgufFirstRead);
  while (true) {
    const size_t have = buf.size();
    buf.resize(static_cast<size_t>(want));
    VRAMFIT_RETURN_IF_ERROR(src.ReadAt(file, have, buf.size() - have, buf.data() + have));
    auto p = ParseGgufPrefix(buf, *size, label);
    if (!p.ok()) return p.status();
    if (p->need == 0) {
      if (bytes_read) *bytes_read = buf.size();
      return std::move(*p->file);
    }
    // The parser asked for more (never past the file or its header cap): at least double.
    want = std::min<uint64_t>(*size, std::max<uint64_t>(p->need, 2 * buf.size()));
    want = std::min<uint64_t>(want, std::max<uint64_t>(p->need, kGgufMaxHeader));
  }
}

Result<GgufModel> ReadGgufModel(const ByteSource& src, std::string_view file,
                                const std::vector<std::string>* listing) {
  GgufModel m;
  std::string prefix;
  int part = 0, count = 0;
  if (ParseGgufSplitName(file, &prefix, &part, &count)) {
    uint64_t tensors = 0;
    for (int i = 1; i <= count; ++i) {
      const std::string name = GgufSplitName(prefix, i, count);
      auto size = src.Size(name);
      if (!size.ok() && size.status().code() == Code::kNotFound) {
        return Status::NotFound(fmt::format("{}: part {} of {} of the split set, {}, does not "
                                            "exist", src.Where(file), i, count, name));
      }
      auto f = ReadGgufHeader(src, name);
      if (!f.ok()) return f.status();
      VRAMFIT_RETURN_IF_ERROR(CheckPart(*f, i - 1, count));
      tensors += f->tensors.size();
      m.parts.push_back(std::move(*f));
    }
    int64_t declared = 0;
    if (m.parts[0].Int("split.tensors.count", &declared) &&
        static_cast<uint64_t>(declared) != tensors) {
      return Status::Corrupt(fmt::format(
          "{}: split.tensors.count says {} tensors, but the {} parts hold {}",
          m.parts[0].origin, declared, count, tensors));
    }
    if (count > 1) m.notes.push_back(fmt::format("read all {} parts of the split set", count));
  } else {
    auto f = ReadGgufHeader(src, file);
    if (!f.ok()) return f.status();
    m.parts.push_back(std::move(*f));
  }
  if (listing != nullptr && !IsMmprojName(file)) {
    for (const std::string& name : *listing) {
      if (!IsMmprojName(name)) continue;
      auto f = ReadGgufHeader(src, name);
      if (!f.ok()) return f.status();
      m.notes.push_back(fmt::format("{}: a vision projector (mmproj) file, inspected with the "
                                    "model", core::Printable(name)));
      m.mmproj.push_back(std::move(*f));
    }
  }
  return m;
}

Result<std::string> FindGgufModelFile(const std::vector<std::string>& listing,
                                      std::string_view label) {
  std::vector<std::string> models;
  for (const std::string& name : listing) {
    if (!name.ends_with(".gguf") || IsMmprojName(name)) continue;
    std::string prefix;
    int part = 0, count = 0;
    if (ParseGgufSplitName(name, &prefix, &part, &count) && part != 1) continue;
    models.push_back(name);
  }
  if (models.empty()) return std::string();
  if (models.size() > 1) {
    std::string names;
    for (const auto& n : models) names += (names.empty() ? "" : ", ") + core::Printable(n);
    return Status::InvalidArgument(fmt::format(
        "{}: holds {} GGUF models ({}); name the file to inspect", label, models.size(), names));
  }
  return models[0];
}

}  // namespace vramfit
