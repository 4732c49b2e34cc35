// gpuprobe characterize's sequence (cli/characterize_cmd.cpp maps its flags here): the TLB sweeps
// (aliased and in real memory) -> their TLB profiles -> the stages that profile decides (the
// level test's sampling, the conflict sets, what one entry covers, every SM's penalty) -> sharing
// of each level -> atomics -> DIR/profile.json (each probe's `contribute`). Each stage is this
// binary's own subcommand, run in DIR and writing one file (atomically) under DIR/raw; the
// stage runner keeps a finished stage, so an interrupted run resumes. The stages run inside this
// process, one CUDA context and one alias range for all, or as child processes. Beside the
// sequence: the busy guard around each measuring stage (busy_guard.hpp), the clock verdict, the
// removal of a sharing file an earlier profile planned, and the console's summary
// (characterize_console.hpp).
#include "pipeline/characterize_driver.hpp"

#include "common/build_info.hpp"
#include "common/device_info.hpp"
#include "common/device_memory.hpp"
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/folder_lock.hpp"
#include "common/json_io.hpp"
#include "common/outputs.hpp"
#include "common/process.hpp"
#include "common/results_folder.hpp"
#include "common/stopwatch.hpp"
#include "findings/characterize.hpp"
#include "model/file_head.hpp"
#include "model/profile.hpp"
#include "pipeline/busy_guard.hpp"
#include "pipeline/characterize_console.hpp"
#include "pipeline/gpu_conditions.hpp"
#include "pipeline/stage_runner.hpp"
#include "pipeline/subprocess.hpp"
#include "probes/tlb/levels.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

