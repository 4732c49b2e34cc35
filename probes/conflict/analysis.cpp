#include "probes/conflict/analysis.hpp"

#include "common/results_folder.hpp"
#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace gpuprobe::probes {

using nlohmann::json;

namespace {

// Reduces `v` against the basis (row echelon by leading bit); returns the remainder.
std::uint64_t reduce(std::uint64_t v, const std::map<int, std::uint64_t, std::greater<>> &basis) {
  for (const auto &[bit, row] : basis)
    if (v >> bit & 1)
      v ^= row;
  return v;
}

int top_bit(std::uint64_t v) { return 63 - __builtin_clzll(v); }

} // namespace

index_bits set_index_bits(const std::vector<std::vector<std::uint64_t>> &sets) {
  index_bits r;
  std::uint64_t lo = ~0ull, varying = 0;
  for (const auto &s : sets)
    for (auto p : s)
      lo = std::min(lo, p);
  for (const auto &s : sets)
    for (auto p : s)
      varying |= p ^ lo;
  r.varying_bits = varying ? top_bit(varying) + 1 : 0;
  std::map<int, std::uint64_t, std::greater<>> basis; // leading bit -> row
  for (const auto &s : sets)
    for (std::size_t i = 1; i < s.size(); ++i)
      if (const auto v = reduce(s[i] ^ s[0], basis); v)
        basis[top_bit(v)] = v;
  r.kernel_rank = int(basis.size());
  // The functions m (bits 0..varying_bits-1) with parity(m & d) = 0 for every row d: for every
  // bit that leads no row, one free solution, solved back through the rows.
  for (int free_bit = 0; free_bit < r.varying_bits; ++free_bit) {
    if (basis.count(free_bit))
      continue;
    std::uint64_t m = 1ull << free_bit;
    // Leading bits in ascending order: each row fixes its leading bit of m.
    for (auto it = basis.rbegin(); it != basis.rend(); ++it)
      if (__builtin_parityll(m & it->second))
        m ^= 1ull << it->first;
    r.masks.push_back(m);
  }
  return r;
}

namespace {

// Which virtual-address bits can select the set: what the sets' pages (their page numbers) vary
// in, and whether the ramp's sets are pinned by them.
json set_index_finding(const std::vector<std::vector<std::uint64_t>> &sets, int page_shift,
                       const model::level_structure *st) {
  const auto b = set_index_bits(sets);
  json bits = {{"page_number_bits_varying", b.varying_bits},
               {"va_bits", {page_shift, page_shift + std::max(0, b.varying_bits - 1)}},
               {"differences_rank", b.kernel_rank},
               {"index_rank_at_most", b.varying_bits - b.kernel_rank}};
  json masks = json::array();
  for (auto m : b.masks) {
    char hex[40];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(m << page_shift));
    masks.push_back(hex);
  }
  bits["va_masks"] = masks;
  // The same functions as a GF(2) matrix over the VA bits that vary: one row per function, its
  // columns VA bit high..low (a 1 where the bit enters the XOR).
  json rows = json::array();
  for (auto m : b.masks) {
    std::string row;
    for (int k = b.varying_bits - 1; k >= 0; --k)
      row += (m >> k & 1) ? '1' : '0';
    rows.push_back(row);
  }
  bits["gf2_matrix"] = {{"columns", "VA bits " + std::to_string(page_shift + b.varying_bits - 1) +
                                        " down to " + std::to_string(page_shift)},
                        {"rows", rows},
                        {"rank", b.masks.size()}};
  const double sets_ramp = st ? st->sets.value_or(0.0) : 0.0;
  std::string words;
  if (st && st->resolved && sets_ramp == 1) {
    words = "one set (fully associative): no address bit selects it";
    bits.erase("va_masks");
    bits.erase("gf2_matrix");
    bits.erase("index_rank_at_most");
  } else if (b.varying_bits == 0) {
    words = "the sets' pages do not differ in any bit";
  } else {
    char w[320];
    std::snprintf(w, sizeof w,
                  "within %zu set(s), pages differ in a space of rank %d over VA bits %d-%d: the "
                  "set is selected by at most %d XOR-combinations of them",
                  sets.size(), b.kernel_rank, page_shift, page_shift + b.varying_bits - 1,
                  b.varying_bits - b.kernel_rank);
    words = w;
    if (sets_ramp > 1) {
      const double need = std::log2(sets_ramp);
      if (std::fabs(need - std::round(need)) < 1e-9 &&
          b.varying_bits - b.kernel_rank == int(std::lround(need)))
        words += " (" + std::to_string(std::lround(need)) + " for " +
                 std::to_string(std::lround(sets_ramp)) + " sets: the index is determined)";
      else
        words += "; " + std::to_string(std::lround(sets_ramp)) +
                 " sets need more sets or windows to pin the function";
    }
  }
  bits["finding"] = words;
  return bits;
}

} // namespace

