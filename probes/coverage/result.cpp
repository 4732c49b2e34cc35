// The host half of tlb-coverage: the levels to test, the walks' plan and searches, the verdicts,
// the JSON. Every walk goes through coverage_env, so this file runs on simulated TLBs in tests.
#include "common/units.hpp"
#include "model/fields.hpp"
#include "probes/coverage/driver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpuprobe::probes {

using nlohmann::json;

std::uint32_t coverage_target::slots() const {
  return std::uint32_t(std::llround(tested.coverage_bytes / double(2ull << 20)));
}
std::uint32_t coverage_target::entries() const {
  return std::uint32_t(std::llround(tested.entries.value_or(0)));
}
double coverage_target::penalty_cycles() const {
  if (tested.structure && tested.structure->after_cycles && tested.structure->before_cycles)
    return *tested.structure->after_cycles - *tested.structure->before_cycles;
  return tested.miss_penalty_cycles.value_or(0);
}
double coverage_target::full_miss_windows() const {
  if (tested.structure && tested.structure->full_miss_entries)
    return *tested.structure->full_miss_entries;
  return 1.25 * entries();
}

std::vector<coverage_target> plan_coverage(const model::tlb_hierarchy &tlb,
                                           const coverage_options &o) {
  return plan_levels<coverage_target>(tlb, [&](coverage_target &t, std::size_t k) {
    const model::tlb_level &L = t.tested;
    if (k > 0) {
      const model::tlb_level &in = tlb.levels[k - 1];
      t.inner_slots = std::uint32_t(std::llround(in.coverage_bytes / double(o.slot_bytes)));
      t.inner_full_miss = in.structure && in.structure->full_miss_entries
                              ? *in.structure->full_miss_entries
                              : 1.25 * in.entries.value_or(0);
    }
    const double windows_in_range = double(o.max_range_bytes) / L.coverage_bytes;
    if (!L.structure || !L.structure->resolved)
      t.skipped = "its structure is not resolved: no capacity to start from";
    else if (std::fmod(L.coverage_bytes, double(o.slot_bytes)) != 0 ||
             L.coverage_bytes < 2 * double(o.slot_bytes))
      t.skipped = "its coverage (" + format_bytes(L.coverage_bytes) + ") is not two or more " +
                  format_bytes(double(o.slot_bytes)) + " slots";
    else if (!(t.penalty_cycles() > 0))
      t.skipped = "no miss penalty in the profile";
    else if (windows_in_range < 1.25 * t.full_miss_windows())
      t.skipped =
          "its full miss lies past the " + format_bytes(double(o.max_range_bytes)) + " range";
  });
}

