// gpuprobe tlb-conflict: flags -> probes::conflict_options; conflict sets of each level of a
// profile (probes/conflict/driver.hpp), written and summarised.
#include "cli/common.hpp"
#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/units.hpp"
#include "probes/conflict/driver.hpp"
#include "probes/conflict/probe.hpp"

#include <cstdio>
#include <memory>

namespace gpuprobe::probes::conflict {

using namespace cli; // the options every subcommand shares (cli/common.hpp)

namespace {

struct conflict_flags {
  common_options common;
  std::string profile;
  probes::conflict_options o;
};

void run(conflict_flags &f) {
  check_output_path(f.common.out);
  const auto tlb = model::read_profile(f.profile).tlb; // refuses another schema, in one line
  f.o.seed = f.common.seed;
  const auto r = probes::run_conflict(f.o, tlb, f.profile, query_device(f.common.device));
  write_json_atomic(f.common.out, to_json(r));
  std::printf("gpuprobe tlb-conflict: %s, %.1f s\n", device_info_from_json(r.device).name.c_str(),
              r.wall_seconds);
  for (const auto &l : r.levels) {
    std::printf("  %s (%llu x %s): ", l.target.level.c_str(),
                static_cast<unsigned long long>(l.target.entries()),
                format_bytes(double(l.target.page_bytes())).c_str());
    if (!l.target.skipped.empty()) {
      std::printf("skipped: %s\n", l.target.skipped.c_str());
      continue;
    }
    for (const auto &s : l.sets)
      std::printf("%s", s.failed.empty() ? (std::to_string(s.members.size()) + " ").c_str() : "- ");
    std::printf("pages per conflict set (misses begin at");
    for (const auto &s : l.sets)
      std::printf(" %u", s.onset_pages);
    std::printf(")\n");
    for (const auto &p : l.predictions)
      if (p.method == "onset union")
        std::printf(
            "    set index predicted in window %u: %s (the onset's %zu missing pages in %zu "
            "predicted set(s); x's holds %zu pages of the window)%s%s\n",
            p.window_start, p.held() ? "held" : "did not hold", p.onset_union.size(), p.union_sets,
            p.predicted.size() + 1, p.failed.empty() ? "" : ": ", p.failed.c_str());
      else
        std::printf("    set index predicted in window %u: %s (%zu partners, %zu confirmed one "
                    "by one)%s%s\n",
                    p.window_start, p.held() ? "held" : "did not hold", p.predicted.size(),
                    p.partners_confirmed, p.failed.empty() ? "" : ": ", p.failed.c_str());
  }
  std::printf("  wrote %s\n", f.common.out.c_str());
}

} // namespace

void setup_cli(CLI::App &parent) {
  auto f = std::make_shared<conflict_flags>();
  auto *app = parent.add_subcommand(
      "tlb-conflict", "each TLB level's ways from minimal conflict sets on the alias range");
  app->footer("Example: gpuprobe tlb-conflict --profile profile.json --out conflict.json");
  add_device_option(*app, f->common);
  add_out_option(*app, f->common, "result JSON file (gpuprobe.result/1, probe tlb-conflict)");
  add_seed_option(*app, f->common);
  app->add_option("--profile", f->profile, "a TLB profile (gpuprobe analyze tlb, characterize)")
      ->required()
      ->check(CLI::ExistingFile);
  app->add_option("--windows", f->o.windows, "conflict sets per level")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app->add_option("--predict-windows", f->o.predict_windows,
                  "fresh windows where a pinned set index is checked by prediction")
      ->capture_default_str()
      ->check(CLI::Range(0, 16));
  app->add_option("--repeat-walks", f->o.repeat_walks,
                  "a fully associative level: walks of E and E + 1 pages from windows 0 and 97, "
                  "this many each, before and after its search (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  app->add_option("--home-offsets", f->o.home_offsets,
                  "a fully associative level: walks of E and E + 1 pages at this many offsets "
                  "k x 4 KiB inside the chunk, each word's own L2 home (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 512));
  app->add_flag("--group-walks", f->o.group_walks,
                "a set-associative level: walks of 5/8 of each 512 MiB group's pages over 0.9, "
                "1.1 and 1.25 times the groups a full walk touches");
  app->add_flag("--infer-halves,!--test-halves", f->o.infer_halves,
                "with --quarter-split: split a group's second half without a test where its "
                "first half held no partner (--test-halves: test it too)")
      ->capture_default_str();
  app->add_flag("--generalized-split,!--quarter-split", f->o.generalized_split,
                "group testing by generalized binary splitting, groups of about n / W pages "
                "(--quarter-split: quarters of the window halved down to pages)")
      ->capture_default_str();
  app->add_option("--onset-start-share", f->o.onset_start_share,
                  "the onset scan starts E / this below a level's entries E")
      ->capture_default_str()
      ->check(CLI::Range(16, 1024));
  app->add_option("--timed-laps", f->o.timed_laps,
                  "timed laps a walk (at least 2048 hops), after one warm lap (2 lost L2's sets "
                  "on H100s: docs/analyze-tlb.md)")
      ->capture_default_str()
      ->check(CLI::Range(2, 4));
  app->callback([f] { run(*f); });
}

} // namespace gpuprobe::probes::conflict
