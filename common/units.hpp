#pragma once
// Byte sizes, parsed and printed one way everywhere (gpuprobe, gpuprobe-bench, analysis, report).
#include <cstdint>
#include <string>

namespace gpuprobe {

inline constexpr std::uint64_t k_kib = 1ull << 10;
inline constexpr std::uint64_t k_mib = 1ull << 20;
inline constexpr std::uint64_t k_gib = 1ull << 30;
inline constexpr std::uint64_t k_tib = 1ull << 40;

// "64K", "2M", "1G", "1T", "4096", "2MiB", "1.5G" (binary units); throws gpuprobe::error naming
// the text when it is not a positive, finite size that fits in 64 bits.
std::uint64_t parse_bytes(const std::string &s);

// "2 MiB", "64.53 GiB", "512 B": the largest unit that keeps the value >= 1.
std::string format_bytes(double bytes);

// "72 GiB", "64.53 GiB" (4 significant digits, always GiB; `sep` between number and unit, ""
// for names such as tlb_sampling/72GiB).
std::string format_gib(double bytes, const char *sep = " ");

} // namespace gpuprobe
