#pragma once
// How deep a JSON text nests, read before any value is built: nlohmann's parser recurses, so a
// hostile file nested deep enough overflows the stack. Header-only (allocators/load_tuning.hpp,
// which a user's program includes alone, and common/json_io.cpp).
#include <cstddef>
#include <string>

namespace gpuprobe {

// The byte (1-based) where the text's nesting of [ and {, outside its strings, first goes past
// `max`; 0 where it never does.
inline std::size_t json_too_deep_at(const std::string &text, int max) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if ((c == '[' || c == '{') && ++depth > max) {
      return i + 1;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return 0;
}

} // namespace gpuprobe
