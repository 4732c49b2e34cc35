// The host half of tlb-per-sm: the footprints per level, the per-SM summary, the result's JSON.
#include "common/error.hpp"
#include "common/stats.hpp"
#include "common/units.hpp"
#include "model/fields.hpp"
#include "probes/per_sm/driver.hpp"
#include "probes/tlb/levels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpuprobe::probes {

using nlohmann::json;

std::vector<per_sm_target> plan_per_sm(const model::tlb_hierarchy &tlb, const per_sm_options &o) {
  return plan_levels<per_sm_target>(tlb, [&](per_sm_target &t, std::size_t) {
    const model::tlb_level &L = t.tested;
    const double e = L.entries.value_or(0);
    if (e < 2 || L.coverage_bytes <= 0) {
      t.skipped = "the profile gives no entries or page";
      return;
    }
    // Where every hop misses: a ramp's end, else one page past the entries (a step).
    const double full = std::max(e + 1, L.full_miss_bytes.value_or(0) / L.coverage_bytes);
    t.below_pages = std::max<std::uint32_t>(2, std::uint32_t(std::floor(o.below * e)));
    t.above_pages = std::uint32_t(std::ceil(o.above * full));
    if (double(t.bytes()) > double(o.range_bytes)) {
      t.skipped = "a walk where every hop misses needs " + format_bytes(double(t.bytes())) +
                  " of range, past the " + format_bytes(double(o.range_bytes)) + " mapped";
      t.below_pages = t.above_pages = 0;
    } else {
      const auto laps = [&](std::uint32_t n) {
        return std::max<std::uint32_t>(1, (o.min_hops + n - 1) / n);
      };
      t.laps_below = laps(t.below_pages);
      t.laps_above = laps(t.above_pages);
    }
  });
}

sm_spread spread_of(const std::vector<int> &sms, const std::vector<double> &v) {
  std::vector<std::pair<double, int>> x;
  for (std::size_t i = 0; i < v.size(); ++i)
    x.emplace_back(v[i], sms[i]);
  std::sort(x.begin(), x.end());
  return {x.front().first, median(v), x.back().first, x.front().second, x.back().second};
}

std::string spread_text(const std::vector<int> &sms, const std::vector<double> &v) {
  if (v.empty() || v.size() != sms.size())
    return "-";
  const sm_spread s = spread_of(sms, v);
  char b[160];
  std::snprintf(b, sizeof b, "%.1f (SM %d) - %.1f - %.1f (SM %d)", s.min, s.min_sm, s.median, s.max,
                s.max_sm);
  return b;
}

model::level_per_sm summarize_per_sm(const per_sm_level_result &l, const std::string &source) {
  model::level_per_sm s;
  s.sms = l.sms;
  const std::size_t n = l.sms.size(), reps = std::min(l.below.size(), l.above.size());
  std::vector<double> rep_diffs;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> hit, pen;
    for (std::size_t r = 0; r < reps; ++r) {
      hit.push_back(l.below[r][i]);
      pen.push_back(l.above[r][i] - l.below[r][i]);
    }
    s.hit_cycles.push_back(median(hit));
    s.penalty_cycles.push_back(median(pen));
    for (std::size_t r = 1; r < pen.size(); ++r)
      rep_diffs.push_back(std::fabs(pen[r] - pen[r - 1]));
  }
  if (!rep_diffs.empty())
    s.noise_cycles = median(rep_diffs);
  const auto spread = [&](const std::vector<double> &v) {
    const sm_spread x = spread_of(s.sms, v);
    return json{{"min", x.min},
                {"min_sm", x.min_sm},
                {"median", x.median},
                {"max", x.max},
                {"max_sm", x.max_sm}};
  };
  s.detail = {{"source", source},
              {"coverage_bytes", l.target.tested.coverage_bytes},
              {"below_pages", l.target.below_pages},
              {"above_pages", l.target.above_pages},
              {"reps", reps}};
  if (n) {
    s.detail["hit_spread"] = spread(s.hit_cycles);
    s.detail["penalty_spread"] = spread(s.penalty_cycles);
  }
  return s;
}

// A level's keys, once, for its reader and its writer (model/fields.hpp): the level tested, then
// (where it was measured) its walks and cycles.
template <class F> void fields(per_sm_level_result &l, F &f) {
  auto &t = l.target;
  f.required("level", t.level);
  f.derived("coverage_bytes", t.tested.coverage_bytes);
  f.derived("entries", t.tested.entries.value_or(0));
  f.whole("tested", t.tested, model::tlb_level_from_json);
  f.text("skipped", t.skipped);
  if (!t.skipped.empty())
    return;
  f.required("below_pages", t.below_pages);
  f.required("above_pages", t.above_pages);
  f.required("laps_below", t.laps_below);
  f.required("laps_above", t.laps_above);
  f.required("sms", l.sms);
  f.required("below_cycles", l.below);
  f.required("above_cycles", l.above);
}
json to_json(const per_sm_level_result &l) { return model::write_record(l); }

per_sm_level_result per_sm_level_from_json(const json &j) {
  const auto l = model::read_record<per_sm_level_result>(j);
  const auto &t = l.target;
  if (!t.skipped.empty())
    return l;
  if (l.sms.size() > std::size_t(model::k_max_sm_count) || l.below.size() != l.above.size() ||
      l.below.empty())
    throw error("tlb-per-sm: level " + t.level + ": " + std::to_string(l.sms.size()) + " SMs, " +
                std::to_string(l.below.size()) + " and " + std::to_string(l.above.size()) +
                " reps: not a measured level");
  for (const auto *reps : {&l.below, &l.above})
    for (const auto &rep : *reps)
      if (rep.size() != l.sms.size())
        throw error("tlb-per-sm: level " + t.level + ": a rep of " + std::to_string(rep.size()) +
                    " values for " + std::to_string(l.sms.size()) + " SMs");
  return l;
}

template <class F> void fields(per_sm_result &r, F &f) {
  f.field("profile", r.profile);
  f.field("range_bytes", r.range_bytes);
  f.field("reps", r.reps);
  f.field("wall_seconds", r.wall_seconds);
  f.required_list("levels", r.levels, per_sm_level_from_json);
}

json to_json(const per_sm_result &r) { return model::write_result(r, "tlb-per-sm", "tlb_per_sm"); }

per_sm_result per_sm_result_from_json(const json &doc) {
  return model::read_result<per_sm_result>(doc, "tlb-per-sm", "tlb_per_sm");
}

} // namespace gpuprobe::probes
