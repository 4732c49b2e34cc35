// The GPU half of tlb-conflict: one alias pool for every level, the walks, the searches.
#include "probes/conflict/driver.hpp"
#include "common/device_memory.hpp"
#include "common/stats.hpp"
#include "common/stopwatch.hpp"
#include "common/units.hpp"
#include "probes/conflict/analysis.hpp"
#include "probes/instruments/alias_range.hpp"
#include "probes/instruments/list_chase.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpuprobe::probes {

namespace {

// A fully associative level: the miss threshold midway between its walks of E - 1 and E + 1
// pages (a hit's cost varies by position, by as much as half L1's penalty).
void set_miss_threshold(const walk_fn &walk, conflict_target &t, conflict_level_result &l) {
  double hit = 0;
  t.miss_fraction = miss_fraction(walk, t, hit, l.hit_max_cycles, l.miss_min_cycles);
  l.target = t;
  std::fprintf(stderr,
               "[tlb-conflict] %s: walks of %llu pages cost at most +%.1f cycles over the "
               "hit (%.1f), of %llu at least +%.1f: a miss is past +%.1f (%.2f x the "
               "penalty)\n",
               t.level.c_str(), static_cast<unsigned long long>(t.entries() - 1), l.hit_max_cycles,
               hit, static_cast<unsigned long long>(t.entries() + 1), l.miss_min_cycles,
               t.miss_fraction * t.penalty_cycles(), t.miss_fraction);
}

// The diagnosis: the same walks the tlb-coverage probe repeats, in this process (`when`: before
// or after the search), on a fully associative level.
void repeat_walks(const walk_fn &walk, const conflict_target &t, const conflict_options &o,
                  const char *when, conflict_level_result &l) {
  if (o.repeat_walks <= 0 || t.tested.sets.value_or(0) != 1)
    return;
  const auto e = std::uint32_t(t.entries());
  const double hit = median(walk(pages_from(0, e / 2)));
  const double thr = hit + t.miss_fraction * t.penalty_cycles();
  for (std::uint32_t start : {0u, 97u})
    for (std::uint32_t n : {e, e + 1}) {
      conflict_level_result::repeat rp{when, start, n, 0, 0, hit, 0};
      for (int k = 0; k < o.repeat_walks; ++k) {
        const auto lat = walk(pages_from(start, n));
        ++rp.walks;
        const double worst = *std::max_element(lat.begin(), lat.end());
        rp.missed += worst > thr;
        rp.worst_excess_cycles = std::max(rp.worst_excess_cycles, worst - hit);
      }
      std::fprintf(stderr,
                   "[tlb-conflict] %s %s the search: walks of %u pages from %u: %d of %d "
                   "missed (hit %.1f, worst position +%.1f cycles, threshold +%.1f)\n",
                   t.level.c_str(), when, n, start, rp.missed, rp.walks, hit,
                   rp.worst_excess_cycles, thr - hit);
      l.repeats.push_back(rp);
    }
}

// The conflict set of each window.
void search_windows(const walk_fn &walk, const conflict_target &t, const conflict_options &o,
                    conflict_level_result &l) {
  for (int w = 0; w < o.windows; ++w) {
    l.sets.push_back(find_conflict_set(walk, std::uint32_t(w) * o.window_step, t, o));
    const auto &s = l.sets.back();
    std::fprintf(stderr,
                 "[tlb-conflict] %s window %d: misses begin at %u pages (%zu missing), "
                 "conflict set of %zu pages, %d tests%s%s\n",
                 t.level.c_str(), w, s.onset_pages, s.missing.size(), s.members.size(), s.tests,
                 s.failed.empty() ? "" : ": ", s.failed.c_str());
  }
}

// A set index the sets pin (as many functions as log2 of the ramp's sets) is checked by
// prediction in fresh windows; returns the functions (none where the sets pin no such index).
std::vector<std::uint64_t> predict_windows(const walk_fn &walk, const conflict_target &t,
                                           const conflict_options &o, int page_shift,
                                           conflict_level_result &l) {
  const double ramp_sets = t.tested.sets.value_or(1);
  std::vector<std::vector<std::uint64_t>> found;
  bool unions = false;
  for (const auto &s : l.sets)
    if (s.failed.empty()) {
      unions |= s.method == "onset union";
      found.emplace_back();
      for (auto p : s.members)
        found.back().push_back((l.va_base >> page_shift) + p);
    }
  const auto bits = probes::set_index_bits(found);
  const bool pinned = double(bits.masks.size()) == std::round(std::log2(ramp_sets));
  if (ramp_sets > 1 && !found.empty() && pinned)
    for (int i = 0; i < o.predict_windows; ++i) {
      l.predictions.push_back(predict_set(walk, prediction_start(o, i), t, o, bits.masks,
                                          l.va_base >> page_shift, unions));
      const auto &p = l.predictions.back();
      if (p.method == "onset union")
        std::fprintf(stderr,
                     "[tlb-conflict] %s prediction %d: the onset's %zu missing pages lie in "
                     "%zu predicted set(s), x's of %zu pages: %s%s%s\n",
                     t.level.c_str(), i, p.onset_union.size(), p.union_sets, p.predicted.size() + 1,
                     p.held() ? "held" : "did not hold", p.failed.empty() ? "" : ": ",
                     p.failed.c_str());
      else
        std::fprintf(stderr,
                     "[tlb-conflict] %s prediction %d: x = page %u, %zu predicted partners: "
                     "without them x %s, without as many others x %s%s%s\n",
                     t.level.c_str(), i, p.target, p.predicted.size(),
                     p.hit_without_predicted ? "hit" : "missed",
                     p.missed_without_others ? "missed" : "hit", p.failed.empty() ? "" : ": ",
                     p.failed.c_str());
    }
  return pinned ? bits.masks : std::vector<std::uint64_t>{};
}

// Every measurement of one level that is not skipped, on the pool's alias range.
void measure_level(device_pool &pool, list_chase &chase, conflict_target t,
                   const conflict_options &o, std::uint64_t range_bytes, conflict_level_result &l) {
  l.va_base = reinterpret_cast<std::uint64_t>(pool.data());
  const walk_fn walk = [&](const std::vector<std::uint32_t> &pages) {
    return chase.measure(pages, t.coverage_bytes());
  };
  if (t.tested.sets.value_or(0) == 1)
    set_miss_threshold(walk, t, l);
  repeat_walks(walk, t, o, "before", l);
  search_windows(walk, t, o, l);
  repeat_walks(walk, t, o, "after", l);
  walk_homes(chase, t, o, l);
  const int page_shift = int(std::lround(std::log2(double(t.coverage_bytes()))));
  const auto masks = predict_windows(walk, t, o, page_shift, l);
  walk_groups(walk, t, o, masks, l.va_base >> page_shift,
              std::uint32_t(range_bytes / t.coverage_bytes()), l);
  walk_rotations(walk, t, o, l);
}

} // namespace

