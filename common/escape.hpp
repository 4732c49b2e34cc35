#pragma once
// Text from data (device names, file names, workload and model names) escaped for the place it
// goes: every string gpuprobe writes into a page, a table or a figure's CSV passes one of these.
// Host-only.
#include <string>

namespace gpuprobe {

// HTML element text: & < > escaped (quotes too, so the same text is safe in an attribute).
std::string html_text(const std::string &s);
// A double- or single-quoted HTML attribute value: & < > " ' escaped, control characters
// (newlines too) as numeric references, so nothing ends the attribute.
inline std::string html_attr(const std::string &s) { return html_text(s); }

// Markdown inline text (a table cell, a list item, a heading): what Markdown gives meaning to
// inside a line (\ ` * _ [ ] | ! $ ~) is backslash-escaped, < and & become references (so no
// HTML tag can form; > alone is text), and a line break becomes a space: one value is one cell.
std::string markdown_text(const std::string &s);
// The same for a value that starts a line of its own (a paragraph): a leading # + - = > or "N." is
// escaped too, so it makes no heading, list or rule.
std::string markdown_line(const std::string &s);

// One RFC 4180 CSV field: always quoted, a quote doubled; a newline stays inside the quotes.
std::string csv_field(const std::string &s);

// A file-name-safe identifier: letters, digits, '_' and '-' kept, anything else '_'.
std::string safe_id(const std::string &s);

} // namespace gpuprobe
