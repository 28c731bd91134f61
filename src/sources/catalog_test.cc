// The embedded catalog: every entry parses, builds a ModelSpec and a synthesized inventory;
// synthesized parameter counts equal the counts published for the models.
#include "vramfit/catalog.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "vramfit/inspect.h"

namespace vramfit {
namespace {

TEST(Catalog, EveryEntryInspects) {
  auto models = CatalogModels();
  ASSERT_TRUE(models.ok()) << models.status().ToString();
  EXPECT_GE(models->size(), 30u);
  for (const CatalogModel& m : *models) {
    auto inv = InspectModel(m.id, {});
    ASSERT_TRUE(inv.ok()) << m.id << ": " << inv.status().ToString();
    EXPECT_TRUE(inv->synthesized);
    EXPECT_GT(inv->parameters, 0u) << m.id;
    EXPECT_FALSE(inv->spec.generic) << m.id;
    for (const Finding& f : inv->audit.findings)
      EXPECT_NE(f.severity, Severity::kError) << m.id << " " << f.message;
    auto bytes = SynthesizedBytes(inv->spec);  // the count-only path agrees with the list
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(*bytes, inv->total_bytes) << m.id;
  }
}

TEST(Catalog, FindsByRepoIdAndSuggests) {
  EXPECT_EQ(FindCatalogModel("Qwen/Qwen3-8B")->id, "qwen3-8b");
  EXPECT_EQ(FindCatalogModel("QWEN3-8B")->id, "qwen3-8b");
  auto miss = FindCatalogModel("qwen3-9b");
  ASSERT_FALSE(miss.ok());
  EXPECT_EQ(miss.status().code(), Code::kNotFound);
  EXPECT_NE(miss.status().message().find("nearest: "), std::string::npos)
      << miss.status().message();
  EXPECT_NE(miss.status().message().find("qwen3-8b"), std::string::npos) << miss.status().message();
}

TEST(Catalog, BaseEntriesInheritArchitecture) {
  auto inv = InspectModel("qwen3-30b-a3b-gptq-int4", {});
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->spec.family, "qwen3_moe");
  EXPECT_EQ(inv->quantization.method, "gptq");
  EXPECT_EQ(inv->parameters, 30532122624ULL);
  auto awq72 = InspectModel("qwen2.5-72b-instruct-awq", {});
  ASSERT_TRUE(awq72.ok());
  EXPECT_EQ(awq72->spec.layers[0].mlp.intermediate_size, 29696);  // the AWQ repo's own padding
}

// Parameter counts as published for each model (the Hugging Face model page's safetensors
// total, or the cited document). The synthesized inventory must reproduce them exactly.
struct Published {
  const char* id;
  uint64_t parameters;
  const char* what;
};
const Published kPublished[] = {
    {"qwen2.5-7b-instruct", 7615616512ULL, "HF safetensors total"},
    {"qwen3-8b", 8190735360ULL, "HF safetensors total"},
    {"qwen3-30b-a3b", 30532122624ULL, "HF safetensors total"},
    {"llama-3.1-8b-instruct", 8030261248ULL, "HF safetensors total"},
    {"mixtral-8x7b-instruct-v0.1", 46702792704ULL, "HF safetensors total"},
    {"gpt-oss-20b", 20914757184ULL, "HF safetensors total (model card: 20.9B)"},
    {"gpt-oss-120b", 116829156672ULL, "HF safetensors total (model card: 116.8B)"},
    {"qwen2.5-vl-7b-instruct", 8292166656ULL, "HF safetensors total"},
    {"qwen3-vl-30b-a3b-instruct", 31070754032ULL, "HF safetensors total"},
    {"llama-3.1-70b-instruct", 70553706496ULL, "HF safetensors total"},
    {"mistral-nemo-instruct-2407", 12247782400ULL, "the GGUF's parameter count (the notes)"},
    // Sums of the real checkpoints' safetensors headers as third parties printed them (the
    // entries' notes): the language model and the vision tower with its deepstack mergers.
    {"qwen3-vl-2b-instruct", 2127532032ULL, "header sum, 625 tensors"},
    {"qwen3-vl-8b-instruct", 8767123696ULL, "header sum"},
    {"qwen3-vl-235b-a22b-instruct", 235670022896ULL, "header sum"},
    {"qwen3-30b-a3b-instruct-2507", 30532122624ULL, "header sum (the 2504 model's shapes)"},
    // The Pixtral tower and its patch-merger projector beside the text model.
    {"magistral-small-2509", 24011361280ULL, "HF safetensors total"},
    {"mistral-small-3.1-24b-instruct-2503", 24011361280ULL, "Magistral's total, same shapes"},
    {"qwen3.5-4b", 4659865088ULL, "header sum"},
    {"qwen3.5-122b-a10b", 125086497008ULL, "header sum"},
    {"qwen3-embedding-0.6b", 595776512ULL, "header sum"},
};

TEST(Catalog, PublishedParameterCounts) {
  for (const Published& p : kPublished) {
    auto inv = InspectModel(p.id, {});
    ASSERT_TRUE(inv.ok()) << p.id;
    EXPECT_EQ(inv->parameters, p.parameters) << p.id << " (" << p.what << ")";
  }
}

// An entry whose config.json was not readable, only its quantization_config as described:
// the synthesized bytes against the checkpoint's published weight shards (safetensors files,
// their JSON headers included, so slightly above the tensors alone).
TEST(Catalog, DescribedFp8EntriesMatchTheirPublishedShards) {
  // Qwen/Qwen3.8-27B-FP8 (revision 017b9c7a): weight shards 30,866,866,928 bytes. The plan
  // quantizes in_proj_a/b too where the checkpoint keeps them in 16 bits (the entry's notes).
  auto inv = InspectModel("qwen3.8-27b-fp8", {});
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  const double shards = 30866866928.0;
  EXPECT_NEAR(static_cast<double>(inv->total_bytes) / shards, 1.0, 0.005) << inv->total_bytes;
  EXPECT_LE(inv->total_bytes, 30866866928ULL);
}

// Qwen3-Next-80B-A3B-Thinking: the BF16 checkpoint's 162,649,725,440 bytes of tensors, as a
// download script printed them (the entry's notes), MTP layer included.
TEST(Catalog, Qwen3NextThinkingMatchesItsCheckpointBytes) {
  auto inv = InspectModel("qwen3-next-80b-a3b-thinking", {});
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->total_bytes, 162649725440ULL);
}

