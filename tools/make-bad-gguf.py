#!/usr/bin/env python3
"""Writes tests/bad/*.gguf: one handcrafted broken GGUF file per failure mode (committed;
rerun only to change them). tests/bad_gguf_test.cc reads each through InspectModel and checks
the exact message. Layout: ggml docs/gguf.md (little-endian; strings are a u64 length and the
bytes; a kv is key, u32 type, value; a tensor info is name, u32 n_dims, u64 ne[], u32 type,
u64 offset; the data section starts at the next multiple of the alignment, 32 by default)."""
import os, struct

root = os.path.join(os.path.dirname(__file__), "..", "tests", "bad")
os.makedirs(root, exist_ok=True)

def s(text):
    b = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(b)) + b

def kv_u32(key, v): return s(key) + struct.pack("<II", 4, v)
def kv_str(key, v): return s(key) + struct.pack("<I", 8) + s(v)

def info(name, ne, type_id, offset):
    return s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne) + \
        struct.pack("<IQ", type_id, offset)

def gguf(name, kvs=(), infos=(), n_tensors=None, n_kv=None, data=0, magic=b"GGUF",
         version=struct.pack("<I", 3), align=32, pad=True):
    body = b"".join(kvs) + b"".join(infos)
    head = magic + version + struct.pack("<QQ", len(infos) if n_tensors is None else n_tensors,
                                        len(kvs) if n_kv is None else n_kv)
    out = head + body
    if pad:
        out += b"\0" * ((-len(out)) % align)
    with open(os.path.join(root, name), "wb") as f:
        f.write(out + b"\0" * data)

arch = kv_str("general.architecture", "llama")
# F32 [8, 2] = 64 bytes.
a = info("a", [8, 2], 0, 0)

gguf("bad-magic.gguf", [arch], [a], data=64, magic=b"GGML")
gguf("version-1.gguf", [arch], [a], data=64, version=struct.pack("<I", 1))
gguf("big-endian.gguf", [arch], [a], data=64, version=struct.pack(">I", 3))
gguf("counts-past-end.gguf", [arch], [a], n_tensors=2**40, data=64)
gguf("string-2p63.gguf", [s("general.name")[:0] + struct.pack("<Q", 2**63) + b"general.name"],
     [a], n_kv=1, data=64)
gguf("unknown-value-type.gguf", [s("general.weird") + struct.pack("<I", 13) + b"\0" * 8], [a],
     data=64)
gguf("unknown-ggml-type.gguf", [arch], [info("a", [8, 2], 99, 0)], data=64)
gguf("removed-ggml-type.gguf", [arch], [info("a", [32, 2], 4, 0)], data=64)
gguf("misaligned.gguf", [arch], [info("a", [8, 2], 0, 8)], data=96)
gguf("overlap.gguf", [arch], [a, info("b", [8, 2], 0, 32)], data=128)
gguf("gap.gguf", [arch], [a, info("b", [8, 2], 0, 128)], data=256)
gguf("truncated.gguf", [arch], [a, info("b", [8, 2], 0, 64)], data=100)
gguf("alignment-3.gguf", [arch, kv_u32("general.alignment", 3)], [a], data=64, align=3)
gguf("block-remainder.gguf", [arch], [info("a", [33, 2], 12, 0)], data=288)
gguf("too-many-dims.gguf", [arch], [info("a", [1, 1, 1, 1, 8], 0, 0)], data=32)
gguf("bool-2.gguf", [s("general.flag") + struct.pack("<IB", 7, 2)], [a], data=64)
gguf("duplicate-key.gguf", [arch, arch], [a], data=64)
gguf("duplicate-tensor.gguf", [arch], [a, info("a", [8, 2], 0, 64)], data=128)
gguf("name-64.gguf", [arch], [info("n" * 64, [8, 2], 0, 0)], data=64)
# An array of arrays of ... 100 deep (each one element), the innermost an array of one u8.
nested = struct.pack("<IQ", 0, 1) + b"\7"
for _ in range(99):
    nested = struct.pack("<IQ", 9, 1) + nested
