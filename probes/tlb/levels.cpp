#include "probes/tlb/levels.hpp"

#include "common/enum_names.hpp"
#include "common/stats.hpp"
#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace gpuprobe::probes {

namespace {
constexpr enum_table<coverage_bound, 4> k_coverage_bounds = {{coverage_bound::exact, "exact"},
                                                             {coverage_bound::upper, "upper"},
                                                             {coverage_bound::lower, "lower"},
                                                             {coverage_bound::unknown, "unknown"}};
} // namespace

std::string to_string(coverage_bound b) { return enum_name(k_coverage_bounds, b); }

std::string structure_words(const model::tlb_level &L) {
  if (!L.structure)
    return "";
  const auto &st = *L.structure;
  if (!st.resolved)
    return "structure not resolved";
  if (st.fully_associative())
    return "fully associative";
  return count_or_dash(st.ways) + " ways x " + count_or_dash(st.sets) + " sets";
}

std::string structure_detail(const model::tlb_level &L) {
  const model::level_structure st = L.structure.value_or(model::level_structure{});
  const double page = L.coverage_bytes;
  std::string out;
  char b[400];
  if (!st.resolved) {
    out = "not resolved: " + st.why.value_or("?");
  } else if (st.shape == "step") {
    std::snprintf(b, sizeof b, "a step from %.0f to %.0f pages (fully associative)",
                  st.entries.value_or(0), st.full_miss_entries.value_or(0));
    out = b;
  } else {
    std::snprintf(b, sizeof b,
                  "a ramp: misses begin at %s (%.0f pages), every hop misses from %s (%.0f); "
                  "fit residual %.2f cycles over a %.0f-cycle rise, %d points inside",
                  format_bytes(st.entries.value_or(0) * page).c_str(), st.entries.value_or(0),
                  format_bytes(st.full_miss_entries.value_or(0) * page).c_str(),
                  st.full_miss_entries.value_or(0), st.residual_cycles.value_or(0),
                  st.after_cycles.value_or(0) - st.before_cycles.value_or(0),
                  st.ramp_points.value_or(0));
    out = b;
  }
  if (st.conflict) {
    const auto c = model::level_conflict_from_json(*st.conflict);
    std::string sizes;
    for (const int n : c.set_sizes)
      sizes += (sizes.empty() ? "" : " ") + std::to_string(n);
    if (c.ways)
      std::snprintf(b, sizeof b, "; conflict sets of %s pages: %.0f ways, %s", sizes.c_str(),
                    *c.ways, c.agrees.value_or(false) ? "agrees with the ramp" : "does NOT agree");
    else
      std::snprintf(b, sizeof b, "; conflict sets: %s", c.why.empty() ? "?" : c.why.c_str());
    out += b;
  }
  return out;
}

std::string methods_disagree(const model::tlb_level &L) {
  if (!L.structure || !L.structure->conflict)
    return "";
  const auto c = model::level_conflict_from_json(*L.structure->conflict);
  if (!c.agrees || *c.agrees)
    return "";
  return "the ramp says " + count_or_dash(c.ramp_ways) + " ways, the conflict sets " +
         count_or_dash(c.ways) + (c.resolved ? "" : " (their sets differ in size)");
}

bool mark_disagreement(model::tlb_level &L) {
  const std::string why = methods_disagree(L);
  if (why.empty())
    return false;
  L.detail["methods_disagree"] = why;
  if (L.confidence)
    L.confidence = std::round(*L.confidence * 50) / 100;
  return true;
}

std::string searched_words(const model::tlb_hierarchy &tlb) {
  return tlb.searched_up_to_bytes ? "searched up to " + format_bytes(*tlb.searched_up_to_bytes)
                                  : std::string("search limit not recorded");
}

std::string count_or_dash(const std::optional<double> &v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f", v.value_or(0));
  return v ? std::string(b) : std::string("—");
}

std::string penalty_spread_words(const model::tlb_level &L) {
  if (!L.per_sm || L.per_sm->penalty_cycles.empty() ||
      L.per_sm->penalty_cycles.size() != L.per_sm->sms.size())
    return "";
  const auto &p = L.per_sm->penalty_cycles;
  const auto lo = std::min_element(p.begin(), p.end()), hi = std::max_element(p.begin(), p.end());
  const auto sm_of = [&](std::vector<double>::const_iterator it) {
    return L.per_sm->sms[std::size_t(it - p.begin())];
  };
  char b[240];
  std::snprintf(b, sizeof b, "over %zu SMs median %.1f, %.1f (SM %d) to %.1f (SM %d)", p.size(),
                median(p), *lo, sm_of(lo), *hi, sm_of(hi));
  std::string out = b;
  const auto rec = L.detail.find("measured_on_sm");
  const int sm = rec != L.detail.end() && rec->is_number_integer() ? rec->get<int>() : -1;
  const auto at = std::find(L.per_sm->sms.begin(), L.per_sm->sms.end(), sm);
  if (sm >= 0 && at != L.per_sm->sms.end()) {
    std::snprintf(b, sizeof b, "; the headline is SM %d's (%.1f here)", sm,
                  p[std::size_t(at - L.per_sm->sms.begin())]);
    out += b;
  } else if (sm >= 0) {
    out += "; the headline's SM " + std::to_string(sm) + " is not among them";
  } else {
    out += "; the headline's SM not recorded";
  }
  return out;
}

std::string level_line(const std::string &label, const model::tlb_level &L) {
  char b[320];
  const std::string st = structure_words(L);
  const std::string disagree = methods_disagree(L);
  char penalty[48] = "penalty not measured";
  if (L.miss_penalty_cycles)
    std::snprintf(penalty, sizeof penalty, "+%.0f cycles", *L.miss_penalty_cycles);
  std::snprintf(b, sizeof b, "%s %5s x %s = %s%s%s, %s, sharing: %s", label.c_str(),
                count_or_dash(L.entries).c_str(), format_bytes(L.coverage_bytes).c_str(),
                format_bytes(L.reach_bytes).c_str(), st.empty() ? "" : ", ", st.c_str(), penalty,
                L.sharing_scope().c_str());
  return disagree.empty()
             ? std::string(b)
             : std::string(b) + "; METHODS DISAGREE: " + disagree + " (confidence halved)";
}

std::string interval_words(const model::tlb_level &L) {
  const auto it = L.detail.find("intervals");
  if (it == L.detail.end() || !it->is_object())
    return "";
  const auto &v = *it;
  const auto range = [&](const char *key, const char *unit, int digits) {
    if (!v.contains(key) || !v[key].is_array() || v[key].size() != 2 || !v[key][0].is_number() ||
        !v[key][1].is_number())
      return std::string();
    char b[96];
    const double lo = v[key][0].get<double>(), hi = v[key][1].get<double>();
    if (lo == hi)
      std::snprintf(b, sizeof b, "%s %.*f%s", key, digits, lo, unit);
    else
      std::snprintf(b, sizeof b, "%s %.*f-%.*f%s", key, digits, lo, digits, hi, unit);
    return std::string(b);
  };
  std::string out;
  for (const auto &part : {range("entries", "", 0), range("ways", "", 1), range("sets", "", 0),
                           range("miss_penalty_cycles", " cycles", 1)})
    if (!part.empty())
      out += (out.empty() ? "" : ", ") + part;
  if (out.empty())
    return v.contains("why") && v["why"].is_string() ? "no interval: " + v["why"].get<std::string>()
                                                     : "";
  return out;
}

