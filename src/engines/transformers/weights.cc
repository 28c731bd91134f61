// Weights by unit and accelerate's placement (see weights.h). Placement follows
// accelerate/utils/modeling.py (accelerate 1.x: get_max_memory, get_balanced_memory,
// infer_auto_device_map) as transformers 5.0 restates it in integrations/accelerate.py
// (_get_device_map), and modeling_utils.py _get_device_map in 4.57.
#include "engines/transformers/weights.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "core/checked.h"
#include "core/text.h"
#include "core/units.h"
#include "model/roles.h"

namespace vramfit::transformers {
namespace {

// Linear layers a quantize-on-load quantizer converts (replace_with_bnb_linear,
// replace_with_fbgemm_fp8_linear convert every nn.Linear outside modules_to_not_convert; the
// output embedding is added to that list by get_keys_to_not_convert).
bool Convertible(Role r) {
  switch (r) {
    case Role::kAttnProj: case Role::kMlaProj: case Role::kLinearAttnProj: case Role::kMlpProj:
    case Role::kExpertProj: case Role::kSharedExpertProj: case Role::kRouter: case Role::kVision:
    case Role::kProjector:
      return true;
    default:
      return false;
  }
}

bool IsFloat(Dtype d) {
  return d == Dtype::kF16 || d == Dtype::kBF16 || d == Dtype::kF32 || d == Dtype::kF64;
}

// bitsandbytes 4-bit: two values a byte and an fp32 absmax per block of 64
// (bitsandbytes functional.quantize_4bit, blocksize 64; bnb_4bit_use_double_quant defaults to
// False in BitsAndBytesConfig).
constexpr uint64_t kBnb4Block = 64;

// The unit of a vision tensor: "visual.blocks.12" for a block, the tower's prefix otherwise.
std::string VisionUnit(std::string_view name) {
  for (std::string_view key : {".blocks.", ".layers.", ".layer."}) {
    const size_t at = name.find(key);
    if (at == std::string_view::npos) continue;
    size_t end = at + key.size();
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
    if (end > at + key.size()) return std::string(name.substr(0, end));
  }
  const size_t dot = name.find('.');
  return std::string(name.substr(0, dot == std::string_view::npos ? name.size() : dot));
}

}  // namespace

LoadedWeights LoadWeights(const Inventory& inv, Quantizer q, uint64_t dtype_bytes) {
  // Units by kind, then merged in module order.
  std::vector<Unit> vision, layers, tail;
  std::map<std::string, size_t> vision_at;
  Unit embed{"model.embed_tokens"}, norm{"model.norm"}, lm_head{"lm_head"}, other{"other"};
  const std::string layer_prefix = inv.spec.naming.layers;
  for (const TensorEntry& e : inv.tensors) {
    if (e.role == Role::kMtp) continue;  // not part of the model class
    const TensorInfo& t = e.info;
    uint64_t bytes = t.bytes();
    uint64_t transient = 0;
    if (!e.quantized && e.part != Part::kQuantMeta && IsFloat(t.dtype)) {
      bytes = SatMul(t.elements, dtype_bytes);
      const bool convert = (q == Quantizer::kBnb4 || q == Quantizer::kBnb8 ||
                            q == Quantizer::kFbgemmFp8) &&
                           Convertible(e.role) && e.part == Part::kWeight && t.shape.size() == 2;
      // A projection the config declares AWQ/GPTQ but the checkpoint stores in 16 bits: the
      // model is built with the packed layer (replace_with_awq_linear / the GPTQ QuantLinear)
      // from quantization_config, and the stored .weight is dropped as an unexpected key.
      const QuantScheme& qs = inv.spec.quant;
      if (q == Quantizer::kPrequantized && e.part == Part::kWeight && t.shape.size() == 2 &&
          (qs.method == QuantMethod::kAwq || qs.method == QuantMethod::kGptq) &&
          model::IsCountedLinear(e.role) && QuantSchemeCovers(qs, e.module())) {
        const uint64_t bits = static_cast<uint64_t>(QuantSchemeBits(qs, e.module()));
        const uint64_t n = t.shape[0], k = t.shape[1];
        const uint64_t groups = qs.group_size > 0 ? core::CeilDiv(k, qs.group_size) : 1;
        // qweight (bits per value), qzeros (bits per group and column), scales (16 bits).
        bytes = t.elements * bits / 8 + groups * n * bits / 8 + groups * n * 2;
      }
      if (convert) {
        const uint64_t rows = t.shape[0];
        transient = bytes;  // the 16-bit weight on the GPU while it is quantized
        if (q == Quantizer::kBnb4) {
          bytes = (t.elements + 1) / 2 + core::CeilDiv(t.elements, kBnb4Block) * 4;
        } else {
          bytes = t.elements + rows * 4;
        }
      }
    }
    Unit* u = nullptr;
    if (e.role == Role::kVision || e.role == Role::kProjector) {
      const std::string name = VisionUnit(t.name);
      auto it = vision_at.find(name);
      if (it == vision_at.end()) {
        it = vision_at.emplace(name, vision.size()).first;
        vision.push_back({name});
        vision.back().vision = true;
      }
      u = &vision[it->second];
    } else if (e.layer >= 0) {
      const size_t i = static_cast<size_t>(e.layer);
      if (layers.size() <= i) layers.resize(i + 1);
      u = &layers[i];
      if (u->name.empty()) {
        u->name = layer_prefix + std::to_string(e.layer);
        u->layer = e.layer;
      }
    } else if (e.role == Role::kEmbedding) {
      u = &embed;
    } else if (e.role == Role::kLmHead) {
      u = &lm_head;
    } else if (e.role == Role::kNorm) {
      u = &norm;
    } else {
      u = &other;
    }
    u->bytes = SatAdd(u->bytes, bytes);
    u->largest_transient = std::max(u->largest_transient, transient);
  }
  LoadedWeights w;
  auto add = [&](Unit u) {
    if (u.bytes == 0 || u.name.empty()) return;
    w.total = SatAdd(w.total, u.bytes);
    w.units.push_back(std::move(u));
  };
  for (Unit& u : vision) add(std::move(u));
  add(std::move(embed));
  for (Unit& u : layers) add(std::move(u));
  add(std::move(norm));
  add(std::move(other));
  add(std::move(lm_head));
  return w;
}

namespace {

// accelerate's convert_file_size_to_int: "6GiB" binary, "6GB" decimal, "6Gb" bits; a bare
// number is bytes.
Result<uint64_t> ReadSize(const std::string& key, std::string_view text) {
  uint64_t v = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec == std::errc() && p == e) return v;
  auto s = core::ParseSize(text);
  if (!s.ok()) {
    return Status::InvalidArgument(fmt::format("--max-memory {}: \"{}\" is not a size (6GiB, "
                                               "6GB)", key, core::Printable(text)));
  }
  return *s;
}

Status AddEntry(GivenMaxMemory* out, std::string_view key, std::string_view value) {
  const std::string k(key);
  auto size = ReadSize(k, value);
  if (!size.ok()) return size.status();
  if (key == "cpu") {
    out->has_cpu = true;
    out->cpu = *size;
    return Status::Ok();
  }
  if (key == "disk") return Status::Ok();
  std::string_view n = key;
  if (n.rfind("cuda:", 0) == 0) n.remove_prefix(5);
  int gpu = 0;
  auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), gpu);
  if (ec != std::errc() || p != n.data() + n.size() || gpu < 0 || gpu > 64) {
    return Status::InvalidArgument(fmt::format(
        "--max-memory: key \"{}\" is not a GPU index (0, cuda:1), cpu or disk",
        core::Printable(key)));
  }
  out->gpu.emplace_back(gpu, *size);
  return Status::Ok();
}

}  // namespace

