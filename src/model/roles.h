// Tensor roles from names: which module a tensor belongs to, what part of it it is, and
// whether it is stored quantized. Works on the names of every supported family and
// export (model.layers.*, model.language_model.layers.*, language_model.model.layers.*,
// visual.*, vision_tower.*, mtp.*, DeepSeek's extra MTP layer) without a config.
#ifndef VRAMFIT_MODEL_ROLES_H_
#define VRAMFIT_MODEL_ROLES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vramfit/inventory.h"

namespace vramfit::model {

struct TensorClass {
  Role role = Role::kOther;
  Part part = Part::kWeight;
  Component component = Component::kOther;
  int64_t layer = -1;
  std::string_view module;  // a prefix of the classified name (views into it)
  bool packed_container = false;  // qweight / weight_packed / *_blocks: values packed in ints
  uint32_t layer_at = 0;  // where the layer index's digits start in the name (layer >= 0)
};

// `num_layers`: decoder layers of the model (-1 when unknown); a layer index at or above it
// is an MTP layer stored among the decoder layers (DeepSeek-V3 layer 61).
TensorClass ClassifyTensor(std::string_view name, int64_t num_layers);

// ClassifyTensor over the names of one model, remembered by the name's shape: the name with
// every segment of 1-9 digits between dots (layer and expert numbers) masked. Names of one
// shape classify alike but for their layer, the MTP rule on it and their module's length,
// which are worked out per name; a checkpoint of 100,000 tensors has a few dozen shapes, so
// most names cost a hash lookup. Results are ClassifyTensor's, name for name.
class TensorClassifier {
 public:
  explicit TensorClassifier(int64_t num_layers) : num_layers_(num_layers) {}
  TensorClass Classify(std::string_view name);

 private:
  struct Number {  // a masked segment of the name being classified
    uint32_t at = 0;
    uint32_t size = 0;
  };
  struct Learned {  // what one shape's first name taught
    TensorClass c;             // module, layer and layer_at unset
    size_t module_end = 0;     // where the module ends in the shape
    size_t module_numbers = 0; // masked segments before that
    int layer_number = -1;     // the masked segment holding the layer index, or -1
  };
  bool Learn(std::string_view name, const TensorClass& c, Learned* out) const;
  TensorClass WithLayerRule(TensorClass c) const;

  int64_t num_layers_;
  std::string shape_;            // the shape of the name being classified
  std::vector<Number> numbers_;  // its masked segments, in order
  std::unordered_map<std::string, Learned> learned_;
};

// Component of a role.
Component ComponentOf(Role r);

// True for the decoder projections counted by the audit (attention in all forms, MLP,
// experts, shared experts).
bool IsCountedLinear(Role r);

}  // namespace vramfit::model

#endif  // VRAMFIT_MODEL_ROLES_H_
