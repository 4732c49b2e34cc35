// gpuprobe report: a results folder -> one page (index.html, or index.md) with every figure as
// PNG and SVG and the CSV behind it (drawn by reports/plot.py), and the tables.
#include "analysis/report.hpp"
#include "cli/common.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>

namespace gpuprobe::cli {

namespace {
namespace fs = std::filesystem;

struct report_options {
  std::string input, out, format = "html", python = "python3", plot_script;
};

std::string default_plot_script() {  // reports/plot.py beside the binary's source tree
  return std::string(GPUPROBE_SOURCE_DIR) + "/reports/plot.py";
}

void run_report(const report_options& o) {
  if (o.format != "html" && o.format != "md") throw error("report: --format must be html or md");
  const auto content = analysis::build_report(o.input);
  const fs::path out(o.out), figs = fs::path(o.out) / "figures";
  fs::create_directories(figs);
  nlohmann::json manifest = {{"figures", nlohmann::json::array()}};
  for (const auto& f : content.figures) {
    write_text_atomic((figs / (f.id + ".csv")).string(), f.csv);
    manifest["figures"].push_back(f.manifest());
  }
  write_json_atomic((figs / "manifest.json").string(), manifest);
  const std::string script = o.plot_script.empty() ? default_plot_script() : o.plot_script;
  if (!content.figures.empty()) {
    const std::string cmd = o.python + " '" + script + "' '" + figs.string() + "'";
    if (std::system(cmd.c_str()) != 0) throw error("report: drawing the figures failed (" + cmd + ")");
    for (const auto& f : content.figures)
      for (const char* ext : {".png", ".svg"})
        if (!fs::exists(figs / (f.id + ext)) || fs::file_size(figs / (f.id + ext)) == 0)
          throw error("report: figure " + f.id + ext + " was not drawn");
  }
  const bool html = o.format == "html";
  std::map<std::string, std::string> png;  // embedded: index.html stands alone
  for (const auto& f : content.figures) {
    std::ifstream in(figs / (f.id + ".png"), std::ios::binary);
    png[f.id] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  write_text_atomic((out / (html ? "index.html" : "index.md")).string(), html ? analysis::render_html(content, png) : analysis::render_markdown(content));
  std::printf("gpuprobe report: %zu figures, %zu tables -> %s\n", content.figures.size(), content.tables.size(),
              (out / (html ? "index.html" : "index.md")).string().c_str());
  for (const auto& m : content.missing) std::printf("  not in the folder: %s\n", m.c_str());
}

}  // namespace

void setup_report(CLI::App& parent) {
  auto opt = std::make_shared<report_options>();
  auto* app = parent.add_subcommand("report", "Draw a results folder as one page (index.html or index.md) with figures");
  app->add_option("--input", opt->input, "results folder (raw/, profile.json, validation.json)")->required();
  app->add_option("--out", opt->out, "output folder (index.html, figures/)")->required();
  app->add_option("--format", opt->format, "html | md")->capture_default_str();
  app->add_option("--python", opt->python, "Python with matplotlib")->capture_default_str();
  app->add_option("--plot-script", opt->plot_script, "plot script (default: reports/plot.py of the source tree)");
  app->callback([opt] { run_report(*opt); });
}

}  // namespace gpuprobe::cli
