// Tensor roles from names: which module a tensor belongs to, what part of it it is, and
// whether it is stored quantized. Works on the names of every supported family and
// export (model.layers.*, model.language_model.layers.*, language_model.model.layers.*,
// visual.*, vision_tower.*, mtp.*, DeepSeek's extra MTP layer) without a config.
#ifndef VRAMFIT_MODEL_ROLES_H_
#define VRAMFIT_MODEL_ROLES_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "vramfit/inventory.h"

namespace vramfit::model {

struct TensorClass {
  Role role = Role::kOther;
  Part part = Part::kWeight;
  Component component = Component::kOther;
  int64_t layer = -1;
  std::string_view module;  // a prefix of the classified name (views into it)
  bool packed_container = false;  // qweight / weight_packed / *_blocks: values packed in ints
};

// `num_layers`: decoder layers of the model (-1 when unknown); a layer index at or above it
// is an MTP layer stored among the decoder layers (DeepSeek-V3 layer 61).
TensorClass ClassifyTensor(std::string_view name, int64_t num_layers);

// Component of a role.
Component ComponentOf(Role r);

// True for the decoder projections counted by the audit (attention in all forms, MLP,
// experts, shared experts).
bool IsCountedLinear(Role r);

}  // namespace vramfit::model

#endif  // VRAMFIT_MODEL_ROLES_H_
