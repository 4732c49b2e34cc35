#pragma once
// `gpuprobe characterize`: the plan of stages (one gpuprobe subcommand each, writing one file
// under DIR/raw) and the assembly of DIR/profile.json from what they wrote. Host-only.
#include "model/profile.hpp"
#include "probes/sampling_driver.hpp"
#include "probes/tlb_driver.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpuprobe::analysis {

// results/<gpu-name-slug>-<uuid first 8 hex digits>, e.g. results/nvidia-h100-80gb-hbm3-df40c491.
std::string default_results_dir(const std::string &gpu_name, const std::string &uuid);

struct stage {
  std::string name;   // tlb, tlb_real, tlb_profile, tlb_real_profile, sharing_L1 ..., atomics
  std::string output; // path relative to DIR
  std::vector<std::string> args;  // gpuprobe arguments (without the binary)
  std::vector<std::string> reads; // stages whose output it reads: when one runs, this one reruns
};

// The stages before sharing (sharing depends on the TLB profile: sharing_stages): the aliased
// sweep (tlb), the real-memory cross-check (tlb_real), their analyses, atomics.
std::vector<stage> plan_stages(bool quick, int device, unsigned long long seed = 1);

// One tlb-sharing stage per level of the TLB profile, and one for its largest candidate when
// that reaches beyond every level (so a structure below the confidence bar, like the H100's
// 64 GiB one, still gets a sharing answer, labelled as a candidate's).
std::vector<stage> sharing_stages(const model::tlb_hierarchy &tlb, bool quick, int device,
                                  unsigned long long seed = 1);

// Is `path` a finished stage output (JSON with a schema this build reads)?
bool stage_done(const std::string &path);

// May resume keep the finished output of stage `s`? Only when it was produced by the same stage
// arguments (so --quick, --device and --seed), on the GPU with this UUID, by this gpuprobe
// version; `reason` says why not ("" when kept, "not run yet" when there is no finished file).
struct stage_check {
  bool keep = false;
  std::string reason;
};
stage_check check_stage(const std::string &path, const stage &s, const std::string &uuid);

// "" when DIR holds no result of a GPU other than `uuid`; else "DIR/FILE was measured on GPU-x,
// this is GPU-y" (profile.json, tuning.json, validation.json: a folder must not become a mix).
std::string other_gpu_results(const std::string &dir, const std::string &uuid);

// The memory access as the real-memory chase's L2 control measured it: {l2_hit_cycles (footprints
// up to a quarter of the L2), memory_cycles (twice the L2 and more), extra_cycles}; null without
// a control.
nlohmann::json memory_access(const probes::tlb_result &real_result);
// What serves a level's miss, from its penalty in units of that extra: "memory: a page walk ..."
// at 0.75 of a memory access or more, else "on chip (...)"; "" without a reference.
std::string miss_served_by(double penalty_cycles, const nlohmann::json &memory);

// The aliased levels (`tlb`: a profile's tlb block) checked against the real-memory analysis
// (`real_tlb`), the real-memory result's L2 near/far split and memory access, and the random
// sampling below/above each level (`sampling`: a tlb-sampling result, or none): the profile's
// tlb.cross_check.
nlohmann::json cross_check(const model::tlb_hierarchy &tlb, const model::tlb_hierarchy &real_tlb,
                           const probes::tlb_result &real_result,
                           const probes::sampling_result *sampling);

// DIR/profile.json (gpuprobe.profile/1): device, tlb (levels and candidates, each with the
// sharing analysis of its stage when one ran), atomics fits, the conditions seen, the stages.
model::profile assemble_profile(const std::string &dir, const nlohmann::json &stages_run,
                                const nlohmann::json &conditions);

} // namespace gpuprobe::analysis
