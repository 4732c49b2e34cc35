#pragma once
// The conflict sets of a level (gpuprobe tlb-conflict) read against its ramp: the ways they give
// (a minimal set whose pages evict each other holds W + 1), whether the two methods agree, and
// which bits of the virtual page number can select the set (a linear, XOR-folded index is
// constant on every set: the page numbers' differences inside the sets span its kernel).
#include "model/profile.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::probes {

// Over GF(2): the bits that vary among `pages`, the span of the differences inside each set,
// and a basis of the functions constant on every set (masks of page-number bits).
struct index_bits {
  int varying_bits = 0;             // page-number bits 0..varying_bits-1 vary among the pages
  int kernel_rank = 0;              // dimension of the differences' span
  std::vector<std::uint64_t> masks; // a basis of the index functions the sets allow
};
index_bits set_index_bits(const std::vector<std::vector<std::uint64_t>> &sets);
// The set a page number falls in under index functions `masks`: bit j is the parity of
// masks[j] & page_number.
std::uint64_t set_of(const std::vector<std::uint64_t> &masks, std::uint64_t page_number);

// What the summary reads of one level of a tlb-conflict result (one entry of its "levels"),
// typed: its page and pool base, each window's set and each fresh window's prediction.
struct conflict_level_read {
  std::optional<std::string> skipped; // the level was not tested: why
  double coverage_bytes = 0;
  std::uint64_t va_base = 0;
  struct set {
    int onset_pages = 0;
    std::size_t missing = 0;            // pages missing at the onset
    std::optional<std::string> failed;  // no set found in this window: why
    std::vector<std::uint64_t> members; // page indices from the pool's start
    std::string method;                 // "group testing" or "onset union"
  };
  std::vector<set> sets;
  struct prediction {
    bool made = true; // false: its walks failed
    bool held = false;
  };
  std::vector<prediction> predictions;
};
// Reads one entry of a tlb-conflict result's "levels" (probes/conflict/result.cpp, beside its
// writer); a part of another kind is one gpuprobe::error naming it.
conflict_level_read conflict_level_from_json(const nlohmann::json &row);

// The "conflict" block of a level's structure, from the level and its tlb-conflict result.
nlohmann::json conflict_summary(const model::tlb_level &level, const conflict_level_read &result);

} // namespace gpuprobe::probes