Result<GivenMaxMemory> ReadMaxMemory(const std::string& text) {
  GivenMaxMemory out;
  if (text.empty()) return out;
  if (text.size() > 4096) return Status::InvalidArgument("--max-memory: over 4096 characters");
  if (text.find('{') != std::string::npos) {
    simdjson::dom::parser parser;
    simdjson::dom::object obj;
    if (parser.parse(text).get(obj) != simdjson::SUCCESS) {
      return Status::InvalidArgument("--max-memory: expected a JSON object such as "
                                     "{\"0\": \"6GiB\", \"cpu\": \"30GiB\"}");
    }
    for (auto [key, value] : obj) {
      std::string v;
      if (value.is_string()) {
        v = std::string(std::string_view(value.get_string().value_unsafe()));
      } else if (value.is_uint64()) {
        v = std::to_string(uint64_t(value.get_uint64().value_unsafe()));
      } else {
        return Status::InvalidArgument(fmt::format("--max-memory {}: expected a size text",
                                                   core::Printable(key)));
      }
      if (Status s = AddEntry(&out, key, v); !s.ok()) return s;
    }
    return out;
  }
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t eq = item.find_first_of("=:");
    if (eq == std::string_view::npos || item.substr(0, eq) == "cuda") {
      // cuda:0=6GiB keeps its colon in the key.
      const size_t eq2 = item.find('=');
      if (eq2 == std::string_view::npos) {
        return Status::InvalidArgument(fmt::format(
            "--max-memory \"{}\": expected DEVICE=SIZE items (0=6GiB,cpu=30GiB)",
            core::Printable(item)));
      }
      if (Status s = AddEntry(&out, item.substr(0, eq2), item.substr(eq2 + 1)); !s.ok()) return s;
      continue;
    }
    if (Status s = AddEntry(&out, item.substr(0, eq), item.substr(eq + 1)); !s.ok()) return s;
  }
  return out;
}

