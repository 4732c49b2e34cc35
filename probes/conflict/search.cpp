// tlb-conflict's search, host code tested on simulated TLBs (driver.hpp says what it finds): the
// calibration of a hit, the onset scan, group testing for a page's partners, and the check of a
// pinned set index by prediction.
#include "common/stats.hpp"
#include "probes/conflict/analysis.hpp"
#include "probes/conflict/driver.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <map>

namespace gpuprobe::probes {

std::vector<std::uint32_t> pages_from(std::uint32_t start, std::uint32_t n) {
  std::vector<std::uint32_t> p(n);
  for (std::uint32_t i = 0; i < n; ++i)
    p[i] = start + i;
  return p;
}

double miss_fraction(const walk_fn &walk, const conflict_target &t, double &hit, double &hit_max,
                     double &miss_min) {
  const auto e = std::uint32_t(t.entries());
  hit = median(walk(pages_from(0, std::max<std::uint32_t>(2, e / 2))));
  hit_max = -1e300;
  miss_min = 1e300;
  for (int k = 0; k < 2; ++k) {
    for (double c : walk(pages_from(0, e - 1)))
      hit_max = std::max(hit_max, c - hit);
    for (double c : walk(pages_from(0, e + 1)))
      miss_min = std::min(miss_min, c - hit);
  }
  const double mid = 0.5 * (hit_max + miss_min) / t.penalty_cycles();
  return miss_min > hit_max && mid > 0.25 && mid < 1 ? mid : 0.5;
}

std::uint32_t calibration_step(const conflict_target &t) {
  return std::max<std::uint32_t>(2, std::uint32_t(t.entries()) / 64);
}

std::vector<std::uint32_t> hit_calibration_pages(const conflict_target &t, std::uint32_t start) {
  const auto e = std::uint32_t(t.entries());
  const std::uint32_t below = calibration_step(t), n = e > below + 2 ? e - below : 2;
  return pages_from(start, std::max<std::uint32_t>(2, n - below));
}

namespace {

// The window's pages without `removed` (ascending), in walk order, and `target`'s place there.
std::vector<std::uint32_t> cycle_without(const std::vector<std::uint32_t> &all,
                                         const std::vector<std::uint32_t> &removed,
                                         std::uint32_t target, std::size_t &pos) {
  std::vector<std::uint32_t> cycle;
  pos = 0;
  for (auto p : all) {
    if (std::binary_search(removed.begin(), removed.end(), p))
      continue;
    if (p == target)
      pos = cycle.size();
    cycle.push_back(p);
  }
  return cycle;
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
  const std::uint32_t below = calibration_step(t);
  // The scan starts E / onset_start_share below E (at least 2), and steps down by E / 64 while
  // the start misses (a window not aligned to the index fills some sets early).
  const std::uint32_t first = std::max<std::uint32_t>(2, e / std::uint32_t(o.onset_start_share));
  std::uint32_t n = e > first + 2 ? e - first : 2;
  s.hit_cycles = median(walk(hit_calibration_pages(t, start)));
  if (!(s.hit_cycles > 50)) { // an L2 hit alone costs hundreds of cycles
    s.failed =
        "a hop measured " + std::to_string(s.hit_cycles) + " cycles: the timing misses the load";
    return {};
  }
  thr = s.hit_cycles + t.miss_fraction * t.penalty_cycles();
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
  // Up by one page a walk: each walk is the last one and a page, so what the level still holds
  // of the walk before is this walk's own pages. A bisection that walks shorter after longer found
  // misses earlier on H100 L2 and L3 (2052 against 2057 pages; the entries a longer walk left
  // behind stay: docs/analyze-tlb.md), so the onset is not searched that way.
  const std::uint32_t top = e + std::uint32_t(o.max_scan);
  for (; n <= top; ++n)
    if (s.missing = misses(n); !s.missing.empty())
      break;
  if (s.missing.empty()) {
    s.failed = "no walk of up to " + std::to_string(top) + " pages missed";
    return {};
  }
  s.onset_pages = n;
  std::vector<std::uint32_t> again = misses(n), stable;
  for (auto p : s.missing)
    if (std::binary_search(again.begin(), again.end(), p))
      stable.push_back(p);
  return stable;
}

// The pages that miss in any of up to `max_walks` walks of the window's first n pages, until two
// walks add none.
std::vector<std::uint32_t> onset_union(const walk_fn &walk, std::uint32_t start, std::uint32_t n,
                                       double thr, std::vector<std::uint32_t> seed, int &tests,
                                       int max_walks = 8) {
  std::vector<std::uint32_t> u = std::move(seed);
  int quiet = 0;
  for (int k = 0; k < max_walks && quiet < 2; ++k) {
    const auto lat = walk(pages_from(start, n));
    ++tests;
    const std::size_t before = u.size();
    for (std::uint32_t i = 0; i < n; ++i)
      if (lat[i] > thr && !std::binary_search(u.begin(), u.end(), start + i))
        u.insert(std::upper_bound(u.begin(), u.end(), start + i), start + i);
    quiet = u.size() == before ? quiet + 1 : 0;
  }
  return u;
}

// The ways a level's ramp gives (max_ways where it has none).
int ramp_ways(const conflict_target &t, const conflict_options &o) {
  return t.tested.ways ? int(std::lround(*t.tested.ways)) : o.max_ways;
}

// 2. Group testing: which pages of the window, removed, let `target` hit? Halves a group while
// removing it lets the target hit, down to single pages (each confirmed), in groups of at most a
// quarter of the window (the walk stays long enough for inner levels to miss); `tests` counts the
// walks, at most o.max_tests.
std::vector<std::uint32_t> congruent_pages(const walk_fn &walk,
                                           const std::vector<std::uint32_t> &all,
                                           std::uint32_t target, double thr, int ways,
                                           const conflict_options &o, int &tests) {
  const auto x_misses_without = [&](const std::vector<std::uint32_t> &group) {
    std::size_t pos = 0;
    const auto cycle = cycle_without(all, group, target, pos);
    ++tests;
    return walk(cycle)[pos] > thr;
  };
  std::vector<std::uint32_t> congruent;
  // `holds`: a partner is known to be in g without a test (infer_halves: its parent held one and
  // its first half none), so g is split at once.
  std::function<bool(std::vector<std::uint32_t>, bool)> find = [&](std::vector<std::uint32_t> g,
                                                                   bool holds) {
    if (tests >= o.max_tests || (!holds && x_misses_without(g)))
      return false;
    if (g.size() == 1) {
      if (!x_misses_without(g)) // confirmed: this page alone, removed, lets x hit
        congruent.push_back(g[0]);
      return true;
    }
    const std::size_t h = g.size() / 2;
    const bool first = find(std::vector<std::uint32_t>(g.begin(), g.begin() + long(h)), false);
    find(std::vector<std::uint32_t>(g.begin() + long(h), g.end()), o.infer_halves && !first);
    return true;
  };
  std::vector<std::uint32_t> others;
  for (auto p : all)
    if (p != target)
      others.push_back(p);
  const std::size_t chunk = std::max<std::size_t>(1, others.size() / 4);
  if (o.generalized_split) {
    // Hwang's generalized binary splitting, for about W partners among the window's pages: test
    // a group of 2^a pages (a = floor(log2((n - d + 1) / d)), at most a quarter of the window);
    // none held: all of it goes; one held: halve it down to one page (a first half that held none
    // goes, the second then holds one), confirm that page by its own walk, and go on with the
    // rest. d counts the partners still expected (the ramp's W, less those found; 1 once found).
    std::vector<std::uint32_t> pool = others; // ascending, as cycle_without needs
    std::size_t d = std::size_t(std::max(1, ways));
    const auto drop = [&](const std::vector<std::uint32_t> &g) {
      std::vector<std::uint32_t> rest;
      std::set_difference(pool.begin(), pool.end(), g.begin(), g.end(), std::back_inserter(rest));
      pool.swap(rest);
    };
    while (!pool.empty() && tests < o.max_tests) {
      const double ratio = double(pool.size() + 1 - std::min(d, pool.size())) / double(d);
      std::size_t size = ratio >= 2 ? std::size_t(1) << int(std::floor(std::log2(ratio))) : 1;
      size = std::min({size, chunk, pool.size()});
      std::vector<std::uint32_t> g(pool.begin(), pool.begin() + long(size));
      if (x_misses_without(g)) { // no partner among them
        drop(g);
        continue;
      }
      while (g.size() > 1 && tests < o.max_tests) {
        std::vector<std::uint32_t> h(g.begin(), g.begin() + long(g.size() / 2));
        if (x_misses_without(h)) { // the first half held none: the second holds one
          drop(h);
          g.erase(g.begin(), g.begin() + long(h.size()));
        } else {
          g = h;
        }
      }
      if (size == 1 || !x_misses_without(g)) // a lone group was tested; a halved one is confirmed
        congruent.push_back(g[0]);
      drop(g);
      d = d > 1 ? d - 1 : 1;
    }
    std::sort(congruent.begin(), congruent.end());
    return congruent;
  }
  for (std::size_t i = 0; i < others.size(); i += chunk)
    find(std::vector<std::uint32_t>(others.begin() + long(i),
                                    others.begin() + long(std::min(others.size(), i + chunk))),
         false);
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
    auto congruent = congruent_pages(walk, all, s.target, thr, ramp_ways(t, o), o, tests);
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
    // More pages than the ramp's W + 1: a partner's removal leaves x's set W pages, so x hits in
    // every walk; another page's removal can let x hit by chance where the replacement is not
    // LRU (Hopper's L3 at its onset). Each page must let x hit in two more walks.
    if (congruent.size() + 1 > std::size_t(ramp_ways(t, o)) + 1) {
      std::vector<std::uint32_t> kept;
      for (auto q : congruent) {
        bool partner = true;
        for (int k = 0; k < 2 && partner; ++k) {
          std::size_t pos = 0;
          const auto cycle = cycle_without(all, {q}, s.target, pos);
          ++s.tests;
          partner = !(walk(cycle)[pos] > thr);
        }
        if (partner)
          kept.push_back(q);
        else
          s.dropped.push_back(q);
      }
      congruent = kept;
    }
    congruent.push_back(s.target);
    std::sort(congruent.begin(), congruent.end());
    s.members = congruent;
    s.method = "group testing";
    return s;
  }
  // No stable target: the onset's one overflowing set, read as the union of its misses and the
  // page the onset walk added (the walk one page shorter did not miss, so that page is in the
  // set it overflowed). Not LRU, the page a walk added last need not miss itself: on Hopper's L3
  // the union is the set's other 8 pages, and the same cycle begun at another page misses none.
  if (stable.empty()) {
    auto u = onset_union(walk, start, s.onset_pages, thr, s.missing, s.tests);
    const std::uint32_t added = start + s.onset_pages - 1;
    if (u.size() >= 2 && !std::binary_search(u.begin(), u.end(), added))
      u.insert(std::upper_bound(u.begin(), u.end(), added), added);
    if (u.size() >= 3 && int(u.size()) <= ramp_ways(t, o) + 1) {
      s.members = u;
      s.target = u.front();
      s.method = "onset union";
      return s;
    }
    why += "; the union of its misses over several walks holds " + std::to_string(u.size()) +
           " pages (not one set of at most " + std::to_string(ramp_ways(t, o) + 1) + ")";
  }
  s.failed = why;
  return s;
}

std::uint32_t prediction_start(const conflict_options &o, int i) {
  return std::uint32_t(o.windows + i) * o.window_step + o.window_step / 2; // a new alignment
}

set_prediction predict_set(const walk_fn &walk, std::uint32_t start, const conflict_target &t,
                           const conflict_options &o, const std::vector<std::uint64_t> &masks,
                           std::uint64_t page_base, bool by_union) {
  set_prediction p;
  p.window_start = start;
  conflict_set s;
  s.window_start = start;
  double thr = 0;
  const auto stable = onset_targets(walk, t, o, s, thr);
  p.onset_pages = s.onset_pages;
  if (!s.failed.empty()) {
    p.failed = s.failed;
    return p;
  }
  const auto index = [&](std::uint32_t page) { return set_of(masks, page_base + page); };
  const auto all = pages_from(start, s.onset_pages);
  if (stable.empty() || by_union) { // not LRU at the onset: are the pages missing there sets?
    p.method = "onset union";
    int tests = 0;
    p.onset_union = onset_union(walk, start, s.onset_pages, thr, s.missing, tests);
    if (p.onset_union.size() < 2) {
      p.failed = "fewer than two pages missed at the onset";
      return p;
    }
    // Held: the union lies in at most two predicted sets (a walk a page past the onset may
    // overflow two), each of at most W + 1 pages of the window.
    p.target = p.onset_union.front();
    std::map<std::uint64_t, std::vector<std::uint32_t>> classes; // index -> the window's pages
    for (auto q : p.onset_union)
      classes[index(q)];
    for (auto q : all)
      if (auto it = classes.find(index(q)); it != classes.end())
        it->second.push_back(q);
    // Not LRU, a set's pages need not all miss (Hopper's L3: 8 of a predicted set's 9): every
    // predicted set the union touches must have all its window pages but one in it (a function
    // wrong in one bit splits the union between two sets, each half pages that did not miss).
    p.union_in_predicted_sets = classes.size() <= 2;
    for (const auto &[idx, members] : classes) {
      p.union_in_predicted_sets &= members.size() <= std::size_t(ramp_ways(t, o)) + 1;
      std::size_t missed = 0;
      for (auto q : members)
        missed += std::binary_search(p.onset_union.begin(), p.onset_union.end(), q);
      p.union_in_predicted_sets &= missed + 1 >= members.size();
      if (idx == index(p.target))
        for (auto q : members)
          if (q != p.target)
            p.predicted.push_back(q);
    }
    p.union_sets = classes.size();
    return p;
  }
  p.method = "removal";
  p.target = stable.front();
  std::vector<std::uint32_t> others;
  for (auto q : all)
    if (q != p.target)
      (index(q) == index(p.target) ? p.predicted : others).push_back(q);
  if (p.predicted.empty() || others.size() < p.predicted.size()) {
    p.failed = "the function puts " + std::to_string(p.predicted.size()) +
               " other pages of the window in x's set";
    return p;
  }
  // x's latency in two walks of the window without `removed` (ascending): both above thr?
  const auto x_misses_without = [&](const std::vector<std::uint32_t> &removed) {
    std::size_t pos = 0;
    const auto cycle = cycle_without(all, removed, p.target, pos);
    int missed = 0;
    for (int k = 0; k < 2; ++k)
      missed += walk(cycle)[pos] > thr;
    return missed;
  };
  p.hit_without_predicted = x_misses_without(p.predicted) == 0;
  for (auto q : p.predicted)
    p.partners_confirmed += x_misses_without({q}) == 0;
  // As many other pages, spread over the window (the function puts none in x's set).
  std::vector<std::uint32_t> spread;
  const double step = double(others.size()) / double(p.predicted.size());
  for (std::size_t i = 0; i < p.predicted.size(); ++i)
    spread.push_back(others[std::size_t(double(i) * step)]);
  p.missed_without_others = x_misses_without(spread) == 2;
  return p;
}

} // namespace gpuprobe::probes
