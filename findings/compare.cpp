#include "findings/compare.hpp"

#include "common/escape.hpp"
#include "common/outputs.hpp"
#include "common/schema.hpp"
#include "common/stats.hpp"
#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <sstream>

namespace gpuprobe::findings {

using nlohmann::json;

int compare_result::differences() const {
  return int(std::count_if(findings.begin(), findings.end(), [](const compare_finding &f) {
    return f.verdict != "SAME" && f.verdict != "NOTE";
  }));
}

int compare_result::missing() const {
  return int(std::count_if(findings.begin(), findings.end(), [](const compare_finding &f) {
    return f.verdict == "MISSING" || f.why.rfind("missing", 0) == 0;
  }));
}

int compare_result::compared() const {
  return int(std::count_if(findings.begin(), findings.end(),
                           [](const compare_finding &f) { return f.area != "provenance"; }));
}

namespace {

std::string num(double x, int digits = 1) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, x);
  return b;
}

std::string opt_num(const std::optional<double> &x, int digits = 0) {
  return x ? num(*x, digits) : "-";
}

struct finder {
  compare_result &r;
  bool allow_missing = false;
  // Both runs full, or both quick, analysed by one version (or re-derived by this build): each
  // measures what the other does, so a value one lacks is missing, not a method's difference.
  bool same_method = true;
  // One run quick, the other full: tune's scope and validate's workloads follow the mode, so
  // what they give differently is the method's difference. Said, not counted.
  bool modes_differ = false;
  // The GPU model whose repeats gate validation times: both runs', or "" (every model's) where
  // they differ.
  std::string model;
  void by_mode(std::string area, std::string item, std::string a, std::string b,
               const std::string &verdict, const std::string &why) {
    r.findings.push_back({std::move(area), std::move(item), std::move(a), std::move(b), "NOTE",
                          verdict +
                              " between a quick and a full run: a method difference "
                              "(the mode sets what is measured), said, not counted" +
                              (why.empty() ? "" : "; " + why)});
  }
  // A value one run's mode measures and that run lacks: MISSING (a difference), or with
  // --allow-missing a NOTE whose reason starts "missing".
  void missing(std::string area, std::string item, std::string a, std::string b,
               const std::string &what) {
    r.findings.push_back({std::move(area), std::move(item), std::move(a), std::move(b),
                          allow_missing ? "NOTE" : "MISSING",
                          "missing: " + what +
                              (allow_missing ? " (--allow-missing: said, not counted)"
                                             : " (a gate does not pass on missing data; "
                                               "--allow-missing says it without counting)")});
  }
  void add(std::string area, std::string item, std::string a, std::string b, std::string why = "") {
    // A value one run resolved and the other did not ("not resolved", or "-" where the run
    // states none) is no difference between the hardware: the same unit gives both from run to
    // run (L1's entry fill). Said, not counted.
    const auto unresolved = [](const std::string &x) { return x == "not resolved" || x == "-"; };
    if (a != b && (unresolved(a) || unresolved(b))) {
      r.findings.push_back({std::move(area), std::move(item), std::move(a), std::move(b), "NOTE",
                            "resolved in one run only: not compared"});
      return;
    }
    const std::string verdict = a == b ? "SAME" : "DIFFERENT";
    r.findings.push_back(
        {std::move(area), std::move(item), std::move(a), std::move(b), verdict, std::move(why)});
  }
};

// The level's stated interval of `key` ([lo, hi] in detail.intervals), if any.
std::optional<std::pair<double, double>> interval_of(const model::tlb_level &L, const char *key) {
  const auto it = L.detail.find("intervals");
  if (it == L.detail.end() || !it->is_object() || !it->contains(key))
    return std::nullopt;
  const auto &v = (*it)[key];
  if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number())
    return std::nullopt;
  return std::make_pair(v[0].get<double>(), v[1].get<double>());
}

std::string groups_text(const model::level_sharing &s) {
  if (!s.groups)
    return "-";
  auto g = *s.groups;
  for (auto &x : g)
    std::sort(x.begin(), x.end());
  std::sort(g.begin(), g.end());
  std::string out;
  for (const auto &x : g) {
    out += out.empty() ? "{" : " {";
    for (std::size_t i = 0; i < x.size(); ++i)
      out += (i ? "," : "") + std::to_string(x[i]);
    out += "}";
  }
  return out.empty() ? "none" : out;
}

