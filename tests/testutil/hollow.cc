// Hollow checkpoint writer (see hollow.h). Headers are built with nlohmann::json in the
// layout the reference writer uses (8-byte length, JSON padded with spaces to 8 bytes).
#include "testutil/hollow.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace vramfit::testing {

uint64_t HollowBytes(const HollowTensor& t) {
  uint64_t n = 1;
  for (uint64_t d : t.shape) n *= d;
  return n * static_cast<uint64_t>(DtypeBits(t.dtype)) / 8;
}

uint64_t WriteHollowSafetensors(const std::string& path, const std::vector<HollowTensor>& tensors) {
  // Written directly (nlohmann's ordered_json inserts in linear time per key).
  std::string text = R"({"__metadata__":{"format":"pt"})";
  uint64_t offset = 0;
  for (const HollowTensor& t : tensors) {
    const uint64_t bytes = HollowBytes(t);
    text += fmt::format(R"(,{}:{{"dtype":"{}","shape":[{}],"data_offsets":[{},{}]}})",
                        nlohmann::json(t.name).dump(), DtypeName(t.dtype), fmt::join(t.shape, ","),
                        offset, offset + bytes);
    offset += bytes;
  }
  text += "}";
  while (text.size() % 8 != 0) text.push_back(' ');
  const uint64_t n = text.size();
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << prefix << text;
    if (!out) throw std::runtime_error("cannot write " + path);
  }
  if (::truncate(path.c_str(), static_cast<off_t>(8 + n + offset)) != 0) {
    throw std::runtime_error("cannot extend " + path);
  }
  return n;
}

void WriteHollowCheckpoint(const std::string& dir, const std::vector<HollowTensor>& tensors,
                           int shards) {
  std::filesystem::create_directories(dir);
  if (shards <= 1) {
    WriteHollowSafetensors(dir + "/model.safetensors", tensors);
    return;
  }
  nlohmann::json index;
  uint64_t total = 0;
  const size_t per = (tensors.size() + shards - 1) / shards;
  for (int s = 0; s < shards; ++s) {
    const std::string name = fmt::format("model-{:05d}-of-{:05d}.safetensors", s + 1, shards);
    std::vector<HollowTensor> part;
    for (size_t i = s * per; i < tensors.size() && i < (s + 1) * per; ++i) {
      part.push_back(tensors[i]);
      index["weight_map"][tensors[i].name] = name;
      total += HollowBytes(tensors[i]);
    }
    WriteHollowSafetensors(dir + "/" + name, part);
  }
  index["metadata"]["total_size"] = total;
  WriteText(dir + "/model.safetensors.index.json", index.dump(2));
}

std::string SafetensorsImage(const std::string& header, uint64_t data_bytes) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + std::string(data_bytes, '\0');
}

std::string OneByteTensorsImage(size_t n) {
  std::string h = "{";
  for (size_t i = 0; i < n; ++i) {
    h += fmt::format("{}\"t{}\":{{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[{},{}]}}",
                     i ? "," : "", i, i, i + 1);
  }
  return SafetensorsImage(h + "}", n);
}

std::map<std::string, std::string> NamesInTwoShards(size_t n) {
  std::string index = R"({"weight_map":{"first":"a.safetensors")";
  std::string a = R"({"first":{"dtype":"U8","shape":[0],"data_offsets":[0,0]})";
  std::string b = "{";
  for (size_t i = 0; i < n; ++i) {
    index += fmt::format(R"(,"t{}":"b.safetensors")", i);
    const std::string t =
        fmt::format(R"("t{}":{{"dtype":"U8","shape":[1],"data_offsets":[{},{}]}})", i, i, i + 1);
    a += "," + t;
    b += (i ? "," : "") + t;
  }
  return {{"model.safetensors.index.json", index + "}}"},
          {"a.safetensors", SafetensorsImage(a + "}", n)},
          {"b.safetensors", SafetensorsImage(b + "}", n)}};
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string MakeTempDir(const std::string& tag) {
  std::string templ =
      (std::filesystem::temp_directory_path() / ("vramfit-" + tag + "-XXXXXX")).string();
  if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return templ;
}

}  // namespace vramfit::testing