MaxMemory BalancedMemory(const LoadedWeights& w, const std::string& mode, int gpus, uint64_t free,
                         const GivenMaxMemory& given) {
  MaxMemory m;
  m.gpu.assign(static_cast<size_t>(gpus), free);
  const bool user_set = !given.gpu.empty() || given.has_cpu;
  for (const auto& [i, bytes] : given.gpu) {
    if (i < gpus) m.gpu[static_cast<size_t>(i)] = bytes;
  }
  // A GPU the user's max_memory leaves out gets nothing (get_max_memory keeps only the keys
  // given).
  if (!given.gpu.empty()) {
    for (int i = 0; i < gpus; ++i) {
      bool named = false;
      for (const auto& [j, b] : given.gpu) named |= j == i;
      if (!named) m.gpu[static_cast<size_t>(i)] = 0;
    }
  }
  if (given.has_cpu) m.cpu = given.cpu;
  if (mode == "sequential") return m;
  // get_balanced_memory: one GPU and no max_memory: 90% of the free memory for weights.
  if (gpus == 1) {
    if (!user_set) {
      m.gpu[0] = m.gpu[0] / 10 * 9;
      m.notes.push_back("device_map=\"auto\" on one GPU without max_memory: weights may take 90% "
                        "of the free memory (get_balanced_memory)");
    }
    return m;
  }
  const bool low_zero = mode == "balanced_low_0";
  uint64_t layer_max = 0, leaves = 0;
  for (const Unit& u : w.units) {
    if (u.layer >= 0) layer_max = std::max(layer_max, u.bytes);
    leaves = SatAdd(leaves, u.bytes);
  }
  // Buffer: 1.25 x the larger of a no-split block (a decoder layer) and the mean leaf module
  // (here the mean unit, which a decoder layer exceeds in every family modelled).
  const uint64_t mean = w.units.empty() ? 0 : leaves / w.units.size();
  const uint64_t buffer = std::max(layer_max, mean) / 4 * 5;
  const uint64_t per_gpu = w.total / static_cast<uint64_t>(low_zero ? gpus - 1 : gpus) + buffer;
  for (int i = 0; i + 1 < gpus; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (!(low_zero && i == 0)) m.gpu[k] = std::min(per_gpu, m.gpu[k]);
  }
  if (low_zero) {
    uint64_t rest = 0;
    for (int i = 1; i < gpus; ++i) rest = SatAdd(rest, m.gpu[static_cast<size_t>(i)]);
    m.gpu[0] = std::min(w.total > rest ? w.total - rest : 0, m.gpu[0]);
  }
  return m;
}

