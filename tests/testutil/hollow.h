// Hollow checkpoints for tests and benchmarks: real safetensors headers over sparse data.
// The data region is created with ftruncate, so a 60 GB checkpoint costs a few MB of disk
// and is byte-for-byte what vramfit reads from a real one (it never reads the data).
#ifndef VRAMFIT_TESTS_TESTUTIL_HOLLOW_H_
#define VRAMFIT_TESTS_TESTUTIL_HOLLOW_H_

#include <cstdint>
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

// Writes text to a file.
void WriteText(const std::string& path, const std::string& text);

// A fresh empty directory under the system temp dir, removed by the OS (tests clean up).
std::string MakeTempDir(const std::string& tag);

}  // namespace vramfit::testing

#endif  // VRAMFIT_TESTS_TESTUTIL_HOLLOW_H_
