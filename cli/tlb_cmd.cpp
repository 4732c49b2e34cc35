// gpuprobe tlb: the TLB hierarchy sweep (pointer chase over strides x footprints).
#include "analysis/steps.hpp"
#include "analysis/tlb_data.hpp"
#include "analysis/tlb_levels.hpp"
#include "cli/common.hpp"
#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "probes/tlb_chase.cuh"
#include "probes/tlb_sweep.hpp"

#include <chrono>
#include <cstdio>
#include <memory>

namespace gpuprobe::cli {

namespace {

struct tlb_options {
  common_options common;
  std::string alloc = "cudamalloc";
  std::string max_bytes, min_bytes = "1M", min_stride = "64K", max_stride = "1G";
  std::vector<std::string> strides;
  int points_per_octave = 8;
  unsigned samples = 4096;
  bool control = true;
  double free_fraction = 0.94;
};

json point_json(const probes::sweep_point& p) {
  return {{"stride_bytes", p.stride_bytes}, {"footprint_bytes", p.footprint_bytes},
          {"hops", p.hops},                 {"median_cycles", p.median},
          {"p10_cycles", p.p10},            {"p90_cycles", p.p90},
          {"mean_cycles", p.mean},          {"samples", p.samples},
          {"smid", p.smid},                 {"refined", p.refined}};
}

void run_tlb(const tlb_options& o) {
  using clock = std::chrono::steady_clock;
  const auto t_start = clock::now();
  check_output_path(o.common.out);
  const auto kind = probes::parse_alloc_kind(o.alloc);
  device_info dev = query_device(o.common.device);
  std::fprintf(stderr, "[tlb] %s (%s), %d SMs, L2 %s, memory %s free of %s, driver %s, runtime %s\n",
               dev.name.c_str(), dev.uuid.c_str(), dev.sm_count,
               probes::format_bytes(double(dev.l2_bytes)).c_str(),
               probes::format_bytes(double(dev.memory_free_bytes_at_start)).c_str(),
               probes::format_bytes(double(dev.memory_bytes)).c_str(),
               cuda_version_string(dev.driver_version).c_str(),
               cuda_version_string(dev.runtime_version).c_str());

  probes::sweep_plan plan;
  plan.min_bytes = probes::parse_bytes(o.min_bytes);
  const auto free_b = static_cast<std::uint64_t>(dev.memory_free_bytes_at_start);
  if (o.max_bytes.empty()) {
    plan.max_bytes = static_cast<std::uint64_t>(double(free_b) * o.free_fraction) >> 30 << 30;
  } else {
    plan.max_bytes = probes::parse_bytes(o.max_bytes);
    if (plan.max_bytes > free_b)
      throw error("--max-bytes " + probes::format_bytes(double(plan.max_bytes)) +
                  " is beyond the device's free memory (" + probes::format_bytes(double(free_b)) + ")");
  }
  if (plan.max_bytes < plan.min_bytes) throw error("--max-bytes is smaller than --min-bytes");
  plan.points_per_octave = o.points_per_octave;
  if (!o.strides.empty()) {
    for (const auto& s : o.strides) plan.strides.push_back(probes::parse_bytes(s));
  } else {
    const auto lo = probes::parse_bytes(o.min_stride), hi = probes::parse_bytes(o.max_stride);
    for (std::uint64_t s = lo; s <= hi; s *= 2) plan.strides.push_back(s);
  }
  for (auto s : plan.strides)
    if (s % 8 != 0 || s < 8) throw error("stride " + std::to_string(s) + " is not a multiple of 8 bytes");

  const double mhz_before = probes::measure_sm_clock_mhz();
  std::fprintf(stderr, "[tlb] allocating %s (%s)\n", probes::format_bytes(double(plan.max_bytes)).c_str(), o.alloc.c_str());
  probes::device_pool pool(kind, plan.max_bytes, o.common.device, o.common.seed);
  plan.max_bytes = std::min<std::uint64_t>(plan.max_bytes, pool.bytes());
  probes::pointer_chase chase(pool, o.samples);
  auto measure = [&](std::uint64_t stride, std::uint64_t hops) {
    const auto c = chase.measure(hops);
    probes::sweep_point p;
    p.stride_bytes = stride;
    p.hops = hops;
    p.footprint_bytes = c.footprint_bytes;
    p.median = c.median;
    p.p10 = c.p10;
    p.p90 = c.p90;
    p.mean = c.mean;
    p.samples = c.samples;
    p.smid = c.smid;
    return p;
  };
  auto progress = [](const std::string& s) { std::fprintf(stderr, "[tlb] %s\n", s.c_str()); };

  // Positive control: a 128-byte stride walks one L2 line per hop, so the L2 capacity shows as
  // a large, well-known rise. A flat TLB sweep is credible only beside a control that rose.
  json control = nullptr;
  if (o.control) {
    probes::sweep_plan cp;
    cp.strides = {128};
    cp.min_bytes = 1ull << 20;
    cp.max_bytes = std::min<std::uint64_t>(plan.max_bytes, std::uint64_t(dev.l2_bytes) * 4);
    cp.points_per_octave = 8;
    const auto cpts = probes::run_sweep(
        cp, [&](std::uint64_t s) { chase.prepare_stride(s, cp.max_bytes); }, measure,
        [](const std::string& s) { std::fprintf(stderr, "[tlb] control: %s\n", s.c_str()); });
    std::vector<double> x, y;
    json pts = json::array();
    for (const auto& p : cpts) {
      x.push_back(double(p.footprint_bytes));
      y.push_back(p.median);
      pts.push_back(point_json(p));
    }
    const auto steps = analysis::detect_steps(x, y);
    json found = json::array();
    bool passed = false;
    for (const auto& s : steps) {
      found.push_back({{"boundary_bytes", s.x_lo}, {"step_cycles", s.jump}, {"snr", s.snr}});
      if (s.x_lo >= double(dev.l2_bytes) / 8 && s.x_lo <= double(dev.l2_bytes) * 4) passed = true;
    }
    control = {{"kind", "l2_capacity"},
               {"stride_bytes", 128},
               {"expected_bytes", dev.l2_bytes},
               {"steps", found},
               {"passed", passed},
               {"points", pts}};
    std::fprintf(stderr, "[tlb] control (L2 capacity, %s): %s\n",
                 probes::format_bytes(double(dev.l2_bytes)).c_str(),
                 passed ? "rise found" : "NO rise found: the probe cannot be trusted on this GPU");
  }

  const auto points = probes::run_sweep(
      plan, [&](std::uint64_t s) { chase.prepare_stride(s); }, measure, progress);
  const double mhz_after = probes::measure_sm_clock_mhz();
  dev.sm_clock_mhz_seen = 0.5 * (mhz_before + mhz_after);
  const double wall = std::chrono::duration<double>(clock::now() - t_start).count();

  json pts = json::array();
  for (const auto& p : points) pts.push_back(point_json(p));
  json strides = json::array();
  for (auto s : plan.strides) strides.push_back(s);
  json granularity = pool.granularity() ? json(pool.granularity()) : json("unknown");
  json doc = {{"schema", "gpuprobe.result/1"},
              {"probe", "tlb"},
              {"device", to_json(dev)},
              {"meta", run_metadata(this_invocation().argc, this_invocation().argv, o.common.seed)},
              {"tlb",
               {{"alloc", o.alloc},
                {"granularity_bytes", granularity},
                {"min_bytes", plan.min_bytes},
                {"max_bytes", plan.max_bytes},
                {"strides", strides},
                {"points_per_octave", plan.points_per_octave},
                {"samples_per_point", chase.last_samples().size()},
                {"load", "ld.global.cg (L1 bypassed)"},
                {"sm_clock_mhz_before", mhz_before},
                {"sm_clock_mhz_after", mhz_after},
                {"control", control},
                {"points", pts},
                {"wall_seconds", wall}}}};

  // A first look (the full analysis is `gpuprobe analyze tlb`).
  analysis::tlb_dataset ds;
  analysis::parse_gpuprobe_tlb_result(doc, o.common.out, ds);
  const auto a = analysis::analyze_tlb(ds);
  write_json_atomic(o.common.out, doc);
  std::printf("gpuprobe tlb: %s, alloc %s (granularity %s), %zu points, %.1f s, SM clock %.0f MHz\n",
              dev.name.c_str(), o.alloc.c_str(),
              pool.granularity() ? probes::format_bytes(double(pool.granularity())).c_str() : "unknown",
              points.size(), wall, dev.sm_clock_mhz_seen);
  if (!control.is_null())
    std::printf("  control (L2 capacity): %s\n", control["passed"].get<bool>() ? "passed" : "FAILED");
  for (const auto& L : a.levels)
    std::printf("  level: %.0f entries x %s page (%s) = reach %s, miss +%.0f cycles, confidence %.2f\n",
                L.entries, probes::format_bytes(L.page_bytes).c_str(), L.page_bound.c_str(),
                probes::format_bytes(L.reach_bytes).c_str(), L.miss_penalty_cycles, L.confidence);
  for (const auto& n : a.notes) std::printf("  note: %s\n", n.c_str());
  std::printf("  wrote %s\n", o.common.out.c_str());
}

}  // namespace

void setup_tlb(CLI::App& parent) {
  auto opt = std::make_shared<tlb_options>();
  auto* app = parent.add_subcommand("tlb", "sweep strides x footprints with a pointer chase (TLB levels)");
  add_device_option(*app, opt->common);
  add_out_option(*app, opt->common, "result JSON file (gpuprobe.result/1)");
  add_seed_option(*app, opt->common);
  app->add_option("--alloc", opt->alloc, "cudamalloc | vmm | managed")->capture_default_str();
  app->add_option("--max-bytes", opt->max_bytes, "largest footprint (default: 94% of free memory)");
  app->add_option("--min-bytes", opt->min_bytes, "smallest footprint")->capture_default_str();
  app->add_option("--min-stride", opt->min_stride, "smallest stride (powers of two up to --max-stride)")->capture_default_str();
  app->add_option("--max-stride", opt->max_stride, "largest stride")->capture_default_str();
  app->add_option("--strides", opt->strides, "explicit list of strides (overrides min/max)");
  app->add_option("--points-per-octave", opt->points_per_octave, "coarse grid density")->capture_default_str()->check(CLI::Range(1, 64));
  app->add_option("--samples", opt->samples, "timed hops per point (<= 8192)")->capture_default_str()->check(CLI::Range(16u, 8192u));
  app->add_flag("!--no-control", opt->control, "skip the L2-capacity positive control");
  app->callback([opt] { run_tlb(*opt); });
}

}  // namespace gpuprobe::cli
