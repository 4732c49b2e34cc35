// Issue 45: the TLB analyzer on simulated GPUs (probes/tlb/simulate.hpp): a seeded family of
// random hierarchies and null GPUs, swept as characterize plans the tlb stage (full and quick),
// analyzed, and scored: the share of levels recovered with exact entries, ways and sets and
// coverage, the false levels per null sweep, and the smallest penalty/noise found 95 % of the
// time. CI runs a seeded few hundred; GPUPROBE_SIM_GPUS=1000 (scripts/simulated_family.sh) runs
// the table docs/analyze-tlb.md quotes.
#include "common/json_io.hpp"
#include "probes/tlb/levels.hpp"
#include "probes/tlb/simulate.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

using namespace gpuprobe;
using namespace gpuprobe::probes::sim;

namespace {

constexpr std::uint64_t k_max = 512ull << 30; // the alias range of an H100

struct tally {
  int gpus = 0, nulls = 0, null_false = 0, false_levels = 0;
  int observable = 0, found = 0, entries = 0, ways_sets = 0, coverage = 0, determinable = 0;
  std::map<int, std::pair<int, int>> by_ratio; // log2(penalty / noise) -> found, observable
  std::map<std::string, int> missed_by_cause;  // the first cause that fits each missed level
};

// Why a level the sweep could show may have been missed: the first of these that holds.
std::string likely_cause(const sim_gpu &g, std::size_t k, const level_score &s) {
  const auto &L = g.levels[k];
  if (s.penalty_over_noise < 12)
    return "a rise under 12 x the noise";
  for (std::size_t j = 0; j < g.levels.size(); ++j)
    if (j != k && std::max(g.levels[j].reach_bytes(), L.reach_bytes()) <
                      4 * std::min(g.levels[j].reach_bytes(), L.reach_bytes()))
      return "another level's reach within 4 x";
  if (L.repl == replacement::random && L.ways > 1)
    return "random replacement (a gradual ramp)";
  if (L.sets > 1 && !L.xor_index)
    return "a modulo set index (conflicts at large strides)";
  if (L.entries() < 16)
    return "fewer than 16 entries";
  return "none of these";
}

tally run_family(sim_mode mode, int gpus, int nulls, std::uint64_t seed, bool verbose) {
  std::mt19937_64 rng(seed);
  const auto plan = plan_for(mode, k_max);
  tally t;
  for (int i = 0; i < gpus + nulls; ++i) {
    const bool null_gpu = i >= gpus;
    const sim_gpu g = random_gpu(rng, null_gpu);
    const auto data = simulate(g, plan, seed * 7919 + std::uint64_t(i));
    const auto h = analysis::analyze_tlb(data);
    const auto s = score(g, h, plan);
    if (null_gpu) {
      ++t.nulls;
      t.null_false += s.false_levels;
      continue;
    }
    ++t.gpus;
    t.false_levels += s.false_levels;
    for (std::size_t k = 0; k < s.levels.size(); ++k) {
      const auto &L = s.levels[k];
      if (!L.observable)
        continue;
      if (!L.found) {
        const std::string why = likely_cause(g, k, L);
        ++t.missed_by_cause[why];
        if (const char *show = std::getenv("GPUPROBE_SIM_SHOW"); show && why.find(show) == 0) {
          std::printf("  %s: L%zu of %s -> found:", why.c_str(), k + 1, g.describe().c_str());
          for (const auto &F : h.levels)
            std::printf(" %s;", analysis::level_line("", F).c_str());
          std::printf("\n");
        }
      }
      ++t.observable;
      t.found += L.found;
      t.entries += L.exact_entries;
      t.ways_sets += L.exact_ways_sets;
      t.determinable += L.coverage_determinable;
      t.coverage += L.coverage_determinable && L.exact_coverage;
      auto &b = t.by_ratio[int(std::floor(std::log2(std::max(1.0, L.penalty_over_noise))))];
      b.first += L.found;
      ++b.second;
    }
    if (verbose && (s.false_levels ||
                    std::any_of(s.levels.begin(), s.levels.end(),
                                [](const level_score &L) { return L.observable && !L.found; })))
      std::printf("  missed or false: %s -> %zu level(s) found\n", g.describe().c_str(),
                  h.levels.size());
  }
  return t;
}

double pct(int a, int b) { return b ? 100.0 * a / b : 0; }

// The smallest penalty/noise from which every bin finds >= 95 % of its levels.
double sensitivity(const tally &t) {
  double from = -1;
  for (auto it = t.by_ratio.rbegin(); it != t.by_ratio.rend(); ++it) {
    const auto [found, n] = it->second;
    if (n >= 3 && double(found) < 0.95 * n)
      break;
    from = std::exp2(it->first);
  }
  return from;
}

void print(const char *mode, const tally &t) {
  std::printf("| %s | %d | %d | %.1f %% | %.1f %% | %.1f %% | %.1f %% of %d | %.2f | %.3f | %s |\n",
              mode, t.gpus, t.observable, pct(t.found, t.observable), pct(t.entries, t.observable),
              pct(t.ways_sets, t.observable), pct(t.coverage, t.determinable), t.determinable,
              t.gpus ? double(t.false_levels) / t.gpus : 0,
              t.nulls ? double(t.null_false) / t.nulls : 0,
              sensitivity(t) > 0 ? ("x" + std::to_string(int(sensitivity(t)))).c_str() : "none");
  for (const auto &[r, b] : t.by_ratio)
    std::printf("|   penalty/noise %g-%g | | %d | %.0f %% found | | | | | | |\n", std::exp2(r),
                std::exp2(r + 1), b.second, pct(b.first, b.second));
  for (const auto &[why, n] : t.missed_by_cause)
    std::printf("|   missed: %s | | %d | %.0f %% of the missed | | | | | | |\n", why.c_str(), n,
                pct(n, t.observable - t.found));
}

} // namespace