std::vector<int> InferDeviceMap(const LoadedWeights& w, const MaxMemory& m) {
  std::vector<int> devices;
  for (size_t i = 0; i < m.gpu.size(); ++i) devices.push_back(static_cast<int>(i));
  devices.push_back(kCpu);
  if (m.disk) devices.push_back(kDisk);
  std::vector<uint64_t> used(devices.size(), 0);
  std::vector<int> out(w.units.size(), kDisk);
  size_t d = 0;
  for (size_t i = 0; i < w.units.size(); ++i) {
    // The largest unit still to place: kept free on the main devices (GPU 0 and the CPU) for
    // offloaded layers brought in during forward.
    uint64_t largest = 0;
    for (size_t j = i; j < w.units.size(); ++j) largest = std::max(largest, w.units[j].bytes);
    while (d < devices.size()) {
      const int dev = devices[d];
      if (dev == kDisk) break;
      uint64_t cap = dev == kCpu ? m.cpu : m.gpu[static_cast<size_t>(dev)];
      if (dev == 0 || dev == kCpu) cap = cap > largest ? cap - largest : 0;
      if (used[d] + w.units[i].bytes <= cap) break;
      ++d;
    }
    if (d >= devices.size()) d = devices.size() - 1;
    out[i] = devices[d];
    used[d] = SatAdd(used[d], w.units[i].bytes);
  }
  return out;
}

namespace {

Result<int> DeviceOf(simdjson::dom::element v, int gpus, std::string_view key) {
  auto bad = [&] {
    return Status::InvalidArgument(fmt::format(
        "--device-map \"{}\": expected a GPU index, \"cuda:N\", \"cpu\" or \"disk\"",
        core::Printable(key)));
  };
  int64_t n = -1;
  if (v.is_int64()) {
    n = v.get_int64().value_unsafe();
  } else if (v.is_string()) {
    std::string_view s = v.get_string().value_unsafe();
    if (s == "cpu") return kCpu;
    if (s == "disk") return kDisk;
    if (s == "cuda") return 0;
    if (s.rfind("cuda:", 0) == 0) s.remove_prefix(5);
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc() || p != s.data() + s.size()) return bad();
  } else {
    return bad();
  }
  if (n < 0) return bad();
  if (n >= gpus) {
    return Status::InvalidArgument(fmt::format(
        "--device-map \"{}\": GPU {} but only {} GPU(s) are planned (--num-gpus)",
        core::Printable(key), n, gpus));
  }
  return static_cast<int>(n);
}

}  // namespace

Result<std::vector<int>> ExplicitDeviceMap(const LoadedWeights& w, const std::string& json,
                                           int gpus) {
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (json.size() > 1'000'000 || parser.parse(json).get(obj) != simdjson::SUCCESS) {
    return Status::InvalidArgument("--device-map: expected auto, balanced, balanced_low_0, "
                                   "sequential, a device (cuda:0, 0) or a JSON object "
                                   "{\"module\": device}");
  }
  std::vector<std::pair<std::string, int>> keys;
  for (auto [key, value] : obj) {
    auto dev = DeviceOf(value, gpus, key);
    if (!dev.ok()) return dev.status();
    keys.emplace_back(std::string(key), *dev);
  }
  std::vector<int> out;
  for (const Unit& u : w.units) {
    int best = -3;
    size_t best_len = 0;
    for (const auto& [k, dev] : keys) {
      // The unit is the key, inside it ("model" covers "model.layers.0"), or the key is inside
      // the unit (the first of the unit's submodules decides).
      const bool covers = k.empty() || u.name == k || u.name.rfind(k + ".", 0) == 0 ||
                          k.rfind(u.name + ".", 0) == 0;
      if (covers && (best == -3 || k.size() >= best_len)) {
        best = dev;
        best_len = k.size();
      }
    }
    if (best == -3) {
      return Status::InvalidArgument(fmt::format(
          "--device-map: no entry covers {} (transformers raises: the device_map provided does "
          "not give any device for the following parameters)", u.name));
    }
    out.push_back(best);
  }
  return out;
}

}  // namespace vramfit::transformers
