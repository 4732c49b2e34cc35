// gpuprobe analyze tlb: curves -> TLB levels (the profile's "tlb" block).
#include "cli/common.hpp"
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/paths.hpp"
#include "common/units.hpp"
#include "probes/sharing/analysis.hpp"
#include "probes/tlb/data.hpp"
#include "probes/tlb/levels.hpp"
#include "probes/tlb/sweep.hpp"

#include <cstdio>
#include <memory>

namespace gpuprobe::cli {

namespace {

void run_analyze_tlb(const common_options &o, bool allow_mixed) {
  check_output_path(o.out);
  refuse_output_over_inputs("analyze tlb", o.out, o.inputs);
  const auto ds = analysis::load_tlb_inputs(o.inputs, allow_mixed);
  const auto a = analysis::find_tlb_levels(ds);
  json device = ds.device.is_null() ? json{{"name", ds.device_name}} : ds.device;
  json tlb = analysis::to_json(a);
  tlb["inputs"] = ds.sources;
  tlb["alloc"] = ds.alloc.empty() ? json(nullptr) : json(ds.alloc);
  json doc = document_head(schema::profile, device, o.seed);
  doc["tlb"] = tlb;
  write_json_atomic(o.out, doc);
  std::printf("gpuprobe analyze tlb: %s, %zu curves, searched up to %s\n", ds.device_name.c_str(),
              ds.curves.size(), format_bytes(a.searched_up_to_bytes).c_str());
  const auto levels = model::tlb_hierarchy_from_json(tlb).levels;
  for (std::size_t k = 0; k < a.levels.size(); ++k) {
    const auto &L = a.levels[k];
    std::printf("  L%zu: %.1f entries x %s page (%s) = reach %s, miss penalty %.1f cycles, "
                "confidence %.2f (z %.1f at %d strides)\n",
                k + 1, L.entries, format_bytes(L.page_bytes).c_str(),
                analysis::to_string(L.bound).c_str(), format_bytes(L.reach_bytes).c_str(),
                L.miss_penalty_cycles, L.confidence, L.z, L.z_strides);
    if (k < levels.size())
      std::printf("      structure: %s\n", analysis::structure_detail(levels[k]).c_str());
  }
  for (const auto &c : a.cache_effects)
    std::printf("  cache effect (not a TLB level): after %.0f hops, +%.0f cycles\n", c.entries,
                c.miss_penalty_cycles);
  for (const auto &c : a.set_conflicts)
    std::printf("  set conflicts (a level seen at larger strides, not a level): %.0f x %s, +%.0f "
                "cycles\n",
                c.entries, format_bytes(c.page_bytes).c_str(), c.miss_penalty_cycles);
  for (const auto &n : a.notes)
    std::printf("  note: %s\n", n.c_str());
  std::printf("  wrote %s\n", o.out.c_str());
}

void run_analyze_sharing(const common_options &o) {
  check_output_path(o.out);
  refuse_output_over_inputs("analyze sharing", o.out, o.inputs);
  if (o.inputs.size() != 1)
    throw error("analyze sharing takes one --input (one level's matrix)");
  const auto m = analysis::load_sharing_input(o.inputs[0]);
  const auto a = analysis::analyze_sharing(m);
  json device = m.device.is_null() ? json{{"name", m.device_name}} : m.device;
  json sharing = analysis::to_json(a);
  sharing["input"] = {{"file", m.source}, {"format", m.format}, {"sms", m.sm_ids.size()}};
  json doc = document_head(schema::sharing, device, o.seed);
  doc["level"] = m.params.is_null() ? json(nullptr) : m.params;
  doc["sharing"] = sharing;
  write_json_atomic(o.out, doc);
  std::printf("gpuprobe analyze sharing: %s, %zu SMs (%s)\n", m.device_name.c_str(),
              m.sm_ids.size(), m.format.c_str());
  std::printf("  scope: %s\n  reason: %s\n", analysis::to_string(a.scope).c_str(),
              a.reason.c_str());
  for (const auto &g : a.groups) {
    if (a.scope == analysis::sharing_scope::global)
      break;
    std::string ids;
    for (int id : g)
      ids += (ids.empty() ? "" : ",") + std::to_string(id);
    std::printf("  group {%s}\n", ids.c_str());
  }
  if (!a.structure.empty())
    std::printf("  structure: %s\n", a.structure.c_str());
  for (const auto &n : a.notes)
    std::printf("  note: %s\n", n.c_str());
  std::printf("  wrote %s\n", o.out.c_str());
}

} // namespace

void setup_analyze(CLI::App &parent) {
  auto *app = parent.add_subcommand("analyze", "turn raw probe results into parameters");
  app->require_subcommand(1);
  auto opt = std::make_shared<common_options>();
  auto *tlb =
      app->add_subcommand("tlb", "TLB levels from gpuprobe results or cuda-gpu-tlb CSV files");
  tlb->footer("Example: gpuprobe analyze tlb --input raw/tlb.json --out raw/tlb_profile.json");
  add_input_option(*tlb, *opt,
                   "result JSON or cuda-gpu-tlb CSV (repeat: several files are one GPU)");
  add_out_option(*tlb, *opt, "profile JSON file (gpuprobe.profile/1)");
  auto mixed = std::make_shared<bool>(false);
  tlb->add_flag("--allow-mixed", *mixed,
                "analyze sweeps of different GPUs as one (default: refused, naming them)");
  tlb->callback([opt, mixed] { run_analyze_tlb(*opt, *mixed); });
  auto sopt = std::make_shared<common_options>();
  auto *sharing = app->add_subcommand(
      "sharing", "TLB sharing scope and SM groups from a tlb-sharing result or TLBsharing-*.txt");
  sharing->footer(
      "Example: gpuprobe analyze sharing --input raw/sharing_C2.json --out sharing.json");
  add_input_option(*sharing, *sopt,
                   "gpuprobe tlb-sharing result JSON or cuda-gpu-tlb TLBsharing-*.txt");
  add_out_option(*sharing, *sopt, "sharing JSON file (gpuprobe.sharing/1)");
  sharing->callback([sopt] { run_analyze_sharing(*sopt); });
}

} // namespace gpuprobe::cli
