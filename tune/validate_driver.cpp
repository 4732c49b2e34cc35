// gpuprobe validate on one GPU (cli/validate_cmd.cpp maps its flags here): tuning.json ->
// validation.json (gpuprobe.validation/1). Each workload runs its default and tuned
// configurations interleaved (ABBA order) on a cudaMalloc pool and on a scattered-VMM pool; then
// medians, a bootstrap CI of the ratio, Mann-Whitney U with Holm across workloads, and a verdict.
// Every workload's results are checked after timing.
#include "tune/validate_driver.hpp"

#include "allocators/load_tuning.hpp"
#include "analysis/validation.hpp"
#include "common/device_info.hpp"
#include "common/device_memory.hpp"
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/folder_lock.hpp"
#include "common/json_io.hpp"
#include "common/stats.hpp"
#include "common/stopwatch.hpp"
#include "model/tuning.hpp"
#include "tune/measure.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

namespace gpuprobe::tune {

using nlohmann::json;

// The smaller pools first, so the TLB-sized workloads of a kind run one after another on the one
// pool they share (pool_source: mapped once per kind, not again after an 8 GiB one). A pool kept
// from the stage before (tune's last, under gpuprobe run) is taken by its kind's TLB-sized rows,
// which then go first, before anything else needs its memory. The rows keep the list's order.
std::vector<std::size_t> run_order(const std::vector<workload> &workloads,
                                   const std::string &kept_pool, std::uint64_t kept_bytes) {
  const auto takes_kept = [&](const workload &w) {
    return !kept_pool.empty() && w.pool == kept_pool &&
           served_by_tlb_pool(w.pool_bytes, kept_bytes);
  };
  std::vector<std::size_t> order(workloads.size());
  std::map<std::string, std::size_t> first; // pool -> its first row (of those the rest)
  std::vector<std::size_t> rank(workloads.size(), 0);
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    order[i] = i;
    if (!takes_kept(workloads[i]))
      rank[i] = 1 + first.emplace(workloads[i].pool, i).first->second; // 0: the kept pool's rows
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::make_pair(rank[a], workloads[a].pool_bytes) <
           std::make_pair(rank[b], workloads[b].pool_bytes);
  });
  return order;
}

