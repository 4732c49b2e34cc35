// Figures drawn earlier from the same data (report/figures_drawn.hpp, `report --figures-from`):
// a figure is taken only when its spec, its CSV and the plotter are the ones the report would draw
// it with, and its PNG and SVG are plain, non-empty files that were drawn.
#include "common/json_io.hpp"
#include "report/figures_drawn.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using gpuprobe::report::report_figure;
using gpuprobe::test::temp_path;
using nlohmann::json;

namespace {

std::string text_of(const fs::path &p) { return gpuprobe::read_text_file(p.string()); }
void write(const fs::path &p, const std::string &text) {
  std::ofstream(p, std::ios::binary) << text;
}

// What an earlier report's folder can get wrong about one figure.
enum class change {
  none,
  csv,         // its data changed since
  spec,        // its title (the manifest entry) changed since
  png_missing, // not drawn
  svg_empty,   // drawn as nothing
  png_link,    // a link to a file elsewhere: not followed
  not_drawn,   // the plotter listed it as not drawn
  not_listed,  // absent from the earlier manifest
  count
};

} // namespace

// 400 generated cases: 1-12 figures each, every figure given one of the changes above (or none),
// and one case in ten drawn by another plotter (a script edited since): taken are exactly the
// figures with no change, their files copied byte for byte, and nothing else is written.
TEST(FiguresDrawn, TakesExactlyTheFiguresWhoseSpecDataAndPlotterAreTheSame) {
  std::mt19937_64 rng(20261128);
  const fs::path root = temp_path("figures_drawn_family");
  const fs::path script = root / "plot.py", outside = root / "outside.png";
  int taken_total = 0, left_total = 0;
  for (int c = 0; c < 400; ++c) {
    fs::remove_all(root);
    const fs::path earlier = root / "earlier", figs = root / "figs";
    fs::create_directories(earlier);
    fs::create_directories(figs);
    write(script, "# plot script " + std::to_string(c % 3));
    write(outside, "not a figure of this report");
    const json stamp = gpuprobe::report::plotter_stamp("python3", script.string());
    const bool other_plotter = rng() % 10 == 0;
    json manifest = {{"figures", json::array()},
                     {"drawn_by", other_plotter ? gpuprobe::report::plotter_stamp("python3.other",
                                                                                  script.string())
                                                : stamp}};
    json not_drawn = json::object();
    std::vector<report_figure> figures(1 + rng() % 12);
    std::set<std::string> expected;
    for (std::size_t i = 0; i < figures.size(); ++i) {
      auto &f = figures[i];
      f.id = "fig" + std::to_string(i);
      f.title = "figure " + std::to_string(rng() % 1000);
      f.kind = rng() % 2 ? "lines" : "heatmap";
      f.logx = rng() % 2;
      f.csv = "series,style,x,y\na,-," + std::to_string(rng() % 100) + ",1\n";
      const auto ch = change(rng() % int(change::count));
      report_figure drawn = f; // as the earlier report drew it
      if (ch == change::csv)
        drawn.csv += "a,-,7,8\n";
      if (ch == change::spec)
        drawn.title += " (before)";
      if (ch != change::not_listed)
        manifest["figures"].push_back(drawn.manifest());
      write(earlier / (f.id + ".csv"), drawn.csv);
      if (ch == change::png_link)
        fs::create_symlink(outside, earlier / (f.id + ".png"));
      else if (ch != change::png_missing)
        write(earlier / (f.id + ".png"), "png of " + f.id);
      write(earlier / (f.id + ".svg"), ch == change::svg_empty ? "" : "svg of " + f.id);
      if (ch == change::not_drawn)
        not_drawn[f.id] = "ValueError: nothing to draw";
      if (ch == change::none && !other_plotter)
        expected.insert(f.id);
    }
    write(earlier / "manifest.json", manifest.dump());
    write(earlier / "not_drawn.json", not_drawn.dump());
    const auto taken = gpuprobe::report::take_figures_drawn(figures, earlier, figs, stamp);
    ASSERT_EQ(taken, expected) << "case " << c;
    for (const auto &f : figures)
      for (const char *ext : {".png", ".svg"}) {
        if (taken.count(f.id))
          EXPECT_EQ(text_of(figs / (f.id + ext)), text_of(earlier / (f.id + ext)))
              << "case " << c << ", " << f.id << ext;
        else
          EXPECT_FALSE(fs::exists(figs / (f.id + ext))) << "case " << c << ", " << f.id << ext;
      }
    taken_total += int(taken.size());
    left_total += int(figures.size() - taken.size());
  }
  // The family reaches both sides (about one figure in eight has no change).
  EXPECT_GT(taken_total, 200);
  EXPECT_GT(left_total, 1000);
  fs::remove_all(root);
}