double level_evidence::full_miss_bytes() const {
  return structure.fit.resolved ? structure.fit.full_miss_entries * coverage_bytes : reach_bytes;
}

namespace {

bool near(double a, double b, double tol) { return std::fabs(a / b - 1.0) <= tol; }

// Keeps one step per stride (the one with the largest snr).
std::vector<tlb_step> one_per_stride(const std::vector<tlb_step> &in) {
  std::map<double, tlb_step> best;
  for (const auto &t : in) {
    auto it = best.find(t.stride_bytes);
    if (it == best.end() || t.s.snr > it->second.s.snr)
      best[t.stride_bytes] = t;
  }
  std::vector<tlb_step> out;
  for (auto &[k, v] : best)
    out.push_back(v);
  return out;
}

// Does any curve with a stride in (lo, hi) cover footprint fp (so it could have shown a step)?
bool stride_tested_at(const tlb_dataset &d, double lo, double hi, double fp) {
  for (const auto &c : d.curves)
    if (c.stride_bytes > lo && c.stride_bytes < hi && c.footprint_bytes.front() < fp &&
        c.footprint_bytes.back() > fp)
      return true;
  return false;
}

// The next larger tested stride (2x s_min, or the smallest above it) covers `reach` with room
// on both sides and has no rise near `reach`.
bool stride_quiet_at(const tlb_dataset &d, const std::vector<tlb_step> &steps, double s_min,
                     double reach, double tol) {
  double next = INFINITY;
  for (const auto &c : d.curves)
    if (c.stride_bytes > s_min)
      next = std::min(next, c.stride_bytes);
  if (next == INFINITY)
    return false;
  bool covered = false;
  for (const auto &c : d.curves)
    if (c.stride_bytes == next && c.footprint_bytes.front() < reach * (1 - tol) &&
        c.footprint_bytes.back() > reach * 1.06) // the smaller strides rise within 6%
      covered = true;
  if (!covered)
    return false;
  for (const auto &t : steps)
    if (t.stride_bytes == next && near(t.s.x_lo, reach, tol))
      return false;
  return true;
}

// Do `hops` hops, one L2 line each, reach a quarter of the L2? Then the L2 capacity, not a
// TLB, can explain a rise there.
bool lines_reach_l2(const tlb_dataset &d, const tlb_analysis_options &opt, double hops) {
  return d.l2_bytes > 0 && hops * opt.line_bytes >= 0.25 * double(d.l2_bytes);
}

const tlb_curve *curve_of(const tlb_dataset &d, const tlb_step &t) {
  for (const auto &c : d.curves)
    if (c.stride_bytes == t.stride_bytes && c.source == t.source &&
        c.footprint_bytes.front() <= t.s.x_lo && c.footprint_bytes.back() >= t.s.x_hi)
      return &c;
  return nullptr;
}
double curve_end(const tlb_dataset &d, const tlb_step &t) {
  const auto *c = curve_of(d, t);
  return c ? c->footprint_bytes.back() : t.s.x_hi;
}
// The last footprint before the next rise on t's curve (the curve's end when none follows):
// the footprint at which t's step can be measured without the next level stacked on it.
double before_next_rise(const tlb_dataset &d, const std::vector<tlb_step> &steps,
                        const tlb_step &t) {
  double end = curve_end(d, t);
  for (const auto &o : steps)
    if (o.stride_bytes == t.stride_bytes && o.source == t.source && o.s.x_lo > t.s.x_hi)
      end = std::min(end, o.s.x_lo);
  return end;
}
// Median of the (up to 3) points at or below footprint fp on the step's curve.
double value_at(const tlb_dataset &d, const tlb_step &t, double fp) {
  const auto *c = curve_of(d, t);
  if (!c)
    return t.s.after;
  std::size_t k = 0;
  while (k + 1 < c->footprint_bytes.size() && c->footprint_bytes[k + 1] <= fp)
    ++k;
  const std::size_t from = k >= 2 ? k - 2 : 0;
  return median(
      std::vector<double>(c->cycles.begin() + long(from), c->cycles.begin() + long(k) + 1));
}

// The footprints around t's rise on its curve that belong to t's level alone: from halfway (in
// log) since the previous rise to halfway to the next, and at most 4x either way.
std::pair<double, double> level_window(const tlb_curve &c, const std::vector<tlb_step> &steps,
                                       const tlb_step &t) {
  double lo = std::max(c.footprint_bytes.front(), t.s.x_lo / 4);
  double hi = std::min(c.footprint_bytes.back(), t.s.x_hi * 4);
  for (const auto &o : steps) {
    if (o.stride_bytes != t.stride_bytes || o.source != t.source)
      continue;
    if (o.s.x_hi < t.s.x_lo * (1 - 1e-9))
      lo = std::max(lo, std::sqrt(o.s.x_hi * t.s.x_lo));
    if (o.s.x_lo > t.s.x_hi * (1 + 1e-9))
      hi = std::min(hi, std::sqrt(t.s.x_hi * o.s.x_lo));
  }
  return {lo, hi};
}

// Fits each scaling stride's mean curve around the level and keeps the structure they agree on.
tlb_level_structure level_structure(const tlb_dataset &d, const std::vector<tlb_step> &steps,
                                    const level_evidence &L, const tlb_analysis_options &opt) {
  tlb_level_structure out;
  out.midpoint_entries = L.entries;
  for (const auto &t : L.scaling) {
    const auto *c = curve_of(d, t);
    if (!c || c->mean_cycles.size() != c->cycles.size())
      continue;
    const auto [lo, hi] = level_window(*c, steps, t);
    std::vector<double> h, y;
    for (std::size_t i = 0; i < c->footprint_bytes.size(); ++i)
      if (c->footprint_bytes[i] >= lo && c->footprint_bytes[i] <= hi) {
        h.push_back(c->footprint_bytes[i] / c->stride_bytes);
        y.push_back(c->mean_cycles[i]);
      }
    out.fit_strides.push_back(t.stride_bytes);
    out.per_stride.push_back(fit_structure(h, y, opt.steps.min_noise / 4, opt.structure));
  }
  if (out.per_stride.empty()) {
    out.fit.why = "no curve with per-point means at or above the page";
    return out;
  }
  // The (sets, ways) most strides give; ties go to the smaller stride.
  int best = -1;
  for (std::size_t i = 0; i < out.per_stride.size(); ++i) {
    const auto &f = out.per_stride[i];
    if (!f.resolved)
      continue;
    int n = 0;
    for (const auto &g : out.per_stride)
      n += g.resolved && g.sets == f.sets && g.ways == f.ways;
    if (n > out.agreeing) {
      out.agreeing = n;
      best = int(i);
    }
  }
  if (best < 0) {
    out.fit = out.per_stride.front();
    return out;
  }
  out.fit = out.per_stride[std::size_t(best)];
  const int resolved = int(std::count_if(out.per_stride.begin(), out.per_stride.end(),
                                         [](const structure_fit &f) { return f.resolved; }));
  if (2 * out.agreeing <= resolved && resolved > 1) { // no majority: not one structure
    out.fit.resolved = false;
    out.fit.why = "the strides' fits disagree (" + std::to_string(out.agreeing) + " of " +
                  std::to_string(resolved) + " give the same sets and ways)";
  }
  return out;
}

// The paper's penalty rule: a stride s below the page misses on s/P of its hops, so its step is
// s/P of the full penalty. The share of the strides below the page (`flat`) that obey it, their
// rises compared at the same footprint (the last one both curves reach before either's next
// rise), so a ramp, whose size depends on how far past the boundary a curve goes, is judged
// fairly and a later level does not count as this one's. 1 when no stride lies below.
double penalty_rule(const tlb_dataset &data, const std::vector<tlb_step> &rises,
                    const tlb_step &full, const std::vector<tlb_step> &flat, double page) {
  if (flat.empty())
    return 1.0;
  int obey = 0;
  for (const auto &t : flat) {
    const double fp =
        std::min(before_next_rise(data, rises, full), before_next_rise(data, rises, t));
    const double full_rise = value_at(data, full, fp) - full.s.before;
    const double frac = t.stride_bytes / page;
    const double expect = full_rise * frac;
    const double got = value_at(data, t, fp) - t.s.before;
    const auto *fc = curve_of(data, t);
    if (fc && fc->median && frac < 0.5 - 1e-9) {
      // A median curve: fewer than half the hops miss, so the median is a hit: its step lies
      // between none and the mean's s/P share (with the same tolerance as a mean's).
      if (got >= -3.0 * t.s.noise && got <= 1.5 * expect + 3.0 * t.s.noise)
        ++obey;
    } else if (fc && fc->median && frac < 0.5 + 1e-9) {
      if (got >= -3.0 * t.s.noise && got <= full_rise + 3.0 * t.s.noise) // half miss: anywhere
        ++obey;
    } else if (std::fabs(got - expect) <= 0.5 * expect + 3.0 * t.s.noise) {
      ++obey;
    }
  }
  return double(obey) / double(flat.size());
}

// Strides at or above the level's page, other than those that show it, whose curve covers the
// level's footprint (after `entries` hops, with room on both sides) with no rise of any
// strength there: evidence against the level.
std::vector<double> strides_without_rise(const tlb_dataset &d, const std::vector<tlb_step> &rises,
                                         const level_evidence &L,
                                         const std::vector<tlb_step> &scaling,
                                         const tlb_analysis_options &opt,
                                         const std::vector<level_evidence> &found) {
  std::vector<double> out;
  for (const auto &c : d.curves) {
    const double s = c.stride_bytes, at = L.entries * s;
    if (s < L.coverage_bytes || std::any_of(scaling.begin(), scaling.end(),
                                            [&](const tlb_step &t) { return t.stride_bytes == s; }))
      continue;
    if (!(c.footprint_bytes.front() < at * (1 - 2 * opt.count_tolerance) &&
          c.footprint_bytes.back() > at * (1 + 2 * opt.count_tolerance)))
      continue;
    const bool rises_there = std::any_of(rises.begin(), rises.end(), [&](const tlb_step &t) {
      return t.stride_bytes == s && t.source == c.source &&
             near(t.hops(), L.entries, 2 * opt.count_tolerance);
    });
    if (rises_there)
      continue;
    // The level seen earlier at this stride: a set-associative level chased with strides so
    // large that their hops fall in fewer of its sets misses after fewer hops, at its own penalty
    // (set_conflict_view). Its curve then has no rise at `entries` hops because it rose before:
    // that is the level, not evidence against it. A rise that a level found before explains (its
    // entries at a stride at or above its page, and its penalty) is that level's, not this one's:
    // one H100's real-memory sweep read a 30 x 2 MiB "level" over L1's 16-hop rises
    // without this. (Where that found level is itself this level's view, the level is lost here
    // too: telling the two apart needs the forward model, probes/tlb/synthesis.hpp.)
    const auto another_levels = [&](const tlb_step &t) {
      return std::any_of(found.begin(), found.end(), [&](const level_evidence &F) {
        return t.stride_bytes >= F.coverage_bytes &&
               near(t.hops(), F.entries, 2 * opt.count_tolerance) &&
               std::fabs(t.s.jump - F.miss_penalty_cycles) <=
                   0.3 * F.miss_penalty_cycles + 3 * t.s.noise;
      });
    };
    const bool seen_earlier = opt.earlier_rise_is_the_level &&
                              std::any_of(rises.begin(), rises.end(), [&](const tlb_step &t) {
      return t.stride_bytes == s && t.source == c.source &&
             t.hops() < L.entries * (1 - 2 * opt.count_tolerance) &&
             std::fabs(t.s.jump - L.miss_penalty_cycles) <=
                 0.3 * L.miss_penalty_cycles + 3 * t.s.noise &&
             !another_levels(t);
    });
    if (seen_earlier)
      continue;
    // No detected rise: does the curve itself say none is there? The medians of its points
    // just before and just after the footprint differ by less than half the penalty, where a
    // half-penalty difference would stand 3 standard errors above this curve's noise.
    std::vector<double> before, after;
    for (std::size_t i = 0; i < c.footprint_bytes.size(); ++i) {
      const double x = c.footprint_bytes[i];
      if (x > 0.5 * at && x < at * (1 - opt.count_tolerance))
        before.push_back(c.cycles[i]);
      else if (x > at * (1 + opt.count_tolerance) && x < 1.6 * at)
        after.push_back(c.cycles[i]);
    }
    if (before.size() < 3 || after.size() < 3)
      continue;
    const double diff = median(after) - median(before);
    const double se = 1.25 * curve_noise(c.cycles, opt.steps.min_noise) *
                      std::sqrt(1.0 / double(before.size()) + 1.0 / double(after.size()));
    if (diff < 0.5 * L.miss_penalty_cycles && 0.5 * L.miss_penalty_cycles > 3 * se &&
        std::find(out.begin(), out.end(), s) == out.end())
      out.push_back(s);
  }
  return out;
}

} // namespace