namespace {

// Where the tuning changes both the word size and the regions, each change alone as well
// ("[words only]", "[regions only]" rows): which of the two helps or hurts.
std::vector<workload> with_ablations(std::vector<workload> base, const alloc::tuning &t,
                                     const validate_options &vo) {
  if (t.word_bits == 32 || !t.scoped())
    return base;
  alloc::tuning words = t, regions = t;
  words.regions = 1;
  words.sm_region.clear();
  regions.word_bits = 32;
  auto only_words = validation_workloads(words, vo),
       only_regions = validation_workloads(regions, vo);
  std::vector<workload> out;
  for (std::size_t i = 0; i < base.size(); ++i) {
    out.push_back(base[i]);
    for (auto *alt : {&only_words, &only_regions}) {
      if (i >= alt->size())
        continue;
      auto a = (*alt)[i];
      if (a.name != base[i].name || a.pool != base[i].pool || !a.differs() ||
          a.config_tuned == base[i].config_tuned)
        continue;
      a.name += alt == &only_words ? " [words only]" : " [regions only]";
      out.push_back(std::move(a));
    }
  }
  return out;
}

// The tuning read and bound to this GPU (the note where it was made on another), and the
// workloads validate runs: with the ablation rows, kept to the --only prefixes.
struct validate_context {
  model::tuning_file tuning;
  alloc::tuning t;
  device_info dev;
  std::string tuned_on;
  validate_options vo;
  std::vector<workload> workloads;
};

validate_context open_validate(const validate_run_options &o) {
  validate_context c;
  c.tuning = model::read_tuning(o.tuning);
  c.t = c.tuning.allocator;
  c.dev = query_device(o.device);
  c.tuned_on = c.tuning.gpu_uuid();
  std::printf("gpuprobe validate: %s (%s), tuning %s\n", c.dev.name.c_str(), c.dev.uuid.c_str(),
              o.tuning.c_str());
  if (const std::string dropped = alloc::bind_to_gpu(c.t, c.dev.uuid, o.tuning); !dropped.empty())
    std::printf("  note: %s\n", dropped.c_str());
  else if (c.tuned_on != c.dev.uuid)
    std::printf("  note: the tuning was made on another GPU (%s)\n", c.tuned_on.c_str());
  c.vo.pool_bytes = std::uint64_t(o.pool_gib * double(1ull << 30));
  c.vo.tlb_footprint = std::uint64_t(o.tlb_footprint_gib * double(1ull << 30));
  c.vo.quick = o.quick;
  c.vo.device = o.device;
  c.vo.seed = o.seed;
  c.vo.pools = shared_pools(c.vo); // the TLB-sized pools mapped once per kind
  c.workloads = validation_workloads(c.t, c.vo);
  if (o.ablation)
    c.workloads = with_ablations(std::move(c.workloads), c.t, c.vo);
  if (!o.only.empty()) {
    std::vector<workload> kept;
    for (auto &w : c.workloads)
      for (const auto &p : o.only)
        if (w.name.rfind(p, 0) == 0) {
          kept.push_back(std::move(w));
          break;
        }
    if (kept.empty())
      throw error("validate: no workload starts with the --only prefixes given");
    c.workloads = std::move(kept);
  }
  return c;
}

// Each workload's default and tuned configurations, interleaved, with a line each.
struct measured {
  std::vector<analysis::workload_samples> samples;
  std::vector<std::string> stopped; // per workload: the rule's reason ("" not measured)
};
measured measure_workloads(const std::vector<workload> &workloads,
                           const analysis::sequential_rule &rule,
                           const std::shared_ptr<pool_source> &pools) {
  measured m;
  m.samples.resize(workloads.size());
  m.stopped.resize(workloads.size());
  const auto kept = pool_keeper::kept();
  for (const std::size_t i :
       kept ? run_order(workloads, to_string(kept->kind), kept->bytes) : run_order(workloads)) {
    const auto &w = workloads[i];
    analysis::workload_samples s{
        {w.name, w.pool, w.config_default, w.config_tuned, w.differs()}, {}, {}, w.changes};
    std::printf("[%zu/%zu] %-40s %-10s ", i + 1, workloads.size(), w.name.c_str(), w.pool.c_str());
    std::fflush(stdout);
    if (!w.differs()) {
      std::printf("not tuned (%s both)\n", w.config_default.c_str());
      m.samples[i] = std::move(s);
      continue;
    }
    const stopwatch w0;
    auto ab = measure_ab(w, rule, "validate");
    s.default_ms = std::move(ab.default_ms);
    s.tuned_ms = std::move(ab.tuned_ms);
    const double md = median(s.default_ms), mt = median(s.tuned_ms);
    std::printf("%.4f -> %.4f ms (x%.3f), %s, %.1f s\n", md, mt, mt / md, ab.stopped.c_str(),
                w0.seconds());
    if (const std::string note = pools_note(pools); !note.empty())
      std::printf("%s\n", note.c_str());
    m.samples[i] = std::move(s);
    m.stopped[i] = std::move(ab.stopped);
  }
  return m;
}

// The stopping rule: looks at 10, 14, ... pairs up to --reps; Holm's worst case over the measured
// workloads (--fixed-reps: one look, at --reps).
analysis::sequential_rule stopping_rule(const validate_run_options &o,
                                        const std::vector<workload> &workloads) {
  analysis::sequential_rule r;
  r.max_reps = o.reps;
  r.min_reps = o.sequential ? std::min(10, o.reps) : o.reps;
  r.workloads = 0;
  for (const auto &w : workloads)
    r.workloads += w.differs();
  r.seed = o.seed;
  return r;
}

// The table of verdicts, the trade-offs and the last line.
void print_validation(const model::validation &v, const std::string &out) {
  std::printf("\n%-40s %-10s %10s %10s %22s %8s  %s\n", "workload", "pool", "default", "tuned",
              "ratio (95% CI)", "p Holm", "verdict");
  for (const auto &r : v.workloads) {
    if (!r.measured) {
      std::printf("%-40s %-10s %10s %10s %22s %8s  %s\n", r.workload.c_str(), r.pool.c_str(), "-",
                  "-", "-", "-", "not tuned");
      continue;
    }
    char ci[64];
    std::snprintf(ci, sizeof ci, "%.3f (%.3f-%.3f)", r.ratio.value_or(0), r.ci_low.value_or(0),
                  r.ci_high.value_or(0));
    std::printf("%-40s %-10s %8.4fms %8.4fms %22s %8.2g  %s\n", r.workload.c_str(), r.pool.c_str(),
                r.median_default_ms.value_or(0), r.median_tuned_ms.value_or(0), ci,
                r.p_holm.value_or(1), r.verdict.c_str());
  }
  for (const auto &x : v.tradeoffs.value_or(std::vector<model::tradeoff>{}))
    std::printf("  trade-off: %s\n", x.line.c_str());
  std::printf("gpuprobe validate: %s; %.0f s -> %s\n", v.summary.c_str(),
              v.wall_seconds.value_or(0), out.c_str());
}

} // namespace

