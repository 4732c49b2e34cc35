#include "common/escape.hpp"

#include <cstdio>
#include <cstring>

namespace gpuprobe {

std::string html_text(const std::string &s) {
  std::string o;
  o.reserve(s.size());
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    switch (ch) {
    case '&':
      o += "&amp;";
      break;
    case '<':
      o += "&lt;";
      break;
    case '>':
      o += "&gt;";
      break;
    case '"':
      o += "&quot;";
      break;
    case '\'':
      o += "&#39;";
      break;
    default:
      if (u < 0x20 || u == 0x7f) { // a control character: as a reference (NUL as U+FFFD)
        char ref[16];
        std::snprintf(ref, sizeof ref, "&#%u;", u == 0 ? 0xfffdu : unsigned(u));
        o += ref;
      } else {
        o += ch;
      }
    }
  }
  return o;
}

std::string markdown_text(const std::string &s) {
  static const char *inline_special = "\\`*_[]|!$~"; // meaning anywhere in a line
  std::string o;
  o.reserve(s.size() + s.size() / 4);
  for (const char ch : s) {
    if (ch == '\n' || ch == '\r' || ch == '\t' || static_cast<unsigned char>(ch) < 0x20 ||
        ch == 0x7f)
      o += ' '; // one value stays one line (a cell, an item)
    else if (ch == '<')
      o += "&lt;"; // raw HTML: a backslash does not stop every renderer
    else if (ch == '&')
      o += "&amp;";
    else if (std::strchr(inline_special, ch))
      o += '\\', o += ch;
    else
      o += ch;
  }
  return o;
}

std::string markdown_line(const std::string &s) {
  std::string o = markdown_text(s);
  // Meaning at the start of a line only: a heading, a list item, a rule, a numbered item.
  const auto first = o.find_first_not_of(' ');
  if (first != std::string::npos) {
    const char c = o[first];
    const auto digits_end = o.find_first_not_of("0123456789", first);
    if (c == '#' || c == '+' || c == '-' || c == '=' || c == '>' ||
        (digits_end != first && digits_end != std::string::npos &&
         (o[digits_end] == '.' || o[digits_end] == ')')))
      o.insert(c >= '0' && c <= '9' ? digits_end : first, 1, '\\');
  }
  return o;
}

std::string csv_field(const std::string &s) {
  std::string o = "\"";
  for (const char ch : s) {
    if (ch == '"')
      o += '"';
    o += ch;
  }
  return o + '"';
}

std::string safe_id(const std::string &s) {
  std::string o = s.empty() ? "_" : s;
  for (auto &ch : o)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
          ch == '_' || ch == '-'))
      ch = '_';
  return o;
}

} // namespace gpuprobe
