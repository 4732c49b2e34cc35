#include "tests/common/tlb_simulate.hpp"

#include "common/defaults.hpp"
#include "common/stats.hpp"
#include "common/steps.hpp"
#include "common/units.hpp"
#include "probes/tlb/driver.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

namespace gpuprobe::probes::tlb::sim {

double latency(const sim_gpu &g, std::uint64_t stride, std::uint64_t hops) {
  double t = g.base_cycles;
  for (const auto &L : g.levels)
    t += L.penalty_cycles * miss_share(L, stride, hops);
  return t;
}

sweep_plan plan_for(sim_mode mode, std::uint64_t max_bytes) {
  tlb_options o; // characterize's tlb stage (probes/tlb/plan.cpp): alias, 64 KiB..1 GiB, 8/octave
  o.alloc = alloc_kind::alias;
  o.max_bytes = max_bytes;
  if (mode == sim_mode::quick) {
    o.min_stride = 2 * k_mib;
    o.max_stride = 256 * k_mib;
    o.points_per_octave = 4;
    o.short_below = 8 * k_mib; // as characterize's quick tlb stage (probes/tlb/plan.cpp)
    o.short_bytes = 96ull << 30;
  }
  sweep_plan p = plan_tlb(o, 0);
  p.max_hops = p.max_bytes / (2 * k_mib); // one 2 MiB chunk at every slot
  return p;
}

namespace {
// Deviations of one curve's points from their four neighbours' median, in the curve's sigma,
// skipping three points either side of any rise (a level's rise is signal, not noise).
void residuals_of(const std::vector<double> &x, const std::vector<double> &y,
                  std::vector<double> &out) {
  if (y.size() < 9)
    return;
  step_options weak;
  weak.snr_min = 3;
  std::vector<bool> near_rise(y.size(), false);
  for (const auto &st : detect_steps(x, y, weak))
    for (std::size_t k = st.index >= 3 ? st.index - 3 : 0; k < std::min(y.size(), st.index + 3);
         ++k)
      near_rise[k] = true;
  const double sigma = curve_noise(y, defaults::min_noise_cycles);
  for (std::size_t i = 2; i + 2 < y.size(); ++i) {
    if (near_rise[i - 2] || near_rise[i] || near_rise[i + 2])
      continue;
    out.push_back((y[i] - median({y[i - 2], y[i - 1], y[i + 1], y[i + 2]})) / sigma);
  }
}
} // namespace

noise_pool noise_from(const std::vector<probes::tlb_dataset> &real) {
  noise_pool p;
  for (const auto &d : real)
    for (const auto &c : d.curves) {
      ++p.curves;
      residuals_of(c.footprint_bytes, c.cycles, c.median ? p.median_sigmas : p.mean_sigmas);
      if (!c.mean_cycles.empty())
        residuals_of(c.footprint_bytes, c.mean_cycles, p.mean_sigmas);
    }
  return p;
}

std::vector<sweep_point> simulate_points(const sim_gpu &g, const sweep_plan &plan,
                                         std::uint64_t seed, const noise_pool *real) {
  std::mt19937_64 rng(seed);
  std::student_t_distribution<double> tail(4.0); // heavier tails than a Gaussian
  std::uniform_real_distribution<double> unit(0, 1);
  const double sigma = g.noise_cycles / 1.2; // t(4)'s robust sigma is ~1.2
  const auto noisy = [&](double truth, const std::vector<double> *pool) {
    double v = truth;
    if (pool) {
      v += g.noise_cycles * (*pool)[rng() % pool->size()];
    } else {
      v += sigma * tail(rng);
      if (unit(rng) < 0.005) // a rare one-sided outlier: another process's burst
        v += g.noise_cycles * (10 + 20 * unit(rng));
    }
    return std::max(1.0, v);
  };
  const bool pooled = real && !real->empty();
  const measure_fn measure = [&](std::uint64_t stride, std::uint64_t hops) {
    sweep_point p;
    p.stride_bytes = stride;
    p.hops = hops;
    p.footprint_bytes = stride * hops;
    const double truth = latency(g, stride, hops);
    p.median = noisy(truth, pooled ? &real->median_sigmas : nullptr);
    p.mean = noisy(truth, pooled ? &real->mean_sigmas : nullptr);
    p.p10 = p.median - g.noise_cycles;
    p.p90 = p.median + g.noise_cycles;
    p.samples = 4096;
    return p;
  };
  return run_sweep(
      plan, [](std::uint64_t) {}, measure, [](const std::string &) {});
}

probes::tlb_dataset simulate(const sim_gpu &g, const sweep_plan &plan, std::uint64_t seed,
                             const noise_pool *real) {
  // Read as `gpuprobe analyze tlb` reads a real sweep: the same reader, no second copy of it.
  probes::tlb_dataset d;
  probes::parse_gpuprobe_tlb_result(raw_result(g, plan, simulate_points(g, plan, seed, real)),
                                    "simulated", d);
  return d;
}

nlohmann::json raw_result(const sim_gpu &g, const sweep_plan &plan,
                          const std::vector<sweep_point> &points) {
  tlb_result r;
  r.device = {{"name", "simulated: " + g.describe()},
              {"uuid", "SIM-" + std::to_string(std::hash<std::string>{}(g.describe()) % 100000000)},
              {"sm_count", 132}}; // no L2 size: the model has no data cache to explain a rise
  r.meta = {{"tool", "gpuprobe simulate"}, {"argv", nlohmann::json::array()}};
  r.alloc = "alias";
  r.granularity_bytes = 2 * k_mib;
  r.alias_bytes = 2 * k_mib;
  r.min_bytes = plan.min_bytes;
  r.max_bytes = plan.max_bytes;
  r.max_hops = plan.max_hops;
  r.strides = plan.strides;
  r.points_per_octave = plan.points_per_octave;
  r.samples_per_point = 4096;
  r.points = points;
  return to_json(r);
}

std::string csv_2017(const sim_gpu &g, const std::vector<sweep_point> &points) {
  std::map<std::uint64_t, std::map<std::uint64_t, double>> rows; // footprint -> stride -> cycles
  std::map<std::uint64_t, bool> strides;
  for (const auto &p : points) {
    rows[p.footprint_bytes][p.stride_bytes] = p.mean; // "reduction mode: avg"
    strides[p.stride_bytes] = true;
  }
  std::string o = "#simulated " + g.describe() + ": cuda 0.0, reduction mode: avg\n#,";
  for (const auto &[st, _] : strides)
    o += std::to_string(st / 1024) + ",";
  o += "\n";
  char cell[64];
  for (const auto &[fp, by] : rows) {
    std::snprintf(cell, sizeof cell, "%.10g,", double(fp) / double(k_mib));
    o += cell;
    for (const auto &[st, _] : strides) {
      const auto it = by.find(st);
      if (it != by.end()) {
        std::snprintf(cell, sizeof cell, "%.4f", it->second);
        o += cell;
      }
      o += ",";
    }
    o += "\n";
  }
  return o;
}

sim_gpu random_gpu(std::mt19937_64 &rng, bool null_gpu) {
  const auto pick = [&](int lo, int hi) { // uniform in [lo, hi]
    return lo + int(rng() % std::uint64_t(hi - lo + 1));
  };
  const auto log_uniform = [&](double lo, double hi) {
    return std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * double(rng() % 100001) / 1e5);
  };
  sim_gpu g;
  g.base_cycles = log_uniform(200, 600);
  g.noise_cycles = log_uniform(0.3, 5);
  if (null_gpu)
    return g;
  const int n = pick(1, 4);
  int coverage_log = pick(12, 22); // 4 KiB .. 4 MiB for the first level
  int entries_log = pick(3, 6);    // 8 .. 64 entries for the first level
  for (int k = 0; k < n; ++k) {
    sim_level L;
    L.coverage_bytes = 1ull << std::min(coverage_log, 29); // at most 512 MiB
    const int ent = std::min(entries_log, 16);             // at most 65,536 entries
    const int ways_log = k == 0 && pick(0, 1) ? ent : pick(1, std::min(4, ent)); // FA, or 2-16 ways
    L.ways = 1ull << ways_log;
    L.sets = 1ull << (ent - ways_log);
    L.penalty_cycles = log_uniform(3, 1000);
    L.repl = pick(0, 3) == 0 ? replacement::random : replacement::lru;
    L.xor_index = L.sets > 1 && pick(0, 3) != 0; // GPUs hash their set index; some do not
    g.levels.push_back(L);
    // The next level: more entries, the same or a larger coverage, a larger reach.
    entries_log += pick(1, 4);
    coverage_log += pick(0, 2);
  }
  return g;
}

