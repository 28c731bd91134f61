// vLLM's `--config FILE`: a YAML file of serve flags, read as vLLM reads it.
#ifndef VRAMFIT_ENGINES_VLLM_CONFIG_FILE_H_
#define VRAMFIT_ENGINES_VLLM_CONFIG_FILE_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "vramfit/status.h"

namespace vramfit::vllm {

// The flags of a config file's text, as vLLM writes them into its arguments: `key: true` is
// `--key`, false is left out, a list `--key a b`, a mapping `--key JSON`, anything else `--key
// VALUE`; `model` is left out when `drop_model` (the command line names the model). Read:
// top-level `key: value` lines, comments, quoted scalars, JSON-style flow `{...}` / `[...]`,
// and one level of block list (`- a`) or mapping (`  k: v`) under a key; anything else is
// kInvalidArgument naming FILE:LINE. Values nested deeper than kMaxJsonNesting are refused.
Result<std::vector<std::string>> ConfigFileFlags(std::string_view text, std::string_view file,
                                                 bool drop_model);

using ReadFile = std::function<Result<std::string>(const std::string& path)>;

// `vllm serve ... --config FILE`: the YAML file's flags, placed where vLLM places them (after
// `serve [MODEL]`, or first for the api_server module, so that the command line's own flags
// win), as vllm/utils/argparse_utils.py FlexibleArgumentParser._pull_args_from_config and
// load_config_file (9aaf83ef5; vllm/utils/__init__.py at v0.10.0) write them: `key: true` is
// `--key`, false is left out, a list `--key a b`, a mapping `--key JSON`, anything else `--key
// VALUE`. Read here: top-level `key: value` lines, comments, quoted scalars, JSON-style flow
// `{...}` / `[...]`, and one level of block list (`- a`) or mapping (`  k: v`) under a key;
// anything else is an error naming FILE:LINE. Without --config the words are returned as they
// are. The file is read with `read_file`.
Result<std::vector<std::string>> WithConfigFile(const std::vector<std::string>& argv,
                                                const ReadFile& read_file);

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_CONFIG_FILE_H_
