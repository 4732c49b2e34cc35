// gpuprobe report: a results folder -> one page (index.html, or index.md) with every figure as
// PNG and SVG and the CSV behind it (drawn by reports/plot.py), and the tables.
#include "report/report.hpp"
#include "cli/common.hpp"
#include "common/folder_lock.hpp"
#include "common/error.hpp"
#include "common/paths.hpp"
#include "common/json_io.hpp"
#include "common/process.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>

#include <unistd.h>

namespace gpuprobe::cli {

namespace {
namespace fs = std::filesystem;

struct report_options {
  std::string input, out, format = "html", python = "python3", plot_script;
};

std::string default_plot_script() { // reports/plot.py beside the binary's source tree
  return std::string(GPUPROBE_SOURCE_DIR) + "/reports/plot.py";
}

// A folder --out may replace: absent, empty, or a page this command wrote (index.html/.md and
// figures/ only). Anything else is refused, so a typo never deletes a user's folder.
void check_out_folder(const fs::path &out) {
  std::error_code ec;
  if (!fs::exists(out, ec))
    return;
  if (!fs::is_directory(out, ec))
    throw error("report: --out '" + out.string() + "' is a file; give a folder");
  for (const auto &e : fs::directory_iterator(out, ec)) {
    const std::string n = e.path().filename().string();
    if (n != "index.html" && n != "index.md" && n != "figures")
      throw error("report: --out '" + out.string() + "' holds '" + n +
                  "', which is not a report's: give a new or a report folder");
  }
  if (ec)
    throw error("report: cannot read --out '" + out.string() + "': " + ec.message());
}

// Draws the page into `dir` (a fresh folder).
report::report_content render_into(const report_options &o, const fs::path &dir) {
  const auto content = report::build_report(o.input);
  const fs::path figs = dir / "figures";
  fs::create_directories(figs);
  nlohmann::json manifest = {{"figures", nlohmann::json::array()}};
  for (const auto &f : content.figures) {
    write_text_atomic((figs / (f.id + ".csv")).string(), f.csv);
    manifest["figures"].push_back(f.manifest());
  }
  write_json_atomic((figs / "manifest.json").string(), manifest);
  const std::string script = o.plot_script.empty() ? default_plot_script() : o.plot_script;
  if (!content.figures.empty()) {
    const std::vector<std::string> argv = {o.python, script, figs.string()}; // no shell
    const auto r = run_child(argv);
    check_interrupted("report (drawing the figures)");
    if (!r.ok())
      throw error("report: drawing the figures failed (" + o.python + " " + script + " " +
                  figs.string() + ": exit " + std::to_string(r.exit_code) + ")");
    for (const auto &f : content.figures)
      for (const char *ext : {".png", ".svg"})
        if (!fs::exists(figs / (f.id + ext)) || fs::file_size(figs / (f.id + ext)) == 0)
          throw error("report: figure " + f.id + ext + " was not drawn");
  }
  const bool html = o.format == "html";
  std::map<std::string, std::string> png; // embedded: index.html stands alone
  for (const auto &f : content.figures) {
    std::ifstream in(figs / (f.id + ".png"), std::ios::binary);
    png[f.id] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  write_text_atomic((dir / (html ? "index.html" : "index.md")).string(),
                    html ? report::render_html(content, png)
                         : report::render_markdown(content));
  return content;
}

void run_report(const report_options &o) {
  const folder_lock reading(o.input, "report", folder_lock::mode::read); // no writer at work
  refuse_output_over_inputs("report", o.out, {o.input});
  fs::path out = fs::path(o.out).lexically_normal();
  if (out.filename().empty()) // "report/": the folder itself
    out = out.parent_path();
  check_out_folder(out);
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(parent, ec))
    throw error("report: the folder of --out, '" + parent.string() + "', does not exist");
  // Drawn beside --out, then swapped in: a failed render leaves nothing, a new one nothing old.
  const fs::path tmp =
      parent / ("." + out.filename().string() + ".tmp." + std::to_string(::getpid()));
  fs::remove_all(tmp, ec);
  report::report_content content;
  const cleanup_scope cleaning; // SIGTERM/SIGHUP/SIGINT: the temporary folder is removed, below
  try {
    content = render_into(o, tmp);
    check_interrupted("report");
    fs::remove_all(out);
    fs::rename(tmp, out);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  const std::string page = (out / (o.format == "html" ? "index.html" : "index.md")).string();
  std::printf("gpuprobe report: %zu figures, %zu tables -> %s\n", content.figures.size(),
              content.tables.size(), page.c_str());
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
                  "plot script (default: reports/plot.py of the source tree)");
  app->callback([opt] { run_report(*opt); });
}

} // namespace gpuprobe::cli