// Each SM's hit and miss penalty (the tlb-per-sm stage), over the SMs both runs measured: an SM
// differs where |B - A| passes the larger of the penalty bar and 4 x the two runs' rep-to-rep
// noise combined; the finding names where the maps differ.
void compare_per_sm(finder &f, const std::string &label, const model::tlb_level &a,
                    const model::tlb_level &b, const compare_thresholds &t) {
  if (!a.per_sm && !b.per_sm)
    return;
  if ((!a.per_sm || !b.per_sm) && f.same_method) {
    f.missing("per-SM", label + " per-SM penalty", a.per_sm ? "measured" : "not measured",
              b.per_sm ? "measured" : "not measured",
              "both runs' mode measures the per-SM stage, one run has no value");
    return;
  }
  if (!a.per_sm || !b.per_sm) {
    f.r.findings.push_back({"per-SM", label + " per-SM penalty",
                            a.per_sm ? "measured" : "not measured",
                            b.per_sm ? "measured" : "not measured", "NOTE",
                            "measured in one run only (runs before the tlb-per-sm stage do not): "
                            "not compared"});
    return;
  }
  const auto &sa = *a.per_sm, &sb = *b.per_sm;
  const double noise = std::hypot(sa.noise_cycles.value_or(0), sb.noise_cycles.value_or(0));
  const auto one = [&](const char *what, const std::vector<double> &va,
                       const std::vector<double> &vb) {
    std::vector<double> xa, xb;
    std::vector<std::pair<double, int>> apart; // difference, SM
    double widest = 0;
    for (std::size_t i = 0; i < sa.sms.size(); ++i)
      for (std::size_t j = 0; j < sb.sms.size(); ++j) {
        if (sa.sms[i] != sb.sms[j])
          continue;
        xa.push_back(va[i]);
        xb.push_back(vb[j]);
        const double d = vb[j] - va[i];
        widest = std::max(widest, std::fabs(d));
        if (std::fabs(d) > std::max(penalty_bar(va[i], vb[j], t), 4 * noise))
          apart.emplace_back(d, sa.sms[i]);
      }
    // The widest first: where the maps differ most.
    std::sort(apart.begin(), apart.end(),
              [](const auto &x, const auto &y) { return std::fabs(x.first) > std::fabs(y.first); });
    std::string named;
    for (std::size_t k = 0; k < apart.size() && k < 8; ++k)
      named += (k ? ", SM " : "SM ") + std::to_string(apart[k].second) + " " +
               (apart[k].first > 0 ? "+" : "") + num(apart[k].first);
    const int n_apart = int(apart.size());
    const auto words = [](const std::vector<double> &v) {
      if (v.empty())
        return std::string("-");
      return num(*std::min_element(v.begin(), v.end())) + " - " + num(median(v)) + " - " +
             num(*std::max_element(v.begin(), v.end())) + " cycles";
    };
    std::string why = std::to_string(xa.size()) +
                      " SMs both measured; an SM differs past the "
                      "larger of the penalty bar and 4 x the rep-to-rep noise (" +
                      num(noise, 2) + " cycles); widest difference " + num(widest) + " cycles";
    if (n_apart)
      why = std::to_string(n_apart) + " differ, the widest " + named +
            (n_apart > 8 ? ", ..." : "") + "; " + why;
    f.r.findings.push_back({"per-SM", label + " per-SM " + what, words(xa), words(xb),
                            n_apart ? "DIFFERENT" : "SAME", why});
  };
  one("hit", sa.hit_cycles, sb.hit_cycles);
  one("miss penalty", sa.penalty_cycles, sb.penalty_cycles);
}

// What one entry covers and how it fills, where both runs measured it.
void compare_coverage(finder &f, const std::string &label, const model::tlb_level *a,
                      const model::tlb_level *b) {
  const auto &ca = a->coverage, &cb = b->coverage;
  const auto covers = [](const std::optional<model::level_coverage> &c) {
    return c ? opt_num(c->coverage_bytes) : "not measured";
  };
  if (ca && cb) {
    f.add("structure", label + " one entry covers", covers(ca), covers(cb));
    f.add("structure", label + " entry fill", ca->fill.value_or("-"), cb->fill.value_or("-"));
  } else if ((ca || cb) && f.same_method) {
    f.missing("structure", label + " one entry covers", covers(ca), covers(cb),
              "both runs' mode measures what one entry covers, one run has no value");
  } else if (ca || cb) {
    f.r.findings.push_back({"structure", label + " one entry covers", covers(ca), covers(cb),
                            "NOTE",
                            "measured in one run only (a quick run does not): not compared"});
  }
}

