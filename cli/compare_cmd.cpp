// gpuprobe compare A B: two results folders, finding by finding (analysis/compare.hpp), as plain
// text on the terminal (Markdown with --markdown FILE) and gpuprobe.compare/1 (--out FILE); with
// --fail-on different, exit 4 when a finding differs: a regression gate.
#include "analysis/compare.hpp"
#include "cli/common.hpp"
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/outputs.hpp"
#include "common/paths.hpp"
#include "common/process.hpp"
#include "model/fleet.hpp"
#include "report/compare_page.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cstdlib>
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
  analysis::compare_thresholds t;
};

namespace fs = std::filesystem;

// A folder made for this command alone (mkdtemp: a fresh name, mode 0700) and removed with it,
// also on SIGINT, SIGTERM and SIGHUP (a cleanup_scope: the command stops at its next check).
// Its name carries this process's id, so one a SIGKILL left behind is removed by the next
// compare once that process is gone.
class scratch_folder {
public:
  scratch_folder() {
    const fs::path tmp = fs::temp_directory_path();
    const std::string prefix = "gpuprobe-compare-";
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(tmp, ec)) { // of compares that were killed
      const std::string n = e.path().filename().string();
      struct stat st {};
      if (n.rfind(prefix, 0) != 0 || ::lstat(e.path().c_str(), &st) != 0 ||
          !S_ISDIR(st.st_mode) || st.st_uid != ::getuid())
        continue;
      const std::string pid = n.substr(prefix.size(), n.find('-', prefix.size()) - prefix.size());
      if (!pid.empty() && pid.size() < 10 && pid.find_first_not_of("0123456789") == std::string::npos &&
          process_gone(std::stol(pid)))
        fs::remove_all(e.path(), ec);
    }
    std::string name = (tmp / (prefix + std::to_string(::getpid()) + "-XXXXXX")).string();
    if (!::mkdtemp(name.data()))
      throw error("compare --reanalyze: no temporary folder in " + tmp.string());
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
  cleanup_scope cleaning_; // a signal sets a flag; the command stops at check_interrupted
};

// `from` copied to the new file `to`: a reflink where the file system shares blocks, else only
// its data (holes are skipped, not read: a sparse 20 GiB file costs what it holds).
void copy_data(const fs::path &from, const fs::path &to) {
  const int in = ::open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0)
    throw error("compare --reanalyze: cannot read '" + terminal_text(from.string()) + "': " +
                std::strerror(errno));
  const int out = create_exclusive(to.string(), 0600);
  if (out < 0) {
    ::close(in);
    throw error("compare --reanalyze: cannot write '" + to.string() + "': " + std::strerror(errno));
  }
  struct stat st {};
  bool ok = ::fstat(in, &st) == 0;
  if (ok && ::ioctl(out, FICLONE, in) != 0) { // no shared blocks here: copy the data
    off_t pos = 0;
    while (ok && pos < st.st_size) {
      off_t data = ::lseek(in, pos, SEEK_DATA);
      if (data < 0)
        break; // only a hole is left
      const off_t hole = ::lseek(in, data, SEEK_HOLE);
      for (off_t at = data; ok && at < hole;) {
        off_t src = at, dst = at;
        ssize_t n = ::copy_file_range(in, &src, out, &dst, std::size_t(hole - at), 0);
        if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
          char buf[1 << 16]; // no in-kernel copy between these file systems: read and write
          n = ::pread(in, buf, std::size_t(std::min<off_t>(hole - at, sizeof buf)), at);
          n = n > 0 && ::pwrite(out, buf, std::size_t(n), at) == n ? n : -1;
        }
        ok = n > 0;
        at += n > 0 ? n : 0;
      }
      pos = hole;
    }
    ok = ok && ::ftruncate(out, st.st_size) == 0;
  }
  ::close(in);
  if (::close(out) != 0 || !ok)
    throw error("compare --reanalyze: cannot copy '" + terminal_text(from.string()) + "'");
}

