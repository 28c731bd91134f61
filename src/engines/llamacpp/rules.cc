// llama.cpp's rules by build (see rules.h). The build numbers are where each change landed in
// ggml-org/llama.cpp's bNNNN tags, to within a few builds.
#include "engines/llamacpp/rules.h"

#include <fmt/format.h>

#include <charconv>

#include "core/text.h"

namespace vramfit::llamacpp {

Result<Rules> RulesFor(const std::string& version) {
  Rules r;
  if (version.empty()) return r;
  std::string_view v = version;
  if (v.front() == 'b') v.remove_prefix(1);
  int build = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), build);
  if (ec != std::errc() || p != v.data() + v.size() || build < 1000 || build > 99999) {
    return Status::InvalidArgument(fmt::format(
        "llama.cpp build \"{}\": expected bNNNN (b1000 or later)", core::Printable(version)));
  }
  r.build = build;
  r.pad_256_always = build >= 7000;
  r.swa_window_cache = build >= 5450;
  r.kv_streams = build >= 6000;
  r.server_four_slots = build >= 6850;
  r.mla_latent_cache = build >= 5100;
  r.ngl_output_first = build >= 7650;
  r.fit_default_on = build >= kFitBuild;
  r.fa_takes_value = build >= kFaValueBuild;
  return r;
}

}  // namespace vramfit::llamacpp
