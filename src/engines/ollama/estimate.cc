// Ollama's static memory estimate (see ollama.h): what it reads of a GGUF file, the KV cache
// and graph sizes of fs/ggml/ggml.go GraphSize, and the layer placement of llm/memory.go
// estimateGPULayers, all at Ollama v0.12.10. Arithmetic is in unsigned 64-bit integers in the
// order Ollama writes it (its integer divisions truncate where it truncates).
#include <algorithm>
#include <charconv>

#include "engines/ollama/ollama.h"

namespace vramfit::ollama {
namespace {

// The group GroupLayers puts a tensor in: "blk.N" or the first dotted part ("output_norm").
std::string_view Group(std::string_view name) {
  if (name.rfind("blk.", 0) == 0) {
    const size_t dot = name.find('.', 4);
    return name.substr(0, dot);
  }
  return name.substr(0, name.find('.'));
}

}  // namespace

ModelFacts FactsOf(const Inventory& inv) {
  ModelFacts f;
  const ModelSpec& spec = inv.spec;
  f.arch = spec.architecture;
  const size_t blocks = spec.layers.size();
  f.layer_bytes.assign(blocks, 0);
  f.heads.assign(blocks, 0);
  f.heads_kv.assign(blocks, 0);
  f.embedding = static_cast<uint64_t>(std::max<int64_t>(spec.hidden_size, 0));
  f.vocab = static_cast<uint64_t>(std::max<int64_t>(spec.vocab_size, 0));
  f.context_length = static_cast<uint64_t>(std::max<int64_t>(spec.max_position_embeddings, 0));
  uint64_t output = 0, output_norm = 0, token_embd = 0;
  bool has_output = false;
  for (const TensorEntry& e : inv.tensors) {
    const std::string_view g = Group(e.info.name);
    const uint64_t bytes = e.info.bytes();
    if (g.rfind("blk.", 0) == 0) {
      size_t i = 0;
      const std::string_view n = g.substr(4);
      auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), i);
      if (ec == std::errc() && p == n.data() + n.size() && i < blocks) f.layer_bytes[i] += bytes;
      if (e.info.name == "blk.0.ffn_gate_exps.weight") f.ffn_gate_exps_bytes = bytes;
    } else if (g == "output") {
      output += bytes;
      has_output = true;
    } else if (g == "output_norm") {
      output_norm += bytes;
    } else if (g == "token_embd") {
      token_embd += bytes;
    }
  }
  f.output_bytes = output_norm + (has_output ? output : token_embd);
  for (size_t i = 0; i < blocks; ++i) {
    const AttentionSpec& a = spec.layers[i].attention;
    if (a.kind == AttentionKind::kLinear) {
      if (f.ssm_inner == 0) {
        f.ssm_conv = static_cast<uint64_t>(std::max<int64_t>(a.linear_conv_kernel_dim, 0));
        f.ssm_state = static_cast<uint64_t>(std::max<int64_t>(a.linear_key_head_dim, 0));
        f.ssm_groups = static_cast<uint64_t>(std::max<int64_t>(a.linear_num_key_heads, 0));
        f.ssm_inner = static_cast<uint64_t>(std::max<int64_t>(a.linear_num_value_heads, 0)) *
                      static_cast<uint64_t>(std::max<int64_t>(a.linear_value_head_dim, 0));
      }
      continue;
    }
    f.heads[i] = static_cast<uint64_t>(std::max<int64_t>(a.num_heads, 0));
    f.heads_kv[i] = static_cast<uint64_t>(std::max<int64_t>(a.num_kv_heads, 0));
    if (f.head_k == 0) {
      if (a.kind == AttentionKind::kMla && a.num_kv_heads == 1) {
        // The MLA form of the file: one latent "head" (key_length = kv_lora + rope).
        f.head_k = static_cast<uint64_t>(a.kv_lora_rank + a.qk_rope_head_dim);
        f.head_v = static_cast<uint64_t>(a.kv_lora_rank);
      } else if (a.kind == AttentionKind::kMla) {
        f.head_k = static_cast<uint64_t>(a.qk_nope_head_dim + a.qk_rope_head_dim);
        f.head_v = static_cast<uint64_t>(a.v_head_dim);
      } else {
        f.head_k = f.head_v = static_cast<uint64_t>(std::max<int64_t>(a.head_dim, 0));
      }
    }
    if (a.kind == AttentionKind::kSliding && f.sliding_window == 0) {
      f.sliding_window = static_cast<uint64_t>(std::max<int64_t>(a.sliding_window, 0));
    }
  }
  if (blocks > 0) {
    f.feed_forward_length = static_cast<uint64_t>(
        std::max<int64_t>(spec.layers[0].mlp.intermediate_size, 0));
  }
  return f;
}

