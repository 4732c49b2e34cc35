#pragma once
// Reading the text inputs of `gpuprobe analyze` (gpuprobe JSON or the 2017 tool's text formats).
#include <string>

namespace gpuprobe::analysis {

struct input_text {
  std::string text;
  bool is_json = false; // first non-blank character is '{'
};

// Throws gpuprobe::error ("cannot read '<path>': <reason>") when the file cannot be read.
input_text read_input(const std::string &path);

// A whole cell (surrounding blanks ignored) as a finite number.
bool parse_number(const std::string &cell, double &v);

// Throws gpuprobe::error "<source>:<line>: <what>".
[[noreturn]] void fail_at(const std::string &source, int line, const std::string &what);

} // namespace gpuprobe::analysis
