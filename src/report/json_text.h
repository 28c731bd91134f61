// The one way the JSON renderers turn a document into text. nlohmann's dump() throws
// type_error 316 on a string that is not UTF-8 (a Latin-1 log line, a cut character); here
// such bytes become U+FFFD instead, so no renderer throws on any string it is given.
#ifndef VRAMFIT_REPORT_JSON_TEXT_H_
#define VRAMFIT_REPORT_JSON_TEXT_H_

#include <nlohmann/json.hpp>

#include <string>

namespace vramfit::report {

// Two-space indented JSON and a final newline; invalid UTF-8 replaced, never thrown.
template <class Json>
std::string JsonText(const Json& j) {
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace vramfit::report

#endif  // VRAMFIT_REPORT_JSON_TEXT_H_