double KvBytesPerElement(const std::string& type) {
  if (type == "q8_0") return 1;
  if (type == "q4_0") return 0.5;
  if (type == "f32") return 4;
  return 2;
}

// fs/ggml/ggml.go GraphSize at v0.12.10. The per-architecture graph formulas are Ollama's
// fitted expressions (their constants, 9/16 and 105/128, are its own); an architecture without
// one gets partial = full = 0 here and estimateGPULayers's GQA fallback.
GraphSize EstimateGraph(const ModelFacts& f, uint64_t context, uint64_t batch, int64_t parallel,
                        const std::string& kv_type, bool flash) {
  GraphSize out;
  const uint64_t par = static_cast<uint64_t>(std::max<int64_t>(parallel, 1));
  context *= par;
  const uint64_t embedding = f.embedding, vocab = f.vocab;
  const uint64_t heads = f.heads.empty() ? 0 : *std::max_element(f.heads.begin(), f.heads.end());
  const uint64_t heads_min =
      f.heads.empty() ? 0 : *std::min_element(f.heads.begin(), f.heads.end());
  const uint64_t heads_kv =
      f.heads_kv.empty() ? 0 : *std::max_element(f.heads_kv.begin(), f.heads_kv.end());
  const uint64_t embedding_heads = heads_min > 0 ? embedding / heads_min : 0;
  const uint64_t hk = f.head_k, hv = f.head_v;
  const double bpe = KvBytesPerElement(kv_type);
  const size_t blocks = f.layer_bytes.size();
  // The default cache, as llama.cpp's (an attention layer: context x (K + V) x its KV heads;
  // any other layer recurrent: (d_conv - 1) x (d_inner + 2 x groups x d_state) + d_state x
  // d_inner F32 values, once, whatever the context and the sequences).
  out.kv.assign(blocks, 0);
  uint64_t kv_total = 0;
  for (size_t i = 0; i < blocks; ++i) {
    if (f.heads[i] > 0 && f.heads_kv[i] > 0) {
      out.kv[i] = static_cast<uint64_t>(static_cast<double>(context * (hk + hv) * f.heads_kv[i]) *
                                        bpe);
    } else {
      const uint64_t r = f.ssm_conv > 0
                             ? (f.ssm_conv - 1) * (f.ssm_inner + 2 * f.ssm_groups * f.ssm_state)
                             : 0;
      out.kv[i] = (r + f.ssm_state * f.ssm_inner) * 4;
    }
    kv_total += out.kv[i];
  }
  const std::string& a = f.arch;
  uint64_t full = 0, partial = 0;
  if (a == "llama" || a == "llama4") {
    full = std::max(4 * batch * (1 + 4 * embedding + context * (1 + heads)),
                    4 * batch * (embedding + vocab));
    partial = 4 * batch * embedding;
    partial += std::max(4 * batch * (1 + embedding + std::max(context, embedding)) +
                            embedding * embedding * 9 / 16 +
                            4 * context * (batch * heads + embedding_heads * heads_kv),
                        4 * batch * (embedding + vocab) + embedding * vocab * 105 / 128);
    if (f.ffn_gate_exps_bytes > 0) {  // mixtral 8x22b
      const uint64_t ff = f.feed_forward_length;
      partial = std::max(3 * f.ffn_gate_exps_bytes +
                             4 * batch * (2 * ff + heads_kv + embedding + context +
                                          embedding_heads * heads_kv),
                         4 * (context * batch * heads + context * embedding_heads * heads_kv +
                              batch * 1024 + embedding_heads * heads_kv * batch));
    }
  } else if (a == "gemma" || a == "gemma2" || a == "gemma3" || a == "gemma3n") {
    full = std::max(4 * batch * (embedding + vocab),
                    4 * batch * (2 + context + context * heads + 2 * embedding + 2 * hk * heads));
    partial = std::max(4 * embedding * batch + embedding * vocab * 105 / 128 + 4 * vocab * batch,
                       4 * batch * (2 * embedding + 1 + 2 * hk * heads + context +
                                    context * heads) +
                           4 * hk * context * 8 + embedding * hk * heads * 9 / 16);
    if (a == "gemma3n") {
      full *= 4;
      partial *= 4;
    }
    if (a == "gemma3") {
      // Five of every six layers slide: (sequences x window + batch) cells.
      const uint64_t window = par * f.sliding_window + batch;
      for (size_t i = 0; i < blocks; ++i) {
        if ((i + 1) % 6 != 0) {
          out.kv[i] = static_cast<uint64_t>(static_cast<double>(window * (hk + hv) * heads_kv) *
                                            bpe);
        }
      }
    }
  } else if (a == "command-r") {
    full = std::max(4 * batch * (embedding + vocab),
                    4 * batch * (2 + 4 * embedding + context * (1 + heads)));
    partial = std::max(4 * batch * (embedding + vocab) + embedding * vocab * 105 / 128,
                       4 * batch * (1 + 2 * embedding + context * (1 + heads)) +
                           4 * embedding * context + embedding * embedding * 9 / 16);
  } else if (a == "qwen2") {
    full = std::max(4 * batch * (embedding + vocab),
                    4 * batch * (1 + 2 * embedding + context + context * heads));
    partial = std::max(4 * batch * (embedding + vocab) + embedding * vocab * 105 / 128,
                       4 * (batch * (1 + 2 * embedding + context * (1 + heads)) +
                            embedding * (1 + context)));
  } else if (a == "phi2") {
    full = std::max(4 * batch * (embedding + vocab),
                    4 * batch * (1 + 4 * embedding + context + context * heads));
    partial = std::max(4 * batch * (2 * embedding + vocab) + embedding * vocab * 105 / 128,
                       4 * batch * (2 + 3 * embedding + context + context * heads));
  } else if (a == "stablelm") {
    full = 4 * batch * (context * (1 + heads) + 3 * embedding + 2);
    partial = std::max(4 * batch * (vocab + 2 * embedding), full);
  } else if (a == "deepseek2") {
    full = std::max(4 * batch * (3 * embedding + vocab),
                    4 * batch * (3 * embedding + 2 + context * (1 + heads_kv) + 2 * hk * heads_kv));
    partial = std::max(4 * batch * (3 * embedding + vocab) + embedding * vocab * 105 / 128,
                       4 * batch * (2 * embedding + 1 + 2 * hk * heads_kv + context +
                                    context * heads_kv) +
                           4 * hk * context * heads_kv + embedding * hk * heads_kv * 9 / 16);
  } else if (a == "chatglm") {
    full = 4 * batch * (embedding + vocab);
    partial = 4 * batch * (embedding + vocab) + embedding * vocab * 105 / 128;
  } else if (a == "gptoss" || a == "gpt-oss") {
    // Even layers slide over 4096 tokens per sequence (plus the batch).
    for (size_t i = 0; i < blocks; ++i) {
      const double per = static_cast<double>((hk + hv) * heads_kv) * bpe;
      out.kv[i] = static_cast<uint64_t>(per) * (i % 2 == 0 ? par * 4096 + batch : context);
    }
    const uint64_t kv_min = f.heads_kv.empty()
                                ? 1
                                : std::max<uint64_t>(*std::min_element(f.heads_kv.begin(),
                                                                       f.heads_kv.end()), 1);
    partial = 2 * heads / kv_min * kv_total / 6;
    if (flash) partial = (4 * par + (context >> 10) + 110) << 20;
  }
  out.full = full;
  out.partial = partial;
  return out;
}