// The sharing scope, and the groups over the SMs both runs tested (a quick run samples the
// first 16).
void compare_sharing(finder &f, const std::string &label, const model::tlb_level *a,
                     const model::tlb_level *b) {
  const auto sa = a->sharing.value_or(model::level_sharing{}),
             sb = b->sharing.value_or(model::level_sharing{});
  f.add("structure", label + " sharing scope", sa.scope, sb.scope);
  if (sa.scope == "groups" || sb.scope == "groups") {
    // Over the SMs both runs tested (a quick run samples the first 16).
    const auto sms = [](const model::level_sharing &s) {
      std::set<int> out;
      if (s.groups)
        for (const auto &g : *s.groups)
          out.insert(g.begin(), g.end());
      return out;
    };
    const auto ma = sms(sa), mb = sms(sb);
    std::set<int> both;
    for (int x : ma)
      if (mb.count(x))
        both.insert(x);
    const auto on_both = [&](model::level_sharing s) {
      if (s.groups) {
        std::vector<std::vector<int>> kept;
        for (const auto &g : *s.groups) {
          std::vector<int> k;
          for (int x : g)
            if (both.count(x))
              k.push_back(x);
          if (!k.empty())
            kept.push_back(k);
        }
        s.groups = kept;
      }
      return s;
    };
    f.add("structure", label + " SM groups", groups_text(on_both(sa)), groups_text(on_both(sb)),
          "the groups as sets of SM ids, over the " + std::to_string(both.size()) +
              " SMs both runs tested (" + std::to_string(ma.size()) + " in A, " +
              std::to_string(mb.size()) + " in B)");
  }
}

// The penalty: past the calibrated bars and outside both stated intervals.
void compare_penalty(finder &f, const std::string &label, const model::tlb_level *a,
                     const model::tlb_level *b, const compare_thresholds &t) {
  if (a->miss_penalty_cycles && b->miss_penalty_cycles) {
    const double pa = *a->miss_penalty_cycles, pb = *b->miss_penalty_cycles, d = pb - pa;
    const double bar = penalty_bar(pa, pb, t);
    const auto ia = interval_of(*a, "miss_penalty_cycles"),
               ib = interval_of(*b, "miss_penalty_cycles");
    const bool disjoint = !(ia && ib) || ia->second < ib->first || ib->second < ia->first;
    const bool differs = std::fabs(d) > bar && disjoint;
    std::string why = "difference " + num(d) + " cycles, bar " + num(bar, 2) + " (" +
                      num(t.penalty_rel * 100, 0) + " % or " + num(t.penalty_abs_cycles) +
                      " cycles)";
    if (ia && ib)
      why += std::string(", intervals ") + (disjoint ? "apart" : "overlap");
    // The sweep's penalty is the one SM's it ran on; where both runs measured every SM, say so.
    if (a->per_sm && b->per_sm && !a->per_sm->penalty_cycles.empty() &&
        !b->per_sm->penalty_cycles.empty())
      why += "; the sweep's is one SM's: the medians over every SM are " +
             num(median(a->per_sm->penalty_cycles)) + " and " +
             num(median(b->per_sm->penalty_cycles)) + " cycles (per-SM findings below)";
    f.r.findings.push_back({"penalty", label + " miss penalty", num(pa) + " cycles",
                            num(pb) + " cycles", differs ? "DIFFERENT" : "SAME", why});
  } else {
    f.missing(
        "penalty", label + " miss penalty",
        a->miss_penalty_cycles ? num(*a->miss_penalty_cycles) + " cycles" : "not in the profile",
        b->miss_penalty_cycles ? num(*b->miss_penalty_cycles) + " cycles" : "not in the profile",
        "every run measures a level's miss penalty; null or absent in " +
            std::string(!a->miss_penalty_cycles && !b->miss_penalty_cycles ? "both"
                        : a->miss_penalty_cycles                           ? "B"
                                                                           : "A"));
  }
}

