#include "analysis/input_text.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gpuprobe::analysis {

input_text read_input(const std::string &path) {
  input_text t;
  t.text = read_text_file(path);
  const auto first = t.text.find_first_not_of(" \t\r\n");
  t.is_json = first != std::string::npos && t.text[first] == '{';
  return t;
}

bool parse_number(const std::string &cell, double &v) {
  const auto b = cell.find_first_not_of(" \t\r");
  if (b == std::string::npos)
    return false;
  const std::string t = cell.substr(b, cell.find_last_not_of(" \t\r") - b + 1);
  char *end = nullptr;
  errno = 0;
  v = std::strtod(t.c_str(), &end);
  return errno == 0 && end && *end == '\0' && std::isfinite(v);
}

void fail_at(const std::string &source, int line, const std::string &what) {
  throw gpuprobe::error(source + ":" + std::to_string(line) + ": " + what);
}

} // namespace gpuprobe::analysis