// No earlier folder, or one without a manifest this plotter wrote: nothing is taken.
TEST(FiguresDrawn, NoManifestOrAnotherScriptTakesNothing) {
  const fs::path root = temp_path("figures_drawn_none");
  fs::remove_all(root);
  fs::create_directories(root / "figs");
  report_figure f;
  f.id = "a";
  f.csv = "x\n";
  const fs::path script = root / "plot.py";
  write(script, "# one script");
  const json stamp = gpuprobe::report::plotter_stamp("python3", script.string());
  EXPECT_TRUE(
      gpuprobe::report::take_figures_drawn({f}, root / "missing", root / "figs", stamp).empty());
  fs::create_directories(root / "earlier");
  write(root / "earlier" / "a.csv", "x\n");
  write(root / "earlier" / "a.png", "p");
  write(root / "earlier" / "a.svg", "s");
  write(root / "earlier" / "manifest.json",
        json{{"figures", {f.manifest()}}, {"drawn_by", stamp}}.dump());
  EXPECT_EQ(
      gpuprobe::report::take_figures_drawn({f}, root / "earlier", root / "figs", stamp).size(), 1u);
  write(script, "# the script edited since"); // the stamp hashes the script's text
  const json edited = gpuprobe::report::plotter_stamp("python3", script.string());
  EXPECT_NE(edited, stamp);
  EXPECT_TRUE(
      gpuprobe::report::take_figures_drawn({f}, root / "earlier", root / "figs", edited).empty());
  fs::remove_all(root);
}

// `report --figures-from`: a stand-in plot script that lists the figures it drew. The second
// report of the same folder draws none of them and writes the same page; one whose script changed
// draws them all again.
TEST(FiguresDrawn, ASecondReportOfTheSameFolderDrawsNothingAgain) {
  const std::string in =
      std::string(GPUPROBE_SOURCE_DIR) + "/tests/fixtures/runs/nvidia-h100-80gb-hbm3-f83ecb16";
  const fs::path root = temp_path("figures_from_cli");
  fs::remove_all(root);
  fs::create_directories(root);
  const fs::path script = root / "plot.py";
  const auto stand_in = [&](const std::string &version) {
    write(script, "import json, os, sys\n"
                  "d = sys.argv[1]\n"
                  "ids = [f['id'] for f in json.load(open(os.path.join(d, 'manifest.json')))"
                  "['figures']]\n"
                  "for i in ids:\n"
                  "    for ext in ('png', 'svg'):\n"
                  "        open(os.path.join(d, i + '.' + ext), 'w').write('" +
                      version +
                      "')\n"
                      "open(os.path.join(d, 'drew.txt'), 'w').write('\\n'.join(ids))\n");
  };
  const auto report = [&](const std::string &out, const std::string &from) {
    std::vector<std::string> a = {
        "report",        "--format",     "md", "--input", in, "--out", (root / out).string(),
        "--plot-script", script.string()};
    if (!from.empty())
      a.insert(a.end(), {"--figures-from", (root / from / "figures").string()});
    return gpuprobe::test::run_gpuprobe_argv(a);
  };
  stand_in("v1");
  auto r = report("first", "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string drew_first = text_of(root / "first/figures/drew.txt");
  ASSERT_FALSE(drew_first.empty());
  r = report("second", "first");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(root / "second/figures/drew.txt")) << "the plot script ran again";
  EXPECT_NE(r.out.find("drawn before from the same data"), std::string::npos) << r.out;
  EXPECT_EQ(text_of(root / "second/index.md"), text_of(root / "first/index.md"));
  EXPECT_EQ(text_of(root / "second/figures/manifest.json"),
            text_of(root / "first/figures/manifest.json"));
  stand_in("v2"); // edited: every figure drawn anew
  r = report("third", "first");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(text_of(root / "third/figures/drew.txt"), drew_first);
  EXPECT_EQ(r.out.find("drawn before"), std::string::npos) << r.out;
  fs::remove_all(root);
}
