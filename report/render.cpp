// The page: HTML (figures embedded or linked) and Markdown renderers of a report_content.
#include "report/report.hpp"

#include "common/escape.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>

namespace gpuprobe::report {

// Every string on the page comes from data or file names: element text and attribute values are
// escaped with quotes too (html_text, html_attr: common/escape.hpp), a figure's id is a safe file
// name (safe_id).

std::string base64(const std::string &bytes) {
  static const char *k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string o;
  o.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t v = 0;
    for (std::size_t j = 0; j < 3; ++j)
      v = v << 8 | (j < n ? std::uint8_t(bytes[i + j]) : 0u);
    for (std::size_t j = 0; j < 4; ++j)
      o += j <= n ? k[(v >> (18 - 6 * j)) & 63] : '=';
  }
  return o;
}

namespace {

// A row of cells, escaped.
void html_row(std::ostringstream &o, const std::vector<std::string> &cells, const char *tag) {
  o << "<tr>";
  for (const auto &cell : cells)
    o << "<" << tag << ">" << html_text(cell) << "</" << tag << ">";
  o << "</tr>";
}

// The opening: the hierarchy table, the diagram, one line per finding and decision.
void html_summary(std::ostringstream &o, const report_summary &sum) {
  if (sum.empty())
    return;
  o << "<section id=\"summary\"><h2>Summary</h2>\n";
  if (!sum.hierarchy.empty()) {
    o << "<table><tr><th>level</th><th>entries, structure, coverage = reach</th><th>miss penalty "
         "(cycles)</th><th>a miss is served by</th><th>shared by</th></tr>\n";
    for (const auto &r : sum.hierarchy) {
      html_row(o, r, "td");
      o << "\n";
    }
    o << "</table>\n" << sum.diagram_svg << "\n"; // our own SVG: not escaped
  }
  o << "<ul>\n";
  for (const auto &l : sum.lines)
    o << "<li>" << html_text(l) << "</li>\n";
  for (const auto &d : sum.decisions)
    o << "<li>" << html_text(d) << "</li>\n";
  o << "</ul></section>\n";
}

// A list under its heading (nothing when empty).
void html_list(std::ostringstream &o, const char *heading,
               std::initializer_list<const std::vector<std::string> *> lists) {
  bool any = false;
  for (const auto *l : lists)
    any = any || !l->empty();
  if (!any)
    return;
  o << "<h2>" << heading << "</h2><ul>\n";
  for (const auto *l : lists)
    for (const auto &m : *l)
      o << "<li>" << html_text(m) << "</li>\n";
  o << "</ul>\n";
}

} // namespace

std::string render_html(const report_content &c, const std::map<std::string, std::string> &png) {
  std::ostringstream o;
  o << "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>gpuprobe report</title>\n"
       // No horizontal scroll at any width: tables wrap long cells (a sharing level's groups)
       // anywhere rather than grow past the page.
       "<style>body{font-family:sans-serif;max-width:1100px;margin:2em "
       "auto;padding:0 1em}table{border-collapse:collapse;margin:1em 0;max-width:100%}"
       "td,th{border:1px solid #bbb;padding:3px "
       "8px;text-align:left}td{overflow-wrap:anywhere}img{max-width:100%}figure{margin:2em "
       "0}</style></head><body>\n";
  o << "<h1>gpuprobe report</h1>\n<p>" << html_text(c.device) << "</p>\n";
  html_summary(o, c.summary);
  for (const auto &f : c.figures) {
    const auto it = png.find(f.id);
    const std::string id = safe_id(f.id);
    const std::string src =
        it != png.end() ? "data:image/png;base64," + base64(it->second) : "figures/" + id + ".png";
    o << "<figure><img src=\"" << src << "\" alt=\"" << html_attr(f.title) << "\"><figcaption>"
      << html_text(f.title) << " — <a href=\"figures/" << id << ".png\">PNG</a>, <a href=\"figures/"
      << id << ".svg\">SVG</a>, <a href=\"figures/" << id
      << ".csv\">CSV</a></figcaption></figure>\n";
  }
  for (const auto &t : c.tables) {
    o << "<h2>" << html_text(t.title) << "</h2>\n";
    if (!t.note.empty())
      o << "<p>" << html_text(t.note) << "</p>\n";
    if (t.rows.empty())
      continue;
    o << "<table>";
    html_row(o, t.header, "th");
    o << "\n";
    for (const auto &r : t.rows) {
      html_row(o, r, "td");
      o << "\n";
    }
    o << "</table>\n";
  }
  html_list(o, "Not in this folder", {&c.missing});
  html_list(o, "Not drawn", {&c.skipped, &c.not_drawn});
  o << "<h2>Inputs</h2><ul>\n";
  for (const auto &s : c.sources)
    o << "<li>" << html_text(s) << "</li>\n";
  o << "</ul></body></html>\n";
  return o.str();
}

std::string render_markdown(const report_content &c) {
  const auto md = [](const std::string &s) { return markdown_text(s); }; // every value from data
  std::ostringstream o;
  o << "# gpuprobe report\n\n" << markdown_line(c.device) << "\n\n";
  if (!c.summary.empty()) {
    o << "## Summary\n\n";
    if (!c.summary.hierarchy.empty()) {
      o << "| level | entries, structure, coverage = reach | miss penalty (cycles) | a miss is "
           "served by | "
           "shared by |\n|---|---|---|---|---|\n";
      for (const auto &r : c.summary.hierarchy) {
        o << "|";
        for (const auto &cell : r)
          o << ' ' << md(cell) << " |";
        o << "\n";
      }
      o << "\n";
    }
    for (const auto &l : c.summary.lines)
      o << "- " << md(l) << "\n";
    for (const auto &d : c.summary.decisions)
      o << "- " << md(d) << "\n";
    o << "\n";
  }
  for (const auto &f : c.figures)
    o << "![" << md(f.title) << "](figures/" << safe_id(f.id) << ".png)\n\n";
  for (const auto &t : c.tables) {
    o << "## " << md(t.title) << "\n\n";
    if (!t.note.empty())
      o << markdown_line(t.note) << "\n\n";
    if (t.rows.empty())
      continue;
    o << "|";
    for (const auto &h : t.header)
      o << ' ' << md(h) << " |";
    o << "\n|";
    for (std::size_t i = 0; i < t.header.size(); ++i)
      o << "---|";
    o << "\n";
    for (const auto &r : t.rows) {
      o << "|";
      for (const auto &cell : r)
        o << ' ' << md(cell) << " |";
      o << "\n";
    }
    o << "\n";
  }
  if (!c.missing.empty()) {
    o << "## Not in this folder\n\n";
    for (const auto &m : c.missing)
      o << "- " << md(m) << "\n";
  }
  if (!c.not_drawn.empty() || !c.skipped.empty()) {
    o << "\n## Not drawn\n\n";
    for (const auto *list : {&c.skipped, &c.not_drawn})
      for (const auto &m : *list)
        o << "- " << md(m) << "\n";
  }
  return o.str();
}

} // namespace gpuprobe::report
