// Engine settings as the JSON object the plan and fit reports share.
#ifndef VRAMFIT_REPORT_SETTINGS_JSON_H_
#define VRAMFIT_REPORT_SETTINGS_JSON_H_

#include <nlohmann/json.hpp>

#include "vramfit/plan.h"

namespace vramfit::report {

inline nlohmann::ordered_json SettingsJson(const EngineSettings& s) {
  return {{"tensor_parallel_size", s.tensor_parallel_size},
          {"pipeline_parallel_size", s.pipeline_parallel_size},
          {"data_parallel_size", s.data_parallel_size},
          {"max_model_len", s.max_model_len},
          {"gpu_memory_utilization", s.gpu_memory_utilization},
          {"kv_cache_dtype", s.kv_cache_dtype},
          {"max_num_seqs", s.max_num_seqs},
          {"max_num_batched_tokens", s.max_num_batched_tokens},
          {"enforce_eager", s.enforce_eager}};
}

}  // namespace vramfit::report

#endif  // VRAMFIT_REPORT_SETTINGS_JSON_H_