namespace gpuprobe::pipeline {

namespace {
namespace fs = std::filesystem;
using nlohmann::json;

// The device a finished folder was measured on (its aliased sweep's device block), for
// --reanalyze, which has no GPU to ask.
device_info measured_device(const std::string &dir) {
  const fs::path f = results_folder{dir}.raw(results_folder::raw_file::tlb);
  if (!fs::exists(f))
    throw error("characterize --reanalyze: " + f.string() +
                " does not exist: measure first with `gpuprobe characterize --out " + dir + "`");
  return device_info_from_json(model::read_file_head(f.string()).device);
}

// --reanalyze derives one GPU's profile: a raw file measured on another GPU (copied in, or left
// by a run on another machine) is refused, named, as report refuses it.
void refuse_other_gpus_raw(const std::string &dir, const std::string &uuid) {
  std::string foreign;
  for (const auto &e : fs::directory_iterator(results_folder{dir}.raw())) {
    if (e.path().extension() != ".json")
      continue;
    std::string was;
    try {
      was = model::read_file_head(e.path().string()).uuid;
    } catch (const std::exception &) {
      continue; // unreadable: its stage reports it
    }
    if (!was.empty() && was != uuid)
      foreign += (foreign.empty() ? "" : ", ") + e.path().filename().string() + " (" + was + ")";
  }
  if (!foreign.empty())
    throw error("characterize --reanalyze: raw/ holds files of another GPU than raw/tlb.json's " +
                uuid + ": " + foreign + "; move them out (a profile is one GPU's)");
}

// A sharing file the new profile does not plan belongs to an earlier profile: never attached;
// removed, but kept by --reanalyze (a measurement: never removed without a GPU to measure again).
void drop_stale_sharing(const results_folder &folder, const std::vector<stage> &sharing,
                        bool reanalyze) {
  std::vector<fs::path> stale;
  for (const auto &e : fs::directory_iterator(folder.raw())) {
    const std::string f = e.path().filename().string();
    if (f.rfind(results_folder::raw_file::sharing_prefix, 0) == 0 &&
        e.path().extension() == ".json" &&
        std::none_of(sharing.begin(), sharing.end(),
                     [&](const stage &st) { return fs::path(st.output).filename() == f; }))
      stale.push_back(e.path());
  }
  for (const auto &p : stale) {
    if (reanalyze) {
      std::printf("  note: raw/%s belongs to an earlier TLB profile: not attached\n",
                  p.filename().string().c_str());
      continue;
    }
    fs::remove(p);
    std::printf("  note: removed raw/%s (a sharing stage of an earlier TLB profile)\n",
                p.filename().string().c_str());
  }
}

// Throttling seen: the SM clock the probes measured (the stages that witness it: stage::
// clock_witness, tlb and atomics) against the peak, into `conditions`.
void record_clock(json &conditions, const characterize_run_options &o, const std::string &dir,
                  const device_info &dev) {
  double seen = 0;
  for (const auto &st : plan_stages(o.quick, o.device, o.seed)) {
    const fs::path p = fs::path(dir) / st.output;
    if (st.clock_witness && fs::exists(p))
      seen = std::max(seen, model::read_file_head(p.string()).sm_clock_mhz_seen.value_or(0.0));
  }
  // The runtime's peak (0 under CUDA 13), else nvidia-smi's clocks.max.sm.
  const double peak =
      dev.sm_clock_khz_peak > 0
          ? dev.sm_clock_khz_peak / 1000.0
          : model::run_conditions_from_json(conditions).sm_clock_mhz_max.value_or(0.0);
  conditions["sm_clock_mhz_peak"] = peak;
  conditions["sm_clock_mhz_seen"] = seen;
  conditions["throttled"] = seen > 0 && seen < 0.95 * peak;
  if (conditions["throttled"].get<bool>())
    std::printf("  note: SM clock %.0f MHz seen, peak %.0f: throttled\n", seen, peak);
}

// A measurement taken beside other processes (--allow-busy) or at a throttled clock: every
// level and candidate says so, with the evidence, so no finding of it reads as a plain one.
void mark_disturbed(model::tlb_hierarchy &tlb, const json &conditions) {
  std::string why;
  const auto seen = model::run_conditions_from_json(conditions);
  for (const auto &b : seen.busy)
    why += (why.empty() ? "" : "; ") + b;
  if (seen.throttled)
    why += std::string(why.empty() ? "" : "; ") + "SM clock throttled";
  if (why.empty())
    return;
  for (auto *list : {&tlb.levels, &tlb.candidates})
    for (auto &L : *list)
      L.detail["disturbed"] = L.detail.contains("disturbed")
                                  ? L.detail["disturbed"].get<std::string>() + "; " + why
                                  : why;
}

// The conditions the run starts in (the previous run's where nothing is measured now): other
// processes on the GPU refuse the run (or, allowed, are recorded in `busy`), and the clocks.
json starting_conditions(const characterize_run_options &o, const device_info &dev,
                         busy_guard &busy, const model::run_record &previous) {
  if (o.reanalyze)
    return previous.conditions;
  const auto activity = o.allow_busy ? query_gpu_activity(dev.uuid)
                                     : wait_for_idle(dev.uuid, o.busy_wait_seconds, "the run");
  if (!activity.others.empty() && !o.allow_busy)
    throw error(busy_guard::refusal("", activity));
  if (!activity.others.empty())
    busy.seen.push_back("start: " + activity.describe());
  if (!activity.known)
    std::printf("  note: no nvidia-smi: other processes on the GPU cannot be seen\n");
  return conditions_before(dev.uuid, activity);
}

// The plan's stages, then the sharing stages the TLB profile decides, then those that run after
// them (stage::runs_last: atomics), in order_stages' order (--map-late: the alias-free ones
// first): each kept, run or run again as `runner` decides.
void run_all_stages(pipeline::stage_runner &runner, const characterize_run_options &o,
                    const results_folder &folder) {
  const auto [stages, last] = order_stages(plan_stages(o.quick, o.device, o.seed), o.map_late);
  std::size_t k = 0, n = stages.size() + last.size(); // "+": and the sharing stages to come
  for (const auto &st : stages)
    runner.run(st, ++k, n);
  const auto tlb =
      model::read_profile(folder.raw(results_folder::raw_file::tlb_profile).string()).tlb;
  const auto sharing = sharing_stages(tlb, o.quick, o.device, o.seed);
  if (sharing.empty())
    std::printf("  note: no TLB level or candidate: no sharing stage\n");
  drop_stale_sharing(folder, sharing, o.reanalyze);
  n = stages.size() + sharing.size() + last.size();
  runner.sharing_known = true;
  for (const auto &st : sharing)
    runner.run(st, ++k, n);
  alias_keeper::drop(); // the last stage that maps the alias range has run: its budget back
  for (const auto &st : last)
    runner.run(st, ++k, n);
}

// profile.json: kept as written when nothing was measured or analyzed now (with the conditions
// and times of its measurement: `gpuprobe run` sees it unchanged and keeps what follows), else
// assembled from the stages' files and written.
model::profile finish_profile(const characterize_run_options &o, const std::string &dir,
                              const pipeline::stage_runner &runner, const json &previous_doc,
                              const model::run_record &previous, const json &conditions,
                              double wall) {
  const std::string profile_path = results_folder{dir}.profile().string();
  if (runner.ran.empty() && !o.reanalyze && !previous_doc.empty()) {
    model::profile kept = model::profile_from_json(previous_doc, profile_path);
    const std::string by = model::file_head_from_json(previous_doc, profile_path).git_commit;
    std::printf("  profile.json done earlier, kept%s\n",
                by == git_commit()
                    ? ""
                    : (" (made by gpuprobe " + by +
                       "; --reanalyze derives it again with this build, no GPU needed)")
                          .c_str());
    return kept;
  }
  model::profile made = findings::assemble_profile(dir, runner.stages_run, conditions);
  mark_disturbed(made.tlb, conditions);
  made.meta = run_metadata(o.seed);
  made.detail["quick"] = o.reanalyze ? previous.quick.value_or(o.quick) : o.quick;
  made.detail["wall_seconds"] = o.reanalyze ? previous.wall_seconds.value_or(0.0) : wall;
  if (o.reanalyze) {
    // The measurement is the first run's, through any number of reanalyses: its meta, and its
    // seed (the raw files were measured with it, whatever --seed this reanalysis was given).
    const json &measured_by = previous.measured_by;
    if (measured_by.contains("seed"))
      made.meta["seed"] = measured_by["seed"];
    made.detail["reanalyzed"] = {
        {"measured_by", measured_by}, {"seconds", wall}, {"times", previous.reanalyzed_times + 1}};
  }
  write_json_atomic(profile_path, model::to_json(made));
  return made;
}

} // namespace

bool stages_in_process(const characterize_run_options &o) {
  const bool here = stages_here_by_env(); // a wrong GPUPROBE_STAGES is refused in any case
  return o.run_here && here;
}

void run_characterize(const characterize_run_options &o) {
  const stopwatch t0;
  if (o.reanalyze && o.out.empty())
    throw error("characterize --reanalyze: give --out DIR, a folder characterize measured");
  if (o.reanalyze && !fs::is_directory(o.out)) // refused before anything is made
    throw error("characterize --reanalyze: --out '" + terminal_text(o.out) +
                "' is no folder characterize measured: nothing to derive again");
  // A given folder is locked before the GPU is touched: a second writer is refused before it
  // makes a context beside the first one's measurements.
  std::optional<folder_lock> early;
  if (!o.out.empty())
    early.emplace(o.out, o.reanalyze ? "characterize --reanalyze" : "characterize");
  const device_info dev = o.reanalyze ? measured_device(o.out) : query_device(o.device);
  if (o.reanalyze)
    refuse_other_gpus_raw(o.out, dev.uuid);
  const bool here = stages_in_process(o);
  if (!o.reanalyze && !here)
    release_own_context(); // the stages run in child processes: hold no memory beside them
  // Stages inside this process keep the alias range one maps for the next (map once); it is
  // unmapped after the sharing stages, or when the run ends however it ends.
  std::optional<alias_keeper> keep;
  if (!o.reanalyze && here)
    keep.emplace();
  const std::string dir = o.out.empty() ? default_results_dir(dev.name, dev.uuid) : o.out;
  std::optional<folder_lock> late; // the default folder is known only from the device
  if (!early)
    late.emplace(dir, "characterize");
  const results_folder folder{dir};
  fs::create_directories(folder.raw());
  std::printf("gpuprobe characterize%s%s: %s (%s) -> %s\n", o.quick ? " --quick" : "",
              o.reanalyze ? " --reanalyze" : "", dev.name.c_str(), dev.uuid.c_str(), dir.c_str());
  // The profile a rerun finds: its conditions and stage times are the measurement's, kept when
  // nothing is measured now.
  const std::string profile_path = folder.profile().string();
  const json previous = stage_done(profile_path) ? read_json_file(profile_path) : json::object();
  busy_guard busy{dev.uuid, o.allow_busy, o.busy_wait_seconds, {}, false, dir};
  const auto previous_run = model::run_record_from_json(previous, profile_path);
  json conditions = starting_conditions(o, dev, busy, previous_run);
  // A stage reruns when its file was made differently (arguments, GPU, version: check_stage) or
  // when a stage it reads from (stage::reads) ran now: pipeline::stage_runner.
  pipeline::stage_runner runner;
  runner.dir = dir;
  runner.uuid = dev.uuid;
  runner.reanalyze = o.reanalyze;
  runner.previous_stages = previous_run.stages;
  runner.execute = [&](const stage &s) {
    const std::string resume = "finished stages are kept; run the same command again to resume";
    busy.run(s, [&] {
      if (here)
        run_stage_here_in(dir, s.name, s.args, resume, nullptr, o.run_here);
      else
        run_stage_in(dir, s.name, s.args, resume);
    });
  };
  runner.seconds_so_far = [&] { return t0.seconds(); };
  run_all_stages(runner, o, folder);
  record_clock(conditions, o, dir, dev);
  for (const auto &m : kept_disturbances(folder)) // this run's marks and the kept stages'
    if (std::find(busy.seen.begin(), busy.seen.end(), m) == busy.seen.end())
      busy.seen.push_back(m);
  if (!busy.seen.empty())
    conditions["busy"] = busy.seen;
  const double wall = t0.seconds();
  model::profile made = finish_profile(o, dir, runner, previous, previous_run, conditions, wall);
  print_hierarchy(made.tlb);
  print_stage_times(made);
  std::printf("gpuprobe characterize: %zu TLB level(s), %zu candidate(s), %zu atomics fits, %.0f s "
              "-> %s/profile.json\n",
              made.tlb.levels.size(), made.tlb.candidates.size(),
              made.detail["atomics"]["variants"].size(), wall, dir.c_str());
}

} // namespace gpuprobe::pipeline
