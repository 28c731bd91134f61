#!/usr/bin/env python3
"""Writes fuzz/corpus/<target>/: the small committed seed corpus of each libFuzzer target
(tools/run-fuzz.sh adds the test data). Rerun only to change the seeds."""
import glob
import json
import os
import shutil
import struct

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "fuzz", "corpus")


def put(target, name, data):
    d = os.path.join(root, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def st(header, data=0):
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + b"\0" * data


def u8(begin, end):
    return {"dtype": "U8", "shape": [end - begin], "data_offsets": [begin, end]}


shutil.rmtree(root, ignore_errors=True)

# command: argv split on NUL when the input holds one, else on spaces.
put("command", "serve", "vllm serve qwen3-8b -tp 2 --max-model-len 4096 --port 8000")
put("command", "nul-split", "\0".join(["VLLM_USE_V1=0", "vllm", "serve", "Qwen/Qwen3-8B",
                                        "--limit-mm-per-prompt", '{"image":2}',
                                        "--gpu-memory-utilization=0.95"]))
put("command", "python-m", "env CUDA_VISIBLE_DEVICES=0,1 python -m vllm.entrypoints.openai."
    "api_server --model m --tensor-parallel-size 2 --max-num-seqs 8 --enforce-eager")
put("command", "twice", "vllm serve m -tp 2 -tp=1 --max-model-len 1k --max-model-len 32K "
    "--kv-cache-dtype fp8 --cpu-offload-gb 4 --mm-processor-kwargs {\"max_pixels\":1000}")

put("command", "sglang-launch", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 python3 -m "
    "sglang.launch_server --model-path m --tp 2 --mem-frac=0.8 --context-length 8192 "
    "--disable-cuda-graph --cuda-graph-bs 1 2 4 --chunked-prefill-size -1 --pp 2 --max-model-len 1")
put("command", "sglang-serve", "\0".join(["sglang", "serve", "--model-path=org/m", "--dp", "2",
                                           "--json-model-override-args",
                                           '{"max_position_embeddings": 65536}',
                                           "--lora-paths", "a", "b", "--enable-dp-attention",
                                           "--kv-cache-dtype", "fp8_e4m3", "--", "x"]))

# cli: the vramfit command line, argv split like the command target's.
put("cli", "plan", "plan qwen3-8b --gpu 4090 --max-model-len 32k --kv-cache-dtype fp8 -tp 1")
put("cli", "plan-json", "plan qwen3-30b-a3b-gptq-int4 --gpu-memory 24 --json --engine vllm@0.11")
put("cli", "check", "check --gpu h100 --other-memory 2GiB -- VLLM_USE_V1=0 vllm serve "
    "Qwen/Qwen3-8B -tp 2 --max-num-seqs 64")
put("cli", "fit-context", "fit qwen3-4b-instruct-2507-awq --gpu 4090 --goal context "
    "--min-concurrency 2")
put("cli", "fit-concurrency", "fit qwen3.5-35b-a3b-awq --gpu 4090 --goal concurrency "
    "--min-context 128K --gpus 2 --no-variants")
put("cli", "nul-split", "\0".join(["fit", "qwen3-8b", "--gpu", "a100-40gb", "--gpus", "2",
                                    "--json"]))
put("cli", "gpus", "gpus --json")

# plan: the tiny configs of each family.
for p in sorted(glob.glob(os.path.join(here, "..", "tests", "configs", "*", "config.json"))):
    put("plan", os.path.basename(os.path.dirname(p)), open(p, "rb").read())
    put("config", os.path.basename(os.path.dirname(p)), open(p, "rb").read())

# checkpoint: files split on "\n\x01\n", each a name line and the bytes.
def files(*parts):
    return b"\n\x01\n".join(name.encode() + b"\n" + data for name, data in parts)

put("checkpoint", "sharded", files(
    ("model.safetensors.index.json",
     json.dumps({"metadata": {"total_size": 6},
                 "weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}}).encode()),
    ("s1.safetensors", st({"a": u8(0, 2)}, 2)),
    ("s2.safetensors", st({"b": u8(0, 4), "a": u8(4, 6)}, 6)),
    ("config.json", b"{}")))
put("checkpoint", "single", files(("model.safetensors", st({"x": u8(0, 1)}, 1))))
put("checkpoint", "listing", files(("a.safetensors", st({"x": u8(0, 1)}, 1)),
                                   ("consolidated.safetensors", st({}, 0)),
                                   ("b.safetensors", st({"y": u8(0, 3)}, 3))))

# render: first byte even, a log; odd, a safetensors file.
put("render", "latin1-log", b"\0" + open(os.path.join(
    here, "..", "tests", "doctor", "hostile", "latin1-kv-error.log"), "rb").read())
put("render", "escape-names", b"\x01" + st({"a\x1b[2J\n": u8(0, 1), "b\x00": u8(1, 2)}, 2))

# safetensors / index / config / doctor: hostile spellings the parsers must name.
put("safetensors", "bom", st(b"\xef\xbb\xbf{}"))
put("safetensors", "surrogates", st(b'{"\\ud83d\\ude00\\u0000":{"dtype":"U8","shape":[1],'
                                    b'"data_offsets":[0,1],"extra":[{"k":[true,null,-0.5e3]}]}}', 1))
put("safetensors", "metadata", st({"__metadata__": {"format": "pt"}, "t": u8(0, 2)}, 2))
put("index", "escapes", json.dumps({"metadata": {"total_size": 3.0},
                                    "weight_map": {"a\u001b": "s.safetensors"}}))
# The config fuzz target's one finding (a GPTQ `dynamic` key std::regex backtracked on
# without end, tests/quant: PatternsThatBacktrackWithoutEndAreNeverRun), kept as a seed.
put("config", "backtracking-dynamic", json.dumps({
    "model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 128,
    "num_local_experts": 2, "num_experts_per_tok": 1,
    "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 32,
                            "dynamic": {"+:.*\\w.$0": {"bits": 8},
                                        "-:.*+ayers\\.1\\..*": {}}}}))
put("config", "big-number", '{"model_type":"llama","hidden_size":18446744073709551616}')
put("config", "vision", json.dumps({"model_type": "qwen2_5_vl", "hidden_size": 8,
                                    "num_hidden_layers": 1, "num_attention_heads": 2,
                                    "intermediate_size": 16, "vocab_size": 4,
                                    "vision_config": {"depth": 1, "hidden_size": 8,
                                                      "intermediate_size": 8, "patch_size": 1,
                                                      "spatial_merge_size": 1}}))
put("doctor", "chinese", open(os.path.join(here, "..", "tests", "doctor", "hostile",
                                           "chinese-long-lines.log"), "rb").read())
# doctor: the shapes logs are saved and pasted in (docs/doctor.md): UTF-16 with and without a
# byte-order mark, a surrogate cut off, collectors' JSON records, an escaped traceback, HTML
# escapes, a terminal's 80-column wrap, two runs, a shell's SIGKILL report.
oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a "
       "total capacity of 23.52 GiB of which 115.69 MiB is free.\n")
banner = "INFO 05-10 10:12:04 [api_server.py:1043] vLLM API server version 0.8.5\n"
put("doctor", "utf16le-bom", b"\xff\xfe" + (banner + oom).replace("\n", "\r\n").encode("utf-16-le"))
put("doctor", "utf16be-lone-surrogate", (banner + oom).encode("utf-16-be") + b"\xd8\x3d\x00")
put("doctor", "json-records", "".join(
    json.dumps({k: line + "\n", "time": "t"}) + "\n"
    for k, line in zip(["log", "MESSAGE", "textPayload", "message"],
                       ["Traceback (most recent call last):",
                        '  File "/a/vllm/v1/worker/gpu_model_runner.py", line 1, in profile_run',
                        "\x1b[31mERROR\x1b[0m \u00e9\U0001f600", oom.strip()])))
put("doctor", "escaped-traceback", 'Error: {"error": "Traceback (most recent call last):\\n  '
    'File \\"C:\\\\app\\\\run.py\\", line 3, in generate\\n' + oom.strip() + '"}\n')
put("doctor", "html-escaped", "  File &quot;/a/transformers/generation/utils.py&quot;, line 1, "
    "in generate &lt;&amp;&#39;&#x27;&apos;&gt;\n" + oom)
wrapped = "".join(banner + oom for _ in range(3))
put("doctor", "wrapped-80", "".join(l[i:i + 80] + "\n" for l in wrapped.splitlines()
                                    for i in range(0, len(l), 80)))
put("doctor", "two-runs-killed", oom + "user@host:~$ CUDA_VISIBLE_DEVICES=0 python run.py\n" +
    banner + oom + "zsh: killed     python run.py\nvllm-1 exited with code 137\n")
print("wrote", os.path.normpath(root))
