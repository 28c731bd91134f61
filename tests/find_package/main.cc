// Uses the installed library: inspects a catalog model and checks a published count.
#include <cstdio>

#include "vramfit/inspect.h"

int main() {
  auto inv = vramfit::InspectModel("qwen3-8b", {});
  if (!inv.ok()) {
    std::fprintf(stderr, "%s\n", inv.status().ToString().c_str());
    return 1;
  }
  return inv->parameters == 8190735360ULL ? 0 : 1;
}
