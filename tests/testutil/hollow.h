// Hollow checkpoints for tests and benchmarks: real safetensors headers over sparse data.
// The data region is created with ftruncate, so a 60 GB checkpoint costs a few MB of disk
// and is byte-for-byte what vramfit reads from a real one (it never reads the data).
#ifndef VRAMFIT_TESTS_TESTUTIL_HOLLOW_H_
#define VRAMFIT_TESTS_TESTUTIL_HOLLOW_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vramfit/formats.h"

namespace vramfit::testing {

struct HollowTensor {
  std::string name;
  Dtype dtype;
  std::vector<uint64_t> shape;
};

// Bytes of a tensor: elements x bits / 8 (the test data always has whole bytes).
uint64_t HollowBytes(const HollowTensor& t);

// Writes one safetensors file. Returns the header length N.
uint64_t WriteHollowSafetensors(const std::string& path, const std::vector<HollowTensor>& tensors);

// Writes `shards` files named model-0000i-of-0000n.safetensors plus
// model.safetensors.index.json (with metadata.total_size) into `dir`; shards == 1 writes a
// single model.safetensors without an index.
void WriteHollowCheckpoint(const std::string& dir, const std::vector<HollowTensor>& tensors,
                           int shards);

// A safetensors file image in memory: the 8-byte little-endian length of `header`, the
// header, `data_bytes` zero bytes.
std::string SafetensorsImage(const std::string& header, uint64_t data_bytes);

// A file image holding `n` one-byte U8 tensors named t0 .. t<n-1>, in offset order.
std::string OneByteTensorsImage(size_t n);

// The files of a checkpoint whose shards both hold the same `n` names: a.safetensors holds
// "first" and t0 .. t<n-1>, b.safetensors t0 .. t<n-1>, and the index puts "first" in a and
// the others in b (the index check once scanned shard b for each name: quadratic).
std::map<std::string, std::string> NamesInTwoShards(size_t n);

// Writes text to a file.
void WriteText(const std::string& path, const std::string& text);

// A fresh empty directory under the system temp dir, removed by the OS (tests clean up).
std::string MakeTempDir(const std::string& tag);

}  // namespace vramfit::testing

#endif  // VRAMFIT_TESTS_TESTUTIL_HOLLOW_H_