void compare_level(finder &f, const std::string &label, const model::tlb_level *a,
                   const model::tlb_level *b, const compare_thresholds &t) {
  if (!a || !b) {
    f.r.findings.push_back({"structure", label, a ? "present" : "absent", b ? "present" : "absent",
                            a ? "ONLY IN A" : "ONLY IN B",
                            "a level one run found and the other not"});
    return;
  }
  f.add("structure", label + " entries", opt_num(a->entries), opt_num(b->entries));
  f.add("structure", label + " coverage", format_bytes(a->coverage_bytes),
        format_bytes(b->coverage_bytes));
  f.add("structure", label + " ways", opt_num(a->ways), opt_num(b->ways));
  f.add("structure", label + " sets", opt_num(a->sets), opt_num(b->sets));
  compare_coverage(f, label, a, b);
  compare_sharing(f, label, a, b);
  compare_penalty(f, label, a, b, t);
  compare_per_sm(f, label, *a, *b, t);
}

// The real-memory cross-check's verdict of each level both runs checked ("agrees", "not seen in
// real memory", "beyond the real-memory sweep"), where the two differ: said, not counted. The chase
// over cudaMalloc memory is noisier than the aliased sweep (L1's verdict changes between runs of
// one unit), but a stage disturbed while it measured shows here first: mapping the alias range
// beside it lost the second level's agreement in both runs of one H100, where every finding
// counted was the same.
void compare_cross_check(finder &f, const model::tlb_hierarchy &a, const model::tlb_hierarchy &b) {
  if (!a.cross_check || !b.cross_check)
    return;
  const auto kind = [](const std::string &v) { // "agrees: real memory's level ..." -> "agrees"
    std::string k = v.substr(0, v.find_first_of(":("));
    while (!k.empty() && k.back() == ' ')
      k.pop_back();
    return k;
  };
  for (const auto &ca : a.cross_check->levels)
    if (const auto *cb = b.cross_check->find(ca.level))
      if (kind(ca.real_memory) != kind(cb->real_memory))
        f.r.findings.push_back({"cross-check", ca.level + " in real memory", ca.real_memory,
                                cb->real_memory, "NOTE",
                                "the real-memory chase's verdict, noisier than the aliased "
                                "sweep: said, not counted"});
}

void compare_tuning(finder &f, const model::run_folder &a, const model::run_folder &b) {
  if (!a.tuning || !b.tuning) {
    if (a.tuning || b.tuning)
      f.missing("tuning", "tuning.json", a.tuning ? "present" : "absent or unreadable",
                b.tuning ? "present" : "absent or unreadable", "tune's file is in one run only");
    return;
  }
  const auto &ta = a.tuning->allocator, &tb = b.tuning->allocator;
  const auto changed = [&](const char *item, const std::string &x, const std::string &y) {
    if (x != y && f.modes_differ)
      f.by_mode("tuning", item, x, y, "CHANGED", "");
    else
      f.r.findings.push_back({"tuning", item, x, y, x == y ? "SAME" : "CHANGED", ""});
  };
  changed("word_size", std::to_string(ta.word_bits) + "-bit",
          std::to_string(tb.word_bits) + "-bit");
  changed("regions", std::to_string(ta.regions), std::to_string(tb.regions));
  changed("crw_placement", to_string(ta.crw), to_string(tb.crw));
  const auto scope = [](const model::tuning_file &t) {
    return t.allocator.tlb_scope_bytes ? format_bytes(double(t.allocator.tlb_scope_bytes))
                                       : std::string("one pass");
  };
  if (a.tuning->tlb_scope_missing || b.tuning->tlb_scope_missing)
    f.missing("tuning", "tlb_scope",
              a.tuning->tlb_scope_missing ? "not in tuning.json" : scope(*a.tuning),
              b.tuning->tlb_scope_missing ? "not in tuning.json" : scope(*b.tuning),
              "tune always states its TLB scope; absent or null in tuning.json");
  else
    changed("tlb_scope", scope(*a.tuning), scope(*b.tuning));
}

// The 95 % bootstrap interval of median(y) / median(x).
std::pair<double, double> ratio_interval(const std::vector<double> &x, const std::vector<double> &y,
                                         int n, std::mt19937 &rng) {
  const auto ratios = bootstrap_median_ratios(x, y, std::size_t(n), rng);
  return {quantile(ratios, 0.025), quantile(ratios, 0.975)}; // quantile sorts its copy
}