void run_validate(const validate_run_options &o) {
  const stopwatch t0;
  const folder_lock lock(std::filesystem::path(o.out).parent_path().string(), "validate");
  const validate_context c = open_validate(o);
  const auto rule = stopping_rule(o, c.workloads);
  const auto m = measure_workloads(c.workloads, rule, c.vo.pools);
  model::validation v;
  v.workloads = analysis::validation_rows(m.samples, 0.05, o.seed);
  for (std::size_t i = 0; i < v.workloads.size(); ++i)
    if (!m.stopped[i].empty())
      v.workloads[i].detail["stopped"] = m.stopped[i];
  v.wall_seconds = t0.seconds();
  const json head = document_head(schema::validation, to_json(c.dev), o.seed);
  v.schema = head["schema"];
  v.device = head["device"];
  v.meta = head["meta"];
  // The tuning validated, by reference: its decisions are tuning.json's, written there once.
  v.tuning = {{"path", o.tuning}, {"device_uuid", c.tuned_on}};
  v.method = {
      {"reps", o.reps},
      {"stopping",
       o.sequential
           ? "sequential: looks at 10, 14, ... pairs up to reps; stops when p x measured workloads "
             "x looks < 0.05 and the CI at 0.05/looks excludes 1 (differs), or the 95% CI lies "
             "within 1 +- 1% (equivalent); each row's detail.stopped says which"
           : "fixed: reps pairs per workload (--fixed-reps)"},
      {"order", "interleaved ABBA after one warm-up each"},
      {"ablation", o.ablation ? "where the tuning changes word size and regions, each alone too "
                                "([words only], [regions only])"
                              : "off"},
      {"pool_bytes", c.vo.pool_bytes},
      {"ratio", "median tuned / median default (< 1: tuned faster)"},
      {"ci", "95% percentile bootstrap of the ratio of medians, 10000 resamples"},
      {"test",
       "Mann-Whitney U (two-sided, asymptotic), Holm across the measured workloads, alpha 0.05"},
      {"verdict", "faster / slower only when the Holm-adjusted p < 0.05 and the CI excludes 1"}};
  v.summary = analysis::verdict_summary(v.workloads);
  v.tradeoffs = analysis::tradeoffs(v.workloads);
  write_json_atomic(o.out, to_json(v));
  print_validation(v, o.out);
}

} // namespace gpuprobe::tune