namespace {

// Every stride's rises: strong ones (which may seed a level, plateau rises of mean curves among
// them) and weaker ones (which may only confirm one), and the range the sweep searched.
struct rises {
  std::vector<tlb_step> pool, weak, all; // all: strong and weak (the structure's fits keep to
                                         // the footprints between them)
  double min_stride = INFINITY, max_stride = 0;
};

// How far the means of a median curve's points rose across its rise `s`: the median of the
// means of up to `window` points before x_lo / merge_ratio, against that of up to `window` points
// after x_hi * merge_ratio (outside a smeared boundary's ramp); at a curve's end, where no point
// lies that far out, the points before x_lo or after x_hi. NaN where the curve has no means.
double mean_rise_across(const tlb_curve &c, const step &s, const step_options &o) {
  if (!c.median || c.mean_cycles.size() != c.cycles.size())
    return NAN;
  const auto &x = c.footprint_bytes;
  const auto side = [&](bool below, double margin) {
    std::vector<double> v;
    const double edge = below ? s.x_lo / margin : s.x_hi * margin;
    for (std::size_t k = 0; k < x.size() && int(v.size()) < o.window; ++k) {
      const std::size_t i = below ? x.size() - 1 - k : k;
      if (below ? x[i] <= edge : x[i] >= edge)
        v.push_back(c.mean_cycles[i]);
    }
    return v;
  };
  auto before = side(true, o.merge_ratio), after = side(false, o.merge_ratio);
  if (before.empty())
    before = side(true, 1);
  if (after.empty())
    after = side(false, 1);
  if (before.empty() || after.empty())
    return NAN;
  return median(after) - median(before);
}

// A rise of the per-point medians that the same points' means do not follow (a tenth of it at
// least: where a share h of the hops miss, the median moves by the whole penalty once h passes 1/2
// and the means over whole windows by h of it; a tenth leaves room for a ramp the curve's end cuts,
// H100 bba9cd54's real-memory L2 at 16 MiB: 58 cycles in the medians, 14 in the means): the medians
// moved between two latencies a hop takes, not to a level. On one H100 a quick sweep's
// 4 MiB stride read 335 or 338 cycles a point, four points of 338 in a row formed a 2-cycle rise
// at 8 GiB (5 sigma) over means flat at 337.8, and it seeded the second level (its page 4 MiB)
// for the strides at 32 MiB.
bool medians_only(double mean_rise, const step &s) {
  return std::isfinite(mean_rise) && mean_rise < 0.1 * s.jump;
}

rises collect_rises(const tlb_dataset &data, const tlb_analysis_options &opt, tlb_evidence &out) {
  rises r;
  for (const auto &c : data.curves) {
    out.searched_up_to_bytes = std::max(out.searched_up_to_bytes, c.footprint_bytes.back());
    r.min_stride = std::min(r.min_stride, c.stride_bytes);
    r.max_stride = std::max(r.max_stride, c.stride_bytes);
    auto found = detect_steps(c.footprint_bytes, c.cycles, opt.steps);
    found.erase(std::remove_if(found.begin(), found.end(),
                               [&](const step &s) {
                                 const double rose = mean_rise_across(c, s, opt.steps);
                                 if (!medians_only(rose, s))
                                   return false;
                                 char m[32];
                                 std::snprintf(m, sizeof m, "%.1f", rose);
                                 out.notes.push_back(
                                     "a rise of " + std::to_string(int(std::lround(s.jump))) +
                                     " cycles at " + format_bytes(s.x_hi) + " for stride " +
                                     format_bytes(c.stride_bytes) +
                                     " is in the points' medians only (their means rose " + m +
                                     "): the medians moved between two latencies a hop takes; "
                                     "not counted as a rise");
                                 return true;
                               }),
                found.end());
    for (const auto &s : found)
      r.pool.push_back({c.stride_bytes, c.source, s});
    // Mean curves (the 2017 CSV): a small first level between long plateaus.
    if (!c.median)
      for (const auto &s : detect_plateau_steps(c.footprint_bytes, c.cycles, found,
                                                opt.plateau_points, opt.plateau_snr, opt.steps))
        r.pool.push_back({c.stride_bytes, c.source, s, true});
    // Weaker rises may only confirm a level that strong ones found (a targeted test):
    // strides below the page miss as often as s/P, so their step is proportionally smaller.
    step_options weak = opt.steps;
    weak.snr_min = opt.confirm_snr;
    for (const auto &s : detect_steps(c.footprint_bytes, c.cycles, weak))
      if (!medians_only(mean_rise_across(c, s, opt.steps), s)) // nor may it confirm one
        r.weak.push_back({c.stride_bytes, c.source, s});
  }
  r.all = r.pool;
  r.all.insert(r.all.end(), r.weak.begin(), r.weak.end());
  return r;
}

// At a handful of hops the chase measures L2 bank and set effects of power-of-two strides, not
// translation: such rises may not seed a level (marked used, with a note).
std::vector<bool> below_the_floor(const std::vector<tlb_step> &pool,
                                  const tlb_analysis_options &opt, tlb_evidence &out) {
  std::vector<bool> used(pool.size(), false);
  for (std::size_t i = 0; i < pool.size(); ++i)
    if (pool[i].hops() < opt.min_entries) {
      used[i] = true;
      out.notes.push_back("a rise after " + std::to_string(int(std::lround(pool[i].hops()))) +
                          " hops at stride " + format_bytes(pool[i].stride_bytes) +
                          " is below the " + std::to_string(int(opt.min_entries)) +
                          "-entry floor: not a TLB level");
    }
  return used;
}

// The unassigned rise with the fewest hops (the innermost level first); pool.size(): none left.
std::size_t next_seed(const std::vector<tlb_step> &pool, const std::vector<bool> &used) {
  std::size_t seed = pool.size();
  for (std::size_t i = 0; i < pool.size(); ++i) {
    if (used[i])
      continue;
    if (seed == pool.size() || pool[i].hops() < pool[seed].hops() * (1 - 1e-9) ||
        (near(pool[i].hops(), pool[seed].hops(), 1e-9) &&
         pool[i].stride_bytes < pool[seed].stride_bytes))
      seed = i;
  }
  return seed;
}

// The level the seed starts: the strides whose rise follows the same hop count (scaling: at or
// above the page) and the smaller strides whose rise sits at the same footprint (flat: below the
// page, strong rises first, weak ones to confirm); the rises it takes are marked used.
level_evidence gather_level(const tlb_dataset &data, const tlb_analysis_options &opt,
                            const rises &r, std::vector<bool> &used, std::size_t seed) {
  const auto &pool = r.pool;
  const double n0 = pool[seed].hops();
  std::vector<std::size_t> s_idx, f_idx;
  for (std::size_t i = 0; i < pool.size(); ++i)
    if (!used[i] && near(pool[i].hops(), n0, opt.count_tolerance))
      s_idx.push_back(i);
  std::vector<tlb_step> scaling;
  for (auto i : s_idx)
    scaling.push_back(pool[i]);
  scaling = one_per_stride(scaling);
  std::vector<double> counts;
  for (const auto &t : scaling)
    counts.push_back(t.hops());
  const double entries = median(counts);
  const double s_min = scaling.front().stride_bytes;
  const double reach = entries * s_min;
  for (std::size_t i = 0; i < pool.size(); ++i)
    if (!used[i] && pool[i].stride_bytes < s_min &&
        near(pool[i].s.x_lo, reach, opt.reach_tolerance))
      f_idx.push_back(i);
  for (auto i : s_idx)
    used[i] = true;
  // A stride whose hops at this footprint touch more lines than a quarter of the L2 is in the
  // cache-capacity regime there: its rise is not evidence for or against this level.
  const auto cache_regime = [&](const tlb_step &t) { return lines_reach_l2(data, opt, t.hops()); };
  f_idx.erase(std::remove_if(f_idx.begin(), f_idx.end(),
                             [&](std::size_t i) { return cache_regime(pool[i]); }),
              f_idx.end());
  for (auto i : f_idx)
    used[i] = true;
  std::vector<tlb_step> flat;
  for (auto i : f_idx)
    flat.push_back(pool[i]);
  for (const auto &t : r.weak)
    if (t.stride_bytes < s_min && near(t.s.x_lo, reach, opt.reach_tolerance) && !cache_regime(t) &&
        std::none_of(flat.begin(), flat.end(),
                     [&](const tlb_step &f) { return f.stride_bytes == t.stride_bytes; }))
      flat.push_back(t);
  level_evidence L;
  L.entries = entries;
  L.coverage_bytes = s_min;
  L.reach_bytes = reach;
  L.scaling = scaling;
  L.flat = one_per_stride(flat);
  return L;
}

// Finding 2's evidence: the page's bound from the strides that scale and those below it, the
// median step and signal, and the share of strides below the page that obey the s/P rule.
// Returns the strides below the page that count (none where they could not have contradicted a
// lone rise); L.flat keeps every one found.
std::vector<tlb_step> page_finding(const tlb_dataset &data, const tlb_analysis_options &opt,
                                   const rises &r, level_evidence &L) {
  const auto &scaling = L.scaling;
  auto flat = L.flat;
  const double s_min = L.coverage_bytes, reach = L.reach_bytes;
  const bool scales = scaling.size() >= 2;
  // A larger stride whose curve covers this footprint without a rise there is above the
  // page (a stride at or below the page would miss at the same footprint): with a flat
  // regime below, the page is pinned to s_min.
  const bool larger_stride_clear = stride_quiet_at(data, r.weak, s_min, reach, opt.reach_tolerance);
  // A lone rise needs a smaller stride that could have contradicted it: a median curve whose
  // stride is below half the page shows a hit as its median whether the level exists or not.
  const bool flat_informative = std::any_of(flat.begin(), flat.end(), [&](const tlb_step &t) {
    const auto *c = curve_of(data, t);
    return !(c && c->median && t.stride_bytes < 0.5 * s_min * (1 - 1e-9));
  });
  if (!scales && !flat_informative)
    flat.clear();
  if ((scales || larger_stride_clear) && !flat.empty())
    L.bound = coverage_bound::exact;
  else if (scales)
    L.bound = coverage_bound::upper;
  else if (!flat.empty())
    L.bound = coverage_bound::lower;
  else
    L.bound = coverage_bound::unknown;
  std::vector<double> jumps, snrs;
  for (const auto &t : scaling)
    jumps.push_back(t.s.jump);
  for (const auto &t : scaling)
    snrs.push_back(t.s.snr);
  for (const auto &t : flat)
    snrs.push_back(t.s.snr);
  L.miss_penalty_cycles = median(jumps);
  L.snr = median(snrs);
  L.penalty_rule = penalty_rule(data, r.weak, scaling.front(), flat, L.coverage_bytes);
  return flat;
}

// Finding 3, the structure: resolved or not, and why; it never removes a level. Where misses
// begin and the penalty come from the mean curve it was fitted on, where there was one.
void structure_finding(const tlb_dataset &data, const tlb_analysis_options &opt, const rises &r,
                       level_evidence &L) {
  L.structure = level_structure(data, r.all, L, opt);
  const auto &f = L.structure.fit;
  if (f.resolved) { // where misses begin, not the middle of the ramp
    L.entries = f.entries;
    // The mean curves the structure was fitted on are far quieter than the medians of
    // integer cycles: their rise over their noise is the level's signal.
    L.snr = std::max(L.snr, (f.after_cycles - f.before_cycles) /
                                std::max(f.noise_cycles, opt.steps.min_noise));
  } else if (f.shape == "ramp" && f.onset_fit > 0 && f.full_fit > f.onset_fit && f.onset_se > 0) {
    // The sets are not resolved, but where misses begin is known to within its error.
    L.entries = std::round(f.onset_fit);
    L.entries_se = f.onset_se;
    L.snr = std::max(L.snr, (f.after_cycles - f.before_cycles) /
                                std::max(f.noise_cycles, opt.steps.min_noise));
  }
  // The miss penalty: the rise of the mean curve the structure was fitted on, where one was
  // (the mean of hops that all miss, less the mean of hops that all hit, is the average miss's
  // cost; a median can sit on either mode of a walk's cost: 772 or 836 cycles for one H100's
  // third level, run to run); else the median of the strides' steps.
  if (f.after_cycles > f.before_cycles && !f.shape.empty())
    L.miss_penalty_cycles = f.after_cycles - f.before_cycles;
  L.reach_bytes = L.entries * L.coverage_bytes;
}

// Strides of its evidence that the sweep found disturbed: the level is said to be.
void mark_disturbed(const tlb_dataset &data, const std::vector<tlb_step> &flat, level_evidence &L,
                    tlb_evidence &out) {
  const std::vector<tlb_step> *lists[] = {&L.scaling, &flat};
  for (const auto *list : lists)
    for (const auto &t : *list)
      if (const auto *c = curve_of(data, t); c && c->disturbed)
        L.disturbed += (L.disturbed.empty() ? "" : ", ") + format_bytes(t.stride_bytes);
  if (!L.disturbed.empty()) {
    L.disturbed = "the sweep's repeat of stride(s) " + L.disturbed +
                  " disagreed beyond the noise, measured again: another process or a clock "
                  "change moved it";
    out.notes.push_back("level at " + format_bytes(L.reach_bytes) + ": DISTURBED: " + L.disturbed);
  }
}

// The level test's statistic: each stride that shows the level gives its rise in noise sigmas (a
// scaling stride the larger of its step's and its mean curve's fitted rise), and their Stouffer sum
// z = sum z_i / sqrt(k) weighs a rise seen at k strides as k independent tests would.
void level_z(const std::vector<tlb_step> &flat, const tlb_analysis_options &opt,
             level_evidence &L) {
  std::map<double, double> by_stride;
  for (const auto &t : L.scaling)
    by_stride[t.stride_bytes] = std::max(by_stride[t.stride_bytes], t.s.snr);
  const auto &st = L.structure;
  for (std::size_t i = 0; i < st.per_stride.size(); ++i)
    if (const auto &f = st.per_stride[i]; !f.shape.empty() && f.after_cycles > f.before_cycles)
      by_stride[st.fit_strides[i]] =
          std::max(by_stride[st.fit_strides[i]], (f.after_cycles - f.before_cycles) /
                                                     std::max(f.noise_cycles, opt.steps.min_noise));
  for (const auto &t : flat)
    by_stride[t.stride_bytes] = std::max(by_stride[t.stride_bytes], t.s.snr);
  double sum = 0;
  for (const auto &[stride, z] : by_stride)
    sum += z;
  L.z_strides = int(by_stride.size());
  L.z = by_stride.empty() ? 0 : sum / std::sqrt(double(by_stride.size()));
}

// Finding 1, existence: the level test (z at least opt.level_z, which null sweeps of real noise
// exceed in at most 1 % of sweeps), with more than one stride showing the rise. A level in doubt
// ("inconsistent" or "small") is a candidate; returns whether it is a level.
bool existence_finding(const tlb_dataset &data, const tlb_analysis_options &opt, const rises &r,
                       const std::vector<tlb_step> &flat, level_evidence &L, tlb_evidence &out) {
  const auto &scaling = L.scaling;
  level_z(flat, opt, L);
  const auto silent = strides_without_rise(data, r.all, L, scaling, opt, out.levels);
  // Confidence is z on a scale where the test's threshold reads min_confidence.
  L.confidence = std::round(100.0 * std::min(1.0, opt.min_confidence * L.z / opt.level_z)) / 100.0;
  const std::size_t showing = scaling.size() + flat.size();
  char why[320];
  std::snprintf(why, sizeof why,
                "a rise of %.0f cycles, %.1f x the noise, at %zu stride(s): z = %.1f",
                L.miss_penalty_cycles, L.snr, showing, L.z);
  L.existence = why;
  if (silent.size() > showing) {
    std::string list;
    for (double st : silent)
      list += (list.empty() ? "" : ", ") + format_bytes(st);
    L.existence = "inconsistent: " + L.existence + ", but strides " + list +
                  " cover its footprint with no rise there";
  } else if (L.z < opt.level_z) {
    std::snprintf(why, sizeof why, "; a level needs z >= %.1f", opt.level_z);
    L.existence = "small: " + L.existence + why;
  }
  if (L.existence.rfind("inconsistent", 0) == 0 || L.existence.rfind("small", 0) == 0) {
    out.candidates.push_back(L);
    out.notes.push_back("candidate at " + format_bytes(L.reach_bytes) + " (" +
                        std::to_string(int(std::lround(L.entries))) + " x " +
                        format_bytes(L.coverage_bytes) + ", +" +
                        std::to_string(int(std::lround(L.miss_penalty_cycles))) +
                        " cycles): " + L.existence + ": not reported as a level");
    return false;
  }
  return true;
}

// A level of E entries misses after E hops at every stride above what one entry covers; a
// set-associative one, chased with strides so large that their hops fall in a few of its sets,
// misses after fewer hops (a simulated 4-way x 128-set level of 4 MiB entries shows as 256 x
// 1 GiB at 1 GiB strides). Either way, at those strides it shows as a "level" of the same or
// fewer entries and a larger page, at its own miss penalty. `b` is such a view of `a` when it
// starts at a larger stride, has at most a's entries (within the hop counts' tolerance), and costs
// a's penalty within 30 % and 3 of its noise.
bool set_conflict_view(const level_evidence &b, const level_evidence &a,
                       const tlb_analysis_options &opt) {
  if (!(b.coverage_bytes > a.coverage_bytes &&
        b.entries <= a.entries * (1 + 2 * opt.count_tolerance)))
    return false;
  double noise = 0;
  for (const auto &t : b.scaling)
    noise = std::max(noise, t.s.noise);
  return std::fabs(b.miss_penalty_cycles - a.miss_penalty_cycles) <=
         0.3 * a.miss_penalty_cycles + 3 * noise;
}

// Moves every level that is a set-conflict view of another (inner-page) level to set_conflicts,
// with a note naming the level it belongs to.
void explain_set_conflicts(tlb_evidence &out, const tlb_analysis_options &opt) {
  std::vector<level_evidence> kept;
  for (const auto &b : out.levels) {
    const auto a = std::find_if(out.levels.begin(), out.levels.end(), [&](const level_evidence &x) {
      return &x != &b && set_conflict_view(b, x, opt);
    });
    if (a == out.levels.end()) {
      kept.push_back(b);
      continue;
    }
    out.set_conflicts.push_back(b);
    char why[400];
    std::snprintf(why, sizeof why,
                  "a rise after %.0f hops at strides from %s, +%.0f cycles: the level of %.0f x %s "
                  "(+%.0f cycles) %s: not a level of its own",
                  b.entries, format_bytes(b.coverage_bytes).c_str(), b.miss_penalty_cycles,
                  a->entries, format_bytes(a->coverage_bytes).c_str(), a->miss_penalty_cycles,
                  b.entries < a->entries * (1 - 2 * opt.count_tolerance)
                      ? "seen through some of its sets (these strides put every hop in fewer sets)"
                      : "seen again at larger strides");
    out.notes.push_back(why);
  }
  out.levels = kept;
}

// A level as the proposal to the whole-sweep model: its page's bounds from what the strides said.
level_proposal proposal_of(const level_evidence &L, const synthesis_options &o) {
  level_proposal p{L.entries, L.coverage_bytes, L.structure.fit.resolved ? L.structure.fit.ways : 0,
                   L.structure.fit.resolved ? L.structure.fit.sets : 0};
  const double octaves = std::exp2(o.coverage_octaves);
  p.min_coverage_bytes = L.bound == coverage_bound::exact   ? L.coverage_bytes / 2
                         : L.bound == coverage_bound::lower ? L.coverage_bytes
                                                            : 4096; // the smallest page there is
  p.max_coverage_bytes = L.bound == coverage_bound::exact   ? L.coverage_bytes * 2
                         : L.bound == coverage_bound::upper ? L.coverage_bytes
                                                            : L.coverage_bytes * octaves;
  return p;
}

// The levels as one model of the whole sweep: each level's structure, page and penalty are the
// model's; a level it adds is a level with the model as its evidence; a level the others explain
// is moved to set_conflicts.
void synthesize_levels(const tlb_dataset &data, const tlb_analysis_options &opt,
                       tlb_evidence &out) {
  std::vector<level_proposal> props;
  for (const auto &L : out.levels)
    props.push_back(proposal_of(L, opt.synthesis));
  const synthesis_fit fit = fit_hierarchy(data, props, opt.synthesis);
  if (!fit.fitted)
    return;
  std::vector<level_evidence> kept;
  std::vector<std::size_t> dropped = fit.dropped;
  for (const auto &f : fit.levels) {
    level_evidence L;
    // A level the model added in place of a proposal it dropped (the same reach within 25 %) is
    // that proposal, its structure the model's.
    const auto same = std::find_if(dropped.begin(), dropped.end(), [&](std::size_t q) {
      return f.proposal >= out.levels.size() &&
             near(out.levels[q].reach_bytes, f.level.reach_bytes(), 0.25);
    });
    if (same != dropped.end()) {
      L = out.levels[*same];
      dropped.erase(same);
    } else if (f.proposal < out.levels.size()) {
      L = out.levels[f.proposal];
    } else { // a level no rise detector proposed: its confidence is the model's alone
      L.bound = coverage_bound::exact;
      L.existence = "the model of the whole sweep adds it: it lowers the loss by " +
                    std::to_string(int(std::lround(f.gain))) + " where a level needs " +
                    std::to_string(int(std::lround(opt.synthesis.level_cost)));
    }
    L.model = f;
    L.confidence = f.confidence;
    const auto &M = f.level;
    auto &st = L.structure.fit;
    st.resolved = true;
    st.sets = double(M.sets);
    st.ways = double(M.ways);
    st.entries = double(M.entries());
    st.full_miss_entries = double(M.sets * (M.ways + 1));
    L.entries = st.entries;
    L.coverage_bytes = double(M.coverage_bytes);
    if (f.page_is_upper_bound)
      L.bound = coverage_bound::upper;
    L.reach_bytes = L.entries * L.coverage_bytes;
    L.miss_penalty_cycles = M.penalty_cycles;
    kept.push_back(L);
  }
  for (const auto q : dropped) {
    const auto &b = out.levels[q];
    char why[300];
    std::snprintf(why, sizeof why,
                  "a rise after %.0f hops at strides from %s, +%.0f cycles: the model of the whole "
                  "sweep explains it by the other levels: not a level of its own",
                  b.entries, format_bytes(b.coverage_bytes).c_str(), b.miss_penalty_cycles);
    out.notes.push_back(why);
    out.set_conflicts.push_back(b);
  }
  char note[240];
  std::snprintf(note, sizeof note,
                "the model of the whole sweep (%d points): %zu level(s) kept, %zu explained by the "
                "others; robust loss %.0f, %.0f with no level",
                fit.points, kept.size(), dropped.size(), fit.loss, fit.loss_without_levels);
  out.notes.push_back(note);
  out.levels = kept;
}

} // namespace

