// gpuprobe tlb-sharing: which SMs evict each other's entries of one TLB level.
#include "analysis/sharing.hpp"
#include "cli/common.hpp"
#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "probes/tlb_sharing.cuh"
#include "probes/tlb_sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

namespace gpuprobe::cli {

namespace {

struct sharing_options {
  common_options common;
  std::string profile;
  int level = 1;
  int candidate = 0;  // test the profile's candidate N instead of a level
  std::string page_bytes;
  double entries = 0;
  std::string alloc = "auto";
  double overfill = 1.2;
  int max_sms = 0;
  double timeout_s = 0;
  double free_fraction = 0.94;
  double min_overfill = 1.05;
  std::string order = "random";
  std::string lines = "spread";  // auto: shrink the overfill to this before going sparse
};

struct level_spec {
  std::uint64_t page_bytes = 0;
  std::uint64_t entries = 0;
  std::string origin;
};

level_spec level_from_options(const sharing_options& o) {
  level_spec L;
  if (!o.profile.empty()) {
    if (!o.page_bytes.empty() || o.entries > 0) throw error("give --profile/--level or --page-bytes/--entries, not both");
    const auto doc = read_json_file(o.profile);
    require_schema(doc, "gpuprobe.profile", 1, o.profile);
    const char* key = o.candidate > 0 ? "candidates" : "levels";
    const int index = o.candidate > 0 ? o.candidate : o.level;
    const std::string what = o.candidate > 0 ? "candidate" : "level";
    const auto list = doc.contains("tlb") && doc["tlb"].is_object() ? doc["tlb"].value(key, json::array()) : json::array();
    if (list.empty())
      throw error("'" + o.profile + "' has no TLB " + what + " to test (none was found); give --page-bytes and --entries to test a hypothesis");
    if (index < 1 || index > int(list.size()))
      throw error("--" + what + " " + std::to_string(index) + ": the profile has " + what + "s 1.." + std::to_string(list.size()));
    const auto& j = list[std::size_t(index - 1)];
    if (!j.contains("page_bytes") || !j.contains("entries") || !j["page_bytes"].is_number() || !j["entries"].is_number())
      throw error("'" + o.profile + "': " + what + " " + std::to_string(index) + " lacks a numeric page_bytes or entries");
    L.page_bytes = static_cast<std::uint64_t>(j["page_bytes"].get<double>());
    L.entries = static_cast<std::uint64_t>(std::llround(j["entries"].get<double>()));
    L.origin = o.profile + " " + what + " " + std::to_string(index);
  } else {
    if (o.page_bytes.empty() || o.entries <= 0) throw error("give --profile PROFILE.json (and --level K) or --page-bytes P --entries E");
    L.page_bytes = probes::parse_bytes(o.page_bytes);
    L.entries = static_cast<std::uint64_t>(std::llround(o.entries));
    L.origin = "--page-bytes/--entries";
  }
  return L;
}

void run_tlb_sharing(const sharing_options& o) {
  using clock = std::chrono::steady_clock;
  const auto t_start = clock::now();
  check_output_path(o.common.out);
  const level_spec L = level_from_options(o);
  probes::plan_sharing(L.page_bytes, L.entries, o.overfill);  // validates the options before any GPU work
  if (o.alloc != "auto" && o.alloc != "cudamalloc" && o.alloc != "vmm-sparse") throw error("--alloc must be auto, cudamalloc or vmm-sparse");
  if (o.order != "random" && o.order != "sequential") throw error("--order must be random or sequential");
  if (o.lines != "spread" && o.lines != "zero") throw error("--lines must be spread or zero");
  device_info dev = query_device(o.common.device);
  const double budget = double(dev.memory_free_bytes_at_start) * o.free_fraction;
  const std::size_t gran = probes::device_pool::vmm_granularity(o.common.device);
  const bool sparse_ok = gran && L.page_bytes > gran && L.page_bytes % gran == 0;
  const double reach = double(L.entries) * double(L.page_bytes);
  const std::string what = std::to_string(L.entries) + " x " + probes::format_bytes(double(L.page_bytes)) + " (reach " +
                           probes::format_bytes(reach) + ")";
  // auto: a dense cudaMalloc pool, with the overfill lowered (not below min_overfill) to fit;
  // else one chunk per page (vmm-sparse), whose own positive control decides if it is valid.
  double overfill = o.overfill;
  std::string alloc = o.alloc;
  if (alloc == "auto") {
    const double fit = std::floor((budget / double(L.page_bytes) - 2) / double(L.entries) * 100) / 100;
    if (fit >= overfill) {
      alloc = "cudamalloc";
    } else if (fit >= o.min_overfill) {
      alloc = "cudamalloc";
      overfill = fit;
    } else {
      alloc = sparse_ok ? "vmm-sparse" : "none";
    }
  }
  auto layout = probes::plan_sharing(L.page_bytes, L.entries, overfill);
  const std::uint64_t pages = layout.victim_pages + layout.disruptor_pages;
  const double need_dense = double(pages) * double(layout.page_bytes);
  const double need_sparse = double(pages) * double(gran);
  if (alloc == "none" || (alloc == "cudamalloc" && need_dense > budget) || (alloc == "vmm-sparse" && (!sparse_ok || need_sparse > budget)))
    throw error("level " + what + " is too large to test: victim + disruptor walk " + std::to_string(pages) + " pages = " +
                probes::format_bytes(need_dense) + " of memory" +
                (sparse_ok ? " (" + probes::format_bytes(need_sparse) + " sparse)" : std::string()) + ", but only " +
                probes::format_bytes(budget) + " may be used");
  if (alloc != "cudamalloc" && alloc != "vmm-sparse") throw error("--alloc must be auto, cudamalloc or vmm-sparse");
  std::fprintf(stderr, "[tlb-sharing] %s, %d SMs; level %s from %s; victim %llu + disruptor %llu pages, %s pool\n",
               dev.name.c_str(), dev.sm_count, what.c_str(), L.origin.c_str(), (unsigned long long)layout.victim_pages,
               (unsigned long long)layout.disruptor_pages, alloc.c_str());

  const auto kind = probes::parse_alloc_kind(alloc);
  probes::device_pool pool(kind, std::size_t(pages * layout.page_bytes), o.common.device, o.common.seed,
                           kind == probes::alloc_kind::vmm_sparse ? layout.page_bytes : 0);
  if (kind == probes::alloc_kind::vmm_sparse) layout.line_span = pool.granularity();
  layout.random_order = o.order == "random";
  layout.spread_lines = o.lines == "spread";
  // Watchdog: a launch is V+V+D hops per round (a few hundred ns each at worst), x the rounds.
  const double est_launch_s = double(dev.sm_count + 4) * double(2 * layout.victim_pages + layout.disruptor_pages) * 2e-6;
  const double timeout = o.timeout_s > 0 ? o.timeout_s : std::max(10.0, 10 * est_launch_s);
  probes::sharing_probe probe(pool, layout, o.common.seed, timeout);

  std::vector<int> sms = probe.sm_ids();
  if (o.max_sms > 0 && o.max_sms < int(sms.size())) sms.resize(std::size_t(o.max_sms));
  const std::size_t n = sms.size();
  std::vector<std::vector<double>> mean(n, std::vector<double>(n)), med(n, std::vector<double>(n));
  std::vector<double> base_mean(n), base_med(n), base_drift(n);
  std::mt19937_64 rng(o.common.seed);
  for (std::size_t i = 0; i < n; ++i) {
    // Baseline, then the control, then every other SM in a random order (drift is not a pattern).
    std::vector<std::size_t> order;
    for (std::size_t k = 0; k < n; ++k)
      if (k != i) order.push_back(k);
    std::shuffle(order.begin(), order.end(), rng);
    order.insert(order.begin(), i);
    // A discarded warm-up round first (the first walk of a launch ran slow on H100), and the
    // baseline both before and after the pairs: the faster of the two is the unshared latency.
    std::vector<int> rounds = {-1, -1};
    for (auto k : order) rounds.push_back(sms[k]);
    rounds.push_back(-1);
    const auto t0 = clock::now();
    const auto res = probe.run_victim(sms[i], rounds);
    const auto& b0 = res[1];
    const auto& b1 = res.back();
    base_mean[i] = std::min(b0.mean_cycles, b1.mean_cycles);
    base_med[i] = std::min(b0.median_cycles, b1.median_cycles);
    base_drift[i] = b1.mean_cycles - b0.mean_cycles;
    for (std::size_t r = 0; r < order.size(); ++r) {
      mean[i][order[r]] = res[r + 2].mean_cycles;
      med[i][order[r]] = res[r + 2].median_cycles;
    }
    std::fprintf(stderr, "[tlb-sharing] victim %zu/%zu (SM %d): baseline %.0f, self %.0f cycles/hop, %.2f s\n", i + 1, n,
                 sms[i], base_mean[i], mean[i][i], std::chrono::duration<double>(clock::now() - t0).count());
  }
  const double wall = std::chrono::duration<double>(clock::now() - t_start).count();

  json doc = {{"schema", "gpuprobe.result/1"},
              {"probe", "tlb-sharing"},
              {"device", to_json(dev)},
              {"meta", run_metadata(this_invocation().argc, this_invocation().argv, o.common.seed)},
              {"sharing",
               {{"params",
                 {{"level_origin", L.origin},
                  {"level", o.profile.empty() ? json(nullptr) : json(o.level)},
                  {"page_bytes", L.page_bytes},
                  {"entries", L.entries},
                  {"victim_pages", layout.victim_pages},
                  {"disruptor_pages", layout.disruptor_pages},
                  {"overfill", overfill},
                  {"alloc", alloc},
                  {"mapped_bytes_per_page", layout.line_span},
                  {"page_order", o.order},
                  {"line_offsets", o.lines},
                  {"load", "ld.global.cg (L1 bypassed)"},
                  {"placement", "cooperative launch, 1 block per SM (shared memory past half an SM), %smid checked"},
                  {"round_order", "per victim: warm-up (discarded), baseline, self, the other SMs shuffled, baseline again; one pair at a time"}}},
                {"sm_ids", sms},
                {"mean_cycles", mean},
                {"median_cycles", med},
                {"baseline_mean_cycles", base_mean},
                {"baseline_median_cycles", base_med},
                {"baseline_drift_cycles", base_drift},
                {"wall_seconds", wall}}}};
  const auto a = analysis::analyze_sharing(analysis::parse_sharing_result(doc, o.common.out));
  write_json_atomic(o.common.out, doc);
  std::printf("gpuprobe tlb-sharing: %s, level %s, %zu SMs, %s pool, %.1f s\n", dev.name.c_str(), what.c_str(), n,
              alloc.c_str(), wall);
  std::printf("  scope: %s (%s)\n", a.scope.c_str(), a.reason.c_str());
  if (!a.structure.empty()) std::printf("  structure: %s\n", a.structure.c_str());
  std::printf("  wrote %s\n", o.common.out.c_str());
}

}  // namespace

void setup_tlb_sharing(CLI::App& parent) {
  auto opt = std::make_shared<sharing_options>();
  auto* app = parent.add_subcommand("tlb-sharing", "which SMs share a TLB level (victim/disruptor pairs)");
  add_device_option(*app, opt->common);
  add_out_option(*app, opt->common, "result JSON file (gpuprobe.result/1, probe tlb-sharing)");
  add_seed_option(*app, opt->common);
  app->add_option("--profile", opt->profile, "profile JSON (gpuprobe analyze tlb) holding the level");
  app->add_option("--level", opt->level, "level number in the profile, 1 = innermost")->capture_default_str();
  app->add_option("--candidate", opt->candidate, "test the profile's candidate N (a level below the confidence bar) instead");
  app->add_option("--page-bytes", opt->page_bytes, "page size of the level (instead of --profile)");
  app->add_option("--entries", opt->entries, "entries of the level (instead of --profile)");
  app->add_option("--alloc", opt->alloc, "auto | cudamalloc | vmm-sparse (one 2 MiB chunk per page)")->capture_default_str();
  app->add_option("--overfill", opt->overfill, "(victim + disruptor pages) / entries")->capture_default_str();
  app->add_option("--order", opt->order, "random | sequential: page order of the chains")->capture_default_str();
  app->add_option("--lines", opt->lines, "spread | zero: line offset inside each page")->capture_default_str();
  app->add_option("--max-sms", opt->max_sms, "test only the first N SMs (0: all)")->capture_default_str();
  app->add_option("--timeout", opt->timeout_s, "watchdog per launch in seconds (0: from the level size)")->capture_default_str();
  app->callback([opt] { run_tlb_sharing(*opt); });
}

}  // namespace gpuprobe::cli