// A hierarchy of Hopper's shape at an idle H100's noise is found: the simulator and the analyzer
// agree where the answer is known.
TEST(SimulatedGpus, AHopperLikeHierarchyIsRecovered) {
  sim_gpu g;
  g.base_cycles = 300;
  g.noise_cycles = 0.3; // an idle H100's medians: whole cycles, a few cycles' excursions
  g.levels = {{1, 16, 16ull << 20, 10, replacement::lru, false},
              {256, 8, 32ull << 20, 95, replacement::lru, true},
              {512, 8, 64ull << 20, 400, replacement::lru, true}};
  const auto h = analysis::analyze_tlb(simulate(g, plan_for(sim_mode::full, k_max), 1));
  for (const auto &L : h.levels)
    std::printf("found %s\n", analysis::level_line("L", L).c_str());
  const auto s = score(g, h, plan_for(sim_mode::full, k_max));
  ASSERT_EQ(s.levels.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_TRUE(s.levels[k].found) << "L" << k + 1;
    EXPECT_TRUE(s.levels[k].exact_entries && s.levels[k].exact_coverage) << "L" << k + 1;
  }
  EXPECT_TRUE(s.levels[1].exact_ways_sets && s.levels[2].exact_ways_sets);
  EXPECT_EQ(s.false_levels, 0);
}

TEST(SimulatedGpus, TheFamilysRecoveryAndFalseLevelRates) {
  const char *env = std::getenv("GPUPROBE_SIM_GPUS");
  const int n = env ? std::atoi(env) : 120;
  const auto t0 = std::chrono::steady_clock::now();
  std::printf("| mode | GPUs | levels in reach | found | exact entries | exact ways x sets | exact "
              "coverage (of the determinable) | false levels / GPU | false levels / null sweep | "
              "found >= 95 %% from "
              "penalty/noise |\n|---|---|---|---|---|---|---|---|---|---|\n");
  const auto full = run_family(sim_mode::full, n, n / 5, 45, env != nullptr);
  print("full", full);
  const auto quick = run_family(sim_mode::quick, n, n / 5, 46, env != nullptr);
  print("quick", quick);
  std::printf("(%d GPUs and %d null GPUs a mode, %.0f s)\n", n, n / 5,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  EXPECT_GT(full.observable, n / 2);
  // The stated rates (docs/analyze-tlb.md, 1,000 GPUs a mode) hold on this seeded sample: no
  // level on a sweep with none, and recovery not below what this analyzer measured (a change
  // that finds fewer levels fails here; one that finds more raises the floor with the docs).
  EXPECT_LE(double(full.null_false) / full.nulls, 0.05);
  EXPECT_LE(double(quick.null_false) / quick.nulls, 0.05);
  EXPECT_GE(pct(full.found, full.observable), 38.0);
  EXPECT_GE(pct(quick.found, quick.observable), 45.0);
}

// The simulated sweep in both file formats the analyzer reads: gpuprobe's raw result, through
// `gpuprobe analyze tlb` as a user would run it, gives the hierarchy the in-memory analysis
// gives; the 2017 tool's CSV holds every point, and its analysis finds the same levels.
TEST(SimulatedGpus, TheSweepWritesAsARawResultAndAs2017Csv) {
  sim_gpu g;
  g.noise_cycles = 0.3;
  g.levels = {{1, 16, 16ull << 20, 10, replacement::lru, false},
              {256, 8, 32ull << 20, 95, replacement::lru, true},
              {512, 8, 64ull << 20, 400, replacement::lru, true}};
  const auto plan = plan_for(sim_mode::quick, k_max);
  const auto points = simulate_points(g, plan, 3);
  const auto in_memory = analysis::analyze_tlb(simulate(g, plan, 3));
  const std::string raw = test::temp_path("sim_tlb.json"), prof = test::temp_path("sim_prof.json");
  write_json_atomic(raw, raw_result(g, plan, points));
  std::filesystem::remove(prof);
  const auto r = test::run_gpuprobe_argv({"analyze", "tlb", "--input", raw, "--out", prof});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto from_file = model::read_profile(prof).tlb;
  ASSERT_EQ(from_file.levels.size(), in_memory.levels.size());
  for (std::size_t k = 0; k < from_file.levels.size(); ++k) {
    EXPECT_EQ(from_file.levels[k].entries, in_memory.levels[k].entries) << "L" << k + 1;
    EXPECT_EQ(from_file.levels[k].page_bytes, in_memory.levels[k].page_bytes) << "L" << k + 1;
  }
  analysis::tlb_dataset csv;
  analysis::parse_cuda_gpu_tlb_csv(csv_2017(g, points), "sim.csv", csv);
  std::size_t n = 0;
  for (const auto &c : csv.curves)
    n += c.footprint_bytes.size();
  EXPECT_EQ(n, points.size());
  const auto h = analysis::analyze_tlb(csv);
  const auto s = score(g, h, plan);
  for (std::size_t k = 0; k < 3; ++k)
    EXPECT_TRUE(s.levels[k].found) << "the 2017 format, L" << k + 1;
}
