// ReadCheckpoint (see checkpoint.h): the layout of a transformers-format checkpoint over any
// ByteSource, the headers of the files it names, and the index checked against them.
#include "sources/checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <system_error>
#include <thread>

#include "core/string_set.h"
#include "core/text.h"
#include "core/units.h"
#include "formats/safetensors_index.h"

namespace vramfit {
namespace {

constexpr std::string_view kIndexName = "model.safetensors.index.json";
constexpr std::string_view kSingleName = "model.safetensors";
constexpr std::string_view kPreprocessorName = "preprocessor_config.json";

bool EndsWith(std::string_view s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

bool StartsWith(std::string_view s, std::string_view pre) { return s.rfind(pre, 0) == 0; }

// A whole small file (config.json, an index), refused above `limit` bytes.
Result<std::string> ReadSmall(const ByteSource& src, std::string_view name, uint64_t limit) {
  auto size = src.Size(name);
  if (!size.ok()) return size.status();
  if (*size > limit) {
    return Status::Corrupt(
        fmt::format("{}: {} bytes is larger than the {} this kind of file may have",
                    src.Where(name), *size, core::FormatBytes(limit)));
  }
  std::string data(*size, '\0');
  VRAMFIT_RETURN_IF_ERROR(src.ReadAt(name, 0, data.size(), data.data()));
  return data;
}

// One safetensors file's header: the 8-byte length, then the JSON header.
Result<SafetensorsFile> ReadHeader(const ByteSource& src, std::string_view name) {
  auto size = src.Size(name);
  if (!size.ok()) return size.status();
  const std::string label = src.NameOf(name);
  char prefix[kSafetensorsPrefix] = {};
  const size_t first = *size < kSafetensorsPrefix ? static_cast<size_t>(*size) : sizeof prefix;
  VRAMFIT_RETURN_IF_ERROR(src.ReadAt(name, 0, first, prefix));
  auto n = ParseSafetensorsHeaderLength(std::string_view(prefix, first), *size, label);
  if (!n.ok()) return n.status();
  // The header buffer lives only while its header is parsed: one header in memory at a time.
  std::string buf(kSafetensorsPrefix + *n, '\0');
  std::copy(prefix, prefix + kSafetensorsPrefix, buf.begin());
  VRAMFIT_RETURN_IF_ERROR(src.ReadAt(name, kSafetensorsPrefix, *n, buf.data() + 8));
  return ParseSafetensors(buf, *size, label);
}

// The headers of `names`, read and parsed on up to four threads at once (a ByteSource may be
// read from several threads), in `names` order. Each result is what ReadHeader gives, so the
// caller reports errors in file order, as one thread would. Reading stops once the files read
// hold more than `max_tensors` (the caller's AddFile then refuses within them): what is read is
// always a prefix of `names`, and the rest stay empty.
std::vector<std::optional<Result<SafetensorsFile>>> ReadHeaders(
    const ByteSource& src, const std::vector<std::string>& names, uint64_t max_tensors) {
  std::vector<std::optional<Result<SafetensorsFile>>> out(names.size());
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> tensors{0};
  const auto work = [&] {
    for (size_t i = next++; i < names.size() && tensors <= max_tensors; i = next++) {
      out[i].emplace(ReadHeader(src, names[i]));
      if (out[i]->ok()) tensors += (*out[i])->tensors.size();
    }
  };
  const size_t threads = std::min<size_t>({names.size(), std::thread::hardware_concurrency(), 4});
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no thread to be had: this one reads the rest
    }
  }
  work();
  for (auto& t : pool) t.join();
  return out;
}

// Adds a file's header to the checkpoint, refusing one that takes the whole past the cap.
Status AddFile(SafetensorsFile file, uint64_t max_tensors, Checkpoint* out) {
  uint64_t total = file.tensors.size();
  for (const auto& f : out->files) total += f.tensors.size();
  if (total > max_tensors) {
    return Status::Corrupt(fmt::format(
        "{}: the checkpoint holds more than {} tensors with this file ({} in all); no real "
        "model has that many, and reading more would cost gigabytes", file.origin,
        core::GroupDigits(max_tensors), core::GroupDigits(total)));
  }
  out->files.push_back(std::move(file));
  return Status::Ok();
}

// A sharded checkpoint: the index, then every shard it names, each checked against the index
// as it is read. Linear in the tensors: one hash lookup per shard tensor into the index, a bit
// per index entry for "found in its shard".
Status ReadSharded(const ByteSource& src, uint64_t max_tensors, Checkpoint* out) {
  auto text = ReadSmall(src, kIndexName, kMaxIndexBytes);
  if (!text.ok()) return text.status();
  const std::string index_name = src.NameOf(kIndexName);
  // The index with the lookup of its names the reader built: one lookup a shard tensor.
  SafetensorsIndex parsed;
  formats::IndexLookup indexed(&parsed);
  VRAMFIT_RETURN_IF_ERROR(formats::ReadSafetensorsIndex(
      *text, index_name, formats::IndexReader::kFastFirst, &parsed, &indexed));
  const SafetensorsIndex* const index = &parsed;
  text->clear();
  text->shrink_to_fit();
  const auto& map = index->weight_map;
  std::vector<bool> found(map.size(), false);
  // Room for every shard up front: a parsed file's tensor list (a deque) is copied, not moved,
  // when the vector grows.
  out->files.reserve(out->files.size() + index->shards.size());
  VRAMFIT_RETURN_IF_ERROR(src.PrefetchHeaders(index->shards));
  auto headers = ReadHeaders(src, index->shards, max_tensors);
  uint64_t data = 0, extra = 0, extra_bytes = 0;
  std::string first_extra;
  for (size_t si = 0; si < index->shards.size(); ++si) {
    const std::string& shard = index->shards[si];
    auto size = src.Size(shard);
    if (!size.ok() && size.status().code() == Code::kNotFound) {
      const auto n = std::count_if(map.begin(), map.end(), [&](const auto& e) {
        return e.shard == si;
      });
      return Status::NotFound(
          fmt::format("{}: names shard \"{}\" ({} tensors), which does not exist in {}",
                      index_name, core::Printable(shard), n, src.Label()));
    }
    if (!headers[si]) return Status::Corrupt(shard + ": not read");  // never: see ReadHeaders
    Result<SafetensorsFile>& file = *headers[si];
    if (!file.ok()) return file.status();
    // Every indexed tensor must be in its shard; tensors the index does not name (or names
    // in another shard: a copy held by two shards) are reported.
    uint32_t next = 0;  // a guess: the entry after the one found before
    for (const TensorInfo& t : file->tensors) {
      data += t.bytes();
      uint32_t at = next;
      if (indexed.Find(t.name, &at) && map[at].shard == si) {
        found[at] = true;
        next = at + 1;
        continue;
      }
      if (extra++ == 0) {
        first_extra = fmt::format("\"{}\" in {}", core::Printable(t.name), file->origin);
      }
      extra_bytes += t.bytes();
    }
    VRAMFIT_RETURN_IF_ERROR(AddFile(std::move(*file), max_tensors, out));
  }
  for (size_t i = 0; i < map.size(); ++i) {
    if (found[i]) continue;
    return Status::Corrupt(
        fmt::format("{}: names tensor \"{}\" in shard \"{}\", but that shard's header does not "
                    "hold it", index_name, core::Printable(map[i].tensor),
                    core::Printable(index->shards[map[i].shard])));
  }
  if (extra > 0) {
    out->findings.push_back(
        {Severity::kWarning, "unindexed-tensors",
         fmt::format("{} tensors ({}) are in shards but not in {} (first: {}); "
                     "loaders that follow the index skip them",
                     extra, core::FormatBytes(extra_bytes), index_name, first_extra),
         extra_bytes});
  }
  if (index->has_total_size && index->total_size != data) {
    const double pct =
        data ? 100.0 * (static_cast<double>(index->total_size) - data) / data : 0.0;
    out->findings.push_back(
        {Severity::kWarning, "index-total-size",
         fmt::format("{} says total_size {} but the shards' headers hold {} data "
                     "bytes ({:+.3f}%); the headers are what counts",
                     index_name, index->total_size, data, pct),
         data});
  }
  return Status::Ok();
}

// The weights the layout names, and notes on the copies it skips.
Status ReadLayout(const ByteSource& src, const std::vector<std::string>& listing,
                  uint64_t max_tensors, Checkpoint* out) {
  auto listed = [&](std::string_view name) {
    return std::binary_search(listing.begin(), listing.end(), name);
  };
  if (listed(kIndexName)) {
    out->has_weights = true;
    VRAMFIT_RETURN_IF_ERROR(ReadSharded(src, max_tensors, out));
  } else if (listed(kSingleName)) {
    out->has_weights = true;
    auto f = ReadHeader(src, kSingleName);
    if (!f.ok()) return f.status();
    VRAMFIT_RETURN_IF_ERROR(AddFile(std::move(*f), max_tensors, out));
  } else {
    std::vector<std::string> found;
    for (const std::string& name : listing) {
      if (EndsWith(name, ".safetensors") && !StartsWith(name, "consolidated")) {
        found.push_back(name);
      }
    }
    VRAMFIT_RETURN_IF_ERROR(src.PrefetchHeaders(found));
    out->files.reserve(out->files.size() + found.size());
    auto headers = ReadHeaders(src, found, max_tensors);
    for (auto& h : headers) {
      out->has_weights = true;
      if (!h) return Status::Corrupt("a header was not read");  // never: see ReadHeaders
      Result<SafetensorsFile>& f = *h;
      if (!f.ok()) return f.status();
      VRAMFIT_RETURN_IF_ERROR(AddFile(std::move(*f), max_tensors, out));
    }
    if (found.size() > 1) {
      out->notes.push_back(fmt::format(
          "no model.safetensors.index.json: read all {} .safetensors files", found.size()));
    }
  }
  // Copies of the weights in other layouts are not part of the transformers checkpoint.
  for (const std::string& name : listing) {
    if (name == "original/" ||
        (StartsWith(name, "consolidated") && EndsWith(name, ".safetensors"))) {
      out->notes.push_back(fmt::format(
          "ignored {}: a copy of the weights in another layout, not loaded by "
          "transformers-format engines",
          name));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Checkpoint> ReadCheckpoint(const ByteSource& source, const CheckpointRequest& request) {
  Checkpoint out;
  out.config_origin = source.NameOf(request.config_file);
  auto config_size = source.Size(request.config_file);
  if (config_size.ok() || config_size.status().code() != Code::kNotFound) {
    auto text = ReadSmall(source, request.config_file, kMaxConfigBytes);
    if (!text.ok()) return text.status();
    out.config_json = std::move(*text);
  }
  // The image processor's settings, where the checkpoint has them (vision models).
  if (request.config_file == "config.json") {
    auto pre_size = source.Size(kPreprocessorName);
    if (pre_size.ok()) {
      auto text = ReadSmall(source, kPreprocessorName, kMaxConfigBytes);
      if (!text.ok()) return text.status();
      out.preprocessor_json = std::move(*text);
      out.preprocessor_origin = source.NameOf(kPreprocessorName);
    } else if (pre_size.status().code() != Code::kNotFound) {
      return pre_size.status();
    }
  }
  switch (request.weights) {
    case CheckpointRequest::Weights::kNone:
      break;
    case CheckpointRequest::Weights::kOneFile: {
      auto f = ReadHeader(source, request.weights_file);
      if (!f.ok()) return f.status();
      VRAMFIT_RETURN_IF_ERROR(AddFile(std::move(*f), request.max_tensors, &out));
      out.has_weights = true;
      break;
    }
    case CheckpointRequest::Weights::kLayout: {
      auto listing = source.List();
      if (!listing.ok()) return listing.status();
      VRAMFIT_RETURN_IF_ERROR(ReadLayout(source, *listing, request.max_tensors, &out));
      break;
    }
  }
  return out;
}

}  // namespace vramfit
