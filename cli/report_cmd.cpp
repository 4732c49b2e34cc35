// gpuprobe report: a results folder -> one page (index.html, or index.md) with every figure as
// PNG and SVG and the CSV behind it (drawn by reports/plot.py), and the tables.
#include "cli/common.hpp"
#include "common/error.hpp"
#include "common/folder_lock.hpp"
#include "common/json_io.hpp"
#include "common/outputs.hpp"
#include "common/paths.hpp"
#include "common/process.hpp"
#include "common/results_folder.hpp"
#include "report/figures_drawn.hpp"
#include "report/report.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>

#include <sys/stat.h>
#include <unistd.h>

namespace gpuprobe::cli {

namespace {
namespace fs = std::filesystem;

struct report_options {
  std::string input, out, format = "html", python = "python3", plot_script, figures_from;
};

// The plot script when --plot-script is not given: the one beside this binary (a copied
// gpuprobe: <bin>/plot.py; an installed one: <bin>/../share/gpuprobe/plot.py), else the source
// tree's it was built from; one line naming where it looked when none is there.
std::string default_plot_script() {
  std::error_code ec;
  const fs::path bin = fs::path(self_path()).parent_path();
  const fs::path beside = bin / "plot.py",
                 installed = bin / ".." / "share" / "gpuprobe" / "plot.py",
                 source = fs::path(GPUPROBE_SOURCE_DIR) / "reports" / "plot.py";
  for (const auto &p : {beside, installed, source})
    if (fs::is_regular_file(p, ec))
      return p.lexically_normal().string();
  throw error("report: no plot.py beside this binary (" + beside.string() + ", " +
              installed.lexically_normal().string() +
              ") nor in the source tree it was built from (" + source.string() +
              "): pass --plot-script");
}

// A report folder written before the marker named sizes and hashes (common/outputs.hpp):
// accepted only when plot.py's own manifest is there (figures/manifest.json with its "drawn_by"
// stamp) and every path in it is a page, figures/, that manifest or a figure it lists
// (<id>.csv/png/svg, not_drawn.json). A user's own file is never deleted, nor a lone index.md or
// index.html that no report drew.
bool legacy_report_folder(const std::string &dir, const std::vector<std::string> &paths) {
  std::set<std::string> ok = {"index.html", "index.md", "figures", "figures/manifest.json",
                              "figures/not_drawn.json", k_owned_marker};
  try {
    const auto m = read_json_file((fs::path(dir) / "figures" / "manifest.json").string());
    if (!m.contains("drawn_by") || !m.at("drawn_by").is_object())
      return false;
    for (const auto &f : m.at("figures"))
      for (const char *ext : {".csv", ".png", ".svg"})
        ok.insert("figures/" + f.at("id").get<std::string>() + ext);
  } catch (const std::exception &) {
    return false; // no manifest plot.py wrote: nothing here is known to be a report's
  }
  return std::all_of(paths.begin(), paths.end(), [&](const std::string &p) { return ok.count(p); });
}

// report --out inside its input folder: its own layout's DIR/report (or another new name), never
// a folder or file the results folder's stages write.
bool report_inside_ok(const std::string &out, const std::string &input) {
  const fs::path rel = fs::weakly_canonical(fs::absolute(out))
                           .lexically_relative(fs::weakly_canonical(fs::absolute(input)));
  const std::string first = rel.empty() ? "" : rel.begin()->string();
  using rf = results_folder;
  for (const char *taken : {rf::raw_dir, rf::profile_file, rf::tuning_file, rf::validation_file,
                            "run.log", folder_lock::file_name})
    if (first == taken)
      return false;
  return !first.empty() && first != "." && first != "..";
}

// The figures plot.py could not draw (figures/not_drawn.json; a figure with no PNG or SVG too):
// off the page, each listed under "not drawn" with the reason (report exits 3).
void take_not_drawn(const fs::path &figs, report::report_content &content) {
  json why = json::object();
  try {
    why = read_json_file((figs / "not_drawn.json").string());
  } catch (const std::exception &) {
    // an older plot script writes none: the files below tell
  }
  std::vector<std::string> skipped;
  content.keep_figures_if([&](const report::report_figure &f) {
    std::error_code ec;
    bool ok = !why.contains(f.id);
    for (const char *ext : {".png", ".svg"})
      ok = ok && fs::file_size(figs / (f.id + ext), ec) > 0 && !ec;
    if (ok)
      return true;
    skipped.push_back("figure '" + f.title + "': " +
                      (why.contains(f.id) && why[f.id].is_string()
                           ? why[f.id].get<std::string>()
                           : std::string("the plot script drew no PNG or SVG")));
    for (const char *ext : {".png", ".svg"})
      fs::remove(figs / (f.id + ext), ec);
    return false;
  });
  content.skipped.insert(content.skipped.end(), skipped.begin(), skipped.end());
}

// Draws the page into `dir` (a fresh folder); `reused` counts the figures taken as drawn from
// --figures-from.
report::report_content render_into(const report_options &o, const fs::path &dir,
                                   std::size_t &reused) {
  auto content = report::build_report(o.input);
  const fs::path figs = dir / "figures";
  fs::create_directories(figs);
  const std::string script = o.plot_script.empty() ? default_plot_script() : o.plot_script;
  const nlohmann::json stamp = report::plotter_stamp(o.python, script);
  const auto taken = o.figures_from.empty()
                         ? std::set<std::string>()
                         : report::take_figures_drawn(content.figures, o.figures_from, figs, stamp);
  reused = taken.size();
  // plot.py draws what its manifest lists: the figures not taken; the whole list comes after.
  nlohmann::json manifest = {{"figures", nlohmann::json::array()}, {"drawn_by", stamp}};
  nlohmann::json to_draw = manifest;
  for (const auto &f : content.figures) {
    write_text_atomic((figs / (f.id + ".csv")).string(), f.csv);
    manifest["figures"].push_back(f.manifest());
    if (!taken.count(f.id))
      to_draw["figures"].push_back(f.manifest());
  }
  if (!to_draw["figures"].empty()) {
    write_json_atomic((figs / "manifest.json").string(), to_draw);
    const std::vector<std::string> argv = {o.python, script, figs.string()}; // no shell
    // Its output is held back: on Ctrl-C (even while Python starts) gpuprobe's one line is all a
    // person reads; on a failure its last line is said in gpuprobe's.
    child_options quiet;
    quiet.capture = true;
    quiet.merge_stderr = true;
    const auto r = run_child(argv, quiet);
    check_interrupted("report (drawing the figures)");
    if (!r.ok())
      throw error("report: drawing the figures failed (" + o.python + " " + script + " " +
                  figs.string() + ": exit " + std::to_string(r.exit_code) + ")" +
                  (last_line(r.output).empty() ? "" : ": " + last_line(r.output)));
  }
  write_json_atomic((figs / "manifest.json").string(), manifest);
  if (!content.figures.empty())
    take_not_drawn(figs, content);
  const bool html = o.format == "html";
  std::map<std::string, std::string> png; // embedded: index.html stands alone
  for (const auto &f : content.figures) {
    std::ifstream in(figs / (f.id + ".png"), std::ios::binary);
    png[f.id] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  write_text_atomic((dir / (html ? "index.html" : "index.md")).string(),
                    html ? report::render_html(content, png) : report::render_markdown(content));
  mark_folder_owned(dir.string(), "report"); // every path it wrote: a later report may replace them
  return content;
}

void run_report(const report_options &o) {
  check_outputs("report", {{"--out", o.out, true}}, {o.input}, report_inside_ok);
  fs::path out = fs::path(o.out).lexically_normal();
  if (out.filename().empty()) // "report/": the folder itself
    out = out.parent_path();
  // A page inside its own results folder (run's DIR/report) writes that folder: the writer's
  // lock, not a reader's, so two reports of one folder take turns.
  const bool inside = same_or_inside(out.string(), o.input);
  const folder_lock locked(o.input, "report",
                           inside ? folder_lock::mode::write : folder_lock::mode::read);
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(parent, ec))
    throw error("report: the folder of --out, '" + terminal_text(parent.string()) +
                "', does not exist");
  const dir_lock writing(parent.string(), "report"); // two reports into one --out take turns
  folder_swap swap(out.string(), "report", legacy_report_folder); // checked now, swapped last
  const std::string tmp_prefix = "." + out.filename().string() + ".tmp.";
  remove_stale_temporaries(parent.string(), tmp_prefix); // of reports that were killed
  remove_stale_temporaries(parent.string(), "." + out.filename().string() + ".old.");
  // Drawn beside --out, then swapped in: a failed render leaves nothing, a new one nothing old.
  const fs::path tmp = parent / (tmp_prefix + std::to_string(::getpid()));
  if (::mkdir(tmp.c_str(), 0755) != 0) // a fresh folder: never one planted at the name
    throw error("report: cannot make '" + terminal_text(tmp.string()) + "': " +
                std::strerror(errno));
  report::report_content content;
  std::size_t reused = 0;
  const cleanup_scope cleaning; // SIGTERM/SIGHUP/SIGINT: the temporary folder is removed, below
  try {
    content = render_into(o, tmp, reused);
    check_interrupted("report");
    swap.replace(tmp.string());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  const std::string page = (out / (o.format == "html" ? "index.html" : "index.md")).string();
  const std::string earlier = reused
                                  ? " (" + std::to_string(reused) +
                                        " drawn before from the same data: " + o.figures_from + ")"
                                  : std::string();
  std::printf("gpuprobe report: %zu figures%s, %zu tables -> %s\n", content.figures.size(),
              earlier.c_str(), content.tables.size(), page.c_str());
  for (const auto &m : content.missing)
    std::printf("  not in the folder: %s\n", m.c_str());
  for (const auto &m : content.not_drawn)
    std::printf("  not drawn: %s\n", m.c_str());
  for (const auto &m : content.skipped)
    std::printf("  not drawn: %s\n", m.c_str());
  if (!content.skipped.empty()) // drawn from the rest; the status says something was left out
    exit_status() = k_exit_partial;
}

} // namespace

void setup_report(CLI::App &parent) {
  auto opt = std::make_shared<report_options>();
  auto *app = parent.add_subcommand(
      "report", "Draw a results folder as one page (index.html or index.md) with figures");
  app->add_option("--input", opt->input, "results folder (raw/, profile.json, validation.json)")
      ->required();
  app->add_option("--out", opt->out, "output folder (index.html, figures/)")->required();
  app->footer("Example: gpuprobe report --input results/first --out results/first/report\n"
              "Exit status: 0 drawn; 3 drawn from the valid inputs, others (broken, of another "
              "GPU, of a newer version) listed under 'not drawn'; 1 nothing valid to draw.");
  app->add_option("--format", opt->format, "html | md")
      ->capture_default_str()
      ->check(CLI::IsMember({"html", "md"}));
  app->add_option("--python", opt->python, "Python with matplotlib")->capture_default_str();
  app->add_option("--plot-script", opt->plot_script,
                  "plot script (default: plot.py beside this binary, else\n"
                  "../share/gpuprobe/plot.py, else reports/plot.py of the source tree)");
  app->add_option("--figures-from", opt->figures_from,
                  "figures/ of an earlier report: each figure drawn there by the same plot\n"
                  "script from the same data is taken instead of drawn again (gpuprobe run\n"
                  "passes its folder's report/figures: a rerun draws only what changed)");
  app->callback([opt] { run_report(*opt); });
}

} // namespace gpuprobe::cli
