#include "common/units.hpp"

#include "common/error.hpp"

#include <cmath>
#include <cstdio>

namespace gpuprobe {

std::uint64_t parse_bytes(const std::string &s) {
  if (s.empty())
    throw error("empty size");
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(s, &pos);
  } catch (...) {
    throw error("'" + s + "' is not a size (examples: 4096, 64K, 2M, 8G)");
  }
  std::string unit = s.substr(pos);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b'))
    unit.pop_back();
  if (!unit.empty() && unit.back() == 'i')
    unit.pop_back();
  double mul = 1;
  if (unit.empty())
    mul = 1;
  else if (unit == "K" || unit == "k")
    mul = double(k_kib);
  else if (unit == "M" || unit == "m")
    mul = double(k_mib);
  else if (unit == "G" || unit == "g")
    mul = double(k_gib);
  else if (unit == "T" || unit == "t")
    mul = double(k_tib);
  else
    throw error("'" + s + "' has an unknown unit (use K, M, G or T)");
  if (!(v > 0) || !std::isfinite(v))
    throw error("'" + s + "' must be positive");
  const double bytes = std::round(v * mul);
  if (bytes < 1)
    throw error("'" + s + "' is less than one byte");
  if (bytes >= 18446744073709551616.0)
    throw error("'" + s + "' is too large (at most 16 EiB)");
  return static_cast<std::uint64_t>(bytes);
}

std::string format_bytes(double b) {
  const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024.0 && u < 4) {
    b /= 1024.0;
    ++u;
  }
  char s[32];
  std::snprintf(s, sizeof s, b == std::floor(b) ? "%.0f %s" : "%.2f %s", b, unit[u]);
  return s;
}

std::string format_gib(double bytes, const char *sep) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g%sGiB", bytes / double(k_gib), sep);
  return buf;
}

} // namespace gpuprobe