void compare_validation(finder &f, const model::run_folder &a, const model::run_folder &b,
                        const compare_thresholds &t) {
  if (!a.valid || !b.valid) {
    if (a.valid || b.valid)
      f.missing("validation", "validation.json", a.valid ? "present" : "absent or unreadable",
                b.valid ? "present" : "absent or unreadable", "validate's file is in one run only");
    return;
  }
  std::mt19937 rng(t.seed);
  std::map<std::string, const model::validation_row *> rows;
  for (const auto &r : a.valid->workloads)
    rows[r.workload + " on " + r.pool] = &r;
  const auto has_times = [](const model::validation_row &r) {
    return r.tuned_ms && !r.tuned_ms->empty();
  };
  std::set<std::string> in_b;
  for (const auto &rb : b.valid->workloads) {
    const std::string key = rb.workload + " on " + rb.pool;
    in_b.insert(key);
    const auto it = rows.find(key);
    if (it == rows.end()) {
      if (has_times(rb) && f.same_method)
        f.missing("validation", key + " (tuned)", "not in A", "measured",
                  "a row both runs' mode measures is in B only");
      continue;
    }
    if (!has_times(rb) || !has_times(*it->second)) {
      if ((has_times(rb) || has_times(*it->second)) && f.same_method)
        f.missing("validation", key + " (tuned)",
                  has_times(*it->second) ? "measured" : "no times (null or empty)",
                  has_times(rb) ? "measured" : "no times (null or empty)",
                  "the row's tuned times are in one run only");
      continue;
    }
    const auto &xa = *it->second->tuned_ms, &xb = *rb.tuned_ms;
    const auto [lo, hi] = ratio_interval(xa, xb, t.bootstrap, rng);
    const double bar = validation_bar(f.model, it->first, t);
    const validation_spread *spread =
        t.calibrated ? spread_for(f.model, it->first, t.spreads) : nullptr;
    const std::string verdict = hi < 1 - bar ? "FASTER" : lo > 1 + bar ? "SLOWER" : "SAME";
    const double r = median(xb) / median(xa), d = std::max(std::fabs(r - 1), std::fabs(1 / r - 1));
    const std::string why =
        "B / A " + num(r, 3) + ", 95 % CI " + num(lo, 3) + "-" + num(hi, 3) + " (bootstrap, " +
        std::to_string(t.bootstrap) + " resamples; SAME within " + num(bar * 100, 1) + " %" +
        (spread ? std::string(": the largest of ") + num(t.time_floor * 100, 0) +
                      " %, this row's largest difference between repeated full runs of one "
                      "unit, " +
                      num(spread->within * 100, 1) + " % over " + std::to_string(spread->pairs) +
                      " pairs, and " + num(t.tail_sigmas, 1) + " x their root mean square, " +
                      num(t.tail_sigmas * spread->rms * 100, 1) + " %)"
                : std::string(")"));
    const std::string item = it->first + " (tuned)", va = num(median(xa), 4) + " ms",
                      vb = num(median(xb), 4) + " ms";
    if (verdict != "SAME" && spread && spread->step && d >= 0.8 * spread->step->first &&
        d <= 1.25 * spread->step->second)
      f.r.findings.push_back(
          {"validation", item, va, vb, "NOTE",
           "the row takes one of two values from run to run (a step of " +
               num(spread->step->first * 100, 2) + "-" + num(spread->step->second * 100, 2) +
               " % between repeated runs of one unit): A and B are at different ones, said, not "
               "counted; " +
               why});
    else if (verdict != "SAME" && f.modes_differ)
      f.by_mode("validation", item, va, vb, verdict, why);
    else
      f.r.findings.push_back({"validation", item, va, vb, verdict, why});
  }
  for (const auto &[key, ra] : rows)
    if (!in_b.count(key) && has_times(*ra) && f.same_method)
      f.missing("validation", key + " (tuned)", "measured", "not in B",
                "a row both runs' mode measures is in A only");
}

} // namespace

