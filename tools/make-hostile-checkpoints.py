#!/usr/bin/env python3
"""Writes the hostile checkpoints docs/testing.md measures (time, peak RSS) into OUT:

  big-header/model.safetensors  one header of 1,500,000 empty tensors (87 MB of JSON)
  six-shards/                   six such shards, no index (every *.safetensors is read)
  three-shards/                 three of them (under the 5,000,000-tensor cap)
  dup-names/                    two shards that both hold the same 100,000 names, the index
                                naming the second for them (and the first for one more)

Usage: tools/make-hostile-checkpoints.py OUT   (then e.g. /usr/bin/time -v vramfit inspect
OUT/big-header). Data regions are sparse (truncate), so the files cost their headers only.
"""
import json
import os
import struct
import sys


def write_shard(path, names, empty=False):
    """One U8 tensor a name: one byte each, or (empty) none, which keeps a big header short."""
    parts = []
    for i, name in enumerate(names):
        b, e = (0, 0) if empty else (i, i + 1)
        parts.append('"%s":{"dtype":"U8","shape":[%d],"data_offsets":[%d,%d]}'
                     % (name, e - b, b, e))
    header = ("{" + ",".join(parts) + "}").encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)))
        f.write(header)
        f.truncate(8 + len(header) + (0 if empty else len(names)))
    return len(header)


def main():
    out = sys.argv[1]
    n = 1_500_000
    for d in ("big-header", "six-shards", "three-shards", "dup-names"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    size = write_shard(os.path.join(out, "big-header", "model.safetensors"),
                       ["t%d" % i for i in range(n)], empty=True)
    print("big-header: %d tensors, %d header bytes" % (n, size))
    for d, k in (("six-shards", 6), ("three-shards", 3)):
        for s in range(k):
            write_shard(os.path.join(out, d, "shard-%d.safetensors" % s),
                        ["s%dt%d" % (s, i) for i in range(n)], empty=True)
        print("%s: %d shards of %d tensors" % (d, k, n))
    # Shard a holds "first" and copies of every name; the index puts the names in b.
    names = ["model.layers.%d.t%d" % (i // 1000, i) for i in range(100_000)]
    write_shard(os.path.join(out, "dup-names", "a.safetensors"), ["first"] + names)
    write_shard(os.path.join(out, "dup-names", "b.safetensors"), names)
    weight_map = {"first": "a.safetensors"}
    weight_map.update({name: "b.safetensors" for name in names})
    with open(os.path.join(out, "dup-names", "model.safetensors.index.json"), "w") as f:
        json.dump({"weight_map": weight_map}, f)
    print("dup-names: 100,000 names in two shards, indexed in the second")


if __name__ == "__main__":
    main()
