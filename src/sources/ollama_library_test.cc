// The Ollama library table (vramfit/ollama_library.h): tag forms, the default tag, type
// suffixes, unknown and hostile names, and that every entry names a catalog model.
#include "vramfit/ollama_library.h"

#include <gtest/gtest.h>

#include <string>

#include "vramfit/catalog.h"

namespace vramfit {
namespace {

TEST(OllamaLibrary, TagForms) {
  auto m = FindOllamaLibraryModel("qwen3:32b");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->name, "qwen3:32b");
  EXPECT_EQ(m->catalog_id, "qwen3-32b");
  EXPECT_EQ(m->file_type, "q4_K_M");
  EXPECT_FALSE(m->source.empty());
  // The type suffix chooses the file type; case and the library/ namespace do not matter.
  EXPECT_EQ(FindOllamaLibraryModel("qwen3:32b-q8_0")->file_type, "q8_0");
  EXPECT_EQ(FindOllamaLibraryModel("qwen3:32b-fp16")->file_type, "f16");
  EXPECT_EQ(FindOllamaLibraryModel("Qwen3:32B-Q4_K_S")->file_type, "q4_K_S");
  EXPECT_EQ(FindOllamaLibraryModel("library/qwen3:14b")->catalog_id, "qwen3-14b");
  EXPECT_EQ(FindOllamaLibraryModel("registry.ollama.ai/library/qwen3:14b")->catalog_id,
            "qwen3-14b");
  EXPECT_EQ(FindOllamaLibraryModel("qwen2.5:7b-instruct-q6_K")->file_type, "q6_K");
  EXPECT_EQ(FindOllamaLibraryModel("qwen2.5:7b-instruct")->catalog_id, "qwen2.5-7b-instruct");
  EXPECT_EQ(FindOllamaLibraryModel("qwen3:30b-a3b")->catalog_id, "qwen3-30b-a3b");
  EXPECT_EQ(FindOllamaLibraryModel("gpt-oss:20b")->file_type, "mxfp4");
}

TEST(OllamaLibrary, BareNameIsLatest) {
  EXPECT_EQ(FindOllamaLibraryModel("qwen3")->name, "qwen3:8b");
  EXPECT_EQ(FindOllamaLibraryModel("qwen3:latest")->name, "qwen3:8b");
  EXPECT_EQ(FindOllamaLibraryModel("gpt-oss")->name, "gpt-oss:20b");
  // gemma3's latest is the 4B (Ollama's README: `ollama run gemma3`).
  EXPECT_EQ(FindOllamaLibraryModel("gemma3")->name, "gemma3:4b");
  EXPECT_EQ(FindOllamaLibraryModel("gemma3")->catalog_id, "gemma-3-4b-it");
  EXPECT_EQ(FindOllamaLibraryModel("mistral")->file_type, "q4_0");
  // The 2024 families ship Q4_0 by default (their /api/tags and headers, the entries' sources).
  EXPECT_EQ(FindOllamaLibraryModel("gemma2")->name, "gemma2:9b");
  EXPECT_EQ(FindOllamaLibraryModel("gemma2")->file_type, "q4_0");
  EXPECT_EQ(FindOllamaLibraryModel("qwq")->catalog_id, "qwq-32b");
  EXPECT_EQ(FindOllamaLibraryModel("llama3.1:70b")->catalog_id, "llama-3.1-70b-instruct");
}

TEST(OllamaLibrary, UnknownNamesListTheNearest) {
  auto m = FindOllamaLibraryModel("qwen3:33b");
  ASSERT_EQ(m.status().code(), Code::kNotFound);
  EXPECT_NE(m.status().message().find("nearest: qwen3:30b, qwen3:32b"), std::string::npos)
      << m.status().message();
  EXPECT_EQ(FindOllamaLibraryModel("starcoder2:15b").status().code(), Code::kNotFound);
  EXPECT_EQ(NearestOllamaLibraryNames("gpt-oss:21b", 1), "gpt-oss:20b");
}

TEST(OllamaLibrary, HostileNamesAreRefused) {
  for (const char* w : {"", ":", "qwen3:", ":32b", "a:b:c", "../qwen3:32b", "/tmp/x:y",
                        "qwen3:32b.gguf", "qwen3\n:32b", "hf.co/Qwen/Qwen3-8B-GGUF:Q4_K_M",
                        "qwen3:32b\x1b[2J"}) {
    EXPECT_FALSE(LooksLikeOllamaLibraryName(w)) << w;
    auto m = FindOllamaLibraryModel(w);
    EXPECT_EQ(m.status().code(), Code::kInvalidArgument) << w;
    EXPECT_EQ(m.status().message().find('\x1b'), std::string::npos);
  }
  EXPECT_FALSE(LooksLikeOllamaLibraryName(std::string(10000, 'a')));
  EXPECT_TRUE(LooksLikeOllamaLibraryName("qwen3:32b"));
}

TEST(OllamaLibrary, EveryEntryIsACatalogModel) {
  for (const char* name : {"qwen3:0.6b", "qwen3:4b", "qwen3:8b", "qwen3:14b", "qwen3:32b",
                           "qwen3:30b", "qwen3:235b", "qwen3-coder:30b", "qwen2.5:0.5b",
                           "qwen2.5:72b", "llama3.1:8b", "llama3.1:70b", "llama3.3:70b",
                           "llama3:8b", "gemma3:27b", "mistral-small:24b",
                           "mistral-small3.2:24b", "deepseek-r1:7b", "deepseek-r1:8b",
                           "deepseek-r1:14b", "deepseek-r1:32b", "deepseek-r1:70b",
                           "gpt-oss:20b", "gpt-oss:120b", "qwen3:1.7b", "qwen2.5:1.5b",
                           "qwen2.5:3b", "qwen2.5:14b", "llama3.1:405b", "qwq:32b",
                           "mistral-nemo:12b", "gemma2:2b", "gemma2:9b", "gemma2:27b",
                           "phi3.5:3.8b", "mixtral:8x22b", "mistral-large:123b"}) {
    auto m = FindOllamaLibraryModel(name);
    ASSERT_TRUE(m.ok()) << name << ": " << m.status().ToString();
    EXPECT_TRUE(FindCatalogModel(m->catalog_id).ok()) << name;
  }
}

}  // namespace
}  // namespace vramfit
