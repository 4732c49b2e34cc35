#pragma once
// One table per enumeration gives both directions: to_string and parse (with a one-line error
// that lists the accepted names).
#include "common/error.hpp"

#include <string>
#include <utility>

namespace gpuprobe {

template <class E, std::size_t N> using enum_table = std::pair<E, const char *>[N];

template <class E, std::size_t N> const char *enum_name(const enum_table<E, N> &t, E e) {
  for (const auto &[v, name] : t)
    if (v == e)
      return name;
  return "?";
}

template <class E, std::size_t N>
E enum_value(const enum_table<E, N> &t, const std::string &s, const char *what) {
  std::string names;
  for (const auto &[v, name] : t) {
    if (s == name)
      return v;
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  throw error(std::string(what) + " '" + s + "' is not one of " + names);
}

} // namespace gpuprobe
