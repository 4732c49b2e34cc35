// gpuprobe tlb: flags -> probes::tlb_options; the probe (probes/tlb/driver.hpp) runs, the result is
// written, and a first look at its levels is printed (the full analysis: `analyze tlb`).
#include "common/device_info.hpp"
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/paths.hpp"
#include "common/units.hpp"
#include "probes/kit.hpp"
#include "probes/tlb/data.hpp"
#include "probes/tlb/driver.hpp"
#include "probes/tlb/levels.hpp"
#include "probes/tlb/probe.hpp"
#include "probes/tlb/sweep.hpp"

#include <cstdio>
#include <memory>

namespace gpuprobe::probes::tlb {

namespace {

struct tlb_flags {
  kit::common_options common;
  std::string alloc = "cudamalloc";
  std::string max_bytes, min_bytes = "1M", min_stride = "64K", max_stride = "1G", alias_bytes;
  std::string short_strides; // BELOW:TO (tlb_options::short_below, short_bytes)
  std::vector<std::string> strides;
  probes::tlb_options o;
};

void run(tlb_flags &f) {
  auto &o = f.o;
  o.alloc = parse_alloc_kind(f.alloc);
  o.seed = f.common.seed;
  o.max_bytes = f.max_bytes.empty() ? 0 : parse_bytes(f.max_bytes);
  o.alias_bytes = f.alias_bytes.empty() ? 0 : parse_bytes(f.alias_bytes);
  if (o.alias_bytes && o.alloc != alloc_kind::alias)
    throw error("--alias-bytes goes with --alloc alias");
  o.min_bytes = parse_bytes(f.min_bytes);
  o.min_stride = parse_bytes(f.min_stride);
  o.max_stride = parse_bytes(f.max_stride);
  for (const auto &s : f.strides)
    o.strides.push_back(parse_bytes(s));
  if (!f.short_strides.empty()) {
    const auto colon = f.short_strides.find(':');
    if (colon == std::string::npos)
      throw error("--short-strides: BELOW:TO, e.g. 8M:96G (got '" + f.short_strides + "')");
    try {
      o.short_below = parse_bytes(f.short_strides.substr(0, colon));
      o.short_bytes = parse_bytes(f.short_strides.substr(colon + 1));
    } catch (const std::exception &e) {
      throw error(std::string("--short-strides: ") + e.what());
    }
    if (o.short_below == 0 || o.short_bytes < o.min_bytes)
      throw error(
          "--short-strides: a stride above 0 and a footprint of at least --min-bytes (got '" +
          f.short_strides + "')");
  }
  const auto r = probes::run_tlb(o, query_device(f.common.device));
  probes::tlb_dataset ds;
  probes::add_tlb_result(r, f.common.out, ds);
  const auto a = probes::find_tlb_levels(ds);
  write_json_atomic(f.common.out, to_json(r));
  const device_info dev = device_info_from_json(r.device); // the block the result records
  std::printf(
      "gpuprobe tlb: %s, alloc %s (granularity %s), %zu points, %.1f s, SM clock %.0f MHz\n",
      dev.name.c_str(), r.alloc.c_str(),
      r.granularity_bytes ? format_bytes(double(r.granularity_bytes)).c_str() : "unknown",
      r.points.size(), r.wall_seconds, dev.sm_clock_mhz_seen);
  if (r.control)
    std::printf("  control (L2 capacity): %s\n", r.control->passed ? "passed" : "FAILED");
  for (const auto &L : a.levels)
    std::printf(
        "  level: %.0f entries x %s coverage (%s) = reach %s, miss +%.0f cycles, confidence %.2f\n",
        L.entries, format_bytes(L.coverage_bytes).c_str(), probes::to_string(L.bound).c_str(),
        format_bytes(L.reach_bytes).c_str(), L.miss_penalty_cycles, L.confidence);
  for (const auto &n : a.notes)
    std::printf("  note: %s\n", n.c_str());
  std::printf("  wrote %s\n", f.common.out.c_str());
}

} // namespace

kit::command cli() {
  auto f = std::make_shared<tlb_flags>();
  kit::command c(
      "tlb", "sweep strides x footprints with a pointer chase (TLB levels)",
      "Example: gpuprobe tlb --alloc vmm --strides 2M 32M --min-bytes 40G --out tlb.json");
  c.measures(f->common, "result JSON file (" + schema::result.id() + ")");
  c.option("--alloc", &f->alloc,
           "cudamalloc | vmm | managed | alias (one physical chunk mapped at every slot of a "
           "virtual range: translation alone, past the device memory)")
      .shown()
      .of({"cudamalloc", "vmm", "managed", "alias"});
  c.option(
      "--alias-bytes", &f->alias_bytes,
      "alias: the physical chunk (a multiple of the VMM granularity; default the granularity)");
  c.option(
      "--max-bytes", &f->max_bytes,
      "largest footprint (default: 94% of free memory; alias: 384 GiB, 4/3 of the largest full\n"
      "miss measured, Hopper's third level at 288 GiB)");
  c.option("--min-bytes", &f->min_bytes, "smallest footprint").shown();
  c.option("--min-stride", &f->min_stride, "smallest stride (powers of two up to --max-stride)")
      .shown();
  c.option("--max-stride", &f->max_stride, "largest stride").shown();
  c.option("--strides", &f->strides, "explicit list of strides (overrides min/max)");
  c.option("--short-strides", &f->short_strides,
           "BELOW:TO: strides below BELOW sweep footprints up to TO only (e.g. 8M:96G); an "
           "alias range then maps only the slots the sweep touches");
  c.option("--points-per-octave", &f->o.points_per_octave, "coarse grid density").shown().in(1, 64);
  c.option("--samples", &f->o.samples, "timed hops per point (<= 8192)").shown().in(16u, 8192u);
  c.option( // a callback: CLI11 shows a negated flag's default as "{false}"
      "--no-control", [f] { f->o.control = false; }, "skip the L2-capacity positive control");
  c.run = [f] { run(*f); };
  return c;
}

namespace {

// gpuprobe analyze tlb: curves -> TLB levels (the profile's "tlb" block).
void run_analyze_tlb(const kit::common_options &o, bool allow_mixed, std::optional<bool> model) {
  refuse_output_over_inputs("analyze tlb", o.out, o.inputs);
  const auto ds = probes::load_tlb_inputs(o.inputs, allow_mixed);
  probes::tlb_analysis_options opt;
  opt.synthesize = model;
  const auto a = probes::find_tlb_levels(ds, opt);
  json device = ds.device.is_null() ? json{{"name", ds.device_name}} : ds.device;
  json tlb = probes::to_json(a);
  tlb["inputs"] = ds.sources;
  tlb["alloc"] = ds.alloc.empty() ? json(nullptr) : json(ds.alloc);
  json doc = document_head(schema::profile, device, o.seed);
  doc["tlb"] = tlb;
  write_json_atomic(o.out, doc);
  std::printf("gpuprobe analyze tlb: %s, %zu curves, searched up to %s\n", ds.device_name.c_str(),
              ds.curves.size(), format_bytes(a.searched_up_to_bytes).c_str());
  const auto levels = probes::hierarchy_of(a).levels;
  for (std::size_t k = 0; k < a.levels.size(); ++k) {
    const auto &L = a.levels[k];
    std::printf("  L%zu: %.1f entries x %s coverage (%s) = reach %s, miss penalty %.1f cycles, "
                "confidence %.2f (z %.1f at %d strides)\n",
                k + 1, L.entries, format_bytes(L.coverage_bytes).c_str(),
                probes::to_string(L.bound).c_str(), format_bytes(L.reach_bytes).c_str(),
                L.miss_penalty_cycles, L.confidence, L.z, L.z_strides);
    if (k < levels.size())
      std::printf("      structure: %s\n", probes::structure_detail(levels[k]).c_str());
  }
  for (const auto &c : a.cache_effects)
    std::printf("  cache effect (not a TLB level): after %.0f hops, +%.0f cycles\n", c.entries,
                c.miss_penalty_cycles);
  for (const auto &c : a.set_conflicts)
    std::printf("  set conflicts (a level seen at larger strides, not a level): %.0f x %s, +%.0f "
                "cycles\n",
                c.entries, format_bytes(c.coverage_bytes).c_str(), c.miss_penalty_cycles);
  for (const auto &n : a.notes)
    std::printf("  note: %s\n", n.c_str());
  std::printf("  wrote %s\n", o.out.c_str());
}

} // namespace

kit::command analyze_cli() {
  struct analyze_flags {
    kit::common_options common;
    bool allow_mixed = false;
    std::optional<bool> model;
  };
  auto f = std::make_shared<analyze_flags>();
  kit::command c("tlb", "TLB levels from gpuprobe results or cuda-gpu-tlb CSV files",
                 "Example: gpuprobe analyze tlb --input raw/tlb.json --out raw/tlb_profile.json");
  c.reads(f->common, "result JSON or cuda-gpu-tlb CSV (repeat: several files are one GPU)",
          "profile JSON file (gpuprobe.profile/2)");
  c.option("--allow-mixed", &f->allow_mixed,
           "analyze sweeps of different GPUs as one (default: refused, naming them)");
  c.option(
      "--model", [f] { f->model = true; },
      "fit the levels as one model of the whole sweep also where the sweep is not aliased (real "
      "memory, the 2017 tool's CSVs: the model has no data cache); default: on for an aliased "
      "sweep. Its rates on simulated GPUs: scripts/simulated_family.sh");
  c.option(
      "--no-model", [f] { f->model = false; },
      "the rise detectors alone, also on an aliased sweep");
  c.run = [f] { run_analyze_tlb(f->common, f->allow_mixed, f->model); };
  return c;
}

} // namespace gpuprobe::probes::tlb
