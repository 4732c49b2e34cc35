// gpuprobe fleet: unit folders -> one table (fleet.json, fleet.md) per model: every unit's levels,
// sharing, atomics and tuning, the model's medians, outliers and what differs between units.
#include "cli/common.hpp"
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/escape.hpp"
#include "common/json_io.hpp"
#include "common/outputs.hpp"
#include "common/paths.hpp"
#include "findings/fleet.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>

namespace gpuprobe::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct fleet_flags {
  std::vector<std::string> inputs;
  std::string out;
};

// A fleet folder written before the marker named sizes and hashes: its fleet.json is a fleet's
// (schema gpuprobe.fleet/N); a lone fleet.md, or one beside a file that is no fleet's, is a user's.
bool legacy_fleet_folder(const std::string &dir, const std::vector<std::string> &) {
  try {
    const json j = read_json_file((fs::path(dir) / "fleet.json").string());
    return j.is_object() && j.value("schema", "").rfind("gpuprobe.fleet/", 0) == 0;
  } catch (const std::exception &) {
    return false;
  }
}

// The inputs once each, as given: `--input U --input U` is one folder.
std::vector<std::string> distinct_inputs(const std::vector<std::string> &in) {
  std::vector<std::string> out;
  std::vector<fs::path> seen;
  for (const auto &i : in) {
    std::error_code ec;
    const fs::path p = fs::weakly_canonical(fs::absolute(i), ec);
    if (std::find(seen.begin(), seen.end(), p) != seen.end())
      continue;
    seen.push_back(p);
    out.push_back(i);
  }
  return out;
}

void run(const fleet_flags &given) {
  fleet_flags f = given;
  f.inputs = distinct_inputs(given.inputs);
  // --out inside an input is the usual layout (--input results --out results/fleet): allowed, but
  // never inside a unit's folder (checked below, once the units are known).
  check_outputs("fleet", {{"--out", f.out, true}}, f.inputs,
                [](const std::string &, const std::string &) { return true; });
  check_files_replaceable(f.out, {"fleet.json", "fleet.md"}, "fleet", legacy_fleet_folder);
  std::vector<std::string> not_units; // listed with their reasons, the fleet built from the rest
  const auto units =
      findings::find_units(f.inputs, &not_units); // before --out: bad input writes nothing
  for (const auto &u : units) // a unit's next report would draw the fleet's files as its own
    if (same_or_inside(f.out, u.folder))
      throw error("fleet: --out '" + f.out + "' lies in the unit folder '" + u.folder +
                  "': give a folder beside the units");
  fs::create_directories(f.out);
  model::fleet fleet = findings::merge_fleet(units);
  fleet.not_units = not_units;
  std::string md = findings::fleet_markdown(fleet), text = findings::fleet_markdown(fleet, true);
  if (!not_units.empty()) {
    md += "\n## Not units\n\n";
    text += "\n## Not units\n\n";
    for (const auto &n : not_units) {
      md += "- " + markdown_text(n) + "\n";
      text += "- " + terminal_text(n) + "\n";
    }
  }
  json doc = model::to_json(fleet);
  doc["meta"] = run_metadata(0); // this gpuprobe: tool, version, git commit, argv, when
  write_json_atomic((fs::path(f.out) / "fleet.json").string(), doc);
  write_text_atomic((fs::path(f.out) / "fleet.md").string(), md);
  mark_files_owned(f.out, {"fleet.json", "fleet.md"}, "fleet"); // a later fleet may replace them
  std::printf("%s", text.c_str()); // the terminal: plain text, fleet.md: Markdown
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