// llm/memory.go estimateGPULayers at v0.12.10 (CUDA/ROCm; Metal's rules are not modelled).
MemoryEstimate EstimateGpuLayers(const ModelFacts& f, const GraphSize& g,
                                 const EstimateInput& in) {
  MemoryEstimate e;
  const size_t n = in.free.size();
  const int64_t blocks = static_cast<int64_t>(f.layer_bytes.size());
  e.layers_model = blocks + 1;
  uint64_t kv_total = 0;
  for (uint64_t k : g.kv) kv_total += k;
  e.kv = kv_total;
  // One layer's worth (blk.0 and its cache) is held back on each GPU as a buffer.
  uint64_t layer_size = blocks > 0 ? f.layer_bytes[0] + g.kv[0] : 0;
  uint64_t partial = g.partial, full = g.full;
  if (partial == 0) {
    // No formula for the architecture: the GQA ratio times the cache, over six.
    uint64_t kv_min = 0, heads_max = 0;
    for (size_t i = 0; i < f.heads_kv.size(); ++i) {
      kv_min = i == 0 ? f.heads_kv[i] : std::min(kv_min, f.heads_kv[i]);
      heads_max = std::max(heads_max, f.heads[i]);
    }
    partial = heads_max / std::max<uint64_t>(kv_min, 1) * kv_total / 6;
  }
  if (full == 0) full = partial;
  if (n > 1) full = partial;  // several GPUs always take the partial graph
  const uint64_t graph = std::max(partial, full);
  e.graph_full = full;
  e.graph_partial = partial;
  e.weights_output = f.output_bytes;
  std::vector<uint64_t> alloc(n, 0);
  std::vector<int64_t> split(n, 0);
  std::vector<size_t> with_space;  // GPU indices that can take a layer
  uint64_t overflow = 0;
  // A GPU takes layers only with room for the overhead, the projector (first GPU), the graph,
  // the minimum reserve and two layers.
  for (size_t i = 0; i < n; ++i) {
    const uint64_t gzo = with_space.empty() ? in.projector : 0;
    if (in.free[i] < in.overhead + gzo + graph + kMinimumMemory + 2 * layer_size) continue;
    with_space.push_back(i);
    alloc[i] += kMinimumMemory + layer_size;
  }
  if (!with_space.empty()) {
    alloc[with_space.front()] += in.projector;
  } else {
    overflow += in.projector;
  }
  int64_t count = 0;
  // From the last layer down, each to the GPU (i mod the GPUs left) with room for it; a GPU
  // without room leaves the list for good.
  for (int64_t i = blocks - 1; i >= 0; --i) {
    layer_size = f.layer_bytes[static_cast<size_t>(i)] + g.kv[static_cast<size_t>(i)];
    e.weights_repeating += f.layer_bytes[static_cast<size_t>(i)];
    if (in.num_gpu >= 0 && count >= in.num_gpu) {
      overflow += layer_size;
      continue;
    }
    for (size_t j = with_space.size(); j > 0; --j) {
      const size_t at = static_cast<size_t>(i) % j;
      const size_t gi = with_space[at];
      if (in.free[gi] > in.overhead + alloc[gi] + graph + layer_size) {
        alloc[gi] += layer_size;
        split[gi]++;
        count++;
        break;
      }
      with_space.erase(with_space.begin() + static_cast<std::ptrdiff_t>(at));
    }
    if (with_space.empty()) overflow += layer_size;
  }
  bool fully = count >= blocks;
  // The output layer last, where it fits.
  const uint64_t last = f.output_bytes;
  if (last > 0) {
    if (in.num_gpu < 0 || count < in.num_gpu) {
      for (size_t j = with_space.size(); j > 0; --j) {
        const size_t gi = with_space[static_cast<size_t>(count) % j];
        if (in.free[gi] > in.overhead + alloc[gi] + graph + last) {
          alloc[gi] += last;
          split[gi]++;
          count++;
          break;
        }
      }
    }
    if (count < blocks + 1) {
      fully = false;
      overflow += last;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (split[i] > 0) alloc[i] += fully ? full : partial;
  }
  e.fully_loaded = fully;
  e.graph = fully ? full : partial;
  uint64_t vram = 0;
  for (uint64_t a : alloc) vram += a;
  e.total = vram + overflow;
  e.allocations = alloc;
  e.split = split;
  if (n == 0 || count == 0) return e;  // no layer fits: nothing on the GPUs
  e.layers = count;
  e.vram = vram;
  return e;
}

}  // namespace vramfit::ollama