tlb_evidence find_tlb_levels(const tlb_dataset &data, const tlb_analysis_options &opt) {
  tlb_evidence out;
  out.sm = data.sm;
  const rises r = collect_rises(data, opt, out);
  std::vector<bool> used = below_the_floor(r.pool, opt, out);
  for (std::size_t seed = next_seed(r.pool, used); seed < r.pool.size();
       seed = next_seed(r.pool, used)) {
    level_evidence L = gather_level(data, opt, r, used, seed);
    const auto flat = page_finding(data, opt, r, L);
    // An L2-capacity step: every stride's boundary follows the hop count and the lines touched
    // reach the L2 size. The flat regime (same footprint for smaller strides) rules it out.
    if (lines_reach_l2(data, opt, L.entries) && flat.empty()) {
      out.cache_effects.push_back(L);
      continue;
    }
    if (L.bound == coverage_bound::unknown) {
      // One stride alone cannot tell a page size: a lone rise is reported, not made a level.
      for (const auto &t : L.scaling)
        out.unexplained.push_back(t);
      continue;
    }
    if (L.bound == coverage_bound::upper &&
        stride_tested_at(data, 0, L.coverage_bytes, L.reach_bytes))
      out.notes.push_back("level at " + format_bytes(L.reach_bytes) + ": strides below " +
                          format_bytes(L.coverage_bytes) +
                          " show no step at the same footprint (penalty too small to see?)");
    // Finding 2, the page: the s/P rule checks it and bears on nothing else.
    if (!flat.empty() && L.penalty_rule < 1) {
      L.coverage_note = std::to_string(int(std::lround(L.penalty_rule * double(flat.size())))) +
                        " of " + std::to_string(flat.size()) +
                        " strides below the page obey the s/P penalty rule: the page rests on "
                        "where the hop count starts to scale";
      out.notes.push_back("level at " + format_bytes(L.reach_bytes) + ": " + L.coverage_note);
    }
    structure_finding(data, opt, r, L);
    mark_disturbed(data, flat, L, out);
    if (existence_finding(data, opt, r, flat, L, out))
      out.levels.push_back(L);
  }
  explain_set_conflicts(out, opt);
  if (opt.synthesize.value_or(data.alloc == "alias"))
    synthesize_levels(data, opt, out);
  std::sort(out.levels.begin(), out.levels.end(),
            [](const level_evidence &a, const level_evidence &b) {
              return a.reach_bytes < b.reach_bytes;
            });
  if (out.levels.empty())
    out.notes.push_back("no TLB boundary found up to " + format_bytes(out.searched_up_to_bytes) +
                        " (strides " + format_bytes(r.min_stride) + " to " +
                        format_bytes(r.max_stride) + ")");
  for (const auto &t : out.unexplained)
    out.notes.push_back("a lone rise of " + std::to_string(int(std::lround(t.s.jump))) +
                        " cycles at " + format_bytes(t.s.x_hi) + " for stride " +
                        format_bytes(t.stride_bytes) +
                        " matches no other stride: not reported as a level");
  return out;
}

