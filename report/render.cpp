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
    o << "<table><tr><th>level</th><th>entries, structure, coverage = reach</th><th>miss penalty, "
         "cycles (ns at the SM clock seen)</th><th>a miss is served by</th><th>shared "
         "by</th></tr>\n";
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

// The contents: the summary, each part with its tables and figures, then the lists at the end.
void html_contents(std::ostringstream &o, const report_content &c) {
  o << "<nav id=\"contents\"><h2>Contents</h2><ol>\n";
  if (!c.summary.empty())
    o << "<li><a href=\"#summary\">Summary</a></li>\n";
  for (const auto &p : c.parts) {
    o << "<li><a href=\"#part-" << safe_id(p.id) << "\">" << html_text(p.heading) << "</a>";
    const auto count = [](std::size_t n, const char *what) {
      return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
    };
    o << " (" << count(p.tables_end - p.tables_begin, "table") << ", "
      << count(p.figures_end - p.figures_begin, "figure") << ")</li>\n";
  }
  if (!c.missing.empty() || !c.skipped.empty() || !c.not_drawn.empty())
    o << "<li><a href=\"#not-drawn\">Not in this folder, not drawn</a></li>\n";
  o << "<li><a href=\"#inputs\">Inputs</a></li>\n</ol></nav>\n";
}

void html_table(std::ostringstream &o, const report_table &t) {
  o << "<h3>" << html_text(t.title) << "</h3>\n";
  if (!t.note.empty())
    o << "<p>" << html_text(t.note) << "</p>\n";
  if (t.rows.empty())
    return;
  o << "<table>";
  html_row(o, t.header, "th");
  o << "\n";
  for (const auto &r : t.rows) {
    html_row(o, r, "td");
    o << "\n";
  }
  o << "</table>\n";
}

void html_figure(std::ostringstream &o, const report_figure &f,
                 const std::map<std::string, std::string> &png) {
  const auto it = png.find(f.id);
  const std::string id = safe_id(f.id);
  const std::string src =
      it != png.end() ? "data:image/png;base64," + base64(it->second) : "figures/" + id + ".png";
  o << "<figure id=\"fig-" << id << "\"><img src=\"" << src << "\" alt=\"" << html_attr(f.title)
    << "\"><figcaption>" << html_text(f.title) << " — <a href=\"figures/" << id
    << ".png\">PNG</a>, <a href=\"figures/" << id << ".svg\">SVG</a>, <a href=\"figures/" << id
    << ".csv\">CSV</a></figcaption></figure>\n";
}

// A table in Markdown: its title, its note, then its rows (none drawn where it has none).
void md_table(std::ostringstream &o, const report_table &t) {
  const auto md = [](const std::string &s) { return markdown_text(s); }; // every value from data
  o << "### " << md(t.title) << "\n\n";
  if (!t.note.empty())
    o << markdown_line(t.note) << "\n\n";
  if (t.rows.empty())
    return;
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

} // namespace

std::string render_html(const report_content &c, const std::map<std::string, std::string> &png) {
  std::ostringstream o;
  o << "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>gpuprobe report</title>\n"
       // No horizontal scroll at any width: tables wrap long cells (a sharing level's groups)
       // anywhere rather than grow past the page.
       "<style>body{font-family:sans-serif;max-width:1100px;margin:2em "
       "auto;padding:0 1em}table{border-collapse:collapse;margin:1em 0;max-width:100%}"
       "td,th{border:1px solid #bbb;padding:3px "
       "8px;text-align:left}td{overflow-wrap:break-word}img{max-width:100%}figure{margin:1em "
       "0 2em}.provenance{color:#444;font-size:90%}nav ol{columns:2}</style></head><body>\n";
  o << "<h1>gpuprobe report</h1>\n<p>" << html_text(c.device) << "</p>\n";
  if (!c.provenance.empty())
    o << "<p class=\"provenance\">" << html_text(c.provenance) << "</p>\n";
  html_contents(o, c);
  html_summary(o, c.summary);
  // Each part under its heading: its tables (the values), then its figures (how they were read).
  for (const auto &p : c.parts) {
    o << "<section id=\"part-" << safe_id(p.id) << "\"><h2>" << html_text(p.heading) << "</h2>\n";
    for (auto t = p.tables_begin; t < p.tables_end; ++t)
      html_table(o, c.tables[t]);
    for (auto f = p.figures_begin; f < p.figures_end; ++f)
      html_figure(o, c.figures[f], png);
    o << "</section>\n";
  }
  o << "<section id=\"not-drawn\">\n";
  html_list(o, "Not in this folder", {&c.missing});
  html_list(o, "Not drawn", {&c.skipped, &c.not_drawn});
  o << "</section>\n<h2 id=\"inputs\">Inputs</h2><p>Paths relative to the results "
       "folder.</p><ul>\n";
  for (const auto &s : c.sources)
    o << "<li>" << html_text(s) << "</li>\n";
  o << "</ul></body></html>\n";
  return o.str();
}

std::string render_markdown(const report_content &c) {
  const auto md = [](const std::string &s) { return markdown_text(s); }; // every value from data
  std::ostringstream o;
  o << "# gpuprobe report\n\n" << markdown_line(c.device) << "\n\n";
  if (!c.provenance.empty())
    o << markdown_line(c.provenance) << "\n\n";
  if (!c.parts.empty()) {
    o << "Contents:";
    for (std::size_t i = 0; i < c.parts.size(); ++i)
      o << (i ? "; " : " ") << md(c.parts[i].heading);
    o << "\n\n";
  }
  if (!c.summary.empty()) {
    o << "## Summary\n\n";
    if (!c.summary.hierarchy.empty()) {
      o << "| level | entries, structure, coverage = reach | miss penalty, cycles (ns at the SM "
           "clock seen) | a miss is "
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
  for (const auto &p : c.parts) {
    o << "## " << md(p.heading) << "\n\n";
    for (auto k = p.tables_begin; k < p.tables_end; ++k)
      md_table(o, c.tables[k]);
    for (auto k = p.figures_begin; k < p.figures_end; ++k)
      o << "![" << md(c.figures[k].title) << "](figures/" << safe_id(c.figures[k].id)
        << ".png)\n\n";
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
