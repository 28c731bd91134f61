// Escaping, the page shell and the SVG charts of the HTML reports (see html_page.h). Bars are
// drawn on one linear byte scale per chart; coordinates keep three decimals so a bar's height
// is its bytes over the chart's data-bytes-per-unit to well under a pixel.
#include "report/html_page.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/text.h"
#include "core/units.h"
#include "report/web_files.h"
#include "vramfit/report_html.h"

namespace vramfit::web {

std::string_view WebFile(std::string_view path) {
  for (size_t i = 0; i < kFileCount; ++i) {
    if (kFiles[i].path == path) return kFiles[i].bytes;
  }
  return {};
}

}  // namespace vramfit::web

namespace vramfit {

std::string_view WebAsset(std::string_view path) { return web::WebFile(path); }

}  // namespace vramfit

namespace vramfit::report::html {
namespace {

constexpr double kLeft = 64;     // room for the axis labels
constexpr double kTop = 16;
constexpr double kBottom = 40;   // room for the bar labels
constexpr double kRightLabel = 150;

double Max(double a, double b) { return a > b ? a : b; }

std::string SegmentRect(const Segment& s, double x, double y, double w, double h) {
  std::string cls = "seg " + s.css + (s.unreached ? " unreached" : "");
  std::string out = fmt::format(
      "<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" data-key=\"{}\" "
      "data-bytes=\"{}\"",
      Esc(cls), Num(x), Num(y), Num(w), Num(h), Esc(s.key), s.bytes);
  if (!s.explain.empty()) out += fmt::format(" data-explain=\"{}\"", Esc(s.explain));
  out += fmt::format("><title>{}: {}{}{}</title></rect>", Esc(s.label),
                     core::FormatBytes(s.bytes), s.hover.empty() ? "" : " = ", Esc(s.hover));
  return out;
}

}  // namespace

std::string Esc(std::string_view s) {
  const std::string p = core::Printable(s);
  std::string out;
  out.reserve(p.size());
  for (char c : p) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string ScriptJson(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Num(double v) {
  std::string s = fmt::format("{:.3f}", v);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string Page(std::string_view kind, std::string_view title, std::string_view json,
                 std::string_view body) {
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"color-scheme\" content=\"light dark\">\n";
  out += fmt::format("<title>vramfit {}: {}</title>\n", Esc(kind), Esc(title));
  out += "<style>\n";
  out += web::WebFile("report.css");
  out += "</style>\n</head>\n";
  out += fmt::format("<body class=\"report report-{}\">\n", Esc(kind));
  out += body;
  out += "<script type=\"application/json\" id=\"vramfit-json\">\n";
  out += ScriptJson(json);
  out += "</script>\n<script>\n";
  out += web::WebFile("report.js");
  out += "</script>\n</body>\n</html>\n";
  return out;
}

std::string StackedBars(const std::vector<Bar>& bars, const std::vector<Rule>& rules,
                        const BarChartOptions& o) {
  double top = 1;
  for (const Bar& b : bars) {
    double sum = 0;
    for (const Segment& s : b.segments) sum += static_cast<double>(s.bytes);
    top = Max(top, sum);
  }
  for (const Rule& r : rules) top = Max(top, static_cast<double>(r.bytes));
  const double bytes_per_unit = top / o.plot_height;
  const double n = static_cast<double>(bars.size());
  const double width = kLeft + n * o.bar_width + Max(n - 1, 0) * o.gap + kRightLabel;
  const double height = kTop + o.plot_height + kBottom;
  const double base = kTop + o.plot_height;
  std::string out = fmt::format(
      "<svg class=\"chart\" role=\"img\" "
      "aria-label=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "data-bytes-per-unit=\"{}\">\n",
      Esc(o.aria), Num(width), Num(height), Num(width), Num(height),
      fmt::format("{:.6f}", bytes_per_unit));
  // The axis: 0, half and the top, in GiB.
  for (double f : {0.0, 0.5, 1.0}) {
    const double y = base - f * o.plot_height;
    out += fmt::format("<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
                       Num(kLeft - 4), Num(y), Num(width - kRightLabel), Num(y));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", Num(kLeft - 8),
                       Num(y + 4), core::FormatBytes(static_cast<uint64_t>(f * top)));
  }
  for (size_t i = 0; i < bars.size(); ++i) {
    const double x = kLeft + static_cast<double>(i) * (o.bar_width + o.gap);
    double y = base;
    out += fmt::format("<g class=\"bar\" data-bar=\"{}\">", i);
    for (const Segment& s : bars[i].segments) {
      const double h = static_cast<double>(s.bytes) / bytes_per_unit;
      y -= h;
      out += SegmentRect(s, x, y, o.bar_width, h);
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text></g>\n",
                       Num(x + o.bar_width / 2), Num(base + 16), Esc(bars[i].label));
  }
  for (const Rule& r : rules) {
    const double y = base - static_cast<double>(r.bytes) / bytes_per_unit;
    out += fmt::format(
        "<line class=\"{}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" data-key=\"{}\" "
        "data-bytes=\"{}\"><title>{}: {}</title></line>",
        Esc(r.css), Num(kLeft - 4), Num(y), Num(width - kRightLabel + 4), Num(y), Esc(r.key),
        r.bytes, Esc(r.label), core::FormatBytes(r.bytes));
    out += fmt::format("<text class=\"label-{}\" x=\"{}\" y=\"{}\">{} {}</text>\n",
                       Esc(r.css.substr(r.css.find('-') + 1)), Num(width - kRightLabel + 8),
                       Num(y + 4), Esc(r.label), core::FormatBytes(r.bytes));
  }
  out += "</svg>\n";
  return out;
}

std::string HorizontalBars(const std::vector<Segment>& rows, std::string_view aria) {
  constexpr double kLabel = 190, kPlot = 420, kRow = 22, kValue = 110;
  double top = 1;
  for (const Segment& s : rows) top = Max(top, static_cast<double>(s.bytes));
  const double bytes_per_unit = top / kPlot;
  const double width = kLabel + kPlot + kValue;
  const double height = kTop + static_cast<double>(rows.size()) * kRow + 8;
  std::string out = fmt::format(
      "<svg class=\"chart hbars\" role=\"img\" "
      "aria-label=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "data-bytes-per-unit=\"{}\">\n",
      Esc(aria), Num(width), Num(height), Num(width), Num(height),
      fmt::format("{:.6f}", bytes_per_unit));
  for (size_t i = 0; i < rows.size(); ++i) {
    const Segment& s = rows[i];
    const double y = kTop + static_cast<double>(i) * kRow;
    const double w = static_cast<double>(s.bytes) / bytes_per_unit;
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", Num(kLabel - 8),
                       Num(y + 13), Esc(s.label));
    out += SegmentRect(s, kLabel, y, w, kRow - 6);
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", Num(kLabel + w + 6), Num(y + 13),
                       core::FormatBytes(s.bytes));
  }
  out += "</svg>\n";
  return out;
}

std::string Legend(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string out = "<div class=\"legend\">";
  for (const auto& item : items) {
    out += fmt::format(
        "<span><svg width=\"12\" height=\"12\" aria-hidden=\"true\"><rect class=\"{}\" "
        "width=\"12\" height=\"12\"/></svg> {}</span>",
        Esc(item.first), Esc(item.second));
  }
  return out + "</div>\n";
}

}  // namespace vramfit::report::html