gguf("nesting-bomb.gguf", [s("general.bomb") + struct.pack("<I", 9) + nested], [a], data=64)
# An array that claims 2^30 u64 elements (8 GiB) in a file of a few hundred bytes.
gguf("array-past-end.gguf", [s("general.big") + struct.pack("<IIQ", 9, 10, 2**30)], [a],
     n_kv=1, data=64)
gguf("short.gguf", pad=False, magic=b"GGUF", version=b"")

# tests/gguf/: a tiny valid qwen3 model in a Q4_K_M-like mix for the CLI golden output.
# ggml type id: (block elements, bytes per block), ggml.c type_traits.
TYPES = {"F32": (0, 1, 4), "Q8_0": (8, 32, 34), "Q4_K": (12, 256, 144), "Q6_K": (14, 256, 210)}
def tiny():
    out = os.path.join(os.path.dirname(__file__), "..", "tests", "gguf")
    os.makedirs(out, exist_ok=True)
    kvs = [kv_str("general.architecture", "qwen3"), kv_str("general.name", "tiny"),
           kv_u32("general.file_type", 15), kv_u32("qwen3.block_count", 2),
           kv_u32("qwen3.embedding_length", 256), kv_u32("qwen3.context_length", 4096),
           kv_u32("qwen3.feed_forward_length", 256), kv_u32("qwen3.attention.head_count", 2),
           kv_u32("qwen3.attention.head_count_kv", 1), kv_u32("qwen3.attention.key_length", 128),
           kv_u32("qwen3.attention.value_length", 128)]
    tensors = [("token_embd.weight", "Q8_0", [32, 256])]
    for i in range(2):
        b = "blk.%d." % i
        tensors += [(b + "attn_norm.weight", "F32", [256]), (b + "attn_q.weight", "Q4_K", [256, 256]),
                    (b + "attn_k.weight", "Q4_K", [128, 256]), (b + "attn_v.weight", "Q6_K", [128, 256]),
                    (b + "attn_output.weight", "Q4_K", [256, 256]),
                    (b + "attn_q_norm.weight", "F32", [128]), (b + "attn_k_norm.weight", "F32", [128]),
                    (b + "ffn_norm.weight", "F32", [256]), (b + "ffn_gate.weight", "Q4_K", [256, 256]),
                    (b + "ffn_up.weight", "Q4_K", [256, 256]),
                    (b + "ffn_down.weight", "Q6_K" if i == 0 else "Q4_K", [256, 256])]
    tensors += [("output_norm.weight", "F32", [256]), ("output.weight", "Q6_K", [32, 256])]
    infos, off = [], 0
    for name, t, shape in tensors:
        tid, blk, size = TYPES[t]
        ne = list(reversed(shape))  # GGUF writes the innermost dimension first
        n = ne[0] // blk * size
        for d in ne[1:]: n *= d
        infos.append(info(name, ne, tid, off))
        off = (off + n + 31) // 32 * 32
    global root
    saved, root = root, out
    gguf("tiny-qwen3-Q4_K_M.gguf", kvs, infos, data=off)
    root = saved
tiny()

# fuzz/corpus/gguf/: small valid models (F32/F16/Q8_0, under libFuzzer's 64 KiB) that reach
# the spec and the inventory: a dense llama with per-layer arrays, a hybrid with delta-net
# layers, an MLA model, and a sliding-window one.
TYPES.update({"F16": (1, 1, 2)})
def kv_arr_i32(key, vals): return s(key) + struct.pack("<IIQ", 9, 5, len(vals)) + \
    b"".join(struct.pack("<i", v) for v in vals)
def seed(name, arch, kvs, tensors, align=32):
    infos, off = [], 0
    for tname, t, shape in tensors:
        tid, blk, size = TYPES[t]
        ne = list(reversed(shape))
        n = ne[0] // blk * size
        for d in ne[1:]: n *= d
        infos.append(info(tname, ne, tid, off))
        off = (off + n + align - 1) // align * align
    global root
    saved, root = root, os.path.join(os.path.dirname(__file__), "..", "fuzz", "corpus", "gguf")
    os.makedirs(root, exist_ok=True)
    gguf(name, [kv_str("general.architecture", arch)] + kvs, infos, data=off, align=align)
    root = saved
