// gpuprobe report's folder rules (cli/report_folder.hpp).
#include "cli/report_folder.hpp"
#include "common/error.hpp"
#include "common/folder_lock.hpp"
#include "common/json_io.hpp"
#include "common/outputs.hpp"
#include "common/paths.hpp"
#include "common/process.hpp"
#include "common/results_folder.hpp"
#include "report/figures_drawn.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>

#include <unistd.h>

namespace gpuprobe::cli {

namespace fs = std::filesystem;

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

bool legacy_report_folder(const std::string &dir, const std::vector<std::string> &paths) {
  std::set<std::string> ok = {
      "index.html",  "index.md", "figures", "figures/manifest.json", "figures/not_drawn.json",
      k_owned_marker};
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

bool report_inside_ok(const std::string &out, const std::string &input) {
  const fs::path rel = fs::weakly_canonical(fs::absolute(out))
                           .lexically_relative(fs::weakly_canonical(fs::absolute(input)));
  const std::string first = rel.empty() ? "" : rel.begin()->string();
  std::vector<std::string> taken = results_folder::stage_names();
  taken.push_back(folder_lock::file_name);
  if (std::find(taken.begin(), taken.end(), first) != taken.end())
    return false;
  return !first.empty() && first != "." && first != "..";
}

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

void draw_figures(const std::string &python, const std::string &script, const fs::path &figs,
                  const nlohmann::json &to_draw) {
  write_json_atomic((figs / "manifest.json").string(), to_draw);
  child_options quiet;
  quiet.capture = true;
  quiet.merge_stderr = true;
  const auto r = run_child({python, script, figs.string()}, quiet);
  check_interrupted("report (drawing the figures)");
  if (!r.ok())
    throw error("report: drawing the figures failed (" + python + " " + script + " " +
                figs.string() + ": exit " + std::to_string(r.exit_code) + ")" +
                (last_line(r.output).empty() ? "" : ": " + last_line(r.output)));
}

std::map<std::string, std::string> figure_pngs(const fs::path &figs,
                                               const report::report_content &content) {
  std::map<std::string, std::string> png;
  for (const auto &f : content.figures) {
    std::ifstream in(figs / (f.id + ".png"), std::ios::binary);
    png[f.id] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  return png;
}

} // namespace gpuprobe::cli
