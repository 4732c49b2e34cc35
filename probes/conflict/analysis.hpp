#pragma once
// The conflict sets of a level (gpuprobe tlb-conflict) read against its ramp: the ways they give
// (a minimal set whose pages evict each other holds W + 1), whether the two methods agree, and
// which bits of the virtual page number can select the set (a linear, XOR-folded index is
// constant on every set: the page numbers' differences inside the sets span its kernel).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace gpuprobe::analysis {

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

// The "conflict" block of a level's structure, from the level (its profile JSON) and its
// tlb-conflict result (one entry of "levels").
nlohmann::json conflict_summary(const nlohmann::json &level, const nlohmann::json &result_level);

} // namespace gpuprobe::analysis