uint64_t ParamsWhere(const Inventory& inv, bool mtp) {
  uint64_t n = 0;
  for (const auto& e : inv.tensors) if ((e.role == Role::kMtp) == mtp) n += e.parameters;
  return n;
}

TEST(Catalog, MtpLayersAreCountedSeparately) {
  // Qwen3-Next-80B-A3B: 79,674,391,296 parameters without the MTP head
  // (../shared/reference/formats-and-architectures.md §5.4).
  auto next = InspectModel("qwen3-next-80b-a3b-instruct", {});
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(ParamsWhere(*next, false), 79674391296ULL);
  // DeepSeek-V3: 671B main model; the HF total of 684,531,386,000 counts every stored
  // element, i.e. also the MTP layer and the FP8 block scales.
  auto ds = InspectModel("deepseek-v3", {});
  ASSERT_TRUE(ds.ok());
  EXPECT_EQ(ParamsWhere(*ds, false), 671026419200ULL);
  uint64_t scales = 0;
  for (const auto& e : ds->tensors) if (e.part == Part::kQuantMeta) scales += e.info.elements;
  EXPECT_EQ(ds->parameters + scales, 684531386000ULL);
}

// Totals that count every stored element, the block scales of FP8 checkpoints included.
uint64_t WithScales(const Inventory& inv) {
  uint64_t scales = 0;
  for (const auto& e : inv.tensors) if (e.part == Part::kQuantMeta) scales += e.info.elements;
  return inv.parameters + scales;
}

// GLM-4.5: the FP8 checkpoint's tensor list (the entry's notes) sums to 358,337,791,296 weight
// elements, the BF16 model's shapes: the MTP layer with its own embedding and head copies,
// q/k norms from use_qk_norm, no o_proj bias. GLM-4.5-Air sets use_qk_norm false.
TEST(Catalog, Glm45MatchesItsCheckpointsTensorList) {
  auto inv = InspectModel("glm-4.5", {});
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->parameters, 358337791296ULL);
  EXPECT_TRUE(inv->spec.layers[0].attention.qk_norm);
  EXPECT_FALSE(inv->spec.layers[0].attention.o_bias);
  auto air = InspectModel("glm-4.5-air", {});
  ASSERT_TRUE(air.ok());
  EXPECT_FALSE(air->spec.layers[0].attention.qk_norm);
  EXPECT_TRUE(air->spec.layers[0].attention.qkv_bias);
}

