// gpuprobe fleet: unit folders -> one table (fleet.json, fleet.md) per model: every unit's levels,
// sharing, atomics and tuning, the model's medians, outliers and what differs between units.
#include "analysis/fleet.hpp"
#include "cli/common.hpp"
#include "common/error.hpp"
#include "common/escape.hpp"
#include "common/json_io.hpp"
#include "common/paths.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>

namespace gpuprobe::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct fleet_flags {
  std::vector<std::string> inputs;
  std::string out;
};

std::string cell(const analysis::fleet_unit &u, const std::string &level) {
  const auto n = [&](const std::string &k) { return u.number(level + "." + k).value_or(-1.0); };
  if (n("entries") < 0)
    return "—";
  char b[160];
  std::snprintf(b, sizeof b, "%.0f x %.0f MiB, +%.0f", n("entries"), n("page_mib"),
                n("penalty_cycles"));
  std::string s = b;
  auto sh = u.text.find(level + ".sharing");
  if (sh != u.text.end()) {
    auto sizes = u.text.find(level + ".group_sizes");
    s += ", " + (sh->second == "groups" && sizes != u.text.end()
                     ? std::to_string(int(n("groups"))) + " groups (" + sizes->second + ")"
                     : sh->second);
  }
  return s;
}

// The table as Markdown: one row per unit, models apart, then each model's findings.
std::string markdown(const model::fleet &fleet) {
  std::ostringstream o;
  o << "# Fleet\n\nOutlier rule: " << fleet.outlier_rule << "\n";
  for (const auto &[model, m] : fleet.models) {
    o << "\n## " << markdown_text(model) << " (" << m.units.size() << " units, " << m.complete
      << " complete)\n\n| unit | L1 | L2 | L3 | atomics same_u32 slope | tuning | status |\n"
         "|---|---|---|---|---|---|---|\n";
    for (const auto &u : fleet.units) {
      if (u.model != model)
        continue;
      const auto slope = u.number("atomics.same_u32.slope");
      const auto words = u.number("tuning.word_bits");
      char a[64] = "—", t[64] = "—";
      if (slope)
        std::snprintf(a, sizeof a, "%.3f cycles/thread", *slope);
      if (words) {
        const double regions = u.number("tuning.regions").value_or(1.0);
        std::snprintf(t, sizeof t, "%.0f-bit, %.0f region%s", *words, regions,
                      regions == 1 ? "" : "s"); // "1 region", "24 regions"
      }
      o << "| " << markdown_text(u.uuid) << " | " << markdown_text(cell(u, "L1")) << " | "
        << markdown_text(cell(u, "L2")) << " | " << markdown_text(cell(u, "L3")) << " | " << a
        << " | " << t << " | " << markdown_text(u.status) << " |\n";
    }
    bool any = false;
    for (const auto &[name, p] : m.parameters)
      for (const auto &x : p.outliers) {
        o << (any ? "" : "\nOutliers:\n\n") << "- " << markdown_text(x.uuid + ": " + x.why) << "\n";
        any = true;
      }
    if (!any)
      o << "\nOutliers: none" << (m.complete < 3 ? " (fewer than 3 complete units)" : "") << ".\n";
    o << "\nWhat differs between its units:\n\n";
    if (m.differences.empty())
      o << "- nothing beyond 1 %\n";
    for (const auto &d : m.differences)
      o << "- " << markdown_text(d) << "\n";
  }
  return o.str();
}

void run(const fleet_flags &f) {
  if (fs::exists(f.out) && !fs::is_directory(f.out))
    throw error("fleet: --out '" + f.out + "' is a file; give a folder");
  std::vector<std::string> not_units; // listed with their reasons, the fleet built from the rest
  refuse_output_over_inputs("fleet", f.out, f.inputs);
  const auto units =
      analysis::find_units(f.inputs, &not_units); // before --out: bad input writes nothing
  for (const auto &u : units) // a unit's next report would draw the fleet's files as its own
    if (same_or_inside(f.out, u.folder))
      throw error("fleet: --out '" + f.out + "' lies in the unit folder '" + u.folder +
                  "': give a folder beside the units");
  fs::create_directories(f.out);
  model::fleet fleet = analysis::merge_fleet(units);
  fleet.not_units = not_units;
  std::string md = markdown(fleet);
  if (!not_units.empty()) {
    md += "\n## Not units\n\n";
    for (const auto &n : not_units)
      md += "- " + markdown_text(n) + "\n";
  }
  write_json_atomic((fs::path(f.out) / "fleet.json").string(), model::to_json(fleet));
  write_text_atomic((fs::path(f.out) / "fleet.md").string(), md);
  std::printf("%s", md.c_str());
  std::printf("\ngpuprobe fleet: %zu units, %zu model(s) -> %s/fleet.json, fleet.md\n",
              units.size(), fleet.models.size(), f.out.c_str());
  // The same rule as report's: done, with something left out and listed above, exits 3.
  const auto broken = std::count_if(units.begin(), units.end(), [](const model::fleet_unit &u) {
    return u.status != "complete";
  });
  if (!not_units.empty() || broken > 0) {
    std::fprintf(stderr,
                 "gpuprobe fleet: %zu folder(s) not units, %ld unit(s) failed or incomplete: "
                 "listed above (exit status 3)\n",
                 not_units.size(), long(broken));
    exit_status() = k_exit_partial;
  }
}

} // namespace

void setup_fleet(CLI::App &parent) {
  auto f = std::make_shared<fleet_flags>();
  auto *app = parent.add_subcommand(
      "fleet", "unit folders (any depth) -> one table per GPU model: levels, sharing, atomics, "
               "tuning; medians, outliers, differences");
  app->footer("Example: gpuprobe fleet --input results/node1 results/node2 --out results/fleet");
  app->add_option("--input", f->inputs, "folders holding unit folders (one per GPU), any depth")
      ->required()
      ->take_all();
  app->add_option("--out", f->out, "folder for fleet.json and fleet.md (created)")->required();
  app->callback([f] { run(*f); });
}

} // namespace gpuprobe::cli