validation_spread spread_of_pairs(std::vector<double> d) {
  validation_spread s;
  s.pairs = d.size();
  if (d.empty())
    return s;
  std::sort(d.begin(), d.end());
  s.within = d.back();
  // Two tight groups: the split with the largest ratio between its sides, each side 2 pairs or
  // more, the upper at least 2.5 x and 2 points past the lower and no wider than 2 x its least
  // (on a seeded family, tests/host/compare_test.cpp: under 1 % of one-valued rows read as two;
  // a step of 15 noise sigmas or more always found).
  double best = 0;
  for (std::size_t i = 2; i + 2 <= d.size(); ++i) {
    const double lo = d[i - 1], hi = d[i];
    const double ratio = hi / std::max(lo, 1e-9);
    if (ratio >= 2.5 && hi - lo >= 0.02 && d.back() <= 2 * hi && ratio > best) {
      best = ratio;
      s.within = lo;
      s.step = std::make_pair(hi, d.back());
    }
  }
  double sum = 0;
  std::size_t n = 0;
  for (const double x : d)
    if (x <= s.within) {
      sum += x * x;
      ++n;
    }
  s.rms = std::sqrt(sum / double(n));
  return s;
}

spread_table
spread_table_of(const std::map<std::string, std::map<std::string, std::vector<double>>> &pairs) {
  spread_table t;
  for (const auto &[model, rows] : pairs)
    for (const auto &[row, d] : rows)
      t[{model, row}] = spread_of_pairs(d);
  return t;
}

const spread_table &measured_validation_spread() {
  struct row_pairs {
    const char *model, *row;
    std::vector<double> pairs;
  };
  static const spread_table table = [] {
    const std::vector<row_pairs> rows = {
#include "findings/validation_spread.inc"
    };
    std::map<std::string, std::map<std::string, std::vector<double>>> pairs;
    for (const auto &r : rows)
      pairs[r.model][r.row] = r.pairs;
    return spread_table_of(pairs);
  }();
  return table;
}

const validation_spread *spread_for(const std::string &model, const std::string &row,
                                    const spread_table *table) {
  const auto &m = table ? *table : measured_validation_spread();
  for (const std::string &key : {model, std::string()})
    if (const auto it = m.find({key, row}); it != m.end())
      return &it->second;
  return nullptr;
}

double validation_bar(const std::string &model, const std::string &row,
                      const compare_thresholds &t) {
  if (!t.calibrated)
    return t.time_rel;
  const auto *s = spread_for(model, row, t.spreads);
  return s ? std::max({t.time_floor, s->within, t.tail_sigmas * s->rms}) : t.time_rel;
}

double penalty_bar(double a, double b, const compare_thresholds &t) {
  return analysis::penalty_bar(a, b, t.penalty_rel, t.penalty_abs_cycles);
}

compare_result compare_runs(const model::run_folder &a, const model::run_folder &b,
                            const compare_thresholds &t, bool reanalyzed) {
  compare_result r;
  r.reanalyzed = reanalyzed;
  r.a_dir = a.dir;
  r.b_dir = b.dir;
  const auto &pa = a.prof, &pb = b.prof;
  finder f{r, t.allow_missing, pa.mode() == pb.mode() && (reanalyzed || pa.commit() == pb.commit()),
           pa.mode() != pb.mode(), pa.gpu_name() == pb.gpu_name() ? pa.gpu_name() : ""};
  const auto note = [&](const char *item, const std::string &x, const std::string &y) {
    r.findings.push_back({"provenance", item, x, y, x == y ? "SAME" : "NOTE", ""});
  };
  note("GPU", pa.gpu_name(), pb.gpu_name());
  note("unit", pa.gpu_uuid(), pb.gpu_uuid());
  note("driver", pa.device_text("driver_release"), pb.device_text("driver_release"));
  note("CUDA driver / runtime",
       pa.device_text("driver_version") + " / " + pa.device_text("runtime_version"),
       pb.device_text("driver_version") + " / " + pb.device_text("runtime_version"));
  const std::string ca = pa.commit(), cb = pb.commit();
  note(reanalyzed ? "analysis commit (both re-derived by this build)" : "gpuprobe commit", ca, cb);
  note("mode", pa.mode(), pb.mode());
  note("throttled", pa.throttled() ? "yes" : "no", pb.throttled() ? "yes" : "no");
  note("busy", pa.busy() ? "yes" : "no", pb.busy() ? "yes" : "no");
  if (ca != cb || pa.mode() != pb.mode()) {
    r.method_differs = true;
    r.method_note = "the two runs were analysed by different gpuprobe versions or modes (" + ca +
                    " " + pa.mode() + ", " + cb + " " + pb.mode() +
                    "): a difference may be the method's; `gpuprobe characterize --reanalyze` "
                    "both folders with one build to compare hardware with hardware";
  }
  if (pa.gpu_name() != pb.gpu_name())
    r.findings.push_back({"provenance", "GPU model", pa.gpu_name(), pb.gpu_name(), "NOTE",
                          "two models: every difference below may be the model's"});
  for (const bool candidate : {false, true}) {
    const auto &la = candidate ? pa.tlb.candidates : pa.tlb.levels;
    const auto &lb = candidate ? pb.tlb.candidates : pb.tlb.levels;
    for (std::size_t i = 0; i < std::max(la.size(), lb.size()); ++i)
      compare_level(f, model::level_label(candidate, i), i < la.size() ? &la[i] : nullptr,
                    i < lb.size() ? &lb[i] : nullptr, t);
  }
  compare_cross_check(f, pa.tlb, pb.tlb);
  compare_tuning(f, a, b);
  compare_validation(f, a, b, t);
  return r;
}

