// Writes the reading-speed fixture of bench/inspect-vs-python.sh: a hollow checkpoint (real
// safetensors headers over sparse data, tests/testutil/hollow.h) of a Qwen3-MoE-shaped AWQ
// model, with its config.json and index. Usage: vramfit_bench_fixture DIR [EXPERTS] [SHARDS]
// (default 128 experts in 8 shards: 56,115 tensors, the shape of Qwen3-30B-A3B-AWQ).
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "testutil/hollow.h"
#include "vramfit/inventory.h"
#include "vramfit/model.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: %s DIR [EXPERTS] [SHARDS]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const int experts = argc > 2 ? std::atoi(argv[2]) : 128;
  const int shards = argc > 3 ? std::atoi(argv[3]) : 8;
  if (experts < 1 || experts > 1024 || shards < 1 || shards > 1000) {
    std::fprintf(stderr, "EXPERTS must be 1-1024 and SHARDS 1-1000\n");
    return 2;
  }
  const std::string config = fmt::format(
      R"({{"architectures":["Qwen3MoeForCausalLM"],"model_type":"qwen3_moe",)"
      R"("hidden_size":2048,"intermediate_size":6144,"num_hidden_layers":48,)"
      R"("num_attention_heads":32,"num_key_value_heads":4,"head_dim":128,"vocab_size":151936,)"
      R"("tie_word_embeddings":false,"num_experts":{},"num_experts_per_tok":8,)"
      R"("moe_intermediate_size":768,"torch_dtype":"float16","quantization_config":)"
      R"({{"quant_method":"awq","bits":4,"group_size":128,"version":"gemm","zero_point":true}}}})",
      experts);
  auto spec = vramfit::ModelSpecFromConfigJson(config, "fixture config");
  if (!spec.ok()) {
    std::fprintf(stderr, "%s\n", spec.status().message().c_str());
    return 1;
  }
  auto synth = vramfit::SynthesizeTensors(*spec);
  if (!synth.ok()) {
    std::fprintf(stderr, "%s\n", synth.status().message().c_str());
    return 1;
  }
  std::vector<vramfit::testing::HollowTensor> tensors;
  for (const auto& t : synth->tensors) tensors.push_back({t.name, t.dtype, t.shape.ToVector()});
  vramfit::testing::WriteHollowCheckpoint(dir, tensors, shards);
  vramfit::testing::WriteText(dir + "/config.json", config);
  std::printf("%zu tensors in %d shards: %s\n", tensors.size(), shards, dir.c_str());
  return 0;
}
