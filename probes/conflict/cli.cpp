// gpuprobe tlb-conflict: the level probe (probes/level_probe.hpp) over probes::conflict_options;
// conflict sets of each level of a profile (probes/conflict/driver.hpp), written and summarised.
#include "common/units.hpp"
#include "probes/conflict/driver.hpp"
#include "probes/conflict/probe.hpp"
#include "probes/level_probe.hpp"

#include <cstdio>
#include <string>

namespace gpuprobe::probes::conflict {

namespace {

using probe_type = level_probe<conflict_options, conflict_result>;

const probe_type probe = {
    "tlb-conflict",
    "each TLB level's ways from minimal conflict sets on the alias range",
    "Example: gpuprobe tlb-conflict --profile profile.json --out conflict.json",
    "tlb_conflict",
    {"--windows", "2"},
    false,
    run_conflict,
    [](kit::command &c, probe_type::flags_type &f) {
      c.option("--windows", &f.o.windows, "conflict sets per level").shown().in(1, 64);
      c.option("--predict-windows", &f.o.predict_windows,
               "fresh windows where a pinned set index is checked by prediction")
          .shown()
          .in(0, 16);
      c.option("--repeat-walks", &f.o.repeat_walks,
               "a fully associative level: walks of E and E + 1 pages from windows 0 and 97, "
               "this many each, before and after its search (0: none)")
          .shown()
          .in(0, 64);
      c.option("--home-offsets", &f.o.home_offsets,
               "a fully associative level: walks of E and E + 1 pages at this many offsets "
               "k x 4 KiB inside the chunk, each word's own L2 home (0: none)")
          .shown()
          .in(0, 512);
      c.option("--group-walks", &f.o.group_walks,
               "a set-associative level: walks of 5/8 of each 512 MiB group's pages over 0.9, "
               "1.1 and 1.25 times the groups a full walk touches");
      c.option("--infer-halves,!--test-halves", &f.o.infer_halves,
               "with --quarter-split: split a group's second half without a test where its "
               "first half held no partner (--test-halves: test it too)")
          .shown();
      c.option("--generalized-split,!--quarter-split", &f.o.generalized_split,
               "group testing by generalized binary splitting, groups of about n / W pages "
               "(--quarter-split: quarters of the window halved down to pages)")
          .shown();
      c.option("--onset-start-share", &f.o.onset_start_share,
               "the onset scan starts E / this below a level's entries E")
          .shown()
          .in(16, 1024);
      c.option("--timed-laps", &f.o.timed_laps,
               "timed laps a walk (at least 2048 hops), after one warm lap (2 lost L2's sets "
               "on H100s: docs/analyze-tlb.md)")
          .shown()
          .in(2, 4);
    },
    nullptr,
    nullptr,
    [](const probe_type::level_type &l, const std::string &) {
      std::printf("  %s (%llu x %s): ", l.target.level.c_str(),
                  static_cast<unsigned long long>(l.target.entries()),
                  format_bytes(double(l.target.coverage_bytes())).c_str());
      if (!l.target.skipped.empty()) {
        std::printf("skipped: %s\n", l.target.skipped.c_str());
        return;
      }
      for (const auto &s : l.sets)
        std::printf("%s",
                    s.failed.empty() ? (std::to_string(s.members.size()) + " ").c_str() : "- ");
      std::printf("pages per conflict set (misses begin at");
      for (const auto &s : l.sets)
        std::printf(" %u", s.onset_pages);
      std::printf(")\n");
      for (const auto &p : l.predictions)
        if (p.method == "onset union")
          std::printf(
              "    set index predicted in window %u: %s (the onset's %zu missing pages in %zu "
              "predicted set(s); x's holds %zu pages of the window)%s%s\n",
              p.window_start, p.held() ? "held" : "did not hold", p.onset_union.size(),
              p.union_sets, p.predicted.size() + 1, p.failed.empty() ? "" : ": ", p.failed.c_str());
        else
          std::printf("    set index predicted in window %u: %s (%zu partners, %zu confirmed one "
                      "by one)%s%s\n",
                      p.window_start, p.held() ? "held" : "did not hold", p.predicted.size(),
                      p.partners_confirmed, p.failed.empty() ? "" : ": ", p.failed.c_str());
    }};

} // namespace

probe_descriptor entry() { return level_entry<probe>(contribute); }

} // namespace gpuprobe::probes::conflict