std::uint64_t set_of(const std::vector<std::uint64_t> &masks, std::uint64_t page_number) {
  std::uint64_t bits = 0;
  for (std::size_t j = 0; j < masks.size(); ++j)
    bits |= std::uint64_t(__builtin_parityll(masks[j] & page_number)) << j;
  return bits;
}

json conflict_summary(const model::tlb_level &level, const conflict_level_read &r) {
  json out = {{"source", results_folder::raw_rel(results_folder::raw_file::tlb_conflict)}};
  if (r.skipped) {
    out["resolved"] = false;
    out["why"] = *r.skipped;
    return out;
  }
  const int page_shift = r.coverage_bytes > 0 ? int(std::lround(std::log2(r.coverage_bytes))) : 0;
  std::vector<std::vector<std::uint64_t>> sets;
  json sizes = json::array(), onsets = json::array(), missing = json::array();
  std::map<std::size_t, int> count, union_count; // set sizes: group-tested, onset unions
  std::string failed;
  for (const auto &s : r.sets) {
    onsets.push_back(s.onset_pages);
    missing.push_back(s.missing);
    if (s.failed) {
      failed = *s.failed;
      continue;
    }
    std::vector<std::uint64_t> pages;
    for (auto p : s.members)
      pages.push_back((r.va_base >> page_shift) + p);
    sizes.push_back(pages.size());
    ++(s.method == "onset union" ? union_count : count)[pages.size()];
    sets.push_back(pages);
  }
  // The ways come from the group-tested sets (minimal by construction); where none was found,
  // from the onset unions (a union a walk short of its set is smaller: said as a difference).
  if (count.empty()) {
    count = union_count;
    if (!count.empty())
      out["method"] = "onset union (no page missed in two walks: not LRU at the onset)";
  }
  out["set_sizes"] = sizes;
  out["misses_begin_at_pages"] = onsets;
  out["pages_missing_there"] = missing;
  if (sets.empty() || count.empty()) {
    out["resolved"] = false;
    out["why"] = failed.empty() ? "no conflict set was searched" : failed;
    return out;
  }
  std::size_t mode = 0;
  for (const auto &[size, n] : count)
    if (mode == 0 || n > count[mode])
      mode = size;
  const double ways = double(mode) - 1;
  out["resolved"] = count.size() == 1;
  if (count.size() != 1)
    out["why"] = "the sets found differ in size";
  out["ways"] = ways;
  const model::level_structure *st = level.structure ? &*level.structure : nullptr;
  if (st && st->resolved) {
    const double ramp_ways = st->ways.value_or(0.0);
    out["ramp_ways"] = ramp_ways;
    out["agrees"] = count.size() == 1 && ways == ramp_ways;
  }
  out["set_index"] = set_index_finding(sets, page_shift, st);
  // The pinned function checked by prediction in fresh windows (tlb-conflict's predictions).
  if (!r.predictions.empty()) {
    int held = 0, made = 0;
    for (const auto &p : r.predictions)
      made += p.made, held += p.held;
    auto &si = out["set_index"];
    si["predictions_held"] = held;
    si["predictions_made"] = made;
    si["predictions_tried"] = r.predictions.size();
    si["finding"] = si["finding"].get<std::string>() + "; checked by prediction in " +
                    std::to_string(r.predictions.size()) + " fresh window(s): held in " +
                    std::to_string(held) + " of " + std::to_string(made) + " made";
  }
  return out;
}

} // namespace gpuprobe::probes