namespace {
nlohmann::json steps_json(const std::vector<tlb_step> &v) {
  auto a = nlohmann::json::array();
  for (const auto &t : v)
    a.push_back({{"stride_bytes", t.stride_bytes},
                 {"boundary_bytes", t.s.x_lo},
                 {"first_miss_bytes", t.s.x_hi},
                 {"hops", t.hops()},
                 {"before_cycles", t.s.before},
                 {"after_cycles", t.s.after},
                 {"step_cycles", t.s.jump},
                 {"noise_cycles", t.s.noise},
                 {"snr", t.s.snr},
                 {"source", t.source}});
  return a;
}
// A fit's numbers beyond the typed ones (structure_of): its noise, measured ends and, resolved,
// the fitted ends and slope.
nlohmann::json fit_detail(const structure_fit &f) {
  nlohmann::json j = {{"noise_cycles", std::round(f.noise_cycles * 1000) / 1000},
                      {"last_hit_entries", f.last_hit_entries},
                      {"first_full_entries", f.first_full_entries}};
  if (f.resolved) {
    j["onset_fit_entries"] = std::round(f.onset_fit * 100) / 100;
    j["full_miss_fit_entries"] = std::round(f.full_fit * 100) / 100;
    j["slope"] = std::round(f.slope * 1000) / 1000;
  }
  return j;
}
// A fit as the profile keeps it (model::level_structure), its detail from fit_detail.
model::level_structure fit_of(const structure_fit &f) {
  model::level_structure s;
  s.resolved = f.resolved;
  s.shape = f.shape;
  s.before_cycles = f.before_cycles;
  s.after_cycles = f.after_cycles;
  s.residual_cycles = std::round(f.residual_cycles * 1000) / 1000;
  s.ramp_points = f.ramp_points;
  if (f.resolved) {
    s.entries = f.entries;
    s.sets = f.sets;
    s.ways = f.ways;
    s.full_miss_entries = f.full_miss_entries;
  } else {
    s.why = f.why;
  }
  s.detail = fit_detail(f);
  return s;
}
// A fit as written: its typed numbers and detail in one block ("shape" written even when empty,
// as the files always had it; a reader takes "" and absent alike).
nlohmann::json fit_json(const structure_fit &f) {
  nlohmann::json j = model::to_json(fit_of(f));
  j["shape"] = f.shape;
  return j;
}

// The level's structure as the profile keeps it: the agreed fit, the midpoint and each stride's
// fit (in detail).
model::level_structure structure_of(const level_evidence &L) {
  const auto &st = L.structure;
  model::level_structure s = fit_of(st.fit);
  s.midpoint_reach_bytes = st.midpoint_entries * L.coverage_bytes;
  s.detail["midpoint_entries"] = std::round(st.midpoint_entries * 10) / 10;
  s.detail["strides_agreeing"] = st.agreeing;
  auto per = nlohmann::json::array();
  for (std::size_t i = 0; i < st.per_stride.size(); ++i) {
    auto f = fit_json(st.per_stride[i]);
    f["stride_bytes"] = st.fit_strides[i];
    per.push_back(f);
  }
  s.detail["per_stride"] = per;
  return s;
}

// Each number's interval, or why none is stated.
nlohmann::json intervals_json(const level_evidence &L) {
  const auto v = intervals_of(L.structure.fit);
  const auto r1 = [](double x) { return std::round(x * 10) / 10; };
  if (v.stated)
    return {{"entries", {r1(v.entries_lo), r1(v.entries_hi)}},
            {"ways", {r1(v.ways_lo), r1(v.ways_hi)}},
            {"sets", {r1(v.sets_lo), r1(v.sets_hi)}},
            {"miss_penalty_cycles", {r1(v.penalty_lo), r1(v.penalty_hi)}},
            {"how", v.how}};
  if (L.entries_se > 0)
    return {{"entries", {r1(L.entries - L.entries_se), r1(L.entries + L.entries_se)}},
            {"how", "the fitted onset +- 2 standard errors; the structure is not resolved, so no "
                    "ways, sets or penalty interval"}};
  return {{"why", "the structure is not resolved: " + L.structure.fit.why}};
}

// The level as the model of the whole sweep fitted it.
nlohmann::json model_json(const fitted_level &f) {
  const auto r1 = [](double x) { return std::round(x * 10) / 10; };
  return {{"words", model_words(f.level)},
          {"sets", f.level.sets},
          {"ways", f.level.ways},
          {"coverage_bytes", f.level.coverage_bytes},
          {"sector_bytes", f.level.sector_bytes ? f.level.sector_bytes : f.level.coverage_bytes},
          {"index", tlb::index_name(f.level)},
          {"replacement", tlb::replacement_name(f.level.repl)},
          {"penalty_cycles", r1(f.level.penalty_cycles)},
          {"gain", r1(f.gain)},
          {"noise_cycles", std::round(f.noise_cycles * 1000) / 1000},
          {"added", f.added},
          {"confidence", std::round(f.confidence * 1000) / 1000},
          {"intervals",
           {{"entries", {f.entries_lo, f.entries_hi}},
            {"sets", {f.sets_lo, f.sets_hi}},
            {"ways", {f.ways_lo, f.ways_hi}},
            {"coverage_bytes", {f.coverage_lo, f.coverage_hi}},
            {"miss_penalty_cycles", {r1(f.penalty_lo), r1(f.penalty_hi)}}}},
          {"other_index_or_replacement_fits", f.alternatives_differ}};
}

// The level as every stage after the analysis reads it (model::tlb_level): its numbers typed, the
// rest of its evidence in detail (an unresolved level's sets and ways as null, as written; the SM
// its sweep ran on where `sm` >= 0).
model::tlb_level level_of(const level_evidence &L, int sm = -1) {
  const bool resolved = L.structure.fit.resolved;
  model::tlb_level m;
  m.entries = std::round(L.entries * 10) / 10;
  if (resolved) {
    m.sets = L.structure.fit.sets;
    m.ways = L.structure.fit.ways;
  } else {
    m.detail["sets"] = nullptr;
    m.detail["ways"] = nullptr;
  }
  m.full_miss_bytes = L.full_miss_bytes();
  m.structure = structure_of(L);
  m.coverage_bytes = L.coverage_bytes;
  m.coverage_bound = to_string(L.bound);
  m.reach_bytes = L.reach_bytes;
  m.miss_penalty_cycles = L.miss_penalty_cycles;
  m.confidence = L.confidence;
  auto &d = m.detail;
  d["snr"] = L.snr;
  d["z"] = std::round(L.z * 10) / 10;
  d["penalty_rule"] = L.penalty_rule;
  d["evidence"] = {{"strides_at_or_above_coverage", steps_json(L.scaling)},
                   {"strides_below_coverage", steps_json(L.flat)}};
  d["existence"] = L.existence;
  if (L.model)
    d["model"] = model_json(*L.model);
  if (L.entries_se > 0)
    d["entries_se"] = std::round(L.entries_se * 10) / 10;
  d["intervals"] = intervals_json(L);
  if (!L.coverage_note.empty())
    d["coverage_note"] = L.coverage_note;
  if (!L.disturbed.empty())
    d["disturbed"] = L.disturbed;
  if (sm >= 0)
    d["measured_on_sm"] = sm;
  return m;
}

// Levels as the profile file writes them ("shape" kept when empty, as fit_json).
nlohmann::json levels_json(const std::vector<level_evidence> &v, int sm = -1) {
  auto out = nlohmann::json::array();
  for (const auto &L : v) {
    out.push_back(model::to_json(level_of(L, sm)));
    out.back()["structure"]["shape"] = L.structure.fit.shape;
  }
  return out;
}
} // namespace