compare_result compare_to_fleet(const model::fleet_unit &unit, const model::fleet &fleet,
                                const fleet_rule &rule) {
  compare_result r;
  r.a_dir = unit.folder;
  r.b_dir = "the fleet's " + unit.model + " units";
  r.findings.push_back({"provenance", "GPU", unit.model, unit.model, "SAME", ""});
  r.findings.push_back({"provenance", "unit", unit.uuid, "baseline", "NOTE", ""});
  const auto it = fleet.models.find(unit.model);
  if (it == fleet.models.end()) {
    r.findings.push_back({"provenance", "GPU model", unit.model, "not in the fleet", "NOTE",
                          "the fleet has no unit of this model: nothing to compare"});
    return r;
  }
  for (const auto &[name, p] : it->second.parameters) {
    const auto x = unit.number(name);
    if (!x)
      continue;
    std::vector<double> others;
    for (const auto &[uuid, v] : p.values)
      if (uuid != unit.uuid)
        others.push_back(v);
    if (others.empty())
      continue;
    const auto sp = spread_of(others, rule); // the fleet's own outlier measure
    const double score = sp.score(*x);
    const std::string b = "median " + num(sp.median, 4) + " of " + std::to_string(others.size());
    const std::string area = name.find("penalty") != std::string::npos ? "penalty" : "structure";
    if (others.size() < 3)
      r.findings.push_back({area, name, num(*x, 4), b, "NOTE",
                            "fewer than three other units: no spread to judge by"});
    else
      r.findings.push_back({area, name, num(*x, 4), b, score > rule.limit ? "DIFFERENT" : "SAME",
                            num(score, 1) + " x the spread (MAD " + num(sp.mad, 3) + ", at least " +
                                num(100 * rule.floor_fraction, 0) + " % of the median; limit " +
                                num(rule.limit, 1) + ")"});
  }
  return r;
}

json to_json(const compare_result &r, const compare_thresholds &t) {
  json findings = json::array();
  for (const auto &f : r.findings) {
    json j = {{"area", f.area}, {"item", f.item}, {"a", f.a}, {"b", f.b}, {"verdict", f.verdict}};
    if (!f.why.empty())
      j["why"] = f.why;
    findings.push_back(j);
  }
  json doc = {{"schema", schema::compare.id()},
              {"a", r.a_dir},
              {"b", r.b_dir},
              {"differences", r.differences()},
              {"method_differs", r.method_differs},
              {"reanalyzed", r.reanalyzed},
              {"thresholds",
               {{"penalty_rel", t.penalty_rel},
                {"penalty_abs_cycles", t.penalty_abs_cycles},
                {"time_rel", t.time_rel},
                {"time_floor", t.time_floor},
                {"time_calibrated", t.calibrated},
                {"bootstrap", t.bootstrap},
                {"seed", t.seed}}},
              {"findings", findings}};
  if (r.method_differs)
    doc["method_note"] = r.method_note;
  return doc;
}

