// gpuprobe compare A B: two results folders, finding by finding (findings/compare.hpp), as plain
// text on the terminal (Markdown with --markdown FILE) and gpuprobe.compare/1 (--out FILE); with
// --fail-on different, exit 4 when a finding differs: a regression gate.
#include "cli/common.hpp"
#include "cli/reanalyzed_copy.hpp"
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/outputs.hpp"
#include "common/paths.hpp"
#include "common/process.hpp"
#include "findings/compare.hpp"
#include "model/fleet.hpp"
#include "report/compare_page.hpp"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

namespace gpuprobe::cli {

namespace {

inline constexpr int k_exit_different = 4;

struct compare_flags {
  std::string a, b, baseline, out, markdown, html, fail_on = "nothing";
  std::vector<CLI::Option *> outputs; // --out, --markdown, --html: given empty is refused
  bool reanalyze = false;
  findings::compare_thresholds t;
};

void run(const compare_flags &f) {
  if (f.b.empty() == f.baseline.empty())
    throw error("compare: give a second folder B or --baseline fleet.json, one of them");
  if (f.reanalyze && !f.baseline.empty())
    throw error("compare: --reanalyze compares two folders, not one against --baseline");
  // The one output rule, before anything is read or printed: no output is an input or inside
  // one, none is another, none is a device, FIFO or link.
  std::vector<output_path> outs;
  for (const auto *o : f.outputs)
    if (o->count() && o->as<std::string>().empty())
      throw error("compare: " + o->get_name() + " '' is empty: give a file name");
  for (const auto &[flag, path] : {std::pair<const char *, const std::string &>{"--out", f.out},
                                   {"--markdown", f.markdown},
                                   {"--html", f.html}})
    if (!path.empty()) {
      check_output_path(path);
      outs.push_back({flag, path});
    }
  check_outputs("compare", outs, {f.a, f.b, f.baseline});
  findings::compare_result r;
  std::optional<model::run_folder> ra, rb; // the two folders (not for a fleet baseline)
  if (!f.baseline.empty()) {
    r = findings::compare_to_fleet(findings::read_unit(f.a), model::read_fleet(f.baseline));
  } else if (f.reanalyze) {
    const scratch_folder scratch;
    ra = reanalyzed(f.a, scratch.path() / "a");
    rb = reanalyzed(f.b, scratch.path() / "b");
    r = findings::compare_runs(*ra, *rb, f.t, true);
  } else {
    ra = model::read_run_folder(f.a);
    rb = model::read_run_folder(f.b);
    r = findings::compare_runs(*ra, *rb, f.t);
  }
  check_interrupted("compare"); // a signal during the last step: stop, the scratch already gone
  if (!f.markdown.empty())
    write_text_atomic(f.markdown, findings::to_markdown(r));
  else
    std::fputs(findings::to_text(r).c_str(), stdout); // a terminal gets plain text
  if (!f.out.empty()) {
    nlohmann::json doc = findings::to_json(r, f.t);
    doc["meta"] = run_metadata(f.t.seed); // this gpuprobe: tool, version, git commit, argv, when
    write_json_atomic(f.out, doc);
  }
  if (!f.html.empty())
    write_text_atomic(f.html,
                      report::compare_page_html(r, ra ? &*ra : nullptr, rb ? &*rb : nullptr));
  // The verdict, always: one line a person or a CI log reads, whatever went to files.
  std::string written;
  for (const auto &o : outs)
    written += (written.empty() ? " -> " : ", ") + o.path;
  std::printf("%s%s\n", findings::verdict_line(r, f.t.allow_missing).c_str(),
              terminal_text(written).c_str());
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
              "finding differs or is missing (--fail-on different; --allow-missing: differs); 1 "
              "error; 2 usage; 128+N interrupted by signal N.");
  app->add_option("a", f->a, "results folder A (with profile.json)")
      ->required()
      ->check(CLI::ExistingDirectory);
  app->add_option("b", f->b, "results folder B (or --baseline)")->check(CLI::ExistingDirectory);
  app->add_option("--baseline", f->baseline,
                  "a fleet's fleet.json (gpuprobe fleet): A against its model's other units")
      ->check(CLI::ExistingFile);
  f->outputs = {
      app->add_option("--out", f->out, "gpuprobe.compare/1 JSON file"),
      app->add_option("--markdown", f->markdown, "Markdown file (default: the terminal)"),
      app->add_option("--html", f->html,
                      "one HTML page: the findings side by side, each differing level's two "
                      "sweeps and per-SM penalty maps overlaid")};
  app->add_flag("--reanalyze", f->reanalyze,
                "derive both profiles again from their raw measurements with this build first (in "
                "copies; A and B are left as they are): hardware against hardware, not one "
                "analysis version against another");
  app->add_option("--fail-on", f->fail_on, "exit 4 when a finding differs: different | nothing")
      ->capture_default_str()
      ->check(CLI::IsMember({"different", "nothing"}));
  app->add_option("--penalty-rel", f->t.penalty_rel,
                  "a penalty differs past this share of it (and --penalty-abs, and both intervals)")
      ->capture_default_str()
      ->check(finite_in(0.0, 1.0));
  app->add_option("--penalty-abs", f->t.penalty_abs_cycles, "... and past this many cycles")
      ->capture_default_str()
      ->check(finite_in(0.0, 1e6));
  app->add_option_function<double>(
         "--time-rel",
         [f](double v) {
           f->t.time_rel = v;
           f->t.calibrated = false;
         },
         "a validation time is FASTER/SLOWER when its 95 % interval lies past this share, on "
         "every row (default: each row's bar from repeated full runs of one unit, at least 1 %; 3 "
         "% "
         "for a row never measured)")
      ->check(finite_in(0.0, 1.0));
  app->add_flag("--allow-missing", f->t.allow_missing,
                "a finding one run's mode measures but whose value is missing, null or "
                "unreadable (MISSING) is said, not counted as a difference");
  app->callback([f] { run(*f); });
}

} // namespace gpuprobe::cli