namespace {

slot_layout every_slot(std::uint64_t slot_bytes, std::uint32_t slots) {
  slot_layout l;
  l.slot_bytes = slot_bytes;
  l.chunk_of.assign(slots, 0);
  return l;
}

// Chunk 0 at the given offsets of every window (of r slots), the rest unmapped.
slot_layout only_offsets(std::uint64_t slot_bytes, std::uint32_t windows, std::uint32_t r,
                         const std::vector<std::uint32_t> &offsets) {
  slot_layout l;
  l.slot_bytes = slot_bytes;
  l.chunk_of.assign(std::size_t(windows) * r, -1);
  for (std::uint32_t w = 0; w < windows; ++w)
    for (auto o : offsets)
      l.chunk_of[std::size_t(w) * r + o] = 0;
  return l;
}

// A chunk of its own at slot 0 of every window.
slot_layout distinct_chunks(std::uint64_t slot_bytes, std::uint32_t windows, std::uint32_t r) {
  slot_layout l;
  l.slot_bytes = slot_bytes;
  l.chunk_of.assign(std::size_t(windows) * r, -1);
  for (std::uint32_t w = 0; w < windows; ++w)
    l.chunk_of[std::size_t(w) * r] = int(w);
  l.chunks = int(windows);
  return l;
}

// Every slot, slot i the i-th piece of one allocation.
slot_layout ordered_allocation(std::uint64_t slot_bytes, std::uint32_t slots) {
  slot_layout l;
  l.slot_bytes = slot_bytes;
  l.chunk_of.resize(slots);
  for (std::uint32_t i = 0; i < slots; ++i)
    l.chunk_of[i] = int(i);
  l.chunks = int(slots);
  l.one_allocation = true;
  return l;
}

// A walk misses: at least 1.5 hops per lap past the threshold (one set of a set-associative level
// overflows at its onset), or, for a fully associative level, half its groups (at the onset every
// group's first hop misses; a penalty of 10 cycles leaves a threshold 5 cycles above a hit, which
// noise crosses now and then).
double miss_floor(bool fully_associative, double groups) {
  return fully_associative ? std::max(1.5, 0.5 * groups) : 1.5;
}

// The fewest windows whose walk of `p` misses: a grid of fractions of the expected onset, then
// bisection between the last grid walk that hit and the first that missed.
onset_search find_onset(coverage_env &env, const std::string &name, const std::string &layout,
                        const walk_pattern &p, std::uint32_t windows_per_group,
                        std::uint32_t max_windows, double expected_windows, double penalty,
                        std::uint32_t laps, bool fully_associative) {
  onset_search s;
  s.pattern = name;
  s.layout = layout;
  s.windows_per_group = windows_per_group;
  s.max_windows = max_windows;
  const std::uint32_t max_groups = max_windows / windows_per_group;
  // This pattern's own threshold: its costliest class in a walk of a quarter of the expected
  // onset (no miss at this level even where each group takes two entries; an inner level's hits
  // there only lower it), plus half the penalty. A
  // pattern's hit cost differs by a few cycles (the data's place in the L2, the hop's address
  // arithmetic): a 10-cycle penalty cannot share one threshold between patterns.
  const auto cal_groups = std::max<std::uint32_t>(
      1, std::min<std::uint32_t>(std::uint32_t(expected_windows / windows_per_group / 4),
                                 max_groups / 4));
  double hit = 0;
  for (double c : env.walk(p, cal_groups, laps, 1e12, false).mean_cycles)
    hit = std::max(hit, c);
  ++s.walks;
  const double thr = hit + 0.5 * penalty;
  s.threshold_cycles = thr;
  const auto misses = [&](std::uint32_t g) {
    ++s.walks;
    return env.walk(p, g, laps, thr, false).total_misses_per_lap() >=
           miss_floor(fully_associative, double(g));
  };
  const double eg = expected_windows / windows_per_group;
  std::vector<std::uint32_t> grid;
  for (double f : {0.125, 0.25, 0.5, 0.75, 0.875, 0.9375, 1.0, 1.0625, 1.125, 1.25, 1.5, 1.75, 2.0,
                   2.25, 2.5, 3.0, 4.0}) {
    const auto g = std::uint32_t(std::max(1.0, std::floor(f * eg)));
    if (g <= max_groups && (grid.empty() || g > grid.back()))
      grid.push_back(g);
  }
  if (grid.empty() || grid.back() < max_groups)
    grid.push_back(max_groups);
  std::uint32_t lo = 0, hi = 0;
  for (auto g : grid) {
    if (misses(g)) {
      hi = g;
      break;
    }
    lo = g;
  }
  if (hi == 0) {
    s.note =
        "no walk of up to " + std::to_string(max_groups * windows_per_group) + " windows missed";
    return s;
  }
  if (lo == 0 && hi == grid.front()) {
    s.note =
        "the smallest walk (" + std::to_string(hi * windows_per_group) + " windows) missed already";
    return s;
  }
  while (hi - lo > 1) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    (misses(mid) ? hi : lo) = mid;
  }
  s.onset_windows = double(hi) * windows_per_group;
  return s;
}

const onset_search *find_search(const coverage_level_result &l, const std::string &pattern,
                                const std::string &layout) {
  for (const auto &s : l.onsets)
    if (s.pattern == pattern && s.layout == layout)
      return &s;
  return nullptr;
}
} // namespace