// `dir`'s raw measurements, profile, tuning and validation copied into `to` (plain files and
// folders only: links, FIFOs, the report and the lock are left behind), its profile derived again
// from raw/ by this build (`gpuprobe characterize --reanalyze`, a child), and the copy read back
// under `dir`'s name.
model::run_folder reanalyzed(const std::string &dir, const fs::path &to) {
  fs::create_directories(to);
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    check_interrupted("compare --reanalyze (copying '" + dir + "')");
    const fs::path rel = fs::relative(it->path(), dir);
    if (it->is_symlink() || rel == "report" || rel.filename() == ".gpuprobe.lock") {
      if (!it->is_symlink() && it->is_directory())
        it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory())
      fs::create_directories(to / rel);
    else if (it->is_regular_file())
      copy_data(it->path(), to / rel);
  }
  child_options o;
  o.capture = true;
  o.merge_stderr = true;
  const auto r = run_child({self_path(), "characterize", "--reanalyze", "--out", to.string()}, o);
  check_interrupted("compare --reanalyze");
  if (r.exit_code != 0)
    throw error("compare --reanalyze: `gpuprobe characterize --reanalyze` of a copy of '" + dir +
                "' failed (exit " + std::to_string(r.exit_code) + "): " + last_line(r.output));
  model::run_folder f = model::read_run_folder(to.string());
  f.dir = dir;
  return f;
}

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
  check_interrupted("compare"); // a signal during the last step: stop, the scratch already gone
  if (!f.markdown.empty())
    write_text_atomic(f.markdown, analysis::to_markdown(r));
  else
    std::fputs(analysis::to_text(r).c_str(), stdout); // a terminal gets plain text
  if (!f.out.empty()) {
    nlohmann::json doc = analysis::to_json(r, f.t);
    doc["meta"] = run_metadata(f.t.seed); // this gpuprobe: tool, version, git commit, argv, when
    write_json_atomic(f.out, doc);
  }
  if (!f.html.empty())
    write_text_atomic(f.html,
                      report::compare_page_html(r, ra ? &*ra : nullptr, rb ? &*rb : nullptr));
  // The verdict, always: one line a person or a CI log reads, whatever went to files.
  const int missing = r.missing();
  std::string written;
  for (const auto &o : outs)
    written += (written.empty() ? " -> " : ", ") + o.path;
  std::printf("gpuprobe compare: %s (%d finding(s) differ%s, of %zu)%s\n",
              r.differences() ? "DIFFERENT" : "SAME", r.differences(),
              missing ? (", " + std::to_string(missing) +
                         (f.t.allow_missing ? " missing, allowed" : " of them missing"))
                            .c_str()
                      : "",
              r.findings.size(), terminal_text(written).c_str());
  if (f.fail_on == "different" && r.differences() > 0)
    exit_status() = k_exit_different;
}

// CLI11's Range lets NaN through (every comparison with it is false): a bound that is a number.
CLI::Validator finite_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string &v) -> std::string {
        try {
          std::size_t used = 0;
          const double x = std::stod(v, &used);
          if (used == v.size() && std::isfinite(x) && x >= lo && x <= hi)
            return "";
        } catch (const std::exception &) {
        }
        char b[96];
        std::snprintf(b, sizeof b, "'%s' is not a number in [%g, %g]", v.c_str(), lo, hi);
        return b;
      },
      "FLOAT in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]");
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
         "every row (default: each row's measured run-to-run spread, at least 1 %; 3 % for a row "
         "never measured)")
      ->check(finite_in(0.0, 1.0));
  app->add_flag("--allow-missing", f->t.allow_missing,
                "a finding one run's mode measures but whose value is missing, null or "
                "unreadable (MISSING) is said, not counted as a difference");
  app->callback([f] { run(*f); });
}

} // namespace gpuprobe::cli
