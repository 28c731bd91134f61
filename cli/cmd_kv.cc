// `vramfit kv MODEL --context N [--batch B] [--engine E] [--kv-cache-dtype D] [-tp N]` or
// `vramfit kv --layers L --kv-heads H --head-dim D [--window W] ...`: the KV cache (and
// linear-attention state) a batch of sequences holds, engine-neutral or with an engine's pages.
#include <fmt/format.h>

#include <cstdio>

#include "commands.h"
#include "vramfit/engine.h"
#include "vramfit/inspect.h"
#include "vramfit/kv.h"
#include "vramfit/report.h"

namespace vramfit::cli {

std::function<int()> SetupKv(CLI::App* app) {
  struct Flags {
    std::string model, engine, context;
    KvQuery query;
    KvDimensions dims;
    std::string dtype = "bfloat16";
    bool json = false;
  };
  auto f = std::make_shared<Flags>();
  app->add_option("MODEL", f->model, "A model (directory, file, Hub id or catalog id)");
  app->add_option("--context,--max-model-len,--context-length,--ctx-size", f->context,
                  "Tokens per sequence (32768, 128k, 128K); the engines' names for it are "
                  "read too")
      ->required();
  app->add_option("--batch", f->query.batch, "Sequences held at once (default 1)");
  app->add_option("--engine", f->engine,
                  "Round each sequence to this engine's KV pages (NAME[@VERSION])");
  app->add_option("--kv-cache-dtype", f->query.kv_cache_dtype,
                  "auto (the model's dtype), fp8, bfloat16, float16, float32");
  app->add_option("-t,--tensor-parallel-size", f->query.tensor_parallel_size,
                  "Figures per GPU under this tensor parallelism (default 1)");
  app->add_option("--layers", f->dims.layers, "Without MODEL: decoder layers");
  app->add_option("--kv-heads", f->dims.kv_heads, "Without MODEL: KV heads per layer");
  app->add_option("--head-dim", f->dims.head_dim, "Without MODEL: head dimension");
  app->add_option("--window", f->dims.window, "Without MODEL: a sliding window on every layer");
  app->add_option("--mla-rank", f->dims.mla_rank, "Without MODEL: MLA kv_lora_rank");
  app->add_option("--rope-dim", f->dims.rope_dim, "Without MODEL: MLA qk_rope_head_dim");
  app->add_option("--dtype", f->dtype, "Without MODEL: the model dtype (bfloat16, float16, "
                                       "float32; default bfloat16)");
  app->add_flag("--json", f->json, "Print JSON (schema vramfit.kv/1)");
  app->footer("e.g.\n  vramfit kv qwen3-8b --context 32k --batch 4\n"
              "  vramfit kv --layers 32 --kv-heads 8 --head-dim 128 --context 131072");
  return [f, app]() {
    auto fail = [](const std::string& m) {
      fmt::print(stderr, "vramfit kv: {}\n", m);
      return kExitUsage;
    };
    auto context = ParseTokenCount("--context", f->context);
    if (!context.ok()) return fail(context.status().message());
    f->query.context = *context;
    const bool dims = f->dims.layers != 0 || f->dims.kv_heads != 0 || f->dims.head_dim != 0 ||
                      f->dims.mla_rank != 0;
    if (dims == !f->model.empty()) {
      return fail("give MODEL, or --layers with --kv-heads and --head-dim (or --mla-rank)");
    }
    ModelSpec spec;
    std::string name = f->model;
    if (dims) {
      const std::string& d = f->dtype;
      if (d != "bfloat16" && d != "float16" && d != "float32") {
        return fail(fmt::format("--dtype \"{}\": expected bfloat16, float16 or float32", d));
      }
      f->dims.dtype = d == "bfloat16" ? Dtype::kBF16 : d == "float16" ? Dtype::kF16 : Dtype::kF32;
      auto s = KvSpecFromDimensions(f->dims);
      if (!s.ok()) return fail(s.status().message());
      spec = std::move(*s);
      name = f->dims.mla_rank > 0
                 ? fmt::format("{} MLA layers of rank {} + {}", f->dims.layers, f->dims.mla_rank,
                               f->dims.rope_dim)
                 : fmt::format("{} layers x {} KV heads x {} dims", f->dims.layers,
                               f->dims.kv_heads, f->dims.head_dim);
    } else {
      auto inv = InspectModel(f->model, ModelOptions());
      if (!inv.ok()) return fail(inv.status().message());
      if (!inv->has_spec) return fail(fmt::format("{}: no config.json to read the layers from",
                                                  f->model));
      spec = inv->spec;
    }
    KvReportInfo info{name, "", f->query};
    Result<KvEstimate> kv = Status::Ok();
    if (f->engine.empty()) {
      kv = EstimateKv(spec, f->query);
    } else {
      auto choice = FindEngine(f->engine);
      if (!choice.ok()) return fail(choice.status().message());
      if (!choice->version.empty()) {
        const Status v = choice->engine->check_version(choice->version);
        if (!v.ok()) return fail(v.message());
      }
      f->query.version = choice->version;
      info.query = f->query;
      info.engine = choice->version.empty()
                        ? std::string(choice->engine->name)
                        : fmt::format("{}@{}", choice->engine->name, choice->version);
      kv = choice->engine->kv_cache ? choice->engine->kv_cache(spec, f->query)
                                    : EstimateKv(spec, f->query);
    }
    if (!kv.ok()) return fail(kv.status().message());
    const std::string out = f->json ? RenderKvJson(*kv, info) : RenderKvText(*kv, info);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return kExitOk;
  };
}

}  // namespace vramfit::cli
