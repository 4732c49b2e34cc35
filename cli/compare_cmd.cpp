// gpuprobe compare A B: two results folders, finding by finding (analysis/compare.hpp), as
// Markdown on the terminal (or --markdown FILE) and gpuprobe.compare/1 (--out FILE); with
// --fail-on different, exit 4 when a finding differs: a regression gate.
#include "analysis/compare.hpp"
#include "cli/common.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/paths.hpp"
#include "common/process.hpp"
#include "model/fleet.hpp"
#include "report/compare_page.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>

namespace gpuprobe::cli {

namespace {

inline constexpr int k_exit_different = 4;

struct compare_flags {
  std::string a, b, baseline, out, markdown, html, fail_on = "nothing";
  bool reanalyze = false;
  analysis::compare_thresholds t;
};

namespace fs = std::filesystem;

// A folder made for this command alone (mkdtemp: a fresh name, mode 0700) and removed with it.
class scratch_folder {
public:
  scratch_folder() {
    std::string name = (fs::temp_directory_path() / "gpuprobe-compare-XXXXXX").string();
    if (!::mkdtemp(name.data()))
      throw error("compare --reanalyze: no temporary folder in " +
                  fs::temp_directory_path().string());
    path_ = name;
  }
  ~scratch_folder() {
    std::error_code ec;
    fs::remove_all(path_, ec); // only the folder mkdtemp made: nothing of the user's
  }
  scratch_folder(const scratch_folder &) = delete;
  scratch_folder &operator=(const scratch_folder &) = delete;
  const fs::path &path() const { return path_; }

private:
  fs::path path_;
};

// `dir`'s raw measurements, profile, tuning and validation copied into `to` (plain files and
// folders only: links and the report are left behind), its profile derived again from raw/ by
// this build (`gpuprobe characterize --reanalyze`, a child), and the copy read back under `dir`'s
// name.
model::run_folder reanalyzed(const std::string &dir, const fs::path &to) {
  fs::create_directories(to);
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path rel = fs::relative(it->path(), dir);
    if (it->is_symlink() || rel == "report" || rel.filename() == ".gpuprobe.lock") {
      if (!it->is_symlink() && it->is_directory())
        it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory())
      fs::create_directories(to / rel);
    else if (it->is_regular_file())
      fs::copy_file(it->path(), to / rel);
  }
  child_options o;
  o.capture = true;
  o.merge_stderr = true;
  const auto r = run_child({self_path(), "characterize", "--reanalyze", "--out", to.string()}, o);
  if (r.exit_code != 0)
    throw error("compare --reanalyze: `gpuprobe characterize --reanalyze` of a copy of '" + dir +
                "' failed (exit " + std::to_string(r.exit_code) + "): " + last_line(r.output));
  model::run_folder f = model::read_run_folder(to.string());
  f.dir = dir;
  return f;
}

void run(const compare_flags &f) {
  if (!f.out.empty())
    check_output_path(f.out);
  if (!f.markdown.empty())
    check_output_path(f.markdown);
  if (!f.html.empty())
    check_output_path(f.html);
  if (f.b.empty() == f.baseline.empty())
    throw error("compare: give a second folder B or --baseline fleet.json, one of them");
  if (f.reanalyze && !f.baseline.empty())
    throw error("compare: --reanalyze compares two folders, not one against --baseline");
  analysis::compare_result r;
  std::optional<model::run_folder> ra, rb; // the two folders (not for a fleet baseline)
  if (!f.baseline.empty()) {
    r = analysis::compare_to_fleet(analysis::read_unit(f.a), model::read_fleet(f.baseline));
  } else if (f.reanalyze) {
    const scratch_folder scratch;
    ra = reanalyzed(f.a, scratch.path() / "a");
    rb = reanalyzed(f.b, scratch.path() / "b");
    r = analysis::compare_runs(*ra, *rb, f.t, true);
  } else {
    ra = model::read_run_folder(f.a);
    rb = model::read_run_folder(f.b);
    r = analysis::compare_runs(*ra, *rb, f.t);
  }
  const std::string md = analysis::to_markdown(r);
  if (!f.markdown.empty())
    write_text_atomic(f.markdown, md);
  else
    std::fputs(md.c_str(), stdout);
  if (!f.out.empty())
    write_json_atomic(f.out, analysis::to_json(r, f.t));
  if (!f.html.empty())
    write_text_atomic(f.html,
                      report::compare_page_html(r, ra ? &*ra : nullptr, rb ? &*rb : nullptr));
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
  app->add_option("--html", f->html,
                  "one HTML page: the findings side by side, each differing level's two sweeps "
                  "and per-SM penalty maps overlaid");
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
      ->check(CLI::Range(0.0, 1.0));
  app->add_option("--penalty-abs", f->t.penalty_abs_cycles, "... and past this many cycles")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  app->add_option_function<double>(
         "--time-rel",
         [f](double v) {
           f->t.time_rel = v;
           f->t.calibrated = false;
         },
         "a validation time is FASTER/SLOWER when its 95 % interval lies past this share, on "
         "every row (default: each row's measured run-to-run spread, at least 1 %; 3 % for a row "
         "never measured)")
      ->check(CLI::Range(0.0, 1.0));
  app->callback([f] { run(*f); });
}

} // namespace gpuprobe::cli