namespace {

// Calibration and fill: slot 0, then a slot of the same window past every inner level's reach;
// sets the level's miss threshold.
void measure_fill(coverage_env &env, const coverage_target &t, const coverage_options &o,
                  std::uint32_t max_windows, coverage_level_result &l) {
  const std::uint32_t r = t.slots(), e = t.entries();
  const double pen = t.penalty_cycles();
  // Where the level inside covers as much (one H100's L3 and L2 both 32 MiB), every second page
  // of the window hits there: the fill cannot be read at this level.
  fill_test &f = l.fill;
  f.testable = t.inner_slots < r;
  const std::uint32_t second = f.testable ? r - std::max<std::uint32_t>(1, t.inner_slots) : r - 1;
  const walk_pattern fill{r, {0, second}};
  f.second_slot = second;
  f.low_windows = std::max<std::uint32_t>(std::max<std::uint32_t>(1, e / 2),
                                          std::uint32_t(std::ceil(0.6 * t.inner_full_miss)));
  f.low_windows = std::min(f.low_windows, std::max<std::uint32_t>(1, std::uint32_t(0.9 * e)));
  f.high_windows = std::min(max_windows, std::uint32_t(std::ceil(1.25 * t.full_miss_windows())));
  // 16 laps: the fill is read from means of a few cycles' difference (L1's penalty is 10 cycles;
  // with 2 laps one H200 run read 0.50 of a miss, the next -0.2).
  const std::uint32_t fill_laps = std::max<std::uint32_t>(o.laps, 16);
  f.hit_cycles = env.walk(fill, f.low_windows, fill_laps, 1e12, false).mean_cycles[0];
  l.threshold_cycles = f.hit_cycles + 0.5 * pen;
  const auto high = env.walk(fill, f.high_windows, fill_laps, l.threshold_cycles, false);
  f.first_cycles = high.mean_cycles[0];
  f.second_cycles = high.mean_cycles[1];
  f.first_miss_share = high.misses_per_lap[0] / f.high_windows;
  if (f.first_cycles - f.hit_cycles > 0.25 * pen)
    f.fraction = (f.second_cycles - f.hit_cycles) / (f.first_cycles - f.hit_cycles);
}

// The onsets of each walk pattern in each layout (A, D, H on every slot; H on slots 0 and r/2
// only; A on distinct chunks against one; B in physical order against not).
void search_onsets(coverage_env &env, const coverage_target &t, const coverage_options &o,
                   std::uint32_t max_windows, coverage_level_result &l) {
  const std::uint32_t r = t.slots(), e = t.entries();
  const double pen = t.penalty_cycles();
  const bool fa = t.tested.sets && *t.tested.sets == 1;
  // D's warm laps: entries that other walks left may cover its pages one by one (a range made
  // at slot 0 covers slot r/2), and where entries are ranges made at the slot that missed, the
  // walk settles to one entry per pair only as those age out.
  const walk_pattern a{r, {0}}, d{2 * r, {r / 2, r / 2 + r - 1}, 8}, h{r, {0, r / 2}};
  l.onsets.push_back(find_onset(env, "A", "every slot", a, 1, max_windows, e, pen, o.laps, fa));
  l.onsets.push_back(find_onset(env, "D", "every slot", d, 2, max_windows, e, pen, o.laps, fa));
  l.onsets.push_back(find_onset(env, "H", "every slot", h, 1, max_windows, e, pen, o.laps, fa));
  if (r >= 4) { // with 2 slots per entry, slots 0 and r/2 are the whole window
    env.map("pair:" + t.level, only_offsets(o.slot_bytes, max_windows, r, {0, r / 2}));
    l.onsets.push_back(
        find_onset(env, "H", "slots 0 and r/2 only", h, 1, max_windows, e, pen, o.laps, fa));
  }
  // Distinct chunks against one chunk, both at slot 0 alone (the same slots mapped: an entry
  // filed by what is mapped around it would otherwise differ for that reason).
  const std::uint32_t distinct_windows = std::min(max_windows, o.max_chunks);
  env.map("zero:" + t.level, only_offsets(o.slot_bytes, distinct_windows, r, {0}));
  l.onsets.push_back(
      find_onset(env, "A", "slot 0 only", a, 1, distinct_windows, e, pen, o.laps, fa));
  env.map("distinct:" + t.level, distinct_chunks(o.slot_bytes, distinct_windows, r));
  l.onsets.push_back(find_onset(env, "A", "slot 0 only, a chunk each", a, 1, distinct_windows, e,
                                pen, o.laps, fa));
  if (t.inner_slots == 0 && std::uint64_t(max_windows) * r <= o.max_chunks) {
    walk_pattern b{r, {}};
    for (std::uint32_t i = 0; i < r && i < pattern_walk::max_offsets(); ++i)
      b.offsets.push_back(i);
    if (b.offsets.size() == r) {
      env.map("all", every_slot(o.slot_bytes, max_windows * r));
      l.onsets.push_back(find_onset(env, "B", "every slot", b, 1, max_windows, e, pen, o.laps, fa));
      env.map("ordered:" + t.level, ordered_allocation(o.slot_bytes, max_windows * r));
      l.onsets.push_back(
          find_onset(env, "B", "one allocation in order", b, 1, max_windows, e, pen, o.laps, fa));
    }
  }
}

void repeat_onsets(coverage_env &env, const coverage_target &t, const coverage_options &o,
                   std::uint32_t max_windows, coverage_level_result &l) {
  const std::uint32_t r = t.slots(), e = t.entries();
  const bool fa = t.tested.sets && *t.tested.sets == 1;
  const walk_pattern a{r, {0}};
  const double thr = l.threshold_cycles;
  // A fully associative level: its walks of E and E + 1 windows, again and again, three ways,
  // from window 0 and from the conflict probe's second and third window starts (97 and 194:
  // windows that straddle a boundary of E windows).
  // Pattern A's own threshold, where its search calibrated one.
  const auto *search_a = find_search(l, "A", "every slot");
  const double thr_a =
      search_a && search_a->threshold_cycles > 0 ? search_a->threshold_cycles : thr;
  // Each in a range just large enough, and in the whole range (the conflict probe maps one for
  // its largest level: on some units its walks of E windows missed, in none of these).
  if (fa && e + 1 <= max_windows) {
    const std::uint32_t starts[] = {0, 97, 194};
    const std::uint64_t whole = o.max_range_bytes / o.slot_bytes;
    for (const bool large : {false, true}) {
      if (large)
        env.map("all", every_slot(o.slot_bytes, std::uint32_t(whole / r * r)));
      else
        env.map("small", every_slot(o.slot_bytes, (194 + e + 2) * r));
      for (const auto start : starts)
        for (const char *how : {"clean", "foreign page first", "conflict list walk"})
          for (std::uint32_t n : {e, e + 1}) {
            onset_repeat rp;
            rp.how = how;
            rp.windows = n;
            rp.start_window = start;
            rp.range_bytes =
                large ? whole * o.slot_bytes : std::uint64_t(194 + e + 2) * r * o.slot_bytes;
            const bool list = std::string(how) == "conflict list walk";
            if (list && !env.list_walk)
              continue;
            walk_pattern from = a;
            from.first_slot = std::uint64_t(start) * r;
            for (int k = 0; k < o.repeats; ++k) {
              if (list) {
                rp.misses_per_lap.push_back(
                    env.list_walk(start, n, std::uint64_t(t.tested.coverage_bytes), thr_a));
              } else {
                const auto s = env.walk(from, n, o.laps, thr_a, std::string(how) != "clean");
                rp.misses_per_lap.push_back(s.total_misses_per_lap());
                rp.smids.push_back(s.smid);
              }
            }
            l.repeats.push_back(rp);
          }
    }
  }
}

} // namespace

