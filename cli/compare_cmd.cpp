// gpuprobe compare A B: two results folders, finding by finding (analysis/compare.hpp), as
// Markdown on the terminal (or --markdown FILE) and gpuprobe.compare/1 (--out FILE); with
// --fail-on different, exit 4 when a finding differs: a regression gate.
#include "analysis/compare.hpp"
#include "cli/common.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/paths.hpp"
#include "model/fleet.hpp"

#include <cstdio>
#include <memory>

namespace gpuprobe::cli {

namespace {

inline constexpr int k_exit_different = 4;

struct compare_flags {
  std::string a, b, baseline, out, markdown, fail_on = "nothing";
  analysis::compare_thresholds t;
};

void run(const compare_flags &f) {
  if (!f.out.empty())
    check_output_path(f.out);
  if (!f.markdown.empty())
    check_output_path(f.markdown);
  if (f.b.empty() == f.baseline.empty())
    throw error("compare: give a second folder B or --baseline fleet.json, one of them");
  const auto r =
      f.baseline.empty()
          ? analysis::compare_runs(model::read_run_folder(f.a), model::read_run_folder(f.b), f.t)
          : analysis::compare_to_fleet(
                analysis::read_unit(f.a),
                model::fleet_from_json(read_json_file(f.baseline), f.baseline));
  const std::string md = analysis::to_markdown(r);
  if (!f.markdown.empty())
    write_text_atomic(f.markdown, md);
  else
    std::fputs(md.c_str(), stdout);
  if (!f.out.empty())
    write_json_atomic(f.out, analysis::to_json(r, f.t));
  if (f.fail_on == "different" && r.differences() > 0)
    exit_status() = k_exit_different;
}

} // namespace

void setup_compare(CLI::App &parent) {
  auto f = std::make_shared<compare_flags>();
  auto *app = parent.add_subcommand(
      "compare", "two results folders (runs, units, drivers, builds): SAME or DIFFERENT, finding "
                 "by finding");
  app->footer("Example: gpuprobe compare results/h100-a results/h100-b --fail-on different\n"
              "Exit status: 0 compared (or no finding differs, with --fail-on different); 4 a "
              "finding differs (--fail-on different); 1 error.");
  app->add_option("a", f->a, "results folder A (with profile.json)")
      ->required()
      ->check(CLI::ExistingDirectory);
  app->add_option("b", f->b, "results folder B (or --baseline)")->check(CLI::ExistingDirectory);
  app->add_option("--baseline", f->baseline,
                  "a fleet's fleet.json (gpuprobe fleet): A against its model's other units")
      ->check(CLI::ExistingFile);
  app->add_option("--out", f->out, "gpuprobe.compare/1 JSON file");
  app->add_option("--markdown", f->markdown, "Markdown file (default: the terminal)");
  app->add_option("--fail-on", f->fail_on, "exit 4 when a finding differs: different | nothing")
      ->capture_default_str()
      ->check(CLI::IsMember({"different", "nothing"}));
  app->add_option("--penalty-rel", f->t.penalty_rel,
                  "a penalty differs past this share of it (and --penalty-abs, and both intervals)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app->add_option("--penalty-abs", f->t.penalty_abs_cycles, "... and past this many cycles")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  app->add_option("--time-rel", f->t.time_rel,
                  "a validation time is FASTER/SLOWER when its 95 % interval lies past this share")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app->callback([f] { run(*f); });
}

} // namespace gpuprobe::cli
