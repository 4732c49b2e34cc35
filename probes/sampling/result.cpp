// The host half of tlb-sampling: the footprints per level, the verdict, the result's JSON.
#include "common/error.hpp"
#include "common/stats.hpp"
#include "common/units.hpp"
#include "model/fields.hpp"
#include "probes/sampling/driver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpuprobe::probes {

using nlohmann::json;

namespace {
constexpr std::uint64_t k_round = 2ull << 20;

} // namespace

std::vector<sampling_target> plan_sampling(const model::tlb_hierarchy &tlb,
                                           std::uint64_t budget_bytes, const sampling_options &o) {
  return plan_levels<sampling_target>(tlb, [&](sampling_target &t, std::size_t) {
    const model::tlb_level &L = t.tested;
    if (t.reach_bytes() <= 0) {
      t.skipped = "the profile gives no reach";
      return;
    }
    // Below where misses begin, and above where every hop misses (a set-associative level's
    // ramp lies between: a footprint on it is neither).
    const double full = std::max(t.reach_bytes(), L.full_miss_bytes.value_or(0));
    t.below_bytes = std::uint64_t(t.reach_bytes() * o.below) / k_round * k_round;
    t.above_bytes =
        std::min<std::uint64_t>(std::uint64_t(full * o.above), budget_bytes) / k_round * k_round;
    if (double(t.above_bytes) < 1.1 * full) {
      char x[32];
      std::snprintf(x, sizeof x, "%.2f", double(budget_bytes) / full);
      t.skipped = "real memory reaches at most " + format_bytes(double(budget_bytes)) + " (" + x +
                  (full > t.reach_bytes() ? " x where every hop misses, " + format_bytes(full)
                                          : std::string(" x the reach")) +
                  "): too close to it, or beyond it, to test";
      t.below_bytes = t.above_bytes = 0;
    }
  });
}

model::sampling_check sampling_verdict(const sampling_level_result &r, double l2_bytes,
                                       double reads_per_launch) {
  const auto &t = r.target;
  model::sampling_check v;
  if (!t.skipped.empty()) {
    v.verdict = "not tested: " + t.skipped;
    return v;
  }
  if (r.below_ms.empty() || r.above_ms.empty()) {
    v.verdict = "not measured";
    return v;
  }
  const double b = median(r.below_ms), a = median(r.above_ms);
  // The reps' robust spread, relative, of the noisier footprint.
  auto spread = [](const std::vector<double> &ms) {
    const double m = median(ms);
    std::vector<double> d;
    for (double x : ms)
      d.push_back(std::fabs(x - m));
    return 1.4826 * median(d) / m;
  };
  const double noise = std::max(spread(r.below_ms), spread(r.above_ms));
  const double ratio = a / b, bar = std::max(0.03, 3.0 * noise);
  const double share_b = std::min(1.0, l2_bytes / double(t.below_bytes)),
               share_a = std::min(1.0, l2_bytes / double(t.above_bytes));
  const double g = reads_per_launch / 1e6; // ms per launch -> G reads per s: g / ms
  // Past the L2 cache's share, reads go to memory: if the data cache alone set the speed, the
  // time would grow at most as the reads that miss it, (1 - share above) / (1 - share below).
  const double cache_bound = (1 - share_a) / std::max(1e-9, 1 - share_b) - 1;
  v.ratio = ratio;
  v.detail = {{"below_greads_per_s", g / b},
              {"above_greads_per_s", g / a},
              {"noise", noise},
              {"threshold", bar},
              {"changes", std::fabs(ratio - 1) > bar},
              {"l2_share_below", share_b},
              {"l2_share_above", share_a},
              {"cache_explains_up_to", cache_bound}};
  char line[360];
  if (ratio - 1 > bar && ratio - 1 > cache_bound + bar)
    std::snprintf(line, sizeof line,
                  "slower by %.1f %% above the reach (%.1f -> %.1f G reads/s), as the level says",
                  100 * (ratio - 1), g / b, g / a);
  else if (ratio - 1 > bar)
    std::snprintf(line, sizeof line,
                  "slower by %.1f %% above the reach (%.1f -> %.1f G reads/s), but the L2 cache "
                  "holds %.1f %% of the footprint below and %.1f %% above, which alone explains "
                  "up to %.1f %%: no evidence for or against the level",
                  100 * (ratio - 1), g / b, g / a, 100 * share_b, 100 * share_a, 100 * cache_bound);
  else if (1 - ratio > bar)
    std::snprintf(line, sizeof line,
                  "faster by %.1f %% above the reach (%.1f -> %.1f G reads/s): not what a TLB "
                  "level does",
                  100 * (1 - ratio), g / b, g / a);
  else
    std::snprintf(line, sizeof line,
                  "no change beyond the noise (%+.1f %%, bar %.1f %%; %.1f -> %.1f G reads/s): "
                  "the level's +%.0f-cycle miss does not show through random reads",
                  100 * (ratio - 1), 100 * bar, g / b, g / a, t.penalty_cycles());
  v.verdict = std::string(line);
  return v;
}

json to_json(const sampling_result &r) {
  json levels = json::array();
  for (const auto &l : r.levels)
    levels.push_back({{"level", l.target.level},
                      {"reach_bytes", l.target.reach_bytes()},
                      {"penalty_cycles", l.target.penalty_cycles()},
                      {"below_bytes", l.target.below_bytes},
                      {"above_bytes", l.target.above_bytes},
                      {"skipped", l.target.skipped},
                      {"below_ms", l.below_ms},
                      {"above_ms", l.above_ms},
                      {"verdict", model::to_json(l.verdict)}});
  return result_document("tlb-sampling", r, "sampling",
                         {{"profile", r.profile},
                          {"reads_per_launch", r.reads_per_launch},
                          {"levels", levels},
                          {"wall_seconds", r.wall_seconds}});
}

sampling_result sampling_result_from_json(const json &doc) {
  sampling_result r;
  const json &s = result_body(doc, "tlb-sampling", "sampling", r);
  try {
    r.profile = s.value("profile", std::string());
    r.reads_per_launch = s.at("reads_per_launch").get<double>();
    r.wall_seconds = s.value("wall_seconds", 0.0);
    for (const auto &l : s.at("levels")) {
      sampling_level_result x;
      x.target.level = l.at("level").get<std::string>();
      x.target.tested.reach_bytes = l.at("reach_bytes").get<double>();
      x.target.tested.miss_penalty_cycles = l.value("penalty_cycles", 0.0);
      x.target.below_bytes = l.at("below_bytes").get<std::uint64_t>();
      x.target.above_bytes = l.at("above_bytes").get<std::uint64_t>();
      x.target.skipped = l.value("skipped", std::string());
      x.below_ms = l.at("below_ms").get<std::vector<double>>();
      x.above_ms = l.at("above_ms").get<std::vector<double>>();
      x.verdict = model::sampling_check_from_json(l.value("verdict", json::object()));
      r.levels.push_back(x);
    }
  } catch (const json::exception &e) {
    throw error(std::string("tlb-sampling result: ") + e.what());
  } catch (const model::impossible_value &e) { // a verdict that is not a block
    throw error(std::string("tlb-sampling result: ") + e.what());
  }
  return r;
}

std::string sampling_level_result::verdict_words() const {
  return verdict.verdict.value_or("");
}

} // namespace gpuprobe::probes
