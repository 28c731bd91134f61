#!/usr/bin/env python3
"""Writes tests/bad/: one handcrafted broken input per failure mode (committed; rerun only
to change them). Each is read by tests/bad_input_test.cc, which checks the exact message.
Also tests/hostile/: valid inputs built to attack the output (names made of terminal
escapes), read by tests/cli_test.cmake."""
import json, os, struct

root = os.path.join(os.path.dirname(__file__), "..", "tests", "bad")
os.makedirs(root, exist_ok=True)

def st(name, header: bytes, data=0, length=None):
    n = len(header) if length is None else length
    with open(os.path.join(root, name), "wb") as f:
        f.write(struct.pack("<Q", n) + header + b"\0" * data)

def ok_header(**over):
    h = {"a": {"dtype": "F16", "shape": [2, 2], "data_offsets": [0, 8]}}
    h.update(over)
    return json.dumps(h).encode()

st("truncated.safetensors", ok_header(), data=3)
with open(os.path.join(root, "short.safetensors"), "wb") as f: f.write(b"\x10\0\0")
st("header-past-end.safetensors", b"{}", length=1000)
st("header-2p63.safetensors", b"{}", length=2**63)
st("non-utf8.safetensors", b'{"a\xc3\x28":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', data=1)
st("invalid-json.safetensors", b'{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}', data=1)
st("overlap.safetensors", json.dumps({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
                                      "b": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}}).encode(), data=6)
st("gap.safetensors", json.dumps({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
                                  "b": {"dtype": "U8", "shape": [4], "data_offsets": [8, 12]}}).encode(), data=12)
st("shape-overflow.safetensors", json.dumps({"a": {"dtype": "F32", "shape": [2**32, 2**32, 2], "data_offsets": [0, 4]}}).encode(), data=4)
st("unknown-dtype.safetensors", json.dumps({"a": {"dtype": "F12", "shape": [1], "data_offsets": [0, 2]}}).encode(), data=2)
st("metadata-not-string.safetensors", json.dumps({"__metadata__": {"format": {"nested": 1}}}).encode())
st("duplicate-key.safetensors", b'{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', data=2)
st("trailing-bytes.safetensors", ok_header(), data=12)
st("f4-odd.safetensors", json.dumps({"a": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}}).encode(), data=2)
# Hostile JSON: a name of terminal escapes in a message, a BOM, a lone surrogate, 2^64.
st("escape-name.safetensors", json.dumps({"\x1b[2J\x1b]0;owned\x07\n": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
                                          "b": {"dtype": "U8", "shape": [4], "data_offsets": [8, 12]}}).encode(), data=12)
st("bom.safetensors", b"\xef\xbb\xbf" + ok_header(), data=8)
st("lone-surrogate.safetensors", b'{"a\\ud800":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', data=1)
st("shape-2p64.safetensors", b'{"a":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,1]}}', data=1)

def dirfile(d, name, text):
    os.makedirs(os.path.join(root, d), exist_ok=True)
    with open(os.path.join(root, d, name), "w") as f: f.write(text)

good_cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8,
            "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16, "vocab_size": 4}
dirfile("index-missing-shard", "config.json", json.dumps(good_cfg))
dirfile("index-missing-shard", "model.safetensors.index.json",
        json.dumps({"metadata": {"total_size": 8}, "weight_map": {"a": "model-00001-of-00002.safetensors"}}))
dirfile("index-missing-tensor", "model.safetensors.index.json",
        json.dumps({"weight_map": {"a": "s.safetensors", "b": "s.safetensors"}}))
with open(os.path.join(root, "index-missing-tensor", "s.safetensors"), "wb") as f:
    h = ok_header(); f.write(struct.pack("<Q", len(h)) + h + b"\0" * 8)
dirfile("index-escapes-dir", "model.safetensors.index.json", json.dumps({"weight_map": {"a": "../short.safetensors"}}))
dirfile("config-missing-field", "config.json", json.dumps({k: v for k, v in good_cfg.items() if k != "hidden_size"}))
dirfile("config-absurd", "config.json", json.dumps(dict(good_cfg, num_hidden_layers=-3)))
dirfile("config-huge-layers", "config.json", json.dumps(dict(good_cfg, num_hidden_layers=1000000000)))
dirfile("config-text-config-type", "config.json", json.dumps(dict(good_cfg, text_config="qwen3")))
dirfile("config-not-json", "config.json", "architectures: [LlamaForCausalLM]\n")
dirfile("config-layer-types", "config.json", json.dumps(dict(good_cfg, layer_types=["mamba"])))
dirfile("config-wrong-quant", "config.json", json.dumps(dict(good_cfg, quantization_config=["awq"])))
dirfile("config-bom", "config.json", "\ufeff" + json.dumps(good_cfg))
dirfile("config-2p64", "config.json", json.dumps(good_cfg)[:-1] + ', "vocab_size": 18446744073709551616}')
dirfile("config-lone-surrogate", "config.json", json.dumps(good_cfg)[:-1] + ', "model_type": "\\udc00"}')
vl_cfg = dict(good_cfg, architectures=["Qwen2_5_VLForConditionalGeneration"], model_type="qwen2_5_vl",
              vision_config={"depth": 1, "hidden_size": 8, "intermediate_size": 16, "num_heads": 2,
                             "patch_size": 14, "temporal_patch_size": 2, "spatial_merge_size": 2,
                             "out_hidden_size": 8})
dirfile("config-vision-patch-0", "config.json",
        json.dumps(dict(vl_cfg, vision_config=dict(vl_cfg["vision_config"], patch_size=0))))
dirfile("config-vision-merge-0", "config.json",
        json.dumps(dict(vl_cfg, vision_config=dict(vl_cfg["vision_config"], spatial_merge_size=0))))
dirfile("index-2p64", "model.safetensors.index.json",
        '{"metadata": {"total_size": 18446744073709551616}, "weight_map": {"a": "s.safetensors"}}')

# tests/hostile/: valid, and hostile to whoever prints them.
hostile = os.path.join(os.path.dirname(__file__), "..", "tests", "hostile")
os.makedirs(os.path.join(hostile, "escape-names"), exist_ok=True)
names = {"model.embed_tokens.weight\x1b[2J\x1b[H": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
         "line\nforged: fits": {"dtype": "U8", "shape": [4], "data_offsets": [4, 8]},
         "nul\x00del\x7f": {"dtype": "U8", "shape": [4], "data_offsets": [8, 12]}}
with open(os.path.join(hostile, "escape-names", "model.safetensors"), "wb") as f:
    h = json.dumps(names).encode()
    f.write(struct.pack("<Q", len(h)) + h + b"\0" * 12)
print("wrote", root)
