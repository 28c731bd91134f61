// Catalog models and GPUs for unit tests (the ids must exist: a missing one fails the test).
#ifndef VRAMFIT_TESTS_TESTUTIL_CATALOG_H_
#define VRAMFIT_TESTS_TESTUTIL_CATALOG_H_

#include <gtest/gtest.h>

#include "vramfit/gpu.h"
#include "vramfit/inspect.h"

namespace vramfit::testutil {

inline Inventory Catalog(const char* id) {
  auto inv = InspectModel(id, {});
  EXPECT_TRUE(inv.ok()) << id;
  return inv.ok() ? *inv : Inventory();
}

inline GpuSpec Gpu(const char* name) {
  auto g = FindGpu(name);
  EXPECT_TRUE(g.ok()) << name;
  return g.ok() ? *g : GpuSpec();
}

}  // namespace vramfit::testutil

#endif  // VRAMFIT_TESTS_TESTUTIL_CATALOG_H_