coverage_level_result measure_coverage(coverage_env &env, const coverage_target &t,
                                       const coverage_options &o) {
  coverage_level_result l;
  l.target = t;
  const std::uint32_t r = t.slots(), e = t.entries();
  const std::uint32_t windows_in_range =
      std::uint32_t(o.max_range_bytes / std::uint64_t(t.tested.coverage_bytes));
  const auto max_windows = std::min(
      windows_in_range, std::uint32_t(std::ceil(std::max(2.5 * e, 1.3 * t.full_miss_windows()))));
  env.map("all", every_slot(o.slot_bytes, max_windows * r));
  measure_fill(env, t, o, max_windows, l);
  search_onsets(env, t, o, max_windows, l);
  repeat_onsets(env, t, o, max_windows, l);
  l.verdict = coverage_verdict(l, o);
  return l;
}

namespace {

// onset(x) / onset(y), when both were found.
std::optional<double> ratio(const onset_search *x, const onset_search *y) {
  if (!x || !y || !x->onset_windows || !y->onset_windows || *y->onset_windows <= 0)
    return std::nullopt;
  return *x->onset_windows / *y->onset_windows;
}

bool same(double q) { return q >= 0.8 && q <= 1.25; }

constexpr double k_data_noise_cycles = 20; // see the contrasts in coverage_verdict

} // namespace

