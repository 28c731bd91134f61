// The goldens' key numbers, derived again by hand from the models' published dimensions: a
// golden regenerated with a wrong number fails here even though cli_golden would accept it.
// Every derivation below uses only config.json values and arithmetic written out in the test,
// none of the library's formulas.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string Golden(const char* name) {
  std::ifstream in(fs::path(VRAMFIT_SOURCE_DIR) / "tests/golden" / name);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

// The first capture of `pattern` in `text`, with thousands separators removed.
std::string Capture(const std::string& text, const char* pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern)) || m.size() < 2) {
    ADD_FAILURE() << "no match for " << pattern;
    return "0";
  }
  std::string s = m[1].str();
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  return s;
}

int64_t Int(const std::string& text, const char* pattern) {
  return std::stoll(Capture(text, pattern));
}
double Dec(const std::string& text, const char* pattern) {
  return std::stod(Capture(text, pattern));
}

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr int64_t kRtx4090Bytes = 25382879232;  // torch.cuda.mem_get_info total (gpus.json)

// K and V of every full-attention layer, bf16: layers x kv_heads x head_dim x 2 x 2 bytes.
constexpr int64_t KvBytesPerToken(int64_t layers, int64_t kv_heads, int64_t head_dim,
                                  int64_t bytes = 2) {
  return layers * kv_heads * head_dim * 2 * bytes;
}

// Qwen3-30B-A3B (config.json): hidden 2048, 48 layers, 32 heads, 4 KV heads, head_dim 128,
// 128 experts of moe_intermediate 768, vocab 151936, untied. GPTQ 4-bit, group 128, desc_act.
TEST(GoldenNumbers, InspectQwen3_30bA3bGptqFromItsDimensions) {
  const std::string g = Golden("inspect_qwen3-30b-a3b-gptq-int4.txt");
  const int64_t h = 2048, layers = 48, vocab = 151936, experts = 128, moe = 768;
  const int64_t q = 32 * 128, kv = 4 * 128;
  const int64_t attention = layers * (h * q + 2 * h * kv + q * h);
  const int64_t expert = layers * experts * 3 * h * moe;
  const int64_t router = layers * experts * h;
  const int64_t norms = layers * (2 * h + 2 * 128) + h;
  const int64_t embed = vocab * h;
  EXPECT_EQ(Int(g, R"(parameters\s+([\d,]+))"), 2 * embed + attention + expert + router + norms);
  EXPECT_EQ(Int(g, R"(experts\s+[\d.]+ GiB\s+([\d,]+) params)"), expert);
  // GPTQ: 4-bit qweight (int32 packs 8), fp16 scales and int32 zeros (packed 8) per group of
  // 128 inputs, an int32 g_idx per input row; the rest stays bf16.
  const int64_t quantized = attention + expert;
  const int64_t in_rows = layers * ((3 * h + q) + experts * (2 * h + moe));
  const int64_t i32 = quantized / 2 + quantized / 128 / 8 * 4 + in_rows * 4;
  const int64_t f16 = quantized / 128 * 2;
  const int64_t bf16 = (2 * embed + router + norms) * 2;
  EXPECT_EQ(Int(g, R"(\(([\d,]+) bytes\))"), i32 + f16 + bf16);
}

// Qwen3-Next-80B-A3B: 48 layers of 512 experts, moe_intermediate 512, hidden 2048.
TEST(GoldenNumbers, InspectQwen3NextExperts) {
  const std::string g = Golden("inspect_qwen3-next-80b-a3b-instruct.txt");
  EXPECT_EQ(Int(g, R"(experts\s+[\d.]+ GiB\s+([\d,]+) params)"),
            int64_t{48} * 512 * 3 * 2048 * 512);
  EXPECT_EQ(Int(g, R"(embedding\s+[\d.]+ MiB\s+([\d,]+) params)"), int64_t{151936} * 2048);
}

