// The readers table (readers/reader.h): one line per engine, in the order each log line is
// matched. The order is the events' order, and the diagnosis takes first values: a reader
// added here goes where its lines should be read.
#include <algorithm>

#include "doctor/readers/reader.h"

namespace vramfit::doctor {

const std::vector<const Reader*>& Readers() {
  static const std::vector<const Reader*> kReaders = {
      &VllmReader(),     &PytorchReader(),      &SglangReader(),   &LlamaCppReader(),
      &TransformersReader(), &NvidiaSmiReader(), &OllamaReader(),  &LmStudioReader(),
      &KoboldCppReader(), &LlamaCppPythonReader(), &TgiReader(),  &TrtllmReader(),
      &HintsReader(),    &ErrorsReader(),
  };
  return kReaders;
}

const Reader* FindReader(std::string_view engine) {
  for (const Reader* r : Readers()) {
    if (engine == r->engine) return r;
  }
  return nullptr;
}

const Reader& DefaultReader() {
  for (const Reader* r : Readers()) {
    if (r->is_default) return *r;
  }
  return *Readers().front();
}

std::vector<const Reader*> ReadersFor(std::string_view engine) {
  std::vector<const Reader*> out;
  auto add = [&](const Reader* r) {
    if (r && std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  };
  add(FindReader(engine));
  add(&DefaultReader());
  for (const Reader* r : Readers()) add(r);
  return out;
}

}  // namespace vramfit::doctor