namespace {

// The straddling pairs D against A: as many windows (one tag per window, "one"), or twice as
// many ("two": found so, or none missed up to twice A's onset).
std::string straddle_of(const coverage_level_result &l, const onset_search *a, json &v,
                        std::vector<std::string> &unresolved) {
  const auto *dsearch = find_search(l, "D", "every slot");
  if (const auto q = ratio(dsearch, a)) {
    v["straddle_ratio"] = *q;
    const std::string straddle = same(*q) ? "one" : *q >= 1.6 && *q <= 2.5 ? "two" : "not resolved";
    if (straddle == "not resolved")
      unresolved.push_back("the straddling walk's onset is " + std::to_string(*q) +
                           " x the aligned one's");
    return straddle;
  }
  if (dsearch && a && a->onset_windows && !dsearch->onset_windows &&
      dsearch->note.rfind("no walk", 0) == 0 && dsearch->max_windows >= 1.9 * *a->onset_windows) {
    v["straddle_ratio_at_least"] = dsearch->max_windows / *a->onset_windows;
    return "two";
  }
  unresolved.push_back("an onset was not found");
  return "not resolved";
}

// The fill: the second slot after slot 0 missed ("whole", "in parts", "not testable" or "not
// resolved"); `second` names the page that second slot starts.
std::string fill_of(const fill_test &f, const std::string &second, json &v,
                    std::vector<std::string> &unresolved) {
  std::string fill = "not resolved";
  if (f.testable && f.fraction && f.first_miss_share >= 0.8) {
    v["fill_fraction"] = *f.fraction;
    fill = *f.fraction <= 0.3 ? "whole" : *f.fraction >= 0.7 ? "in parts" : "not resolved";
    if (fill == "not resolved")
      unresolved.push_back("a page " + second + " in cost " + std::to_string(*f.fraction) +
                           " of a miss");
  } else if (!f.testable) {
    fill = "not testable";
    unresolved.push_back("the fill (the level inside covers as much: a second page hits there)");
  } else {
    unresolved.push_back("the walk past the full miss did not miss at slot 0");
  }
  v["fill"] = fill;
  return fill;
}

// The tag the straddle and the fill give together (v["tag"]), and what it says.
void tag_of(const coverage_level_result &l, const coverage_options &o, const std::string &straddle,
            const std::string &fill, const std::string &second, json &v,
            std::vector<std::string> &parts, std::vector<std::string> &unresolved) {
  const std::uint32_t r = l.target.slots();
  const std::string rs = std::to_string(r), cov = format_bytes(l.target.tested.coverage_bytes),
                    slot = format_bytes(double(o.slot_bytes));
  if (straddle == "one") {
    v["tag"] = "aligned";
    parts.push_back(rs + " consecutive " + slot + " pages under one tag aligned to " + cov);
    if (fill == "whole")
      parts.push_back("one miss fills all " + rs);
    else if (fill == "in parts")
      parts.push_back("a page " + second +
                      " in misses on its own after the first: the entry is "
                      "filled in parts (sectored)");
  } else if (straddle == "two" && fill == "whole") {
    v["tag"] = "unaligned";
    parts.push_back("any " + rs + " consecutive " + slot +
                    " pages, aligned or not (a straddling pair needs one entry)");
  } else if (straddle == "two" && fill == "in parts" && 2 * l.fill.second_slot >= r) {
    v["tag"] = "half";
    v["entry_bytes_at_most"] = l.target.tested.coverage_bytes / 2;
    parts.push_back("no: an entry covers at most " +
                    format_bytes(l.target.tested.coverage_bytes / 2) + " (a page " + second +
                    " in misses on its own, and walks over both halves hold twice the windows); " +
                    cov + " is what walks at its stride see, their pages reaching half the sets");
  } else {
    v["tag"] = "not resolved";
    if (straddle == "two")
      unresolved.push_back("straddling pairs hold twice the windows but the fill is " + fill);
  }
}

// Mapped neighbours, distinct chunks, an ordered allocation: each against its control. What
// changes the onset joins `parts`, what does not `nothing`.
void contrasts_of(const coverage_level_result &l, json &v, std::vector<std::string> &parts,
                  std::vector<std::string> &nothing) {
  struct contrast {
    const char *key;
    const onset_search *x, *y;
    const char *no_effect, *effect;
  };
  const contrast cs[] = {
      {"unmapped_neighbours", find_search(l, "H", "slots 0 and r/2 only"),
       find_search(l, "H", "every slot"), "unmapped neighbours change nothing",
       "unmapped neighbours change the coverage (entries coalesce mapped pages)"},
      {"distinct_chunks", find_search(l, "A", "slot 0 only, a chunk each"),
       find_search(l, "A", "slot 0 only"), "a distinct physical chunk per window changes nothing",
       "distinct physical chunks change the entries"},
      {"ordered_allocation", find_search(l, "B", "one allocation in order"),
       find_search(l, "B", "every slot"), "physically ordered pages change nothing",
       "physically ordered pages change the coverage (contiguity is used)"}};
  for (const auto &c : cs) {
    const auto q = ratio(c.x, c.y);
    if (!c.x) {
      if (std::string(c.key) == "unmapped_neighbours")
        v[c.key] = "not testable (" + std::to_string(l.target.slots()) + " slots per entry)";
      continue;
    }
    if (!q) {
      // A layout of distinct physical chunks puts the hops' data in near and far L2 slices: where
      // their cost differs by more than half the level's penalty, the smallest walk "misses".
      v[c.key] = c.x->note.rfind("the smallest walk", 0) == 0
                     ? "not testable (the data's own cost varies by more than half the penalty)"
                     : "not resolved";
      continue;
    }
    v[std::string(c.key) + "_ratio"] = *q;
    // Distinct physical chunks: each hop reads its own line, in a near or a far L2 slice, whose
    // cost varies from hop to hop by more than 10 cycles on Hopper (H100 and H200: walks of 4 to
    // 6 such windows "missed" an L1 whose penalty is 10 cycles, 17 on one chunk). Below a
    // 20-cycle penalty a changed onset is that, not the level's.
    if (!same(*q) && std::string(c.key) != "unmapped_neighbours" &&
        l.target.penalty_cycles() < k_data_noise_cycles) {
      v[c.key] = "not testable (a penalty under " + std::to_string(int(k_data_noise_cycles)) +
                 " cycles: the data's own cost varies more)";
      continue;
    }
    v[c.key] = same(*q) ? "no effect" : "changes the onset";
    (same(*q) ? nothing : parts).push_back(same(*q) ? c.no_effect : c.effect);
  }
}

std::string joined(const std::vector<std::string> &xs, const char *sep) {
  std::string out;
  for (std::size_t i = 0; i < xs.size(); ++i)
    out += (i ? sep : "") + xs[i];
  return out;
}

// The sentence the verdict states, from its parts.
std::string finding_of(const json &v, const std::string &cov, const std::vector<std::string> &parts,
                       const std::vector<std::string> &nothing,
                       const std::vector<std::string> &unresolved) {
  std::string finding =
      v["tag"] == "half" ? "does one entry cover " + cov + "? " : "one entry covers " + cov;
  for (std::size_t i = 0; i < parts.size(); ++i)
    finding += (i == 0 ? (v["tag"] == "half" ? "" : ": ") : "; ") + parts[i];
  if (!nothing.empty()) {
    finding += "; " + joined(nothing, ", ");
    if (std::string(v.value("distinct_chunks", "")) == "no effect" ||
        std::string(v.value("ordered_allocation", "")) == "no effect")
      finding += " (physical contiguity is not needed: the alias maps one chunk at every slot)";
  }
  if (!unresolved.empty())
    finding += "; not resolved: " + joined(unresolved, "; ");
  return finding;
}

// The fully associative level's repeated walks: how often E windows missed, each way.
json repeated_onsets(const coverage_level_result &l) {
  json rep = json::array();
  for (const auto &rp : l.repeats) {
    int missed = 0;
    for (double m : rp.misses_per_lap)
      missed += m >= miss_floor(true, rp.windows);
    rep.push_back({{"how", rp.how},
                   {"range_bytes", rp.range_bytes},
                   {"start_window", rp.start_window},
                   {"windows", rp.windows},
                   {"walks", rp.misses_per_lap.size()},
                   {"missed", missed}});
  }
  return rep;
}

} // namespace

