// gpuprobe tlb-sharing: flags -> probes::sharing_options; the probe (probes/sharing/driver.hpp)
// runs, the result is written and its analysis printed.
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/paths.hpp"
#include "common/units.hpp"
#include "probes/kit.hpp"
#include "probes/sharing/analysis.hpp"
#include "probes/sharing/driver.hpp"
#include "probes/sharing/kernel.hpp"
#include "probes/sharing/probe.hpp"

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

namespace gpuprobe::probes::sharing {

namespace {

struct sharing_flags {
  kit::common_options common;
  std::string profile;
  int level = 1;
  std::optional<int> candidate; // test the profile's candidate N (C<N>) instead of a level
  std::string coverage_bytes;
  double entries = 0;
  std::string order = "random";
  std::string lines = "spread";
  probes::sharing_options o;
};

probes::level_spec level_from_flags(const sharing_flags &f) {
  if (!f.profile.empty()) {
    if (!f.coverage_bytes.empty() || f.entries > 0)
      throw error("give --profile/--level or --coverage-bytes/--entries, not both");
    auto L = probes::level_from_profile(model::read_profile(f.profile).tlb, f.profile,
                                        f.candidate.has_value(), f.candidate.value_or(f.level));
    L.level =
        f.level; // recorded as before: the --level given (the candidate shows in level_origin)
    return L;
  }
  if (f.coverage_bytes.empty() || f.entries <= 0)
    throw error("give --profile PROFILE.json (and --level K) or --coverage-bytes C --entries E");
  return probes::hypothesis(parse_bytes(f.coverage_bytes), double(std::llround(f.entries)),
                            "--coverage-bytes/--entries");
}

void run(sharing_flags &f) {
  auto &o = f.o;
  o.level = level_from_flags(f);
  o.seed = f.common.seed;
  o.random_order = f.order == "random";
  o.spread_lines = f.lines == "spread";
  if (o.sample_sms > 0)
    o.sample_verdict = probes::sample_not_global; // global on the sample: global everywhere
  probes::plan_sharing(o.level.coverage_bytes(), o.level.entries(),
                       o.overfill); // bad options fail before any GPU work
  const auto dev = query_device(f.common.device);
  const auto r = probes::run_sharing(o, dev);
  const auto a = probes::analyze_sharing(probes::square_matrix_of(r, f.common.out));
  write_json_atomic(f.common.out, to_json(r));
  const auto p = probes::sharing_params_from_json(r.params);
  std::printf("gpuprobe tlb-sharing: %s, level %s, %zu SMs, %s pool, %.1f s\n", dev.name.c_str(),
              probes::describe(o.level).c_str(), r.sm_ids.size(), p.alloc.value_or("?").c_str(),
              r.wall_seconds);
  std::printf("  scope: %s (%s)\n", probes::to_string(a.scope).c_str(), a.reason.c_str());
  const auto count = [](const std::optional<long long> &n) {
    return n ? std::to_string(*n) : std::string("null");
  };
  if (p.sample)
    std::printf("  sample: %s of %s SMs spread over the GPU: %s\n", count(p.sample->sms).c_str(),
                count(p.sample->of).c_str(), p.sample->finding.c_str());
  if (!a.structure.empty())
    std::printf("  structure: %s\n", a.structure.c_str());
  std::printf("  wrote %s\n", f.common.out.c_str());
}

} // namespace

kit::command cli() {
  auto f = std::make_shared<sharing_flags>();
  kit::command c(
      "tlb-sharing", "which SMs share a TLB level (victim/disruptor pairs)",
      "Example: gpuprobe tlb-sharing --coverage-bytes 32M --entries 2048 --max-sms 16 --out "
      "sharing.json");
  c.measures_result(f->common);
  c.option("--profile", &f->profile, "profile JSON (gpuprobe analyze tlb) holding the level");
  c.option("--level", &f->level, "level N of the profile (L1 = innermost)").shown();
  c.option(
      "--candidate", &f->candidate,
      "test the profile's candidate N instead (C1, C2, ...: structures below the confidence bar)");
  c.option("--coverage-bytes,--page-bytes", &f->coverage_bytes,
           "what one entry of the level covers (instead of --profile; --page-bytes: its old name)");
  c.option("--entries", &f->entries, "entries of the level (instead of --profile)");
  c.option("--alloc", &f->o.alloc,
           "auto (alias where it can) | alias (one 2 MiB chunk at every page: no memory, no L2 "
           "disturbance) | cudamalloc | vmm-sparse (one 2 MiB chunk per page)")
      .shown()
      .of({"auto", "alias", "cudamalloc", "vmm-sparse"});
  c.option("--overfill", &f->o.overfill, "(victim + disruptor pages) / entries").shown();
  c.option("--order", &f->order, "random | sequential: page order of the chains")
      .shown()
      .of({"random", "sequential"});
  c.option("--lines", &f->lines, "spread | zero: line offset inside each page")
      .shown()
      .of({"spread", "zero"});
  c.option("--max-sms", &f->o.max_sms, "test only the first N SMs (0: all)").shown();
  c.option("--sample-sms", &f->o.sample_sms,
           "first N SMs spread over the GPU: if they all share the level it is global and "
           "the rest is not measured, else every SM is (0: every SM at once)")
      .shown();
  c.option("--timeout", &f->o.timeout_s, "watchdog per launch in seconds (0: from the level size)")
      .shown();
  c.run = [f] { run(*f); };
  return c;
}

namespace {

// gpuprobe analyze sharing: a level's matrix -> scope and SM groups.
void run_analyze_sharing(const kit::common_options &o) {
  refuse_output_over_inputs("analyze sharing", o.out, o.inputs);
  if (o.inputs.size() != 1)
    throw error("analyze sharing takes one --input (one level's matrix)");
  const auto m = probes::load_sharing_input(o.inputs[0]);
  const auto a = probes::analyze_sharing(m);
  json device = m.device.is_null() ? json{{"name", m.device_name}} : m.device;
  json sharing = probes::to_json(a);
  sharing["input"] = {{"file", m.source}, {"format", m.format}, {"sms", m.sm_ids.size()}};
  json doc = document_head(schema::sharing, device, o.seed);
  doc["level"] = m.params.is_null() ? json(nullptr) : m.params;
  doc["sharing"] = sharing;
  write_json_atomic(o.out, doc);
  std::printf("gpuprobe analyze sharing: %s, %zu SMs (%s)\n", m.device_name.c_str(),
              m.sm_ids.size(), m.format.c_str());
  std::printf("  scope: %s\n  reason: %s\n", probes::to_string(a.scope).c_str(), a.reason.c_str());
  for (const auto &g : a.groups) {
    if (a.scope == probes::sharing_scope::global)
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

kit::command analyze_cli() {
  auto f = std::make_shared<kit::common_options>();
  kit::command c(
      "sharing", "TLB sharing scope and SM groups from a tlb-sharing result or TLBsharing-*.txt",
      "Example: gpuprobe analyze sharing --input raw/sharing_C2.json --out sharing.json");
  c.reads(*f, "gpuprobe tlb-sharing result JSON or cuda-gpu-tlb TLBsharing-*.txt",
          "sharing JSON file (gpuprobe.sharing/1)");
  c.run = [f] { run_analyze_sharing(*f); };
  return c;
}

} // namespace gpuprobe::probes::sharing