def layer(i, extra=()):
    b = "blk.%d." % i
    return [(b + "attn_norm.weight", "F32", [32]), (b + "attn_q.weight", "Q8_0", [32, 32]),
            (b + "ffn_up.weight", "F16", [64, 32])] + [(b + n, t, sh) for n, t, sh in extra]
seed("llama-arrays.gguf", "llama",
     [kv_u32("llama.block_count", 2), kv_u32("llama.embedding_length", 32),
      kv_arr_i32("llama.attention.head_count", [4, 2]), kv_arr_i32("llama.attention.head_count_kv", [1, 0]),
      kv_arr_i32("llama.feed_forward_length", [64, 64]), kv_u32("general.file_type", 7)],
     [("token_embd.weight", "Q8_0", [8, 32])] + layer(0) + layer(1) + [("output.weight", "F16", [8, 32])])
seed("qwen35moe-hybrid.gguf", "qwen35moe",
     [kv_u32("qwen35moe.block_count", 4), kv_u32("qwen35moe.embedding_length", 32),
      kv_u32("qwen35moe.attention.head_count", 2), kv_u32("qwen35moe.full_attention_interval", 2),
      kv_u32("qwen35moe.ssm.conv_kernel", 4), kv_u32("qwen35moe.ssm.state_size", 8),
      kv_u32("qwen35moe.ssm.group_count", 2), kv_u32("qwen35moe.ssm.time_step_rank", 4),
      kv_u32("qwen35moe.ssm.inner_size", 32), kv_u32("qwen35moe.expert_count", 4),
      kv_u32("qwen35moe.expert_used_count", 2)],
     [("token_embd.weight", "F16", [8, 32])] +
     layer(0, [("attn_qkv.weight", "F16", [64, 32]), ("ssm_conv1d.weight", "F32", [64, 4])]) +
     layer(1, [("ffn_gate_exps.weight", "Q8_0", [4, 16, 32])]) + layer(2) + layer(3))
seed("deepseek2-mla.gguf", "deepseek2",
     [kv_u32("deepseek2.block_count", 2), kv_u32("deepseek2.embedding_length", 32),
      kv_u32("deepseek2.attention.head_count", 2), kv_u32("deepseek2.attention.kv_lora_rank", 16),
      kv_u32("deepseek2.rope.dimension_count", 8), kv_u32("deepseek2.attention.key_length_mla", 24),
      kv_u32("deepseek2.expert_count", 4), kv_u32("deepseek2.leading_dense_block_count", 1)],
     [("token_embd.weight", "F16", [8, 32])] +
     layer(0, [("attn_kv_a_mqa.weight", "F16", [24, 32])]) + layer(1))
seed("gemma3-swa.gguf", "gemma3",
     [kv_u32("gemma3.block_count", 6), kv_u32("gemma3.embedding_length", 32),
      kv_u32("gemma3.attention.head_count", 2), kv_u32("gemma3.attention.sliding_window", 16),
      kv_u32("general.alignment", 64)],
     [("token_embd.weight", "F16", [8, 32])] + layer(0), align=64)

# tests/gguf-vision/: a Gemma 3 vision projector (mmproj) header with two small F32 tensors, for
# the llama.cpp plan's --mmproj (its keys claim the real tower: 896 px, 14 px patches, 27 layers).
def tiny_mmproj():
    global root
    saved, root = root, os.path.join(os.path.dirname(__file__), "..", "tests", "gguf-vision")
    os.makedirs(root, exist_ok=True)
    kv_bool = lambda key, v: s(key) + struct.pack("<IB", 7, 1 if v else 0)
    kvs = [kv_str("general.architecture", "clip"), kv_bool("clip.has_vision_encoder", True),
           kv_str("clip.projector_type", "gemma3"), kv_u32("clip.vision.image_size", 896),
           kv_u32("clip.vision.patch_size", 14), kv_u32("clip.vision.embedding_length", 1152),
           kv_u32("clip.vision.feed_forward_length", 4304), kv_u32("clip.vision.block_count", 27),
           kv_u32("clip.vision.attention.head_count", 16)]
    infos = [info("v.patch_embd.weight", [16, 16], 0, 0),
             info("mm.input_projection.weight", [16, 16], 0, 1024)]
    gguf("mmproj-tiny-gemma3.gguf", kvs, infos, data=2048)
    root = saved
tiny_mmproj()
print("wrote", root)