conflict_result run_conflict(const conflict_options &o, const model::tlb_hierarchy &tlb,
                             const std::string &profile_path, const device_info &dev) {
  const stopwatch t0;
  auto r = level_result<conflict_result>(dev, o.seed, profile_path);
  r.options = o;
  const auto targets = plan_conflict(tlb);
  const std::uint64_t gib = 1ull << 30;
  r.range_bytes = (conflict_range_bytes(targets, o) + gib - 1) / gib * gib;
  std::unique_ptr<device_pool> pool;
  std::unique_ptr<list_chase> chase;
  if (r.range_bytes) {
    std::vector<alias_walk> walks; // every walk is of whole pages of a level (offsets < a slot)
    for (const auto &t : targets)
      if (t.skipped.empty())
        walks.push_back({t.coverage_bytes(), r.range_bytes});
    pool = map_alias_range("tlb-conflict", r.range_bytes, std::move(walks), dev.ordinal, o.seed);
    chase = std::make_unique<list_chase>(*pool);
    chase->set_timed_laps(unsigned(o.timed_laps));
  }
  for (const auto &t : targets) {
    conflict_level_result l;
    l.target = t;
    const stopwatch tl;
    if (t.skipped.empty())
      measure_level(*pool, *chase, t, o, r.range_bytes, l);
    else
      std::fprintf(stderr, "[tlb-conflict] %s: skipped (%s)\n", t.level.c_str(), t.skipped.c_str());
    l.seconds = tl.seconds();
    r.levels.push_back(l);
  }
  r.wall_seconds = t0.seconds();
  return r;
}

} // namespace gpuprobe::probes
