// Deploy scripts: the engine commands a shell script starts, found without running it. The
// script is lexed as a shell does (quotes, `\` continuations, comments, its own variable
// assignments and exports), launch prefixes (`nohup`, `exec`, `env`, `NAME=value`, ...) and
// containers (`docker run` / `podman run` of an engine's image) are seen through, and each
// command that an engine of the table recognizes is returned as the argv that engine reads.
//
// Example:
//   auto read = vramfit::ReadDeployScript(text, "deploy.sh", {});
//   for (const auto& inv : read->invocations) inv.engine->read_command(inv.argv);
#ifndef VRAMFIT_SCRIPT_H_
#define VRAMFIT_SCRIPT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vramfit/engine.h"
#include "vramfit/status.h"

namespace vramfit {

struct ScriptOptions {
  // Variables the script's environment holds before it starts (NAME, value), e.g. from an
  // environment file (ReadEnvironmentFile). Default: none; the reader never looks at its own
  // process's environment.
  std::vector<std::pair<std::string, std::string>> environment;
  // The tokens of each prompt a Python program's generate() or pipeline call passes, over the
  // reader's estimate (`vramfit check --prompt-tokens N`). Default 0: estimated from literal
  // prompts, unknown (the context filled) for prompts read at run time.
  int64_t prompt_tokens = 0;
};

// One engine command of a script.
struct ScriptInvocation {
  std::string where;                 // "deploy.sh:12": the line the command starts on
  const Engine* engine = nullptr;
  // What the engine's read_command takes: the environment (exported variables, the command's
  // NAME=value prefixes, a container's -e variables) as NAME=value words, then the command.
  std::vector<std::string> argv;
  // The GPUs the command may use: CUDA_VISIBLE_DEVICES's count, or a container's --gpus;
  // -1 when nothing restricts them. `gpus_from` says which ("CUDA_VISIBLE_DEVICES=0,1").
  int gpus_visible = -1;
  std::string gpus_from;
  std::string image;                 // "vllm/vllm-openai:v0.10.1" when run in a container
  std::string version;               // the engine release the image tag names; "" none
  // The engine image's install flags (ContainerImage::install_flags), as words: the caller
  // reads them with the engine's flags after checking the user's own.
  std::vector<std::string> install_flags;
};

struct ScriptRead {
  std::vector<ScriptInvocation> invocations;
  // What was read on purpose differently from a shell, or not read ("deploy.sh:8: ...").
  std::vector<std::string> notes;
};

// Reads the engine commands of `text` (a shell script named `file` in messages; a Python
// program, see IsPythonScript, goes to ReadPythonScript).
// kInvalidArgument "file:line: what" for a script a shell would refuse (an unterminated
// quote, a redirection without a target), one past the reader's limits (NUL bytes, lines past
// 256 KiB, `${...}` nested past 32), and for an engine command that uses a value the script
// does not set ("file:line: $MODEL_PATH is not set"). A script without engine commands reads
// as no invocations.
Result<ScriptRead> ReadDeployScript(std::string_view text, std::string_view file,
                                    const ScriptOptions& options);

// A Python deploy program's engine loads (src/script/python.cc), read without running it:
// vLLM's `LLM(model, **kwargs)` as `vllm serve MODEL --kebab-case-flags`, a model class's
// `from_pretrained` / `from_quantized` as a `transformers MODEL ...` load, `subprocess` and
// `os.system` command lines as shell. Names resolve through `NAME = value` assignments,
// `os.environ.get`/`os.getenv` (options.environment) and a function's call sites. A
// transformers load's `generate(...)` calls (or its pipeline's calls) give the sequence
// length: the prompt estimated from literal strings and chats (3 UTF-8 bytes a token, plus a
// chat template allowance), max_new_tokens / max_length as generate reads them, the batch,
// num_beams and num_return_sequences, as `--prompt-tokens P --max-new-tokens N --batch-size
// B ...` flags; a note names each estimate, and a prompt the program reads at run time leaves
// the context filled, as without a generate() call.
// kInvalidArgument "file:line: what" for text Python would refuse (an unterminated string, an
// unmatched bracket), NUL bytes, brackets nested past 200, and a launch whose model or flag
// value the reader cannot know ("`p` is an argument of f(), and no call of f() passes it").
Result<ScriptRead> ReadPythonScript(std::string_view text, std::string_view file,
                                    const ScriptOptions& options);

// True for a file named *.py or whose first line is a `#!` line naming python: such a file is
// read by ReadPythonScript (ReadDeployScript dispatches to it).
bool IsPythonScript(std::string_view text, std::string_view file);

// The variables of an environment file (`NAME=value` lines, `export`, quotes and comments as
// in a shell script), in name order. Errors as ReadDeployScript's.
Result<std::vector<std::pair<std::string, std::string>>> ReadEnvironmentFile(
    std::string_view text, std::string_view file);

}  // namespace vramfit

#endif  // VRAMFIT_SCRIPT_H_
