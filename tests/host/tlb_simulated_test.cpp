// The TLB analyzer on simulated GPUs (tests/common/tlb_simulate.hpp): a seeded family of
// random hierarchies and null GPUs, swept as characterize plans the tlb stage (full and quick),
// analyzed, and scored: the share of levels recovered with exact entries, ways and sets and
// coverage, the false levels per null sweep, and the smallest penalty/noise found 95 % of the
// time. CI runs a seeded few hundred; GPUPROBE_SIM_GPUS=1000 (scripts/simulated_family.sh) runs
// the table docs/analyze-tlb.md quotes.
#include "common/json_io.hpp"
#include "common/linear.hpp"
#include "common/stats.hpp"
#include "common/steps.hpp"
#include "common/units.hpp"
#include "probes/tlb/levels.hpp"
#include "tests/common/tlb_simulate.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

using namespace gpuprobe;
using namespace gpuprobe::probes::tlb::sim;

namespace {

constexpr std::uint64_t k_max = 512ull << 30; // the alias range of an H100

using test::detectors_only;

// The noise of every committed real sweep, read once.
const noise_pool &real_noise() {
  static const noise_pool pool = [] {
    std::vector<probes::tlb_dataset> sweeps;
    for (auto &s : test::committed_real_sweeps())
      sweeps.push_back(std::move(s.data));
    return noise_from(sweeps);
  }();
  return pool;
}

struct tally {
  int gpus = 0, nulls = 0, null_false = 0, false_levels = 0;
  int observable = 0, found = 0, entries = 0, ways_sets = 0, coverage = 0, determinable = 0;
  std::map<int, std::pair<int, int>> by_ratio; // log2(penalty / noise) -> found, observable
  std::map<std::string, int> missed_by_cause;  // the first cause that fits each missed level
  // What can be recovered (simulate.hpp's oracle): found, and of the found their entries exact,
  // their penalty within 10 %; set-associative ones with ways x sets exact.
  int recoverable = 0, rec_found = 0, rec_entries = 0, rec_penalty = 0, rec_sa = 0,
      rec_sa_ways_sets = 0, rec_by_intervals = 0;
  int reported = 0;                           // levels reported on GPUs that have levels
  int views = 0; // false levels that are a simulated level seen through fewer of its sets
  std::map<int, std::pair<int, int>> by_conf; // confidence bin -> right, reported
};

// A reported confidence's bin: 0 [0, 0.5), 1 [0.5, 0.9), 2 [0.9, 0.99), 3 [0.99, 1].
int confidence_bin(double c) { return c >= 0.99 ? 3 : c >= 0.9 ? 2 : c >= 0.5 ? 1 : 0; }

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

tally run_family(sim_mode mode, int gpus, int nulls, std::uint64_t seed, bool verbose,
                 bool model = false) {
  std::mt19937_64 rng(seed);
  const auto plan = plan_for(mode, k_max);
  tally t;
  for (int i = 0; i < gpus + nulls; ++i) {
    const bool null_gpu = i >= gpus;
    const sim_gpu g = random_gpu(rng, null_gpu);
    if (const char *only = std::getenv("GPUPROBE_SIM_ONLY"); only && std::atoi(only) != i)
      continue;
    const auto data = simulate(g, plan, seed * 7919 + std::uint64_t(i), &real_noise());
    probes::tlb_analysis_options o;
    o.synthesize = model;
    const auto h = probes::analyze_tlb(data, o);
    const auto s = score(g, h, plan);
    if (null_gpu) {
      ++t.nulls;
      t.null_false += s.false_levels;
      continue;
    }
    ++t.gpus;
    t.false_levels += s.false_levels;
    t.reported += int(s.reported.size());
    for (const auto &r : s.reported) {
      t.views += r.view;
      auto &b = t.by_conf[confidence_bin(r.confidence)];
      b.first += r.right;
      ++b.second;
    }
    for (const auto &L : s.levels) {
      if (!L.recoverable)
        continue;
      ++t.recoverable;
      t.rec_found += L.found;
      t.rec_by_intervals += L.found && L.by_intervals;
      t.rec_entries += L.found && L.exact_entries;
      t.rec_penalty += L.found && L.penalty_within_10;
      t.rec_sa += L.set_associative;
      t.rec_sa_ways_sets += L.set_associative && L.exact_ways_sets;
    }
    for (std::size_t k = 0; k < s.levels.size(); ++k) {
      const auto &L = s.levels[k];
      if (const char *show = std::getenv("GPUPROBE_SIM_SHOW");
          show && std::string(show) == "structure" && L.recoverable && L.found &&
          (!L.exact_ways_sets || !L.penalty_within_10)) {
        std::printf("  L%zu of %s (ways x sets %s, penalty %s) -> found:", k + 1,
                    g.describe().c_str(), L.exact_ways_sets ? "right" : "wrong",
                    L.penalty_within_10 ? "right" : "wrong");
        for (const auto &F : h.levels)
          std::printf(" %s [%s];", probes::level_line("", F).c_str(),
                      F.detail.value("model", nlohmann::json::object()).value("words", "").c_str());
        std::printf("\n");
      }
      if (const char *show = std::getenv("GPUPROBE_SIM_SHOW");
          show && std::string(show) == "recoverable" && L.recoverable && !L.found) {
        std::printf("  missed L%zu of %s -> found:", k + 1, g.describe().c_str());
        for (const auto &F : h.levels)
          std::printf(" %s;", probes::level_line("", F).c_str());
        std::printf("\n");
      }
      if (!L.observable)
        continue;
      if (!L.found) {
        const std::string why = likely_cause(g, k, L);
        ++t.missed_by_cause[why];
        if (const char *show = std::getenv("GPUPROBE_SIM_SHOW"); show && why.find(show) == 0) {
          std::printf("  %s: L%zu of %s -> found:", why.c_str(), k + 1, g.describe().c_str());
          for (const auto &F : h.levels)
            std::printf(" %s;", probes::level_line("", F).c_str());
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
    if (const char *show = std::getenv("GPUPROBE_SIM_SHOW");
        show && std::string(show) == "false" && s.false_levels) {
      std::printf("  false level(s): %s -> found:", g.describe().c_str());
      for (std::size_t j = 0; j < h.levels.size(); ++j)
        std::printf(" %s%s;", s.reported[j].right ? "" : s.reported[j].view ? "VIEW " : "FALSE ",
                    probes::level_line("", h.levels[j]).c_str());
      std::printf("\n");
    }
    if (const char *show = std::getenv("GPUPROBE_SIM_SHOW");
        model && show && std::string(show) == "loss" &&
        (s.false_levels || std::any_of(s.levels.begin(), s.levels.end(), [](const level_score &L) {
           return L.recoverable && !L.found;
         }))) {
      const double cost = o.synthesis.level_cost;
      const auto truth = probes::fit_fixed(data, g.levels, o.synthesis);
      double loss = 0;
      for (const auto &n : h.detail.value("notes", nlohmann::json::array()))
        if (const auto at = n.get<std::string>().find("robust loss "); at != std::string::npos)
          loss = std::atof(n.get<std::string>().c_str() + at + 12);
      std::printf("  [%d] LOSS truth %.0f + %zu levels = %.0f; model %.0f + %zu levels = %.0f: %s\n",
                  i, truth.loss, g.levels.size(), truth.loss + cost * double(g.levels.size()), loss,
                  h.levels.size(), loss + cost * double(h.levels.size()), g.describe().c_str());
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

// The issue-77 table of a mode: sensitivity on recoverable levels, the share of reported levels
// that are false, nulls, penalties, ways x sets, and the calibration of the stated confidence.
void print_recoverable(const char *mode, const tally &t) {
  std::printf("| %s | %d | %.1f %% (%d inside stated intervals) | %.1f %% | %.1f %% | %.1f %% of %d "
              "| %.1f %% (%d of %d; %d views) | %d in %d |\n",
              mode, t.recoverable, pct(t.rec_found, t.recoverable), t.rec_by_intervals,
              pct(t.rec_entries, t.recoverable), pct(t.rec_penalty, t.rec_found),
              pct(t.rec_sa_ways_sets, t.rec_sa), t.rec_sa, pct(t.false_levels, t.reported),
              t.false_levels, t.reported, t.views, t.null_false, t.nulls);
  const char *bins[] = {"< 0.5", "0.5-0.9", "0.9-0.99", ">= 0.99"};
  for (const auto &[b, v] : t.by_conf)
    std::printf("|   %s confidence %s | | %d reported | %.1f %% right | | | | |\n", mode, bins[b],
                v.second, pct(v.first, v.second));
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
  const auto h = probes::analyze_tlb(simulate(g, plan_for(sim_mode::full, k_max), 1));
  for (const auto &L : h.levels)
    std::printf("found %s\n", probes::level_line("L", L).c_str());
  const auto s = score(g, h, plan_for(sim_mode::full, k_max));
  ASSERT_EQ(s.levels.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_TRUE(s.levels[k].found) << "L" << k + 1;
    EXPECT_TRUE(s.levels[k].exact_entries && s.levels[k].exact_coverage) << "L" << k + 1;
  }
  EXPECT_TRUE(s.levels[1].exact_ways_sets && s.levels[2].exact_ways_sets);
  EXPECT_EQ(s.false_levels, 0);
}

// The model weighs each curve by its noise. A ramp's run of rises is not noise: on a quick sweep
// a +6-cycle level beside a +422-cycle ramp (noise 1.03) was missed when the detectors' noise
// (which counts a ramp's rises as jitter) weighed its curves at a ninth; the MAD of the
// differences finds it on every seed.
TEST(SimulatedGpus, ARampsRisesAreNotTheModelsNoise) {
  sim_gpu g;
  g.base_cycles = 300;
  g.noise_cycles = 1.03;
  g.levels = {{1, 64, 16ull << 10, 6, replacement::lru, false},
              {512, 2, 32ull << 10, 422, replacement::lru, true},
              {2048, 4, 32ull << 10, 8, replacement::lru, true}};
  const auto plan = plan_for(sim_mode::quick, k_max);
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const auto data = simulate(g, plan, seed, &real_noise());
    const auto s = score(g, probes::analyze_tlb(data), plan);
    for (std::size_t k = 0; k < g.levels.size(); ++k)
      EXPECT_TRUE(!s.levels[k].recoverable || s.levels[k].found) << "seed " << seed << ", L" << k + 1;
    EXPECT_EQ(s.false_levels, 0) << "seed " << seed;
  }
  // The curve's own noise, over 200 seeded curves of 40 points, each with a ramp of 6 rises of 40
  // over noise 1: the ramp inflates the detectors' jitter, not the MAD of the differences.
  std::mt19937_64 rng(7);
  std::normal_distribution<double> n01(0, 1);
  double mad = 0, jitter = 0;
  for (int c = 0; c < 200; ++c) {
    std::vector<double> y;
    for (int i = 0; i < 40; ++i)
      y.push_back(300 + 40 * std::clamp(i - 20, 0, 6) + n01(rng));
    mad += differences_sigma(y) / 200;
    jitter += curve_noise(y, 0.3) / 200;
  }
  EXPECT_NEAR(mad, 1.0, 0.3);
  EXPECT_GT(jitter, 5.0);
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
  std::printf("\n| mode | recoverable levels | found | entries exact | penalty within 10 %% (of the "
              "found) | ways x sets exact (set-associative) | reported levels false | false "
              "levels in null sweeps |\n|---|---|---|---|---|---|---|---|\n");
  print_recoverable("full, detectors alone", full);
  print_recoverable("quick, detectors alone", quick);
  if (env) { // the same GPUs analysed as analyze tlb does by default: the whole-sweep model
    const auto model_full = run_family(sim_mode::full, n, n / 5, 45, false, true);
    const auto model_quick = run_family(sim_mode::quick, n, n / 5, 46, false, true);
    print_recoverable("full, the model (default)", model_full);
    print_recoverable("quick, the model (default)", model_quick);
  }
  std::printf("(%d GPUs and %d null GPUs a mode, %.0f s)\n", n, n / 5,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  EXPECT_GT(full.observable, n / 2);
  EXPECT_EQ(full.null_false, 0);
  EXPECT_EQ(quick.null_false, 0);
  // The stated rates hold on the two seeded samples, with floors a few points under what this
  // analyzer measures on each: a change that finds fewer levels or invents more fails here; one
  // that does better raises the floors. 120 GPUs a mode (CI): on recoverable levels 68.9 % full
  // and 74.2 % quick found; of the reported levels 10.9 % and 17.3 % false. 1,000 GPUs a mode
  // (scripts/simulated_family.sh): 66.3 % and 71.3 % found; 15.6 % and 19.7 % false; of the
  // observable levels 56.7 % and 48.6 % found. Other sizes print their tables only.
  struct floors {
    double rec_full, rec_quick, false_full, false_quick, found_full, found_quick;
  };
  const std::map<int, floors> measured = {{120, {66.0, 71.0, 13.0, 20.0, 56.0, 50.0}},
                                          {1000, {64.0, 69.0, 17.5, 21.5, 54.5, 46.5}}};
  if (const auto it = measured.find(n); it != measured.end()) {
    const floors &f = it->second;
    EXPECT_GE(pct(full.rec_found, full.recoverable), f.rec_full);
    EXPECT_GE(pct(quick.rec_found, quick.recoverable), f.rec_quick);
    EXPECT_LE(pct(full.false_levels, full.reported), f.false_full);
    EXPECT_LE(pct(quick.false_levels, quick.reported), f.false_quick);
    EXPECT_GE(pct(full.found, full.observable), f.found_full);
    EXPECT_GE(pct(quick.found, quick.observable), f.found_quick);
  }
}

// The whole-sweep model on the family alone, one mode (GPUPROBE_SIM_MODE=quick, else full):
// its issue-77 table, for looking into what it misses or invents (GPUPROBE_SIM_SHOW=false,
// recoverable, structure or a missed cause prints each GPU; =loss the true hierarchy's loss against
// the model's, with the GPU's index; GPUPROBE_SIM_ONLY=index analyses that GPU alone). Run with
// --gtest_also_run_disabled_tests.
TEST(SimulatedGpus, DISABLED_TheModelOnTheFamily) {
  const char *env = std::getenv("GPUPROBE_SIM_GPUS");
  const char *m = std::getenv("GPUPROBE_SIM_MODE");
  const bool quick = m && std::string(m) == "quick";
  const char *nulls = std::getenv("GPUPROBE_SIM_NULLS");
  const int n = env ? std::atoi(env) : 100;
  const auto t = run_family(quick ? sim_mode::quick : sim_mode::full, n,
                            nulls ? std::atoi(nulls) : n / 5, quick ? 46 : 45, false, true);
  print_recoverable(quick ? "quick, the model (default)" : "full, the model (default)", t);
}

// The simulated sweep in both file formats the analyzer reads: gpuprobe's raw result, through
// `gpuprobe analyze tlb` as a user would run it, gives the hierarchy the in-memory analysis
// gives; the 2017 tool's CSV holds every point, and its analysis finds the same levels.
// The whole-sweep model (analyze tlb --model) on a seeded sample of full sweeps: against the rise
// detectors alone on the same GPUs it finds more of the recoverable levels, reads their entries
// and ways x sets exactly more often, and adds no level to a null sweep (floors a few points
// under what it measures here; scripts/simulated_family.sh prints both at 1,000 GPUs a mode).
TEST(SimulatedGpus, TheWholeSweepModelFindsMoreLevelsAndStructureAndNoLevelInNoise) {
  const auto alone = run_family(sim_mode::full, 16, 8, 47, false, false);
  const auto model = run_family(sim_mode::full, 16, 8, 47, false, true);
  print_recoverable("full, detectors alone", alone);
  print_recoverable("full, the model (default)", model);
  EXPECT_EQ(model.null_false, 0);
  // Floors a few points under this seed's (scripts/simulated_family.sh: 1,000 GPUs a mode).
  EXPECT_GE(pct(model.rec_found, model.recoverable), 90.0);                          // 100
  EXPECT_GE(pct(model.rec_sa_ways_sets, model.rec_sa), 85.0);                        // 100
  EXPECT_LE(pct(model.false_levels, model.reported), 3.0);                            // 0
  EXPECT_GE(pct(model.rec_found, model.recoverable),
            pct(alone.rec_found, alone.recoverable) + 15);
  EXPECT_GE(pct(model.rec_entries, model.recoverable),
            pct(alone.rec_entries, alone.recoverable) + 35);
  EXPECT_GE(pct(model.rec_sa_ways_sets, model.rec_sa),
            pct(alone.rec_sa_ways_sets, alone.rec_sa) + 40);
}

// Held-out sweeps in the 2017 tool's format (the K80/P100 files' layout): each level swept by a
// file of its own, footprints on a linear grid of 60 rows from half its boundary to 1.5 x where
// every hop misses, at half, one and two times its coverage; means with noise drawn from the
// committed real means. On such a grid a ramp rises little per row. Scored per level: found,
// penalty within 10 %, ways x sets exact where set-associative; and the reported levels false.
struct layout_2017_tally {
  int levels = 0, found = 0, penalty = 0, sa = 0, sa_found = 0, ways_sets = 0, reported = 0,
      false_levels = 0;
};
layout_2017_tally run_2017_family(int gpus, std::uint64_t seed, bool model) {
  std::mt19937_64 rng(seed);
  const auto &pool = real_noise().mean_sigmas;
  layout_2017_tally t;
  for (int i = 0; i < gpus; ++i) {
    const sim_gpu g = random_gpu(rng);
    probes::tlb_dataset d;
    probes::sweep_plan plan;
    plan.min_bytes = ~0ull;
    plan.max_bytes = 0;
    for (std::size_t k = 0; k < g.levels.size(); ++k) {
      const auto &L = g.levels[k];
      std::vector<probes::sweep_point> pts;
      for (const std::uint64_t st : {L.coverage_bytes / 2, L.coverage_bytes, 2 * L.coverage_bytes}) {
        if (st < 4096)
          continue;
        const double per = double(std::max(st, L.coverage_bytes));
        const double b0 = 0.5 * double(L.entries()) * per,
                     b1 = 1.5 * double(L.sets * (L.ways + 1)) * per;
        for (int r = 0; r < 60; ++r) {
          probes::sweep_point p;
          p.stride_bytes = st;
          p.hops = std::max<std::uint64_t>(1, std::uint64_t((b0 + (b1 - b0) * r / 59) / double(st)));
          p.footprint_bytes = p.hops * st;
          if (!pts.empty() && pts.back().stride_bytes == st &&
              pts.back().footprint_bytes >= p.footprint_bytes)
            continue;
          p.mean = latency(g, st, p.hops) + g.noise_cycles * pool[rng() % pool.size()];
          p.median = p.mean;
          pts.push_back(p);
          plan.min_bytes = std::min(plan.min_bytes, p.footprint_bytes);
          plan.max_bytes = std::max(plan.max_bytes, p.footprint_bytes);
        }
        if (std::find(plan.strides.begin(), plan.strides.end(), st) == plan.strides.end())
          plan.strides.push_back(st);
      }
      probes::parse_cuda_gpu_tlb_csv(csv_2017(g, pts), "held-out-L" + std::to_string(k + 1), d);
    }
    probes::tlb_analysis_options o;
    o.synthesize = model;
    const auto h = probes::analyze_tlb(d, o);
    const auto s = score(g, h, plan);
    for (std::size_t k = 0; k < g.levels.size(); ++k) {
      const auto &L = s.levels[k];
      ++t.levels;
      t.found += L.found;
      t.penalty += L.found && L.penalty_within_10;
      t.sa += L.set_associative;
      t.sa_found += L.set_associative && L.found;
      t.ways_sets += L.set_associative && L.exact_ways_sets;
    }
    t.reported += int(s.reported.size());
    t.false_levels += s.false_levels;
  }
  return t;
}

void print(const char *what, const layout_2017_tally &t) {
  std::printf("| %s | %d | %.1f %% | %.1f %% of the found | %d of %d (%d found) | %.1f %% (%d of "
              "%d) |\n",
              what, t.levels, pct(t.found, t.levels), pct(t.penalty, t.found), t.ways_sets, t.sa,
              t.sa_found, pct(t.false_levels, t.reported), t.false_levels, t.reported);
}

// The held-out layout, analysed by the detectors alone and by the whole-sweep model: the model
// reads set-associative levels' penalties and ways x sets the detectors cannot on a linear grid.
TEST(SimulatedGpus, TheHeldOut2017LayoutIsReadByTheModel) {
  const char *env = std::getenv("GPUPROBE_SIM_GPUS");
  const int n = env ? std::max(1, std::atoi(env) / 10) : 12;
  std::printf("| 2017 layout | levels | found | penalty within 10 %% | ways x sets exact "
              "(set-associative) | reported levels false |\n|---|---|---|---|---|---|\n");
  const auto alone = run_2017_family(n, 2017, false);
  const auto model = run_2017_family(n, 2017, true);
  print("detectors", alone);
  print("--model", model);
  // Floors under what this sample measures (12 GPUs: penalties +11.4 points, ways x sets 25 of
  // 29 against 2); at 60 GPUs (GPUPROBE_SIM_GPUS=600) penalties 80.1 -> 97.2 % of the found,
  // ways x sets 11 -> 107 of 121, found 88.3 -> 92.9 %, false 0.7 % both.
  EXPECT_GE(pct(model.penalty, model.found), pct(alone.penalty, alone.found) + 5);
  EXPECT_GE(model.ways_sets, alone.ways_sets + 15);
  EXPECT_LE(model.false_levels, alone.false_levels + 1);
}

// Each level --model reports, with what its confidence is made of and whether it was right.
struct calibration_sample {
  double gain = 0, penalty_over_noise = 0, confidence = 0;
  bool added = false, right = false;
};
std::vector<calibration_sample> model_samples(sim_mode mode, int gpus, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto plan = plan_for(mode, k_max);
  std::vector<calibration_sample> out;
  for (int i = 0; i < gpus; ++i) {
    const sim_gpu g = random_gpu(rng);
    const auto data = simulate(g, plan, seed * 7919 + std::uint64_t(i), &real_noise());
    probes::tlb_analysis_options o;
    o.synthesize = true;
    const auto h = probes::analyze_tlb(data, o);
    const auto s = score(g, h, plan);
    for (std::size_t j = 0; j < h.levels.size(); ++j) {
      const auto &m = h.levels[j].detail.at("model");
      out.push_back({m.at("gain").get<double>(),
                     m.at("penalty_cycles").get<double>() /
                         std::max(1e-9, m.at("noise_cycles").get<double>()),
                     h.levels[j].confidence.value_or(0), m.at("added").get<bool>(),
                     s.reported[j].right});
    }
  }
  return out;
}

// The logistic model_confidence uses, fitted (Newton's method) on seeds 145 and 146, none of the
// family table's (45, 46) nor the check's (61, 62): run with --gtest_also_run_disabled_tests and
// GPUPROBE_SIM_GPUS (200 gave the coefficients in probes/tlb/synthesis.cpp).
TEST(SimulatedGpus, DISABLED_FitTheModelsCalibration) {
  const char *env = std::getenv("GPUPROBE_SIM_GPUS");
  const int n = env ? std::atoi(env) : 60;
  auto v = model_samples(sim_mode::full, n, 145);
  const auto q = model_samples(sim_mode::quick, n, 146);
  v.insert(v.end(), q.begin(), q.end());
  double b[4] = {0, 0, 0, 0};
  for (int it = 0; it < 30; ++it) {
    double H[16] = {}, gr[4] = {};
    for (const auto &e : v) {
      const double x[4] = {1, std::log10(std::max(e.gain, 1.0)),
                           std::log10(std::max(e.penalty_over_noise, 0.1)), e.added ? 1.0 : 0.0};
      double z = 0;
      for (int k = 0; k < 4; ++k)
        z += b[k] * x[k];
      const double p = 1 / (1 + std::exp(-z)), w = p * (1 - p);
      for (int r = 0; r < 4; ++r) {
        gr[r] += (double(e.right) - p) * x[r];
        for (int c = 0; c < 4; ++c)
          H[r * 4 + c] += w * x[r] * x[c];
      }
    }
    for (int r = 0; r < 4; ++r)
      H[r * 5] += 1e-6;
    std::vector<double> d;
    ASSERT_TRUE(solve_linear(std::vector<double>(H, H + 16), std::vector<double>(gr, gr + 4), 4, d));
    for (int k = 0; k < 4; ++k)
      b[k] += d[k];
  }
  std::printf("%zu levels: c0 = %.4f, c_gain = %.4f, c_penalty = %.4f, c_added = %.4f\n", v.size(),
              b[0], b[1], b[2], b[3]);
}

// --model's confidence means what it says on seeds it was not fitted on: in each bin of stated
// confidence holding 15 levels or more, and over all levels, the share right is the mean stated
// confidence within 2.5 binomial standard errors and 5 points (the logistic's own misfit).
TEST(SimulatedGpus, TheModelsConfidenceIsCalibratedOnOtherSeeds) {
  const char *env = std::getenv("GPUPROBE_SIM_GPUS");
  const int n_gpus = env ? std::max(1, std::atoi(env) / 10) : 16;
  auto v = model_samples(sim_mode::full, n_gpus, 61);
  const auto q = model_samples(sim_mode::quick, n_gpus, 62);
  v.insert(v.end(), q.begin(), q.end());
  ASSERT_GE(v.size(), 60u);
  const double edges[] = {0, 0.5, 0.8, 0.9, 1.01};
  double all_stated = 0, all_right = 0;
  for (int b = 0; b < 4; ++b) {
    double stated = 0, right = 0;
    int n = 0;
    for (const auto &e : v)
      if (e.confidence >= edges[b] && e.confidence < edges[b + 1]) {
        stated += e.confidence;
        right += e.right;
        ++n;
      }
    all_stated += stated;
    all_right += right;
    std::printf("| confidence %.2f-%.2f | %d levels | stated %.1f %% | right %.1f %% |\n",
                edges[b], std::min(1.0, edges[b + 1]), n, n ? 100 * stated / n : 0,
                n ? 100 * right / n : 0);
    const auto within = [](double stated_sum, double count) {
      const double p = stated_sum / count;
      return 100 * (2.5 * std::sqrt(p * (1 - p) / count) + 0.05);
    };
    if (n >= 15) {
      EXPECT_NEAR(100 * right / n, 100 * stated / n, within(stated, n)) << "bin " << b;
    }
    if (b == 3) {
      EXPECT_NEAR(100 * all_right / double(v.size()), 100 * all_stated / double(v.size()),
                  within(all_stated, double(v.size())));
    }
  }
}

TEST(SimulatedGpus, TheSweepWritesAsARawResultAndAs2017Csv) {
  sim_gpu g;
  g.noise_cycles = 0.3;
  g.levels = {{1, 16, 16ull << 20, 10, replacement::lru, false},
              {256, 8, 32ull << 20, 95, replacement::lru, true},
              {512, 8, 64ull << 20, 400, replacement::lru, true}};
  const auto plan = plan_for(sim_mode::quick, k_max);
  const auto points = simulate_points(g, plan, 3);
  const auto in_memory = probes::analyze_tlb(simulate(g, plan, 3));
  const std::string raw = test::temp_path("sim_tlb.json"), prof = test::temp_path("sim_prof.json");
  write_json_atomic(raw, raw_result(g, plan, points));
  std::filesystem::remove(prof);
  const auto r = test::run_gpuprobe_argv({"analyze", "tlb", "--input", raw, "--out", prof});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto from_file = model::read_profile(prof).tlb;
  ASSERT_EQ(from_file.levels.size(), in_memory.levels.size());
  for (std::size_t k = 0; k < from_file.levels.size(); ++k) {
    EXPECT_EQ(from_file.levels[k].entries, in_memory.levels[k].entries) << "L" << k + 1;
    EXPECT_EQ(from_file.levels[k].coverage_bytes, in_memory.levels[k].coverage_bytes)
        << "L" << k + 1;
  }
  probes::tlb_dataset csv;
  probes::parse_cuda_gpu_tlb_csv(csv_2017(g, points), "sim.csv", csv);
  std::size_t n = 0;
  for (const auto &c : csv.curves)
    n += c.footprint_bytes.size();
  EXPECT_EQ(n, points.size());
  const auto h = probes::analyze_tlb(csv);
  const auto s = score(g, h, plan);
  for (std::size_t k = 0; k < 3; ++k)
    EXPECT_TRUE(s.levels[k].found) << "the 2017 format, L" << k + 1;
}

// The hierarchy built in process is the one a later stage reads back from the file the analysis
// writes: on a seeded family of simulated GPUs (with and without the whole-sweep model, levels
// resolved and not, candidates, an SM recorded), written alike to the last byte.
TEST(SimulatedGpus, TheHierarchyBuiltInProcessIsTheOneReadBackFromItsFile) {
  std::mt19937_64 rng(79);
  const auto plan = plan_for(sim_mode::quick, k_max);
  int levels = 0, unresolved = 0, candidates = 0;
  for (int i = 0; i < 48; ++i) {
    const sim_gpu g = random_gpu(rng, i >= 40);
    const auto data = simulate(g, plan, 7900 + std::uint64_t(i), &real_noise());
    probes::tlb_analysis_options o;
    o.synthesize = i % 2 == 0;
    auto a = probes::find_tlb_levels(data, o);
    a.sm = i % 3 == 0 ? i : -1;
    EXPECT_EQ(model::to_json(probes::hierarchy_of(a)).dump(),
              model::to_json(model::tlb_hierarchy_from_json(probes::to_json(a))).dump())
        << g.describe();
    levels += int(a.levels.size());
    candidates += int(a.candidates.size());
    for (const auto &L : a.levels)
      unresolved += !L.structure.fit.resolved;
  }
  std::printf("  %d levels (%d not resolved), %d candidates\n", levels, unresolved, candidates);
  EXPECT_GT(levels, 40); // the family exercised what the builder types
  EXPECT_GT(unresolved, 0);
  EXPECT_GT(candidates, 0);
}

// The simulator's noise is drawn from the committed real sweeps: medians of integer cycles are
// mostly exact, means never are, and both have tails past a Gaussian's.
TEST(SimulatedGpus, NoiseIsDrawnFromTheCommittedRealSweeps) {
  const auto &p = real_noise();
  ASSERT_FALSE(p.empty());
  std::vector<double> med_abs, mean_abs;
  for (double r : p.median_sigmas)
    med_abs.push_back(std::fabs(r));
  for (double r : p.mean_sigmas)
    mean_abs.push_back(std::fabs(r));
  const auto exact = std::count(p.median_sigmas.begin(), p.median_sigmas.end(), 0.0);
  std::printf("%d real curves: %zu median residuals (%.0f %% exact; |r| 50/99/99.9 %%: %.2f %.2f "
              "%.2f sigma), %zu mean residuals (|r| 50/99/99.9 %%: %.2f %.2f %.2f sigma)\n",
              p.curves, p.median_sigmas.size(), 100.0 * double(exact) / double(med_abs.size()),
              quantile(med_abs, 0.5), quantile(med_abs, 0.99), quantile(med_abs, 0.999),
              p.mean_sigmas.size(), quantile(mean_abs, 0.5), quantile(mean_abs, 0.99),
              quantile(mean_abs, 0.999));
  EXPECT_GT(p.median_sigmas.size(), 1000u);
  EXPECT_GT(p.mean_sigmas.size(), 1000u);
  EXPECT_GT(quantile(mean_abs, 0.5), 0.0) << "a mean is never exact";
}

namespace {
// The null family in one format: per sweep, the largest z of any level or candidate the analyzer
// formed (0: none), and the sweeps that reported a level.
struct null_tally {
  std::vector<double> max_z;
  int with_level = 0;
};
null_tally null_family(int n, std::uint64_t seed, sim_mode mode, bool csv) {
  std::mt19937_64 rng(seed);
  const auto plan = plan_for(mode, k_max);
  null_tally t;
  for (int i = 0; i < n; ++i) {
    const sim_gpu g = random_gpu(rng, true);
    const auto points = simulate_points(g, plan, seed * 104729 + std::uint64_t(i), &real_noise());
    probes::tlb_dataset d;
    if (csv)
      probes::parse_cuda_gpu_tlb_csv(csv_2017(g, points), "null.csv", d);
    else
      probes::parse_gpuprobe_tlb_result(raw_result(g, plan, points), "null", d);
    const auto a = probes::find_tlb_levels(d, detectors_only());
    double z = 0;
    for (const auto *list : {&a.levels, &a.candidates})
      for (const auto &L : *list)
        if (L.existence.rfind("inconsistent", 0) != 0)
          z = std::max(z, L.z);
    t.max_z.push_back(z);
    t.with_level += !a.levels.empty();
  }
  return t;
}
} // namespace

// The level test's threshold (defaults::level_test_z) is set on null sweeps (no level) whose
// noise is drawn from the real sweeps: in each format the analyzer reads (full and quick raw
// results, the 2017 tool's CSV of means), at most 1 % of them may hold a rise whose z reaches it.
// The table prints the z that 1 % of null sweeps exceed (the calibration: docs/analyze-tlb.md);
// GPUPROBE_SIM_NULLS sets the sweeps a format (the script runs 1,000).
TEST(SimulatedGpus, TheLevelTestIsCalibratedOnNullSweepsOfRealNoise) {
  const char *env = std::getenv("GPUPROBE_SIM_NULLS");
  const int n = env ? std::atoi(env) : 150;
  struct fmt {
    const char *name;
    sim_mode mode;
    bool csv;
  };
  int sweeps = 0, with_level = 0;
  std::printf("| format | null sweeps | with any candidate | z 99 %% | z max | false levels "
              "at z >= %.1f |\n|---|---|---|---|---|---|\n",
              defaults::level_test_z);
  for (const fmt f :
       {fmt{"full raw", sim_mode::full, false}, fmt{"quick raw", sim_mode::quick, false},
        fmt{"quick 2017 CSV", sim_mode::quick, true}}) {
    const auto t = null_family(n, 4500 + std::uint64_t(sweeps), f.mode, f.csv);
    const auto any = std::count_if(t.max_z.begin(), t.max_z.end(), [](double z) { return z > 0; });
    std::printf("| %s | %d | %ld | %.1f | %.1f | %d |\n", f.name, n, long(any),
                quantile(t.max_z, 0.99), quantile(t.max_z, 1.0), t.with_level);
    sweeps += n;
    with_level += t.with_level;
  }
  // At most 1 % by the calibration; on this seeded sample, its 95 % upper bound.
  EXPECT_LE(double(with_level), 0.01 * sweeps + 2.0 * std::sqrt(0.01 * sweeps) + 1)
      << with_level << " of " << sweeps << " null sweeps reported a level";
}

// Real null data: every committed real sweep cut, stride by stride, well before its first rise
// (at 0.7 x the smallest footprint where the whole sweep's analysis puts any level, candidate or
// explained rise for that stride, or where any rise of 3 sigma starts): real noise with no level
// in it. The level test reports no level on any.
TEST(SimulatedGpus, TheLevelTestFindsNoLevelInTheRealSweepsBeforeTheirFirstRise) {
  step_options weak;
  weak.snr_min = 3;
  int sweeps = 0, points = 0;
  for (const auto &s : test::committed_real_sweeps()) {
    const auto whole = probes::find_tlb_levels(s.data, detectors_only());
    probes::tlb_dataset cut = s.data;
    cut.curves.clear();
    for (auto c : s.data.curves) {
      double limit = c.footprint_bytes.back() * 2;
      for (const auto *list :
           {&whole.levels, &whole.candidates, &whole.cache_effects, &whole.set_conflicts})
        for (const auto &L : *list)
          limit = std::min(limit, L.entries * std::max(c.stride_bytes, L.coverage_bytes));
      for (const auto &t : whole.unexplained)
        if (t.stride_bytes == c.stride_bytes)
          limit = std::min(limit, t.s.x_lo);
      for (const auto &r : detect_steps(c.footprint_bytes, c.cycles, weak))
        limit = std::min(limit, r.x_lo);
      std::size_t end = 0;
      while (end < c.footprint_bytes.size() && c.footprint_bytes[end] < 0.7 * limit)
        ++end;
      if (end < 12)
        continue;
      c.footprint_bytes.resize(end);
      c.cycles.resize(end);
      if (!c.mean_cycles.empty())
        c.mean_cycles.resize(end);
      points += int(end);
      cut.curves.push_back(c);
    }
    if (cut.curves.size() < 2)
      continue;
    ++sweeps;
    const auto a = probes::find_tlb_levels(cut, detectors_only());
    double z = 0;
    for (const auto &L : a.candidates)
      z = std::max(z, L.z);
    std::printf("%s: %zu curves, %zu level(s), largest candidate z %.1f\n", s.name.c_str(),
                cut.curves.size(), a.levels.size(), z);
    EXPECT_TRUE(a.levels.empty()) << s.name << ": " << probes::to_json(a).dump().substr(0, 400);
  }
  std::printf("%d real sweeps, %d points of real null data\n", sweeps, points);
  EXPECT_GE(sweeps, 8);
}

namespace {
// The 2017 tool's mean curves of one level at strides 256 KiB to `top`, 12 points an octave,
// noise `sigma`: with top = the page, one stride shows the full rise and the one below half.
probes::tlb_dataset held_out(double penalty, double page, double top, double sigma, unsigned seed) {
  const std::vector<test::sim_level> truth = {{16, page, penalty}};
  std::vector<double> strides;
  for (double s = 256 * 1024.0; s <= top; s *= 2)
    strides.push_back(s);
  return test::sim_dataset(truth, 300, strides, 256 * 1024.0, 4096 * page, 12, sigma, seed);
}
} // namespace

// The held-out shapes as seeded families (the level and its null, the same sweep with no
// rise). A +13-cycle level over ~1.2 cycles of noise at two strides (11 x the noise: the old bar
// of 11.7 x dropped it as "small") is found with its entries and page on at least 90 % of seeds.
// A +7-cycle level over 2 cycles that only one stride shows at full height (3.5 sigma a point)
// and the stride below at half is a stated limit (docs/analyze-tlb.md): the rate is printed, not
// claimed. Neither null ever gives a level.
TEST(SimulatedGpus, HeldOutShapesAreLevelsAndTheirNullsAreNot) {
  struct shape {
    const char *name;
    double penalty, page, top, sigma;
    bool claimed;
  };
  for (const shape sh :
       {shape{"+7 over 2, full at one stride, half below", 7, 1 << 20, 1 << 20, 2, false},
        shape{"+13 over 1.2 at two strides", 13, 1 << 20, 2 << 20, 1.2, true}}) {
    int found = 0, null_levels = 0;
    const int seeds = 40;
    for (unsigned seed = 1; seed <= unsigned(seeds); ++seed) {
      const auto a = probes::find_tlb_levels(held_out(sh.penalty, sh.page, sh.top, sh.sigma, seed));
      found += a.levels.size() == 1 && std::fabs(a.levels[0].entries - 16) <= 1.6 &&
               (a.levels[0].coverage_bytes == sh.page ||
                (a.levels[0].bound == probes::coverage_bound::upper &&
                 a.levels[0].coverage_bytes > sh.page));
      null_levels +=
          int(probes::find_tlb_levels(held_out(0, sh.page, sh.top, sh.sigma, seed)).levels.size());
    }
    std::printf("%s: found on %d of %d seeds; %d level(s) on their nulls\n", sh.name, found, seeds,
                null_levels);
    if (sh.claimed) {
      EXPECT_GE(found, seeds * 9 / 10) << sh.name;
    }
    EXPECT_EQ(null_levels, 0) << sh.name;
  }
}

// A shift of the per-point medians alone: on one H100 a quick sweep's
// 4 MiB stride read 335 or 338 cycles a point, and four points of 338 in a row, over means flat at
// 337.8, formed a 2-cycle rise at 8 GiB that seeded the second level (page 4 MiB) and split the
// hierarchy into four; the same unit's sweep beside it, within 5 cycles everywhere, read three. A
// seeded family: random GPUs swept full or quick with real noise, then in three curves a run of
// 3-8 points (sometimes to the curve's end) lifted by 6-12 x the curve's noise in the medians only,
// inside a stretch where the truth is flat. Scored against the GPU, the hierarchy may not be worse
// than the sweep's without the shift (no level added that is none of the GPU's, none found lost,
// no exact entry count or coverage lost); most shifts must form rises the step detector sees, or
// the family tests nothing. Without the medians-only rule 7 of 80 hierarchies
// moved (docs/analyze-tlb.md).
TEST(SimulatedGpus, AShiftOfTheMediansAloneMovesNoLevel) {
  std::mt19937_64 rng(60);
  int cases = 0, seen = 0, moved = 0, at_levels = 0, lost = 0;
  for (int k = 0; k < 160; ++k) {
    const sim_gpu g = random_gpu(rng);
    const auto plan = plan_for(k % 2 ? sim_mode::quick : sim_mode::full, k_max);
    const auto clean = simulate(g, plan, 600 + unsigned(k), &real_noise());
    auto shifted = clean;
    int lifted = 0;
    // Where r65's shift was: after as many hops as a level has entries, on a stride below what
    // its entry covers, while a stride at or above it shows the level in the sweep (the shift's
    // rise then joins that level's strides and may seed it); else anywhere.
    std::vector<std::pair<std::size_t, std::size_t>> targets; // (curve, level)
    for (std::size_t ci = 0; ci < shifted.curves.size(); ++ci)
      for (std::size_t li = 0; li < g.levels.size(); ++li) {
        const auto &L = g.levels[li];
        const auto &c = shifted.curves[ci];
        const bool shown =
            std::any_of(shifted.curves.begin(), shifted.curves.end(), [&](const auto &o) {
              return o.stride_bytes >= double(L.coverage_bytes) &&
                     2 * double(L.entries()) * o.stride_bytes <= o.footprint_bytes.back();
            });
        if (c.stride_bytes < double(L.coverage_bytes) && shown && L.entries() >= 16)
          targets.push_back({ci, li});
      }
    for (int tries = 0; lifted < 3 && tries < 200; ++tries) {
      const bool targeted = !targets.empty() && tries < 150;
      const auto pick =
          targeted ? targets[rng() % targets.size()]
                   : std::make_pair(std::size_t(rng() % shifted.curves.size()), std::size_t(0));
      auto &c = shifted.curves[pick.first];
      const std::size_t n = c.cycles.size(), len = 4 + rng() % 7;
      if (n < len + 32)
        continue;
      std::size_t i = 12 + rng() % (n - len - 24);
      if (targeted) {
        const double at = double(g.levels[pick.second].entries()) * c.stride_bytes;
        i = std::size_t(std::lower_bound(c.footprint_bytes.begin(), c.footprint_bytes.end(), at) -
                        c.footprint_bytes.begin());
        if (i < 12 || i + len + 12 > n)
          continue;
      }
      const bool to_end = rng() % 3 == 0;
      const std::size_t end = to_end ? n : i + len;
      // Flat truth from 12 points before the run to 12 after it (or the end): no real rise within
      // the windows the detector and the means' check read around the shift.
      const auto truth = [&](std::size_t j) {
        const auto s = std::uint64_t(c.stride_bytes);
        return latency(g, s, std::uint64_t(std::llround(c.footprint_bytes[j] / c.stride_bytes)));
      };
      bool flat = true;
      for (std::size_t j = i >= 12 ? i - 12 : 0; j < std::min(n, end + 12) && flat; ++j)
        flat = std::fabs(truth(j) - truth(i)) < 1e-9;
      if (!flat)
        continue;
      const double sigma = curve_noise(c.cycles, defaults::min_noise_cycles);
      const double lift = sigma * (8 + double(rng() % 81) / 10);
      const auto steps = probes::tlb_analysis_options{}.steps;
      const auto before = detect_steps(c.footprint_bytes, c.cycles, steps);
      for (std::size_t j = i; j < end; ++j)
        c.cycles[j] += lift; // the medians only: the means stay as the clean sweep measured them
      const auto after = detect_steps(c.footprint_bytes, c.cycles, steps);
      seen += after.size() > before.size();
      at_levels += targeted;
      ++lifted;
    }
    if (lifted == 0)
      continue;
    ++cases;
    const auto a = probes::analyze_tlb(clean, detectors_only()),
               b = probes::analyze_tlb(shifted, detectors_only());
    // Scored against the GPU: the shift may not add a level that is none of the GPU's, lose one
    // the clean sweep found, or take an exact entry count or coverage away.
    const auto sa = score(g, a, plan), sb = score(g, b, plan);
    bool same = sb.false_levels <= sa.false_levels, kept = true;
    for (std::size_t j = 0; j < sa.levels.size(); ++j) {
      kept = kept && (sb.levels[j].found || !sa.levels[j].found);
      same = same && (!sb.levels[j].found || !sa.levels[j].found ||
                      ((sb.levels[j].exact_entries || !sa.levels[j].exact_entries) &&
                       (sb.levels[j].exact_coverage || !sa.levels[j].exact_coverage)));
    }
    lost += !kept;
    if (!same) {
      ++moved;
      std::printf("moved: %s\n", g.describe().c_str());
      for (const auto &L : a.levels)
        std::printf("  without the shift %s\n", probes::level_line("L", L).c_str());
      for (const auto &L : b.levels)
        std::printf("  with it           %s\n", probes::level_line("L", L).c_str());
    }
  }
  std::printf("%d sweeps shifted (%d shifts at a level's entries), %d shifts formed a rise the "
              "detector sees; %d hierarchies moved (a level added or a found one changed), %d lost "
              "a level the sweep without the shift found\n",
              cases, at_levels, seen, moved, lost);
  EXPECT_GE(cases, 60);
  EXPECT_GE(2 * seen, cases) << "the shifts must be rises the step detector finds";
  EXPECT_EQ(moved, 0);
  EXPECT_LE(50 * lost, cases) << "at most 2 % of shifted sweeps may lose a level (1 of 113 here)";
}

namespace {
// A fixture of tests/fixtures/tlb-regressions/ analysed: Hopper's three levels with their pages
// (16 x 16 MiB, 2048 x 32 MiB, 4096 x 64 MiB), as every other sweep of these units reads them.
probes::tlb_evidence expect_hopper_levels(const std::string &fixture) {
  const std::string f =
      std::string(GPUPROBE_SOURCE_DIR) + "/tests/fixtures/tlb-regressions/" + fixture;
  const auto a = probes::find_tlb_levels(probes::load_tlb_inputs({f}));
  EXPECT_EQ(a.levels.size(), 3u) << fixture;
  const double mib = 1 << 20;
  const std::vector<std::pair<double, double>> want = {
      {16, 16 * mib}, {2048, 32 * mib}, {4096, 64 * mib}};
  for (std::size_t k = 0; k < std::min<std::size_t>(3, a.levels.size()); ++k) {
    EXPECT_NEAR(a.levels[k].entries, want[k].first, 0.01 * want[k].first) << "L" << k + 1;
    EXPECT_EQ(a.levels[k].coverage_bytes, want[k].second) << "L" << k + 1;
  }
  return a;
}
} // namespace

// r96 (H100 GPU-51c0adbc): two +1 wiggles of the whole-cycle medians before L1's 10-cycle step
// began its rise 3 points early on the 16 MiB stride, and L1 read 16 x 32 MiB (README beside it).
TEST(TlbRegressions, AOneCycleWiggleBeforeL1sStepKeepsItsPage) {
  const auto a = expect_hopper_levels("h100-51c0adbc-quick-l1-wiggle.json");
  ASSERT_EQ(a.levels.size(), 3u);
  EXPECT_NEAR(a.levels[0].miss_penalty_cycles, 10, 1);
}

// The real sweep behind the rule above (tests/fixtures/tlb-regressions/README.md): read as the
// sweep beside it was, three levels with their pages, and the shift named in a note.
TEST(TlbRegressions, AShiftOfTheMediansAloneSeedsNoLevel) {
  const auto a = expect_hopper_levels("h100-3ba38ae3-quick-medians-shift.json");
  ASSERT_EQ(a.levels.size(), 3u);
  EXPECT_NEAR(a.levels[2].miss_penalty_cycles, 405, 10);
  EXPECT_TRUE(std::any_of(a.notes.begin(), a.notes.end(), [](const std::string &n) {
    return n.find("for stride 4 MiB is in the points' medians only") != std::string::npos;
  }));
}

// The "inconsistent" rule's exception: a set-associative level chased with strides so
// large that their hops fall in fewer of its sets misses after fewer hops, at its own penalty.
// Those strides have no rise at `entries` hops because they rose before; counting them as
// evidence against the level made it a candidate and let its view at a large stride stand as a
// level in its place. On a seeded sample of the family (full sweeps), each GPU analysed with the
// exception and without: at least 8 % more of the recoverable levels are found with it (420
// against 356 of 627 on this seed), at most 1 % found without it are lost with it (2), and fewer
// false levels are reported (71 against 81): the test shows what the rule is for.
TEST(SimulatedGpus, ALevelsOwnEarlierMissesAtLargeStridesAreNotEvidenceAgainstIt) {
  const auto plan = plan_for(sim_mode::full, k_max);
  std::mt19937_64 rng(7701);
  int recoverable = 0, found_on = 0, found_off = 0, lost = 0, false_on = 0, false_off = 0;
  auto off = detectors_only();
  off.earlier_rise_is_the_level = false;
  for (int i = 0; i < 300; ++i) {
    const sim_gpu g = random_gpu(rng);
    const auto data = simulate(g, plan, 7701 + std::uint64_t(i), &real_noise());
    const auto on = score(g, probes::analyze_tlb(data, detectors_only()), plan);
    const auto without = score(g, probes::analyze_tlb(data, off), plan);
    false_on += on.false_levels;
    false_off += without.false_levels;
    for (std::size_t k = 0; k < g.levels.size(); ++k) {
      if (!on.levels[k].recoverable)
        continue;
      ++recoverable;
      found_on += on.levels[k].found;
      found_off += without.levels[k].found;
      lost += without.levels[k].found && !on.levels[k].found;
    }
  }
  std::printf("%d recoverable levels on 300 GPUs: found %d with the exception, %d without (%d "
              "lost); false levels %d with, %d without\n",
              recoverable, found_on, found_off, lost, false_on, false_off);
  EXPECT_LE(lost, recoverable / 100);
  EXPECT_GE(found_on - found_off, recoverable * 8 / 100);
  EXPECT_LT(false_on, false_off);
}

// Nothing lost on real hardware: every committed real sweep (Hopper's gpuprobe sweeps and the
// 2017 tool's K80, P100 and H100 CSVs) reads the same levels, entries, pages and penalties with
// the exception above as without it.
TEST(SimulatedGpus, TheEarlierRiseExceptionChangesNoCommittedRealSweep) {
  auto off = detectors_only();
  off.earlier_rise_is_the_level = false;
  int sweeps = 0, levels = 0;
  for (const auto &s : test::committed_real_sweeps()) {
    const auto a = probes::analyze_tlb(s.data, detectors_only()),
               b = probes::analyze_tlb(s.data, off);
    ++sweeps;
    ASSERT_EQ(a.levels.size(), b.levels.size()) << s.name;
    for (std::size_t k = 0; k < a.levels.size(); ++k, ++levels) {
      EXPECT_EQ(a.levels[k].entries, b.levels[k].entries) << s.name << " L" << k + 1;
      EXPECT_EQ(a.levels[k].coverage_bytes, b.levels[k].coverage_bytes) << s.name << " L" << k + 1;
      EXPECT_EQ(a.levels[k].miss_penalty_cycles, b.levels[k].miss_penalty_cycles) << s.name;
    }
  }
  std::printf("%d committed real sweeps, %d levels: the same with and without the exception\n",
              sweeps, levels);
  EXPECT_GE(sweeps, 8);
}
