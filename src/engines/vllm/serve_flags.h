// The complete flag list of `vllm serve` (serve_flags_data.cc) and the check that refuses a
// flag vLLM's own parser refuses, before anything is planned: an unknown flag stops `vllm
// serve` at once, whatever the memory would have been.
#ifndef VRAMFIT_ENGINES_VLLM_SERVE_FLAGS_H_
#define VRAMFIT_ENGINES_VLLM_SERVE_FLAGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "vramfit/engine.h"
#include "vramfit/status.h"

namespace vramfit::vllm {

// Every option string of the serve parser at v0.10.0 and at v0.22-dev, sorted.
const std::vector<std::string_view>& ServeFlagsV010();
const std::vector<std::string_view>& ServeFlagsV022();

// kInvalidArgument for the first flag of `given` (names as written, `--name` or `-x`, without
// a value) that `vllm serve` of `version` ("" for the newest modelled) rejects, naming the
// nearest real flags. Accepted as argparse and vLLM's FlexibleArgumentParser accept them:
// `_` for `-`, `--no-NAME` of a flag, `--name.key` of a flag (JSON config keys), and a
// prefix of exactly one long flag (argparse's allow_abbrev, which vLLM leaves on); a prefix
// of several is refused as ambiguous. Between the two listed releases a flag is refused only
// when neither has it.
Status CheckServeFlags(const std::vector<std::string>& given, const std::string& version);

// The Engine entry point: CheckServeFlags over a command's given flags.
Status CheckCommandFlags(const EngineCommand& command, const std::string& version);

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_SERVE_FLAGS_H_
