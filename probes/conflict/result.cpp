// The host half of tlb-conflict: the levels to test, the group-testing search, the JSON.
#include "common/envelope.hpp"
#include "common/stats.hpp"
#include "common/units.hpp"
#include "probes/conflict/driver.hpp"
#include "probes/conflict/kernel.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace gpuprobe::probes {

using nlohmann::json;

double conflict_target::penalty_cycles() const {
  if (!tested.structure)
    return 0;
  return tested.structure->after_cycles.value_or(0) - tested.structure->before_cycles.value_or(0);
}

std::vector<conflict_target> plan_conflict(const model::tlb_hierarchy &tlb) {
  std::vector<conflict_target> out;
  for (std::size_t k = 0; k < tlb.levels.size(); ++k) {
    const model::tlb_level &L = tlb.levels[k];
    conflict_target t;
    t.level = model::level_label(false, k);
    t.tested = L;
    if (!L.structure || !L.structure->resolved)
      t.skipped = "its structure is not resolved: no capacity to start from";
    else if (t.page_bytes() % (2u << 20) != 0)
      t.skipped = "its page (" + format_bytes(double(t.page_bytes())) +
                  ") is not a whole number of 2 MiB alias slots";
    else if (t.entries() + 64 > list_chase::max_pages()) // 64: conflict_options' max_scan
      t.skipped = "more than " + std::to_string(list_chase::max_pages()) + " pages per walk";
    else if (!(t.penalty_cycles() > 0))
      t.skipped = "no miss penalty in the profile";
    out.push_back(t);
  }
  return out;
}

std::uint64_t conflict_range_bytes(const std::vector<conflict_target> &ts,
                                   const conflict_options &o) {
  std::uint64_t b = 0;
  for (const auto &t : ts)
    if (t.skipped.empty())
      b = std::max(b, (std::uint64_t(o.windows) * o.window_step + t.entries() + 2 * o.max_scan) *
                          t.page_bytes());
  return b;
}

namespace {

std::vector<std::uint32_t> pages_from(std::uint32_t start, std::uint32_t n) {
  std::vector<std::uint32_t> p(n);
  for (std::uint32_t i = 0; i < n; ++i)
    p[i] = start + i;
  return p;
}

// 1. Calibrate on a walk well below the capacity (no miss), then find the onset N0: down in
// steps while a walk misses (a window not aligned to the set index fills some sets early), then
// up by one. Returns the pages that miss in a second walk of N0 too (a page whose misses come and
// go between laps is a poor target: each group test would be a coin toss); `thr` the latency
// past which a hop missed. Empty with s.failed set when the walk never missed.
std::vector<std::uint32_t> onset_targets(const walk_fn &walk, const conflict_target &t,
                                         const conflict_options &o, conflict_set &s, double &thr) {
  const std::uint32_t start = s.window_start;
  const auto e = std::uint32_t(t.entries());
  const std::uint32_t below = std::max<std::uint32_t>(2, e / 64);
  std::uint32_t n = e > below + 2 ? e - below : 2;
  s.hit_cycles = median(walk(pages_from(start, std::max<std::uint32_t>(2, n - below))));
  if (!(s.hit_cycles > 50)) { // an L2 hit alone costs hundreds of cycles
    s.failed =
        "a hop measured " + std::to_string(s.hit_cycles) + " cycles: the timing misses the load";
    return {};
  }
  thr = s.hit_cycles + 0.5 * t.penalty_cycles();
  const auto misses = [&](std::uint32_t pages) {
    const auto lat = walk(pages_from(start, pages));
    ++s.tests;
    std::vector<std::uint32_t> m;
    for (std::uint32_t i = 0; i < pages; ++i)
      if (lat[i] > thr)
        m.push_back(start + i);
    return m;
  };
  while (n > std::max<std::uint32_t>(2, e / 2) && !misses(n).empty())
    n = n > below ? n - below : 2;
  for (; n <= e + std::uint32_t(o.max_scan); ++n)
    if (s.missing = misses(n); !s.missing.empty())
      break;
  if (s.missing.empty()) {
    s.failed = "no walk of up to " + std::to_string(e + o.max_scan) + " pages missed";
    return {};
  }
  s.onset_pages = n;
  std::vector<std::uint32_t> again = misses(n), stable;
  for (auto p : s.missing)
    if (std::binary_search(again.begin(), again.end(), p))
      stable.push_back(p);
  return stable;
}

// 2. Group testing: which pages of the window, removed, let `target` hit? Halves a group while
// removing it lets the target hit, down to single pages (each confirmed), in groups of at most a
// quarter of the window (the walk stays long enough for inner levels to miss); `tests` counts the
// walks, at most o.max_tests.
std::vector<std::uint32_t> congruent_pages(const walk_fn &walk,
                                           const std::vector<std::uint32_t> &all,
                                           std::uint32_t target, double thr,
                                           const conflict_options &o, int &tests) {
  const auto x_misses_without = [&](const std::vector<std::uint32_t> &group) {
    std::vector<std::uint32_t> cycle;
    std::size_t pos = 0;
    for (auto p : all) {
      if (std::binary_search(group.begin(), group.end(), p))
        continue;
      if (p == target)
        pos = cycle.size();
      cycle.push_back(p);
    }
    ++tests;
    return walk(cycle)[pos] > thr;
  };
  std::vector<std::uint32_t> congruent;
  std::function<void(std::vector<std::uint32_t>)> find = [&](std::vector<std::uint32_t> g) {
    if (tests >= o.max_tests || x_misses_without(g))
      return;
    if (g.size() == 1) {
      if (!x_misses_without(g)) // confirmed: this page alone, removed, lets x hit
        congruent.push_back(g[0]);
      return;
    }
    const std::size_t h = g.size() / 2;
    find(std::vector<std::uint32_t>(g.begin(), g.begin() + long(h)));
    find(std::vector<std::uint32_t>(g.begin() + long(h), g.end()));
  };
  std::vector<std::uint32_t> others;
  for (auto p : all)
    if (p != target)
      others.push_back(p);
  const std::size_t chunk = std::max<std::size_t>(1, others.size() / 4);
  for (std::size_t i = 0; i < others.size(); i += chunk)
    find(std::vector<std::uint32_t>(others.begin() + long(i),
                                    others.begin() + long(std::min(others.size(), i + chunk))));
  return congruent;
}

} // namespace

