#!/usr/bin/env python3
"""Measures transformers' peak GPU memory on small randomly initialised models built from the
catalog's config.json values (no weights are downloaded), and compares each peak with
`vramfit plan --engine transformers --json` for the same settings.

Needs a CUDA GPU, PyTorch and transformers (and accelerate for device_map). Not run in CI.

  tools/transformers-measure.py --vramfit build/vramfit --out measured.json \
      [--models qwen3-4b,qwen3-8b] [--layers 4] [--prompts 1,2048,8192] [--new 64]

Each model is shrunk to --layers decoder layers (the per-layer terms scale; the catalog's own
counts are kept for everything else), built with AutoModelForCausalLM.from_config in bfloat16,
moved to cuda:0, and run with generate(min_new_tokens=new, max_new_tokens=new) for every
attention implementation and cache class listed. The record written for each run has the
settings, torch.cuda.max_memory_allocated, memory_reserved, and vramfit's planned peak_bytes
for a config.json with the same shrunk values.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def catalog_config(model):
    # The catalog's published config.json values (data/models/<id>.json, key "config").
    path = os.path.join(os.path.dirname(__file__), "..", "data", "models", model + ".json")
    with open(path) as f:
        return json.load(f)["config"]


def plan(vramfit, model_dir, gpu, attn, cache, prompt, new, batch):
    args = [vramfit, "plan", model_dir, "--engine", "transformers", "--gpu", gpu, "--json",
            "--dtype", "bfloat16", "--device-map", "cuda:0", "--attn-implementation", attn,
            "--cache-implementation", cache, "--prompt-tokens", str(prompt),
            "--max-new-tokens", str(new), "--batch-size", str(batch), "--do-sample", "false"]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return json.loads(out.stdout)["gpus"][0]["peak_bytes"]


def measure(cfg, attn, cache, prompt, new, batch):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.for_model(**cfg)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    with torch.device("cuda:0"):
        model = AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16,
                                                 attn_implementation=attn)
    model.eval()
    ids = torch.randint(0, config.vocab_size, (batch, prompt), device="cuda:0")
    kwargs = dict(max_new_tokens=new, min_new_tokens=new, do_sample=False)
    if cache != "dynamic":
        kwargs["cache_implementation"] = cache
    with torch.no_grad():
        model.generate(ids, attention_mask=torch.ones_like(ids), **kwargs)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    reserved = torch.cuda.max_memory_reserved()
    del model
    return peak, reserved


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vramfit", default="build/vramfit")
    ap.add_argument("--out", default="transformers-measured.json")
    ap.add_argument("--models", default="qwen3-4b,qwen3-8b,llama-3.1-8b-instruct")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--prompts", default="1,2048,8192")
    ap.add_argument("--new", type=int, default=64)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--attn", default="sdpa,eager")
    ap.add_argument("--caches", default="dynamic,static")
    ap.add_argument("--gpu", default="h100", help="catalog id of the GPU it runs on")
    a = ap.parse_args()
    import torch
    import transformers

    records = []
    for model in a.models.split(","):
        cfg = catalog_config(model)
        text = cfg.get("text_config", cfg)
        text["num_hidden_layers"] = a.layers
        for key in ("layer_types", "mlp_only_layers"):
            if isinstance(text.get(key), list):
                text[key] = text[key][: a.layers]
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "config.json"), "w") as f:
                json.dump(cfg, f)
            for attn in a.attn.split(","):
                for cache in a.caches.split(","):
                    for prompt in map(int, a.prompts.split(",")):
                        try:
                            peak, reserved = measure(dict(text), attn, cache, prompt, a.new,
                                                     a.batch)
                        except torch.OutOfMemoryError:
                            peak, reserved = None, None
                        planned = plan(a.vramfit, d, a.gpu, attn, cache, prompt, a.new, a.batch)
                        records.append(dict(model=model, layers=a.layers, attn=attn,
                                            cache=cache, prompt_tokens=prompt,
                                            max_new_tokens=a.new, batch_size=a.batch,
                                            measured_peak_bytes=peak,
                                            measured_reserved_bytes=reserved,
                                            planned_peak_bytes=planned,
                                            torch=torch.__version__,
                                            transformers=transformers.__version__,
                                            gpu=torch.cuda.get_device_name(0)))
                        print(json.dumps(records[-1]), file=sys.stderr)
    with open(a.out, "w") as f:
        json.dump({"records": records}, f, indent=1)


if __name__ == "__main__":
    main()