std::string sim_gpu::describe() const {
  std::string s = std::to_string(levels.size()) + " level(s), noise " +
                  std::to_string(noise_cycles).substr(0, 4) + ":";
  for (const auto &L : levels) {
    char b[200];
    std::snprintf(b, sizeof b, " %llu = %llu x %llu of %s, %s%s, +%.0f;",
                  (unsigned long long)L.entries(), (unsigned long long)L.ways,
                  (unsigned long long)L.sets, format_bytes(double(L.coverage_bytes)).c_str(),
                  replacement_name(L.repl), L.xor_index ? " xor" : "",
                  L.penalty_cycles);
    s += b;
  }
  return s;
}

namespace {

// The model's stated intervals (analyze tlb --model) hold the level's entries and coverage, and
// its penalty is within 30 %.
bool inside_intervals(const model::tlb_level &F, const sim_level &L) {
  const auto m = F.detail.find("model");
  if (m == F.detail.end() || !m->contains("intervals") || !F.miss_penalty_cycles)
    return false;
  const auto &iv = (*m)["intervals"];
  const auto in = [&](const char *key, double v) {
    return iv.contains(key) && iv[key].size() == 2 && iv[key][0].get<double>() <= v &&
           v <= iv[key][1].get<double>();
  };
  return in("entries", double(L.entries())) && in("coverage_bytes", double(L.coverage_bytes)) &&
         std::fabs(*F.miss_penalty_cycles / L.penalty_cycles - 1) <= 0.3;
}

} // namespace

