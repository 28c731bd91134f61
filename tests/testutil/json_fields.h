// Fields of a validation record (a simdjson element) as the scoring tests read them: a number
// whether the file wrote it as an integer or not, a string (absent or null read as empty), and an
// integer with a fallback.
#ifndef VRAMFIT_TESTS_TESTUTIL_JSON_FIELDS_H_
#define VRAMFIT_TESTS_TESTUTIL_JSON_FIELDS_H_

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vramfit::testutil {

inline std::optional<double> Num(simdjson::dom::element e, const char* key) {
  double d = 0;
  int64_t i = 0;
  if (!e[key].get_double().get(d)) return d;
  if (!e[key].get_int64().get(i)) return static_cast<double>(i);
  return std::nullopt;
}

inline std::string Str(simdjson::dom::element e, const char* key) {
  std::string_view s;
  return e[key].get_string().get(s) ? std::string() : std::string(s);
}

// An integer field, or `fallback` when it is absent or not an integer.
inline int64_t Int(simdjson::dom::element e, const char* key, int64_t fallback = 0) {
  int64_t v = 0;
  return e[key].get_int64().get(v) ? fallback : v;
}

}  // namespace vramfit::testutil

#endif  // VRAMFIT_TESTS_TESTUTIL_JSON_FIELDS_H_
