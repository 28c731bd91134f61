// vramfit: will this model fit on these GPUs, at which stage would it run out of memory,
// and what makes it fit.
#include <string>
#include <vector>

#include "commands.h"

int main(int argc, char** argv) {
  return vramfit::cli::Run(std::vector<std::string>(argv + 1, argv + argc));
}
