#pragma once
// One shape for the probes that measure each level of a TLB profile (tlb-sampling, tlb-conflict,
// tlb-coverage, tlb-per-sm): read the profile -> a target per level (probes/level_target.hpp) ->
// run -> a row per level -> written, and read back onto the profile's levels by its `contribute`
// (for_each_matched_level). A probe states what is its own in a `level_probe` (its command's words,
// its flags, its run, a level's line, its stage's quick arguments); level_command and level_plan
// make the rest: --device, --out, --seed and --profile, the profile read (another schema refused
// in one line), the seed passed, the result written and summarised, and its stage in
// `gpuprobe characterize`, over raw/tlb_profile.json into raw/<stage>.json, and its line in the
// catalog (level_entry). Host-only.
#include "common/device_info.hpp"
#include "common/json_io.hpp"
#include "model/profile.hpp"
#include "probes/catalog.hpp"
#include "probes/kit.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace gpuprobe::probes {

// The flags of a level probe's command: the shared ones, the profile, its options, and `Extra`,
// what its own flags hold before they become options (a size in words, a range in GiB).
template <class Options, class Extra> struct level_flags {
  kit::common_options common;
  std::string profile;
  Options o;
  Extra extra;
};

struct no_extra {};

template <class Options, class Result, class Extra = no_extra> struct level_probe {
  using flags_type = level_flags<Options, Extra>;
  using level_type = typename decltype(Result::levels)::value_type;
  const char *command;     // "tlb-conflict"
  const char *description; // its --help line
  const char *footer;      // "Example: ..."
  const char *stage;       // its stage in characterize, and its raw file ("tlb_conflict")
  std::vector<std::string> quick_args; // its stage's arguments under --quick
  bool full_only = false;              // its stage runs in full runs only
  Result (*run)(const Options &o, const model::tlb_hierarchy &tlb, const std::string &profile,
                const device_info &dev);
  // Declares its own flags (after --profile), over f.o and f.extra.
  void (*declare)(kit::command &c, flags_type &f);
  // What f.extra adds to f.o before it runs (nullptr: nothing).
  void (*prepare)(flags_type &f) = nullptr;
  // What its summary's first line says between the GPU's name and the time ("": nothing).
  std::string (*head)(const Result &r) = nullptr;
  // A level's line(s) in the summary (`out`: the file written, which names a level's rows).
  void (*print_level)(const level_type &l, const std::string &out);
};

template <class Options, class Result, class Extra>
kit::command level_command(const level_probe<Options, Result, Extra> &p) {
  using F = level_flags<Options, Extra>;
  auto f = std::make_shared<F>();
  kit::command c(p.command, p.description, p.footer);
  c.measures_result(f->common);
  c.option("--profile", &f->profile, "a TLB profile (gpuprobe analyze tlb, characterize)")
      .needed()
      .a_file();
  p.declare(c, *f);
  c.run = [f, p] {
    const auto tlb = model::read_profile(f->profile).tlb; // refuses another schema, in one line
    f->o.seed = f->common.seed;
    if (p.prepare)
      p.prepare(*f);
    const auto r = p.run(f->o, tlb, f->profile, query_device(f->common.device));
    write_json_atomic(f->common.out, to_json(r));
    std::printf("gpuprobe %s: %s%s, %.1f s\n", p.command,
                device_info_from_json(r.device).name.c_str(), p.head ? p.head(r).c_str() : "",
                r.wall_seconds);
    for (const auto &l : r.levels)
      p.print_level(l, f->common.out);
    std::printf("  wrote %s\n", f->common.out.c_str());
  };
  return c;
}

// Its stage, planned with the stages before the TLB profile is known: it reads the profile's file.
template <class Options, class Result, class Extra>
void level_plan(const level_probe<Options, Result, Extra> &p, const kit::plan_request &r,
                std::vector<kit::stage> &s) {
  if (!r.tlb && !(p.full_only && r.quick))
    s.push_back(kit::profile_stage(r, p.stage, p.command, p.quick_args));
}

// A level probe's line in the catalog, from its level_probe `P` (an object of its cli.cpp): its id
// and `gpuprobe <command>` are P's command, its stage P's; what it adds to the profile, its part of
// the report (nullptr: drawn through profile.json's tables) and that part's heading are its own.
template <const auto &P>
probe_descriptor level_entry(void (*contribute)(const results_folder &, model::profile &),
                             void (*draw)(const kit::report_inputs &,
                                          kit::report_content &) = nullptr,
                             const char *heading = nullptr) {
  return {P.command,
          P.command,
          [] { return level_command(P); },
          draw,
          [](const kit::plan_request &r, std::vector<kit::stage> &s) { level_plan(P, r, s); },
          contribute,
          nullptr,
          heading};
}

} // namespace gpuprobe::probes
