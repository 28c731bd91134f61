// The pieces every HTML report is built from: escaping, the page around a body (the embedded
// stylesheet, script and JSON), and SVG charts whose every bar carries the JSON key and the
// bytes it draws (data-key, data-bytes) and whose chart carries its scale (data-bytes-per-unit),
// so that a bar's height can be checked against the number to the pixel.
#ifndef VRAMFIT_REPORT_HTML_PAGE_H_
#define VRAMFIT_REPORT_HTML_PAGE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vramfit::report::html {

// Text for HTML content and attribute values: control characters and bytes that are not
// UTF-8 escaped as core::Printable does, then & < > " ' as entities.
std::string Esc(std::string_view s);

// JSON made safe inside <script type="application/json">: every '<' (which JSON holds only
// inside strings) becomes \u003c, so no "</script>" in a model name ends the block.
std::string ScriptJson(std::string_view json);

// A whole page: <title>, the embedded web/report.css and web/report.js, the JSON in
// <script type="application/json" id="vramfit-json">, and `body` (already HTML).
std::string Page(std::string_view kind, std::string_view title, std::string_view json,
                 std::string_view body);

// One piece of a bar: `key` names the JSON number it draws ("gpus.0.weights_bytes").
struct Segment {
  std::string key;
  uint64_t bytes = 0;
  std::string css;      // "seg-load"
  std::string label;    // "weights"
  std::string hover;    // the <title> text: the figure and its formula
  std::string explain;  // the formula table's row this bar links to ("" for none)
  bool unreached = false;
};

// One stacked bar (bottom segment first).
struct Bar {
  std::string label;
  std::vector<Segment> segments;
};

// A horizontal rule across the bars (budget, total).
struct Rule {
  std::string key;
  uint64_t bytes = 0;
  std::string css;  // "line-budget"
  std::string label;
};

struct BarChartOptions {
  double plot_height = 260;  // SVG units of the tallest value
  double bar_width = 70;
  double gap = 40;           // between bars (0: a step chart)
  std::string aria;          // what the chart shows, for screen readers
};

// Vertical stacked bars against rules, on one byte scale from 0 to the largest bar or rule.
std::string StackedBars(const std::vector<Bar>& bars, const std::vector<Rule>& rules,
                        const BarChartOptions& options);

// Horizontal bars, one per segment, on one byte scale from 0 to the largest.
std::string HorizontalBars(const std::vector<Segment>& rows, std::string_view aria);

// A small legend: (css class, label) pairs.
std::string Legend(const std::vector<std::pair<std::string, std::string>>& items);

// "12.345" with at most three decimals, no trailing zeros (SVG coordinates).
std::string Num(double v);

}  // namespace vramfit::report::html

#endif  // VRAMFIT_REPORT_HTML_PAGE_H_
