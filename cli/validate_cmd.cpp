// gpuprobe validate: tuning.json -> validation.json (gpuprobe.validation/1). Each workload runs its
// default and tuned configurations interleaved (ABBA order) on a cudaMalloc pool and on a
// scattered-VMM pool; then medians, a bootstrap CI of the ratio, Mann-Whitney U with Holm across
// workloads, and a verdict. Every workload's results are checked after timing.
#include "allocators/load_tuning.hpp"
#include "analysis/validation.hpp"
#include "cli/common.hpp"
#include "cli/devices.hpp"
#include "common/device_info.hpp"
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/results_folder.hpp"
#include "common/stats.hpp"
#include "common/units.hpp"
#include "tune/measure.hpp"

#include <chrono>
#include <cstdio>
#include <memory>

namespace gpuprobe::cli {

namespace {

struct validate_options {
  common_options common;
  std::string tuning;
  std::string results = "results"; // --devices: the parent of the unit folders
  int reps = 15;
  double pool_gib = 8;
  double tlb_footprint_gib = 0;
  bool quick = false;
  bool ablation = true;
  std::vector<std::string> only; // workload name prefixes
};

// Where the tuning changes both the word size and the regions, each change alone as well
// ("[words only]", "[regions only]" rows): which of the two helps or hurts.
std::vector<tune::workload> with_ablations(std::vector<tune::workload> base, const alloc::tuning &t,
                                           const tune::validate_options &vo) {
  if (t.word_bits == 32 || !t.scoped())
    return base;
  alloc::tuning words = t, regions = t;
  words.regions = 1;
  words.sm_region.clear();
  regions.word_bits = 32;
  auto only_words = tune::validation_workloads(words, vo),
       only_regions = tune::validation_workloads(regions, vo);
  std::vector<tune::workload> out;
  for (std::size_t i = 0; i < base.size(); ++i) {
    out.push_back(base[i]);
    for (auto *alt : {&only_words, &only_regions}) {
      if (i >= alt->size())
        continue;
      auto a = (*alt)[i];
      if (a.name != base[i].name || a.pool != base[i].pool || !a.differs ||
          a.config_tuned == base[i].config_tuned)
        continue;
      a.name += alt == &only_words ? " [words only]" : " [regions only]";
      out.push_back(std::move(a));
    }
  }
  return out;
}

void run_validate(const validate_options &o) {
  const auto t0 = std::chrono::steady_clock::now();
  check_output_path(o.common.out);
  if (o.reps < 10)
    throw error("validate: --reps must be at least 10");
  if (o.pool_gib < 8)
    throw error("validate: --pool-gib must be at least 8");
  const json tdoc = read_json_file(o.tuning);
  require_schema(tdoc, schema::tuning, o.tuning);
  alloc::tuning t = alloc::tuning_from_json(tdoc, o.tuning);
  const auto dev = query_device(o.common.device);
  const std::string tuned_on = tdoc.value("device", json::object()).value("uuid", "");
  std::printf("gpuprobe validate: %s (%s), tuning %s\n", dev.name.c_str(), dev.uuid.c_str(),
              o.tuning.c_str());
  if (const std::string dropped = alloc::bind_to_gpu(t, dev.uuid, o.tuning); !dropped.empty())
    std::printf("  note: %s\n", dropped.c_str());
  else if (tuned_on != dev.uuid)
    std::printf("  note: the tuning was made on another GPU (%s)\n", tuned_on.c_str());
  tune::validate_options vo;
  vo.pool_bytes = std::uint64_t(o.pool_gib * double(1ull << 30));
  vo.tlb_footprint = std::uint64_t(o.tlb_footprint_gib * double(1ull << 30));
  vo.quick = o.quick;
  vo.device = o.common.device;
  vo.seed = o.common.seed;
  auto workloads = tune::validation_workloads(t, vo);
  if (o.ablation)
    workloads = with_ablations(std::move(workloads), t, vo);
  if (!o.only.empty()) {
    std::vector<tune::workload> kept;
    for (auto &w : workloads)
      for (const auto &p : o.only)
        if (w.name.rfind(p, 0) == 0) {
          kept.push_back(std::move(w));
          break;
        }
    if (kept.empty())
      throw error("validate: no workload starts with the --only prefixes given");
    workloads = std::move(kept);
  }
  std::vector<analysis::workload_samples> samples;
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const auto &w = workloads[i];
    analysis::workload_samples s{w.name, w.pool, w.config_default, w.config_tuned, w.differs,
                                 {},     {}};
    std::printf("[%zu/%zu] %-40s %-10s ", i + 1, workloads.size(), w.name.c_str(), w.pool.c_str());
    std::fflush(stdout);
    if (!w.differs) {
      std::printf("not tuned (%s both)\n", w.config_default.c_str());
      samples.push_back(std::move(s));
      continue;
    }
    const auto w0 = std::chrono::steady_clock::now();
    auto ab = tune::measure_ab(w, o.reps, "validate");
    s.default_ms = std::move(ab.default_ms);
    s.tuned_ms = std::move(ab.tuned_ms);
    const double md = median(s.default_ms), mt = median(s.tuned_ms);
    std::printf("%.4f -> %.4f ms (x%.3f), %.1f s\n", md, mt, mt / md,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
    samples.push_back(std::move(s));
  }
  const json rows = analysis::validation_rows(samples, 0.05, o.common.seed);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  json doc = document_head(schema::validation, to_json(dev), o.common.seed);
  doc.update(json{
      {"tuning", {{"path", o.tuning}, {"device_uuid", tuned_on}, {"allocator", tdoc["allocator"]}}},
      {"method",
       {{"reps", o.reps},
        {"order", "interleaved ABBA after one warm-up each"},
        {"ablation", o.ablation ? "where the tuning changes word size and regions, each alone too "
                                  "([words only], [regions only])"
                                : "off"},
        {"pool_bytes", vo.pool_bytes},
        {"ratio", "median tuned / median default (< 1: tuned faster)"},
        {"ci", "95% percentile bootstrap of the ratio of medians, 10000 resamples"},
        {"test",
         "Mann-Whitney U (two-sided, asymptotic), Holm across the measured workloads, alpha 0.05"},
        {"verdict", "faster / slower only when the Holm-adjusted p < 0.05 and the CI excludes 1"}}},
      {"workloads", rows},
      {"summary", analysis::verdict_summary(rows)},
      {"tradeoffs", analysis::tradeoffs(rows)},
      {"wall_seconds", wall}});
  write_json_atomic(o.common.out, doc);
  std::printf("\n%-40s %-10s %10s %10s %22s %8s  %s\n", "workload", "pool", "default", "tuned",
              "ratio (95% CI)", "p Holm", "verdict");
  for (const auto &r : rows) {
    if (!r.value("measured", false)) {
      std::printf("%-40s %-10s %10s %10s %22s %8s  %s\n", r.value("workload", "").c_str(),
                  r.value("pool", "").c_str(), "-", "-", "-", "-", "not tuned");
      continue;
    }
    char ci[64];
    std::snprintf(ci, sizeof ci, "%.3f (%.3f-%.3f)", r.value("ratio", 0.0), r.value("ci_low", 0.0),
                  r.value("ci_high", 0.0));
    std::printf("%-40s %-10s %8.4fms %8.4fms %22s %8.2g  %s\n", r.value("workload", "").c_str(),
                r.value("pool", "").c_str(), r.value("median_default_ms", 0.0),
                r.value("median_tuned_ms", 0.0), ci, r.value("p_holm", 1.0),
                r.value("verdict", "").c_str());
  }
  for (const auto &x : doc["tradeoffs"])
    std::printf("  trade-off: %s\n", x["line"].get<std::string>().c_str());
  std::printf("gpuprobe validate: %s; %.0f s -> %s\n", doc["summary"].get<std::string>().c_str(),
              wall, o.common.out.c_str());
}

} // namespace

void setup_validate(CLI::App &parent) {
  auto opt = std::make_shared<validate_options>();
  auto *app = parent.add_subcommand(
      "validate",
      "tuning.json -> validation.json: default vs tuned allocators on this GPU, with statistics");
  app->footer("Example: gpuprobe validate --tuning results/first/tuning.json --out "
              "results/first/validation.json (~200 s on an H100)");
  app->add_option("--tuning", opt->tuning,
                  "tuning.json of gpuprobe tune (required without --devices)");
  app->add_option("--out", opt->common.out,
                  "validation.json to write (required without --devices)");
  add_device_option(*app, opt->common);
  add_devices_option(*app, opt->common,
                     "each reads FOLDER/tuning.json, writes FOLDER/validation.json");
  app->add_option("--results", opt->results, "with --devices: the parent of the GPUs' folders")
      ->capture_default_str();
  add_seed_option(*app, opt->common);
  app->add_option("--reps", opt->reps, "repetitions of each configuration (>= 10)")
      ->capture_default_str();
  app->add_option("--pool-gib", opt->pool_gib, "pool size of the allocator workloads (>= 8)")
      ->capture_default_str();
  app->add_option("--tlb-footprint-gib", opt->tlb_footprint_gib,
                  "footprint of the TLB-scoped kernels (0: all free memory but 6 GiB)");
  app->add_option("--only", opt->only, "run only the workloads whose names start with these")
      ->take_all();
  app->add_flag("--quick", opt->quick, "two free fractions, TLB footprints a quarter of the full");
  app->add_flag("!--no-ablation", opt->ablation,
                "skip the rows that apply the word size and the regions one at a time");
  app->callback([opt] {
    const auto &o = *opt;
    if (o.common.devices.empty()) {
      if (o.tuning.empty() || o.common.out.empty())
        throw error("validate: give --tuning and --out (or --devices)");
      return run_validate(o);
    }
    unit_command c{"validate",
                   "--tuning",
                   results_folder::tuning_file,
                   results_folder::validation_file,
                   {"--reps", std::to_string(o.reps), "--seed", std::to_string(o.common.seed)},
                   "run gpuprobe tune --devices first"};
    if (o.quick)
      c.extra.push_back("--quick");
    if (!o.ablation)
      c.extra.push_back("--no-ablation");
    run_per_device("validate", o.common.devices, o.results, plan_for(c));
  });
}

} // namespace gpuprobe::cli