// Qwen3-8B (36 layers, 8 KV heads of 128, hidden 4096, intermediate 12288, vocab 151936,
// untied, max_position_embeddings 40960) on one H100 at --max-model-len auto.
TEST(GoldenNumbers, PlanQwen3_8bOnH100) {
  simdjson::dom::parser parser;
  const std::string text = Golden("plan_qwen3-8b_h100_auto.json");
  simdjson::dom::element p;
  ASSERT_EQ(parser.parse(text).get(p), simdjson::SUCCESS);
  simdjson::dom::element g = p["gpus"].at(0);
  const auto u = [](simdjson::dom::element e, const char* k) {
    return static_cast<int64_t>(e[k].get_uint64().value());
  };
  const int64_t per_token = KvBytesPerToken(36, 8, 128);
  EXPECT_EQ(per_token, 147456);
  const int64_t len = 40960;  // the model's maximum: the whole context fits an H100
  EXPECT_EQ(u(p["settings"], "max_model_len"), len);
  EXPECT_EQ(u(p, "kv_needed_bytes"), per_token * len);
  // Weights: bf16 parameters plus the rotary cos/sin cache (max_position x head_dim, bf16).
  const int64_t h = 4096, layer = h * 4096 + 2 * h * 1024 + 4096 * h + 3 * h * 12288 +
                                  2 * h + 2 * 128;
  const int64_t params = 36 * layer + 2 * int64_t{151936} * h + h;
  EXPECT_EQ(params, 8190735360);
  EXPECT_EQ(u(g, "weights_bytes"), 2 * params + len * 128 * 2);
  // The budget is ceil(total x 0.92); the KV pool is what the other stages leave of it.
  EXPECT_EQ(u(g, "budget_bytes"),
            static_cast<int64_t>(std::ceil(u(g, "total_bytes") * 0.92)));
  EXPECT_EQ(u(g, "kv_cache_bytes"), u(g, "budget_bytes") - u(g, "weights_bytes") -
                                        u(g, "activation_peak_bytes") - u(g, "non_torch_bytes") -
                                        u(g, "cudagraph_bytes"));
  // Whole 16-token pages of the pool, and concurrency = tokens / length.
  const int64_t tokens = u(g, "kv_cache_bytes") / (per_token * 16) * 16;
  EXPECT_EQ(u(p, "kv_cache_tokens"), tokens);
  EXPECT_DOUBLE_EQ(p["max_concurrency"].get_double().value(), static_cast<double>(tokens) / len);
}

// Qwen3-4B (36 layers, 8 KV heads of 128) at 262,144 tokens on one RTX 4090.
TEST(GoldenNumbers, PlanQwen3_4bAt256kOn4090) {
  const std::string g = Golden("plan_qwen3-4b-awq_4090_256k.txt");
  const double need = KvBytesPerToken(36, 8, 128) * 262144.0 / kGiB;
  EXPECT_DOUBLE_EQ(need, 36.0);
  EXPECT_DOUBLE_EQ(Dec(g, R"(request needs ([\d.]+) GiB)"), need);
  EXPECT_NEAR(Dec(g, R"(budget ([\d.]+) GiB)"), std::ceil(kRtx4090Bytes * 0.92) / kGiB, 0.005);
  // vLLM's estimate: whole 16-token pages of the available memory.
  const double available = Dec(g, R"(available ([\d.]+) GiB)");
  const int64_t estimate = Int(g, R"(estimated maximum model length is (\d+))");
  EXPECT_NEAR(estimate, available * kGiB / 147456, 16 + 0.005 * kGiB / 147456);
  EXPECT_EQ(estimate % 16, 0);
}

// The fit table's best row: fp8 KV halves the 36 GiB, so concurrency = KV pool / 18 GiB.
TEST(GoldenNumbers, FitQwen3_4bBestRow) {
  const std::string g = Golden("fit_qwen3-4b-awq_4090.txt");
  const double pool = Dec(g, R"(best\s+262,144\s+[\d.]+x\s+([\d.]+))");
  const double concurrency = Dec(g, R"(best\s+262,144\s+([\d.]+)x)");
  const double per_request = KvBytesPerToken(36, 8, 128, 1) * 262144.0 / kGiB;
  EXPECT_DOUBLE_EQ(per_request, 18.0);
  EXPECT_NEAR(concurrency, pool / per_request, 0.006);
}

// Qwen3.5-35B-A3B on two 4090s: the printed concurrency is tokens / length.
TEST(GoldenNumbers, PlanQwen35OnTwo4090s) {
  const std::string g = Golden("plan_qwen3.5-35b-a3b-awq_2x4090.txt");
  const double tokens = static_cast<double>(Int(g, R"(GPU KV cache size: ([\d,]+) tokens)"));
  EXPECT_NEAR(Dec(g, R"(4,096 tokens per request: ([\d.]+)x)"), tokens / 4096, 0.005);
}

// The doctor's calibrated golden: 1478 blocks of 16 tokens, and the fix rounds the capacity
// down to a multiple of 1024.
TEST(GoldenNumbers, DoctorKvTooLong) {
  const std::string g = Golden("doctor_kv_29000_calibrated.txt");
  // (the line of the log's own number, not calibrated_kv_cache_tokens)
  const int64_t tokens = Int(g, R"(\n +kv_cache_tokens +(\d+))");
  EXPECT_EQ(Int(g, R"(gpu_blocks\s+(\d+))") * 16, tokens);
  EXPECT_EQ(Int(g, R"(--max-model-len (\d+))"), tokens / 1024 * 1024);
  EXPECT_EQ(tokens, 23648);  // the log's own line 5
}

}  // namespace
