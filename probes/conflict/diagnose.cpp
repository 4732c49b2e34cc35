// Issue 45 item 5's diagnoses inside tlb-conflict's process: where the conflict walk and the ramp
// disagree, which condition of the walk moves the answer.
//   walk_homes: a fully associative level's walks of E and E + 1 pages with every hop moved by
//     the same offset inside the chunk, so the one word the walk loads has another L2 home (a
//     near or a far L2 partition reads as a hit some 40 cycles apart).
//   walk_groups: a set-associative level's walks over some pages of each 512 MiB group (the
//     range of one page-directory entry on Hopper): fewer pages than the level's entries, spread
//     over fewer or more groups than a full walk touches. A level of W ways x S sets misses
//     only where a set holds W + 1 of them; a level that counts groups misses past its count.
//   walk_rotations: the first onset-union window's onset walk begun at other pages of it (does
//     the page that never misses owe that to its place in the walk?).
#include "common/stats.hpp"
#include "probes/conflict/analysis.hpp"
#include "probes/conflict/driver.hpp"
#include "probes/instruments/list_chase.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

namespace gpuprobe::probes {

void walk_homes(list_chase &chase, const conflict_target &t, const conflict_options &o,
                conflict_level_result &l) {
  if (o.home_offsets <= 0 || t.tested.sets.value_or(0) != 1)
    return;
  const auto e = std::uint32_t(t.entries());
  const int walks = std::max(2, o.repeat_walks);
  for (int k = 0; k < o.home_offsets; ++k) {
    conflict_level_result::home_walk h;
    h.offset = std::uint64_t(k) * 4096;
    if (h.offset + 8 > std::min<std::uint64_t>(t.coverage_bytes(), 2ull << 20))
      break; // past the chunk: another slot's translation
    const auto walk = [&](std::uint32_t n) {
      return chase.measure(pages_from(0, n), t.coverage_bytes(), h.offset);
    };
    h.hit_cycles = median(walk(e / 2));
    h.smid = chase.last_smid();
    const double thr = h.hit_cycles + 0.5 * t.penalty_cycles(); // the uncalibrated threshold
    const auto missed = [&](std::uint32_t n) {
      const auto lat = walk(n);
      return *std::max_element(lat.begin(), lat.end()) > thr;
    };
    for (int w = 0; w < walks; ++w) {
      ++h.walks;
      h.missed_e_minus_1 += missed(e - 1);
      h.missed_e += missed(e);
      h.missed_e1 += missed(e + 1);
    }
    for (double c : walk(e)) // one more walk of E pages: each position's excess over the hit
      h.excess_e.push_back(c - h.hit_cycles);
    // The same walks against the threshold miss_fraction calibrates at this offset.
    const walk_fn at = [&](const std::vector<std::uint32_t> &p) {
      return chase.measure(p, t.coverage_bytes(), h.offset);
    };
    double chit = 0, hit_max = 0, miss_min = 0;
    h.fraction = miss_fraction(at, t, chit, hit_max, miss_min);
    const double cthr = chit + h.fraction * t.penalty_cycles();
    for (int w = 0; w < walks; ++w) {
      const auto a = at(pages_from(0, e)), b = at(pages_from(0, e + 1));
      h.calibrated_missed_e += *std::max_element(a.begin(), a.end()) > cthr;
      h.calibrated_missed_e1 += *std::max_element(b.begin(), b.end()) > cthr;
    }
    std::fprintf(stderr,
                 "[tlb-conflict] %s offset %6llu B (SM %d): hit %.1f cycles; walks of %u / %u / "
                 "%u pages missed %d / %d / %d of %d (at %.2f x the penalty: %u and %u pages %d / "
                 "%d); excess of %u:",
                 t.level.c_str(), static_cast<unsigned long long>(h.offset), h.smid, h.hit_cycles,
                 e - 1, e, e + 1, h.missed_e_minus_1, h.missed_e, h.missed_e1, h.walks, h.fraction,
                 e, e + 1, h.calibrated_missed_e, h.calibrated_missed_e1, e);
    for (double x : h.excess_e)
      std::fprintf(stderr, " %.0f", x);
    std::fprintf(stderr, "\n");
    l.homes.push_back(h);
  }
}

std::vector<std::uint32_t> group_pages_of(std::uint32_t group_pages, std::uint32_t per_group,
                                          std::uint32_t groups) {
  std::vector<std::uint32_t> pages;
  for (std::uint32_t g = 0; g < groups; ++g)
    for (std::uint32_t j = 0; j < std::min(per_group, group_pages); ++j)
      pages.push_back(g * group_pages + j);
  return pages;
}

void walk_groups(const walk_fn &walk, const conflict_target &t, const conflict_options &o,
                 const std::vector<std::uint64_t> &masks, std::uint64_t page_base,
                 std::uint32_t range_pages, conflict_level_result &l) {
  const std::uint64_t group_bytes = 512ull << 20;
  if (!o.group_walks || t.tested.sets.value_or(0) <= 1 || t.coverage_bytes() > group_bytes / 2)
    return;
  const auto e = std::uint32_t(t.entries());
  const auto g = std::uint32_t(group_bytes / t.coverage_bytes()); // pages per group
  const std::uint32_t full = e / g;                             // groups a full walk touches
  const double hit = median(walk(hit_calibration_pages(t, 0))); // as the search calibrates
  const double thr = hit + t.miss_fraction * t.penalty_cycles();
  // 5 of 8 pages of each group: past an inner level of half the entries, W x 5/8 to a set.
  const std::uint32_t per = (5 * g + 7) / 8;
  for (double share : {0.9, 1.1, 1.25}) {
    conflict_level_result::group_walk gw;
    gw.per_group = per;
    gw.groups = std::min(std::uint32_t(share * full), range_pages / g);
    gw.hit_cycles = hit;
    const auto pages = group_pages_of(g, per, gw.groups);
    if (!masks.empty()) {
      std::map<std::uint64_t, std::size_t> sets;
      for (auto p : pages)
        gw.most_in_a_set = std::max(gw.most_in_a_set, ++sets[set_of(masks, page_base + p)]);
    }
    for (int w = 0; w < std::max(2, o.repeat_walks); ++w) {
      const auto lat = walk(pages);
      ++gw.walks;
      gw.most_missing =
          std::max<std::size_t>(gw.most_missing, std::count_if(lat.begin(), lat.end(),
                                                               [&](double c) { return c > thr; }));
    }
    std::fprintf(stderr,
                 "[tlb-conflict] %s groups: %u pages of each of %u groups of 512 MiB (%zu pages, "
                 "full walk %u groups; at most %zu to a set): at most %zu missed in %d walks\n",
                 t.level.c_str(), per, gw.groups, pages.size(), full, gw.most_in_a_set,
                 gw.most_missing, gw.walks);
    l.group_walks.push_back(gw);
  }
}

void walk_rotations(const walk_fn &walk, const conflict_target &t, const conflict_options &o,
                    conflict_level_result &l) {
  if (!o.group_walks)
    return;
  const auto it = std::find_if(l.sets.begin(), l.sets.end(), [](const conflict_set &s) {
    return s.failed.empty() && s.method == "onset union";
  });
  if (it == l.sets.end())
    return;
  const auto window = pages_from(it->window_start, it->onset_pages);
  const std::uint32_t n = it->onset_pages;
  const double thr = median(walk(hit_calibration_pages(t, it->window_start))) +
                     t.miss_fraction * t.penalty_cycles();
  for (std::uint32_t r : {0u, n / 4, n / 2, 3 * n / 4, n - 1}) {
    conflict_level_result::rotation rot;
    rot.window_start = it->window_start;
    rot.pages = n;
    rot.first = window[r];
    std::vector<std::uint32_t> cycle(window.begin() + r, window.end());
    cycle.insert(cycle.end(), window.begin(), window.begin() + r);
    for (int w = 0; w < std::max(2, o.repeat_walks); ++w) {
      const auto lat = walk(cycle);
      for (std::size_t i = 0; i < lat.size(); ++i)
        if (lat[i] > thr)
          rot.missing.push_back(cycle[i]);
    }
    std::sort(rot.missing.begin(), rot.missing.end());
    rot.missing.erase(std::unique(rot.missing.begin(), rot.missing.end()), rot.missing.end());
    std::fprintf(stderr, "[tlb-conflict] %s the onset walk of window %u (%u pages) from page %u:",
                 t.level.c_str(), rot.window_start, n, rot.first);
    for (auto p : rot.missing)
      std::fprintf(stderr, " %u", p);
    std::fprintf(stderr, " missed\n");
    l.rotations.push_back(rot);
  }
}

} // namespace gpuprobe::probes
