// gpuprobe report: a results folder -> one page (index.html, or index.md) with every figure as
// PNG and SVG and the CSV behind it (drawn by reports/plot.py), and the tables.
#include "cli/common.hpp"
#include "cli/report_folder.hpp"
#include "common/error.hpp"
#include "common/folder_lock.hpp"
#include "common/json_io.hpp"
#include "common/outputs.hpp"
#include "common/paths.hpp"
#include "common/process.hpp"
#include "common/results_folder.hpp"
#include "report/figures_drawn.hpp"
#include "report/report.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
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
  if (!to_draw["figures"].empty())
    draw_figures(o.python, script, figs, to_draw);
  write_json_atomic((figs / "manifest.json").string(), manifest);
  if (!content.figures.empty())
    take_not_drawn(figs, content);
  const bool html = o.format == "html";
  write_text_atomic((dir / (html ? "index.html" : "index.md")).string(),
                    html ? report::render_html(content, figure_pngs(figs, content))
                         : report::render_markdown(content));
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
    throw error("report: cannot make '" + terminal_text(tmp.string()) +
                "': " + std::strerror(errno));
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