conflict_set find_conflict_set(const walk_fn &walk, std::uint32_t start, const conflict_target &t,
                               const conflict_options &o) {
  conflict_set s;
  s.window_start = start;
  double thr = 0;
  const auto stable = onset_targets(walk, t, o, s, thr);
  if (!s.failed.empty())
    return s;
  // Up to three targets: a target whose misses depend on more than its set's pages (a
  // replacement that is not LRU under this walk) exhausts its tests, and the next is tried.
  const auto all = pages_from(start, s.onset_pages);
  std::string why =
      stable.empty() ? "no page missed in two walks of " + std::to_string(s.onset_pages) + " pages"
                     : "";
  for (std::size_t ti = 0; ti < std::min<std::size_t>(3, stable.size()); ++ti) {
    s.target = stable[ti];
    int tests = 0;
    auto congruent = congruent_pages(walk, all, s.target, thr, o, tests);
    s.tests += tests;
    if (tests >= o.max_tests) {
      why = "page " + std::to_string(s.target) + ": stopped after " + std::to_string(o.max_tests) +
            " tests (its misses depend on more than one set)";
      continue;
    }
    if (congruent.empty()) {
      why = "page " + std::to_string(s.target) + ": no page's removal let it hit";
      continue;
    }
    if (congruent.size() > std::size_t(2 * o.max_ways)) {
      why = "page " + std::to_string(s.target) + ": " + std::to_string(congruent.size()) +
            " pages' removal let it hit (more than any set holds: its misses were not stable)";
      continue;
    }
    congruent.push_back(s.target);
    std::sort(congruent.begin(), congruent.end());
    s.members = congruent;
    return s;
  }
  s.failed = why;
  return s;
}

json to_json(const conflict_result &r) {
  json levels = json::array();
  for (const auto &l : r.levels) {
    json sets = json::array();
    for (const auto &s : l.sets) {
      json j = {{"window_start", s.window_start},
                {"onset_pages", s.onset_pages},
                {"hit_cycles", s.hit_cycles},
                {"missing", s.missing},
                {"target", s.target},
                {"members", s.members},
                {"size", s.members.size()},
                {"tests", s.tests}};
      if (!s.failed.empty())
        j["failed"] = s.failed;
      sets.push_back(j);
    }
    json j = {{"level", l.target.level},       {"page_bytes", l.target.page_bytes()},
              {"entries", l.target.entries()}, {"penalty_cycles", l.target.penalty_cycles()},
              {"va_base", l.va_base},          {"sets", sets},
              {"seconds", l.seconds}};
    if (!l.target.skipped.empty())
      j["skipped"] = l.target.skipped;
    levels.push_back(j);
  }
  return result_document("tlb-conflict", r, "tlb_conflict",
                         {{"profile", r.profile},
                          {"range_bytes", r.range_bytes},
                          {"levels", levels},
                          {"wall_seconds", r.wall_seconds}});
}

} // namespace gpuprobe::probes
