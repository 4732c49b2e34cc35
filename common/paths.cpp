#include "common/paths.hpp"

#include "common/error.hpp"
#include "common/outputs.hpp"

#include <filesystem>

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {
fs::path resolved(const std::string &p) {
  std::error_code ec;
  auto r = fs::weakly_canonical(fs::absolute(p.empty() ? "." : p), ec);
  return ec ? fs::absolute(p).lexically_normal() : r;
}
} // namespace

bool same_or_inside(const std::string &inner, const std::string &outer) {
  const fs::path in = resolved(inner), out = resolved(outer);
  auto i = in.begin();
  for (auto o = out.begin(); o != out.end(); ++o, ++i) {
    if (o->empty() && std::next(o) == out.end())
      break; // a trailing separator
    if (i == in.end() || *i != *o)
      return false;
  }
  return true;
}

void refuse_output_over_inputs(const std::string &command, const std::string &out,
                               const std::vector<std::string> &inputs) {
  check_outputs(command, {{"--out", out, false}}, inputs); // the one output rule
}

} // namespace gpuprobe