json coverage_verdict(const coverage_level_result &l, const coverage_options &o) {
  json v = {{"coverage_bytes", l.target.tested.coverage_bytes},
            {"slot_bytes", o.slot_bytes},
            {"slots_per_entry", l.target.slots()}};
  std::vector<std::string> parts, nothing, unresolved;
  const std::string straddle = straddle_of(l, find_search(l, "A", "every slot"), v, unresolved);
  const std::string second = format_bytes(double(l.fill.second_slot) * double(o.slot_bytes));
  const std::string fill = fill_of(l.fill, second, v, unresolved);
  tag_of(l, o, straddle, fill, second, v, parts, unresolved);
  contrasts_of(l, v, parts, nothing);
  v["finding"] =
      finding_of(v, format_bytes(l.target.tested.coverage_bytes), parts, nothing, unresolved);
  if (const json rep = repeated_onsets(l); !rep.empty())
    v["repeated_onsets"] = rep;
  return v;
}

json to_json(const coverage_result &r) {
  json levels = json::array();
  for (const auto &l : r.levels) {
    json j = {{"level", l.target.level},
              {"coverage_bytes", l.target.tested.coverage_bytes},
              {"entries", l.target.entries()},
              {"penalty_cycles", l.target.penalty_cycles()}};
    if (!l.target.skipped.empty()) {
      j["skipped"] = l.target.skipped;
      levels.push_back(j);
      continue;
    }
    json onsets = json::array();
    for (const auto &s : l.onsets) {
      json o = {{"pattern", s.pattern},
                {"layout", s.layout},
                {"windows_per_group", s.windows_per_group},
                {"max_windows", s.max_windows},
                {"threshold_cycles", s.threshold_cycles},
                {"walks", s.walks}};
      if (s.onset_windows)
        o["onset_windows"] = *s.onset_windows;
      if (!s.note.empty())
        o["note"] = s.note;
      onsets.push_back(o);
    }
    const fill_test &f = l.fill;
    json fill = {{"testable", f.testable},           {"second_slot", f.second_slot},
                 {"low_windows", f.low_windows},     {"high_windows", f.high_windows},
                 {"hit_cycles", f.hit_cycles},       {"first_cycles", f.first_cycles},
                 {"second_cycles", f.second_cycles}, {"first_miss_share", f.first_miss_share}};
    if (f.fraction)
      fill["fraction"] = *f.fraction;
    json reps = json::array();
    for (const auto &rp : l.repeats)
      reps.push_back({{"how", rp.how},
                      {"range_bytes", rp.range_bytes},
                      {"start_window", rp.start_window},
                      {"windows", rp.windows},
                      {"misses_per_lap", rp.misses_per_lap},
                      {"smids", rp.smids}});
    j.update({{"threshold_cycles", l.threshold_cycles},
              {"onsets", onsets},
              {"fill", fill},
              {"repeats", reps},
              {"verdict", l.verdict},
              {"seconds", l.seconds}});
    levels.push_back(j);
  }
  return result_document(
      "tlb-coverage", r, "tlb_coverage",
      {{"profile", r.profile}, {"levels", levels}, {"wall_seconds", r.wall_seconds}});
}

std::string coverage_level_result::finding() const { return model::words_of(verdict, "finding"); }

} // namespace gpuprobe::probes
