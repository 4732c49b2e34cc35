// The profile's tlb.cross_check: the aliased levels against the real-memory chase's analysis, its
// L2 control and near/far split, and the random sampling below and above each level.
#include "probes/tlb/cross_check.hpp"

#include "common/device_info.hpp"
#include "common/stats.hpp"

#include <cmath>
#include <cstdio>
#include <utility>

namespace gpuprobe::probes {

using nlohmann::json;

std::optional<model::memory_access_check> memory_access(const probes::tlb_result &real_result) {
  const double l2 = double(device_info_from_json(real_result.device).l2_bytes);
  std::vector<double> hit, mem;
  if (real_result.control)
    for (const auto &p : real_result.control->points) {
      const double fp = double(p.footprint_bytes);
      if (fp <= l2 / 4)
        hit.push_back(p.median);
      else if (fp >= 2 * l2)
        mem.push_back(p.median);
    }
  if (l2 <= 0 || hit.empty() || mem.empty())
    return std::nullopt;
  model::memory_access_check m;
  m.source = "the real-memory chase's L2 control (128-byte stride)";
  m.l2_hit_cycles = median(hit);
  m.memory_cycles = median(mem);
  m.detail["extra_cycles"] = m.extra_cycles();
  return m;
}

std::string miss_served_by(double penalty,
                           const std::optional<model::memory_access_check> &memory) {
  if (!memory || !(memory->extra_cycles() > 0))
    return "";
  const double x = penalty / memory->extra_cycles();
  char b[200];
  if (x >= 0.75)
    std::snprintf(b, sizeof b,
                  "memory: a page walk whose page-table data is not cached (%.2f x a memory "
                  "access beyond an L2 hit)",
                  x);
  else
    std::snprintf(b, sizeof b, "on chip (%.2f x a memory access beyond an L2 hit)", x);
  return b;
}

namespace {

// What the real-memory chase says of an aliased level: a real level (or candidate) of the same page
// and a reach within 15 % agrees (the two analyses number their levels apart: the real sweep
// ends at the device memory and can miss or add one), else the level lies beyond that sweep or
// was not seen.
std::string
real_memory_verdict(const model::tlb_level &L,
                    const std::vector<std::pair<std::string, const model::tlb_level *>> &real,
                    double real_end) {
  const double reach = L.reach_bytes, page = L.coverage_bytes;
  for (const auto &[name, r] : real)
    if (r->coverage_bytes == page && std::fabs(r->reach_bytes - reach) <= 0.15 * reach)
      return "agrees: real memory's " + name + " (" +
             std::to_string(std::lround(r->entries.value_or(0))) + " x " +
             std::to_string(std::lround(page / double(1 << 20))) + " MiB, +" +
             std::to_string(std::lround(r->miss_penalty_cycles.value_or(0))) + " cycles)";
  if (reach > real_end)
    return "beyond the real-memory sweep (it ends at " +
           std::to_string(std::lround(real_end / double(1ull << 30))) + " GiB: the device memory)";
  return "not seen in real memory";
}

} // namespace

model::tlb_cross_check cross_check(const model::tlb_hierarchy &tlb,
                                   const model::tlb_hierarchy &real_tlb,
                                   const probes::tlb_result &real_result,
                                   const probes::sampling_result *sampling) {
  model::tlb_cross_check out;
  out.method = "the aliased levels against an analysis of a chase over real memory (cudaMalloc)";
  out.memory_access = memory_access(real_result);
  std::vector<std::pair<std::string, const model::tlb_level *>> real;
  model::for_each_level(
      real_tlb, [&](const model::tlb_level &L, bool candidate, const std::string &label) {
        real.emplace_back(std::string(candidate ? "candidate " : "level ") + label, &L);
      });
  model::for_each_level(tlb, [&](const model::tlb_level &L, bool, const std::string &label) {
    model::level_check row;
    row.level = label;
    row.detail["reach_bytes"] = L.reach_bytes; // the level's, for a reader of the block alone
    row.real_memory = real_memory_verdict(L, real, real_tlb.searched_up_to_bytes.value_or(0));
    const std::string served = miss_served_by(L.miss_penalty_cycles.value_or(0), out.memory_access);
    if (!served.empty())
      row.miss_served_by = served;
    out.levels.push_back(std::move(row));
  });
  // The real-memory chase's own effect: its hops land in near and far L2 slices, so a point's
  // per-hop distribution splits (p10 vs p90) where the aliased chase, one line, does not.
  const double l2 = double(device_info_from_json(real_result.device).l2_bytes);
  std::vector<double> p10, p90;
  for (const auto &p : real_result.points)
    if (l2 > 0 && double(p.footprint_bytes) <= l2 / 2 && p.hops >= 8)
      p10.push_back(p.p10), p90.push_back(p.p90);
  if (!p10.empty()) {
    model::l2_split_check split;
    split.p10_cycles = median(p10);
    split.p90_cycles = median(p90);
    split.split_cycles = *split.p90_cycles - *split.p10_cycles;
    split.detail = {{"points", p10.size()}, {"footprints", "up to half the L2, 8 hops or more"}};
    out.l2_split = split;
  }
  if (sampling)
    attach_sampling(out, *sampling);
  return out;
}

void attach_sampling(model::tlb_cross_check &check, const probes::sampling_result &sampling) {
  for (auto &row : check.levels)
    for (const auto &l : sampling.levels)
      if (l.target.level == row.level) { // "L1": candidates ("C1") are not sampled
        model::sampling_check c = l.verdict;
        c.detail["below_bytes"] = double(l.target.below_bytes);
        c.detail["above_bytes"] = double(l.target.above_bytes);
        row.sampling = std::move(c);
      }
}

} // namespace gpuprobe::probes