std::string to_markdown(const compare_result &r) {
  std::ostringstream o;
  const auto cell = [](const std::string &s) { return markdown_text(s); };
  o << "# gpuprobe compare\n\nA: " << cell(r.a_dir) << "  \nB: " << cell(r.b_dir) << "\n\n";
  if (r.reanalyzed)
    o << "**Re-analysed:** both profiles were derived again from their raw measurements by this "
         "build before comparing (in copies; the folders are unchanged): one analysis, so a "
         "structure or penalty difference is the measurements'.\n\n";
  if (r.method_differs)
    o << "**Method differs:** " << cell(r.method_note) << ".\n\n";
  o << "| provenance | A | B |\n|---|---|---|\n";
  for (const auto &f : r.findings)
    if (f.area == "provenance")
      o << "| " << cell(f.item) << " | " << cell(f.a) << " | " << cell(f.b) << " |\n";
  const int n = r.differences();
  o << "\n**" << n << (n == 1 ? " difference" : " differences") << "**";
  std::size_t same = 0;
  for (const auto &f : r.findings)
    same += f.area != "provenance" && f.verdict == "SAME";
  o << " (" << same << " findings the same).\n\n";
  if (n > 0) {
    o << "| area | finding | A | B | verdict | why |\n|---|---|---|---|---|---|\n";
    for (const auto &f : r.findings)
      if (f.verdict != "SAME" && f.verdict != "NOTE")
        o << "| " << f.area << " | " << cell(f.item) << " | " << cell(f.a) << " | " << cell(f.b)
          << " | " << f.verdict << " | " << cell(f.why) << " |\n";
  }
  // What differs but is not counted (a value one run resolved, a measurement one run made, the
  // real-memory cross-check's verdict): listed, so a reader sees it without the JSON.
  bool any_note = false;
  for (const auto &f : r.findings)
    if (f.area != "provenance" && f.verdict == "NOTE") {
      if (!any_note)
        o << "\nSaid, not counted:\n\n| area | finding | A | B | why |\n|---|---|---|---|---|\n";
      any_note = true;
      o << "| " << f.area << " | " << cell(f.item) << " | " << cell(f.a) << " | " << cell(f.b)
        << " | " << cell(f.why) << " |\n";
    }
  return o.str();
}

std::string verdict_line(const compare_result &r, bool allow_missing) {
  const int missing = r.missing();
  return std::string("gpuprobe compare: ") + (r.differences() ? "DIFFERENT" : "SAME") + " (" +
         std::to_string(r.differences()) + " finding(s) differ" +
         (missing ? ", " + std::to_string(missing) +
                        (allow_missing ? " missing, allowed" : " of them missing")
                  : std::string()) +
         ", of " + std::to_string(r.compared()) + ")";
}

std::string to_text(const compare_result &r) {
  std::ostringstream o;
  const auto t = [](const std::string &s) { return terminal_text(s); };
  o << "gpuprobe compare\n  A: " << t(r.a_dir) << "\n  B: " << t(r.b_dir) << "\n";
  if (r.reanalyzed)
    o << "  Re-analysed: both profiles were derived again from their raw measurements by this "
         "build (in copies; the folders are unchanged): a structure or penalty difference is the "
         "measurements'.\n";
  if (r.method_differs)
    o << "  Method differs: " << t(r.method_note) << ".\n";
  o << "Provenance (A | B):\n";
  for (const auto &f : r.findings)
    if (f.area == "provenance")
      o << "  " << t(f.item) << ": " << t(f.a) << (f.a == f.b ? "" : " | " + t(f.b)) << "\n";
  const int n = r.differences();
  std::size_t same = 0;
  for (const auto &f : r.findings)
    same += f.area != "provenance" && f.verdict == "SAME";
  o << n << (n == 1 ? " difference" : " differences") << " (" << same << " findings the same)"
    << (n ? ":" : ".") << "\n";
  for (const auto &f : r.findings)
    if (f.verdict != "SAME" && f.verdict != "NOTE")
      o << "  " << f.verdict << "  " << f.area << "  " << t(f.item) << ": " << t(f.a) << " -> "
        << t(f.b) << (f.why.empty() ? "" : " (" + t(f.why) + ")") << "\n";
  bool any_note = false;
  for (const auto &f : r.findings)
    if (f.area != "provenance" && f.verdict == "NOTE") {
      o << (any_note ? "" : "Said, not counted:\n") << "  " << f.area << "  " << t(f.item) << ": "
        << t(f.a) << " -> " << t(f.b) << (f.why.empty() ? "" : " (" + t(f.why) + ")") << "\n";
      any_note = true;
    }
  return o.str();
}

} // namespace gpuprobe::findings