// MiniMax-M2: the Hub's 228,703,644,928 stored elements (the entry's notes); its experts in
// FP8, only the router ("gate" in modules_to_not_convert) and the head in 16 bits.
TEST(Catalog, MiniMaxM2MatchesTheHubsTotal) {
  auto inv = InspectModel("minimax-m2", {});
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_FALSE(inv->spec.generic);
  EXPECT_EQ(WithScales(*inv), 228703644928ULL);
  EXPECT_LT(inv->total_bytes, 216ULL << 30);
}

// DeepSeek-V3.1: the same 684,531,386,000 stored elements as V3 (the MTP layer and the scales).
TEST(Catalog, DeepseekV31MatchesTheHubsTotal) {
  auto inv = InspectModel("deepseek-v3.1", {});
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(WithScales(*inv), 684531386000ULL);
}

// Kimi-K2 names its own model_type ("kimi_k2") over DeepSeek-V3's class: read by the class,
// as vLLM's registry picks it, not as a generic decoder.
TEST(Catalog, KimiK2IsReadAsDeepseekV3ByItsArchitecture) {
  auto inv = InspectModel("kimi-k2-instruct", {});
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_FALSE(inv->spec.generic);
  EXPECT_EQ(inv->spec.family, "deepseek_v3");
  EXPECT_EQ(inv->spec.CountAttention(AttentionKind::kMla), 61);
  EXPECT_EQ(inv->spec.CountMoeLayers(), 60);  // first_k_dense_replace 1
  EXPECT_EQ(inv->spec.layers[1].mlp.num_experts, 384);
  EXPECT_EQ(inv->quantization.method, "fp8");
}

TEST(Catalog, VariantsShareTheFamily) {
  const auto v = CatalogVariants("qwen3-30b-a3b");
  EXPECT_NE(std::find(v.begin(), v.end(), "qwen3-30b-a3b-gptq-int4"), v.end());
  EXPECT_EQ(std::find(v.begin(), v.end(), "qwen3-30b-a3b"), v.end());
  // From a variant, the root is a variant too.
  const auto w = CatalogVariants("qwen3-30b-a3b-gptq-int4");
  EXPECT_NE(std::find(w.begin(), w.end(), "qwen3-30b-a3b"), w.end());
  EXPECT_TRUE(CatalogVariants("/no/such/model").empty());
}

TEST(Catalog, AnEntryIsASourceOfOneConfig) {
  auto m = FindCatalogModel("qwen3-8b");
  ASSERT_TRUE(m.ok());
  auto src = CatalogSource(*m);
  EXPECT_EQ(src->Label(), "catalog:qwen3-8b");
  EXPECT_EQ(src->NameOf("config.json"), "catalog:qwen3-8b config");
  EXPECT_EQ(*src->List(), std::vector<std::string>{"config.json"});
  EXPECT_EQ(*src->Size("config.json"), m->config_json.size());
  EXPECT_EQ(src->Size("model.safetensors").status().code(), Code::kNotFound);
  std::string head(8, '\0');
  ASSERT_TRUE(src->ReadAt("config.json", 0, 8, head.data()).ok());
  EXPECT_EQ(head, m->config_json.substr(0, 8));
  EXPECT_EQ(src->ReadAt("config.json", m->config_json.size(), 1, head.data()).code(),
            Code::kCorrupt);
}

TEST(Catalog, ResolvedIdsKeepTheUsersSpelling) {
  auto ref = ResolveModel("Qwen/Qwen3-8B");
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->kind, ModelKind::kCatalog);
  EXPECT_EQ(ref->id, "qwen3-8b");
  auto inv = InspectModel("Qwen/Qwen3-8B", {});
  ASSERT_TRUE(inv.ok());
  EXPECT_EQ(inv->model, "Qwen/Qwen3-8B");
  EXPECT_EQ(inv->origin, "catalog:qwen3-8b");
  EXPECT_EQ(inv->source.kind, ModelKind::kCatalog);
  auto by_ref = InspectModel(*ref, {});
  ASSERT_TRUE(by_ref.ok());
  EXPECT_EQ(by_ref->model, "qwen3-8b");
  EXPECT_EQ(by_ref->parameters, inv->parameters);
}

}  // namespace
}  // namespace vramfit