gpu_score score(const sim_gpu &g, const model::tlb_hierarchy &h, const sweep_plan &plan) {
  gpu_score out;
  std::vector<bool> used(h.levels.size(), false);
  const double lo = 2.0 * double(plan.min_bytes), hi = double(plan.max_bytes) / 2;
  const std::uint64_t smallest = *std::min_element(plan.strides.begin(), plan.strides.end());
  const std::uint64_t largest = *std::max_element(plan.strides.begin(), plan.strides.end());
  for (const auto &L : g.levels) {
    level_score s;
    int showing = 0;
    for (const auto st : plan.strides) {
      const double at = double(L.entries()) * double(std::max(st, L.coverage_bytes));
      const double hops = at / double(st);
      showing += at >= lo && at <= hi && (!plan.max_hops || hops <= double(plan.max_hops) / 2);
    }
    s.observable = showing >= 2;
    s.set_associative = L.sets > 1;
    // The strides at which the miss model's first miss comes after exactly `entries` tags, inside
    // that stride's sweep.
    int true_count = 0;
    for (const auto st : plan.strides) {
      if (first_miss_tags(L, st) != L.entries() + 1)
        continue;
      const double at = double(L.entries()) * double(std::max(st, L.coverage_bytes));
      const double hops = at / double(st);
      true_count += at >= lo && at <= std::min(hi, double(stride_max_bytes(plan, st)) / 2) &&
                    (!plan.max_hops || hops <= double(plan.max_hops) / 2);
    }
    s.recoverable = true_count >= 2 && L.penalty_cycles >= 3 * g.noise_cycles &&
                    std::all_of(g.levels.begin(), g.levels.end(), [&](const sim_level &o) {
                      return &o == &L || std::max(o.reach_bytes(), L.reach_bytes()) >=
                                             2 * std::min(o.reach_bytes(), L.reach_bytes());
                    });
    s.coverage_determinable = smallest < L.coverage_bytes && largest > L.coverage_bytes;
    s.penalty_over_noise = L.penalty_cycles / g.noise_cycles;
    const bool below_strides = L.coverage_bytes < smallest;
    for (std::size_t i = 0; i < h.levels.size(); ++i) {
      const auto &F = h.levels[i];
      const bool by_reach = std::fabs(F.reach_bytes / L.reach_bytes() - 1) <= 0.25;
      // Where the page is only bounded (the coverage below every stride that shows the level, or
      // an upper bound the coverage respects), the level is found by its entries.
      const bool bounded = below_strides || (F.coverage_bound == std::string("upper") &&
                                             F.coverage_bytes >= double(L.coverage_bytes));
      const bool by_entries =
          bounded && F.entries && std::fabs(*F.entries / double(L.entries()) - 1) <= 0.25;
      // Where the model states intervals, the level is found when its entries and coverage lie
      // inside them and its penalty is within 30 %: the sweep told no more.
      const bool by_intervals = inside_intervals(F, L);
      if (used[i] || !(by_reach || by_entries || by_intervals))
        continue;
      used[i] = true;
      s.found = true;
      s.by_intervals = !by_reach && !by_entries;
      s.exact_entries = F.entries && *F.entries == double(L.entries());
      s.exact_coverage = F.coverage_bytes == double(L.coverage_bytes);
      s.exact_ways_sets =
          F.ways && F.sets && *F.ways == double(L.ways) && *F.sets == double(L.sets);
      s.penalty_within_10 = F.miss_penalty_cycles &&
                            std::fabs(*F.miss_penalty_cycles / L.penalty_cycles - 1) <= 0.10;
      break;
    }
    out.levels.push_back(s);
  }
  out.false_levels = int(std::count(used.begin(), used.end(), false));
  for (std::size_t i = 0; i < h.levels.size(); ++i) {
    const auto &F = h.levels[i];
    const bool view =
        !used[i] && std::any_of(g.levels.begin(), g.levels.end(), [&](const sim_level &L) {
          return F.coverage_bytes >= double(L.coverage_bytes) && F.entries &&
                 *F.entries <= 1.25 * double(L.entries()) && F.miss_penalty_cycles &&
                 std::fabs(*F.miss_penalty_cycles / L.penalty_cycles - 1) <= 0.3;
        });
    out.reported.push_back({F.confidence.value_or(0), bool(used[i]), view});
  }
  return out;
}

} // namespace gpuprobe::probes::tlb::sim