nlohmann::json to_json(const tlb_evidence &a) {
  return {{"levels", levels_json(a.levels, a.sm)},
          {"searched_up_to_bytes", a.searched_up_to_bytes},
          {"cache_effects", levels_json(a.cache_effects)},
          {"set_conflicts", levels_json(a.set_conflicts)},
          {"candidates", levels_json(a.candidates)},
          {"unexplained_steps", steps_json(a.unexplained)},
          {"notes", a.notes}};
}

model::tlb_hierarchy hierarchy_of(const tlb_evidence &a) {
  model::check_level_count("levels", a.levels.size());
  model::check_level_count("candidates", a.candidates.size());
  model::tlb_hierarchy h;
  for (const auto &L : a.levels)
    model::check_tlb_level(h.levels.emplace_back(level_of(L, a.sm)));
  for (const auto &L : a.candidates)
    model::check_tlb_level(h.candidates.emplace_back(level_of(L)));
  h.searched_up_to_bytes = a.searched_up_to_bytes;
  h.detail = {{"cache_effects", levels_json(a.cache_effects)},
              {"set_conflicts", levels_json(a.set_conflicts)},
              {"unexplained_steps", steps_json(a.unexplained)},
              {"notes", a.notes}};
  return h;
}

model::tlb_hierarchy analyze_tlb(const tlb_dataset &data, const tlb_analysis_options &opt) {
  return hierarchy_of(find_tlb_levels(data, opt));
}

} // namespace gpuprobe::probes
