#pragma once
// `gpuprobe characterize`'s plan: its stages (one gpuprobe subcommand each, writing one file under
// DIR/raw), whether a finished stage may be kept, and where results go. Host-only.
#include "model/profile.hpp"
#include "probes/kit.hpp"

#include <string>
#include <vector>

namespace gpuprobe::pipeline {

// results/<gpu-name-slug>-<uuid first 8 hex digits>, e.g. results/nvidia-h100-80gb-hbm3-df40c491.
std::string default_results_dir(const std::string &gpu_name, const std::string &uuid);

// A stage, what a probe's plan is asked for, and the stage over the TLB profile: the probe kit's
// (probes/kit.hpp), which each probe's plan.cpp fills.
using probes::kit::plan_request;
using probes::kit::profile_stage;
using probes::kit::stage;

// The stages before sharing (sharing depends on the TLB profile: sharing_stages), each probe's in
// catalog order: the aliased sweep (tlb), the real-memory cross-check (tlb_real), their analyses,
// sampling, conflict, atomics.
std::vector<stage> plan_stages(bool quick, int device, unsigned long long seed = 1);

// The stages the TLB profile decides: one tlb-sharing stage per level, and one for its largest
// candidate when that reaches beyond every level (so a structure below the confidence bar, like
// the H100's 64 GiB one, still gets a sharing answer, labelled as a candidate's).
std::vector<stage> sharing_stages(const model::tlb_hierarchy &tlb, bool quick, int device,
                                  unsigned long long seed = 1);

// The order characterize runs the planned stages in: `first` before the sharing stages, `last`
// after them, once the alias range is unmapped (stage::runs_last). With `map_late` the
// alias-free stages (stage::alias_free: atomics) come first, except those that keep their place
// (stage::keeps_place: tlb_real) and the stages that read one, so a GPU beside another
// maps its range while the other's sweep runs, not while the other maps (gpuprobe run --devices
// --map-late gives it to every second GPU: docs/fleet.md). Each stage still follows the stages it
// reads.
struct stage_order {
  std::vector<stage> first, last;
};
stage_order order_stages(std::vector<stage> planned, bool map_late);

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

} // namespace gpuprobe::pipeline
