// The doctor's rule table: rows {cause, stage, predicate over the gathered facts, summary},
// most specific first; the first row whose predicate holds is the diagnosis. A summary that
// describes one engine's behaviour is that engine's reader's words (readers/reader.h).
#ifndef VRAMFIT_DOCTOR_RULES_H_
#define VRAMFIT_DOCTOR_RULES_H_

#include <map>
#include <string>
#include <vector>

#include "doctor/facts.h"
#include "vramfit/doctor.h"

namespace vramfit::doctor {

struct Rule {
  Cause cause;
  Stage stage;
  bool (*when)(const Facts& f);
  // The summary: this text; else `say` (a summary with the log's numbers, which also records
  // the numbers it rests on); else the engine's words for `words`.
  const char* summary = nullptr;
  std::string (*say)(const Facts& f, std::map<std::string, double>* numbers) = nullptr;
  Words words = Words::kNone;
  // The stage is where the evidence points (Facts::stage), not `stage`: a cause that can strike
  // in any phase (fragmentation, host memory).
  bool stage_from_facts = false;
  // The stage is the one the next rule that holds gives (a cause that strikes whichever of the
  // engine's allocations then fails: the KV cache, a weight or a compute buffer).
  bool stage_from_next = false;
};

// Every rule, in the order they are tried.
const std::vector<Rule>& Rules();

// Sets d's stage, cause and summary (and the numbers the summary rests on) from the first rule
// that holds, and returns that rule (the last row always holds).
const Rule& Classify(const Facts& f, Diagnosis* d);

}  // namespace vramfit::doctor

#endif  // VRAMFIT_DOCTOR_RULES_H_
