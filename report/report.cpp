// `gpuprobe report`: reads a results folder (scan), hands it to each part of the page in the
// order of the registry below, and leaves rendering to render.cpp.
#include "report/parts.hpp"

#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/escape.hpp"
#include "common/json_io.hpp"
#include "common/results_folder.hpp"
#include "model/file_head.hpp"
#include "model/run_folder.hpp"
#include "probes/catalog.hpp"
#include "probes/sharing/probe.hpp" // the 2017 tool's formats are its and tlb's
#include "probes/tlb/probe.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace gpuprobe::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using namespace detail;

// A folder file as the folder's reader read it (model/run_folder.hpp): into its slot, or listed
// under `skipped` with the reason. True when it read.
template <class T>
bool take_file(model::folder_file<T> &&f, std::optional<T> &slot, report_content &c) {
  if (!f.problem.empty())
    c.skipped.push_back(f.path + ": " + f.problem);
  slot = std::move(f.value);
  return slot.has_value();
}

// The raw/ folder itself given as the input: the folder above it is meant.
void refuse_raw_folder(const std::string &dir) {
  if (!fs::is_directory(dir))
    throw error("report: '" + dir + "' is not a folder");
  const fs::path d = fs::path(dir).lexically_normal();
  const fs::path name = d.filename().empty() ? d.parent_path().filename() : d.filename();
  if (name == results_folder::raw_dir && !fs::is_directory(results_folder{d}.raw()))
    throw error("report: '" + dir +
                "' is the raw/ folder of a results folder: give the folder above it (--input " +
                (d.filename().empty() ? d.parent_path() : d).parent_path().string() + ")");
}

// The regular files of raw/, sorted; a loop of links or a link to nothing readable is said,
// never followed.
std::vector<fs::path> raw_files(const results_folder &folder, report_content &c) {
  std::vector<fs::path> files;
  std::error_code raw_ec;
  if (fs::is_directory(folder.raw(), raw_ec))
    for (const auto &e : fs::directory_iterator(folder.raw(), raw_ec)) {
      std::error_code st;
      if (e.is_regular_file(st))
        files.push_back(e.path());
      else if (st)
        c.skipped.push_back(e.path().string() + ": " + st.message());
    }
  std::sort(files.begin(), files.end());
  return files;
}

// gpuprobe-bench's results: drawn as TAS/WAS and peers; the device line from their context.
void take_bench(const std::string &path, model::bench_file bench, inputs &in) {
  const auto ctx = [&](const char *key, const char *fallback) {
    return bench.context_or(key, fallback);
  };
  const std::string unit = ctx("gpu_uuid", "");
  if (in.device.empty() && !unit.empty()) // gpuprobe-bench's own context
    in.device = ctx("gpu", "") + ", " + ctx("sm_count", "?") + " SMs, UUID " + unit + ", driver " +
                ctx("driver", "?") + " (runtime " + ctx("runtime", "?") + "), from gpuprobe-bench";
  else if (!unit.empty() && in.device.find(unit) == std::string::npos)
    in.device += "; also " + ctx("gpu", "") + " UUID " + unit +
                 " (gpuprobe-bench files measured on another unit)";
  in.bench.emplace_back(path, std::move(bench));
}

// One raw JSON file routed to the part that draws it (by its probe's catalog entry); false when
// it is not drawn (refused, another GPU's, derived, or no part draws it).
bool take_raw_json(const std::string &path, const std::string &folder_uuid,
                   const results_folder &folder, inputs &in, report_content &c) {
  json doc;
  model::file_head head;
  bool derived = false; // a stage's TLB profile, an analysis: the raw results are drawn
  try {
    doc = read_json_file(path);
    head = model::file_head_from_json(doc, path);
    derived = head.schema.rfind("gpuprobe.profile/", 0) == 0 ||
              head.schema.rfind("gpuprobe.sharing/", 0) == 0;
    if (!doc.contains("benchmarks") && !derived)
      require_schema(doc, schema::result, path);
  } catch (const std::exception &e) {
    c.skipped.push_back(path + ": " + e.what());
    return false;
  }
  const std::string &gpu = head.uuid;
  if (!folder_uuid.empty() && !gpu.empty() && gpu != folder_uuid) {
    c.skipped.push_back(path + ": measured on " + gpu + ", the folder's profile on " + folder_uuid);
    return false;
  }
  if (doc.contains("benchmarks")) {
    try {
      take_bench(path, model::bench_file_from_json(doc, path), in);
    } catch (const std::exception &e) {
      c.skipped.push_back(e.what()); // names the file and the field
      return false;
    }
    return true;
  }
  if (derived)
    return false;
  const std::string &probe = head.probe;
  const auto *known = probes::find_probe(probe);
  if (known && known->draw)
    in.raw[probe].push_back({path, doc});
  else if (known && fs::exists(folder.profile()))
    ; // drawn through the profile (the cross-check table, the structure table)
  else {
    c.not_drawn.push_back(path + " (probe '" + probe + "': this report has no part that draws it)");
    return false;
  }
  if (in.device.empty() && doc.contains("device"))
    in.device = device_line(doc["device"]);
  return true;
}

// take_raw_json, with a file whose blocks are of the wrong type (a device name of 7, a bench
// context of a list) listed under "not drawn" like any other broken file.
bool take_raw_json_listed(const std::string &path, const std::string &folder_uuid,
                          const results_folder &folder, inputs &in, report_content &c) {
  try {
    return take_raw_json(path, folder_uuid, folder, in, c);
  } catch (const std::exception &e) {
    c.skipped.push_back(path + ": " + e.what());
    return false;
  }
}

// The folder's tuning, validation (another GPU's are not this folder's) and fleet.
void take_folder_files(const std::string &dir, model::folder_files &files,
                       const std::string &folder_uuid, inputs &in, report_content &c) {
  const fs::path val = files.valid.path, tun = files.tuning.path;
  if (take_file(std::move(files.tuning), in.tuning, c))
    c.sources.push_back(tun.string());
  if (take_file(std::move(files.valid), in.validation, c))
    c.sources.push_back(val.string());
  const auto foreign = [&](const std::string &other, const fs::path &f) {
    if (folder_uuid.empty() || other.empty() || other == folder_uuid)
      return false;
    c.skipped.push_back(f.string() + ": measured on " + other + ", the folder's profile on " +
                        folder_uuid);
    c.sources.erase(std::remove(c.sources.begin(), c.sources.end(), f.string()), c.sources.end());
    return true;
  };
  if (in.tuning && foreign(in.tuning->gpu_uuid(), tun))
    in.tuning.reset();
  if (in.validation && foreign(in.validation->gpu_uuid(), val))
    in.validation.reset();
  const fs::path fl = fs::path(dir) / "fleet.json";
  if (take_file(model::read_folder_file(fl.string(), model::read_fleet), in.fleet, c)) {
    c.sources.push_back(fl.string());
    if (in.device.empty())
      in.device = "a fleet: " + std::to_string(in.fleet->units.size()) + " units of " +
                  std::to_string(in.fleet->models.size()) + " model(s)";
  }
}

// The title of the README.md in `dir` or the folder above it (its first heading), or "".
std::string readme_title(const fs::path &dir) {
  for (const auto &d : {dir, dir.parent_path()}) {
    std::ifstream f(d / "README.md");
    std::string line;
    while (f && std::getline(f, line))
      if (line.rfind("# ", 0) == 0)
        return (d == dir ? "its README.md: \"" : "the README.md above it: \"") + line.substr(2) +
               "\"";
  }
  return "";
}

// What a folder with nothing to draw holds instead, in words: profiles under other names, bench
// outputs, archives of device rounds, other files.
std::string what_it_holds(const fs::path &dir) {
  std::vector<std::string> profiles, bench, archives;
  int other = 0, folders = 0;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory(ec))
      ++folders;
    else if (name.size() > 7 && name.compare(name.size() - 7, 7, ".tar.gz") == 0)
      archives.push_back(name);
    else if (e.path().extension() == ".json") {
      try { // a gpuprobe file under another name, or gpuprobe-bench's output
        const json doc = read_json_file(e.path().string());
        if (doc.contains("benchmarks"))
          bench.push_back(name);
        else if (model::file_head_from_json(doc, name).schema.rfind("gpuprobe.profile/", 0) == 0)
          profiles.push_back(name);
        else
          ++other;
      } catch (const std::exception &) {
        ++other;
      }
    } else
      ++other;
  }
  const auto listed = [](const std::vector<std::string> &v) {
    std::string s;
    for (std::size_t i = 0; i < v.size() && i < 3; ++i)
      s += (i ? ", " : "") + v[i];
    return s + (v.size() > 3 ? ", ..." : "");
  };
  std::vector<std::string> parts;
  if (!profiles.empty())
    parts.push_back(std::to_string(profiles.size()) + " profile(s) under other names (" +
                    listed(profiles) + "; a results folder's is profile.json)");
  if (!bench.empty())
    parts.push_back(std::to_string(bench.size()) + " gpuprobe-bench output(s) (" + listed(bench) +
                    "; a results folder keeps them under raw/)");
  if (!archives.empty())
    parts.push_back(std::to_string(archives.size()) + " archive(s) of device rounds (" +
                    listed(archives) + "; unpack one and draw a run folder inside)");
  if (folders)
    parts.push_back(std::to_string(folders) + " folder(s) without a profile.json");
  if (other)
    parts.push_back(std::to_string(other) + " other file(s)");
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i)
    s += (i ? ", " : "") + parts[i];
  return s.empty() ? "nothing" : s;
}

// Nothing drawn: a folder of unit folders is a fleet's input; a folder that is no results folder
// says what it is (its README's title) and what it holds; else nothing valid was there.
void refuse_empty(std::string dir, const report_content &c) {
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  std::error_code ec;
  int units = 0;
  for (const auto &e : fs::directory_iterator(dir, ec))
    units += e.is_directory(ec) && fs::exists(e.path() / results_folder::profile_file, ec);
  if (units > 0)
    throw error("report: '" + dir + "' holds no results of its own but " + std::to_string(units) +
                " unit folder(s): draw one with `gpuprobe report --input " + dir +
                "/<unit> --out ...`, or all of them with `gpuprobe fleet --input " + dir +
                " --out <folder>` and then `gpuprobe report --input <folder> --out ...`");
  if (!c.skipped.empty())
    throw error("report: '" + dir + "' holds nothing valid to draw (" +
                std::to_string(c.skipped.size()) +
                " file(s) refused, the first: " + c.skipped.front() + ")");
  const std::string title = readme_title(dir);
  throw error("report: '" + dir + "' is not a results folder (no raw/ results, profile.json, " +
              "tuning.json, validation.json or fleet.json)" + (title.empty() ? "" : "; " + title) +
              "; it holds " + what_it_holds(dir));
}

inputs scan(const std::string &dir, report_content &c) {
  refuse_raw_folder(dir);
  inputs in;
  const results_folder folder{dir};
  model::folder_files read = model::read_folder_files(dir); // profile, tuning, validation: once
  const auto files = raw_files(folder, c);
  // The folder's GPU, from its profile: a raw result, tuning or validation of another is foreign.
  const fs::path prof = read.prof.path;
  take_file(std::move(read.prof), in.profile, c);
  const std::string folder_uuid = in.profile ? in.profile->gpu_uuid() : "";
  for (const auto &p : files) {
    const std::string path = p.string(), ext = p.extension().string();
    if (ext == ".csv") // the 2017 tool's outputs: the tlb and tlb-sharing parts draw them
      in.raw[probes::tlb::entry.id].push_back({path, nullptr});
    else if (ext == ".txt")
      in.raw[probes::sharing::entry.id].push_back({path, nullptr});
    else if (ext != ".json" || !take_raw_json_listed(path, folder_uuid, folder, in, c))
      continue;
    c.sources.push_back(path);
  }
  if (in.profile) {
    c.sources.push_back(prof.string());
    if (in.device.empty() && in.profile->device.is_object() && !in.profile->device.empty())
      in.device = device_line(in.profile->device);
  }
  take_folder_files(dir, read, folder_uuid, in, c);
  if (c.sources.empty() && c.not_drawn.empty())
    refuse_empty(dir, c);
  return in;
}

// A part of the page: its name (an anchor), its heading and what draws it.
struct page_part {
  std::string name, heading;
  part_fn draw;
};

// The parts of the page, in order: the summary and the fleet, each probe's (its catalog entry's
// draw and heading, in catalog order), then the rest. Adding a figure or table that no probe
// owns: its file and one line here.
const std::vector<page_part> &parts() {
  static const std::vector<page_part> all = [] {
    std::vector<page_part> p = {{"summary", "Summary", summary_part},
                                {"fleet", "Fleet", fleet_part}};
    for (const auto &probe : probes::probe_catalog())
      if (probe.draw)
        p.push_back({probe.id, probe.heading ? probe.heading : probe.id, probe.draw});
    p.insert(p.end(), {{"theory", "TAS and WAS against the RW paper's models", theory_part},
                       {"peers", "Peer allocators", peers_part},
                       {"tuning", "Tuning", tuning_part},
                       {"validation", "Validation: default against tuned", validation_part}});
    return p;
  }();
  return all;
}

// One part drawn, its figures and tables marked as its own; a value it cannot draw (a ragged
// matrix, a null where a number belongs) leaves that part out, listed under "not drawn" (exit
// 3), and the rest of the page is drawn.
void draw_part(const page_part &part, const inputs &in, report_content &c) {
  const auto figures = c.figures.size(), tables = c.tables.size();
  try {
    part.draw(in, c);
  } catch (const std::exception &e) {
    c.figures.resize(figures);
    c.tables.resize(tables);
    c.skipped.push_back("the " + part.name + " part: " + e.what());
    return;
  }
  if (c.figures.size() > figures || c.tables.size() > tables)
    c.parts.push_back(
        {part.name, part.heading, figures, c.figures.size(), tables, c.tables.size()});
}

// An ISO time to the minute: 2026-11-27T02:32:07Z -> 2026-11-27 02:32 UTC (other text as it is).
std::string utc_minutes(const std::string &t) {
  return t.size() >= 16 && t[10] == 'T' ? t.substr(0, 10) + " " + t.substr(11, 5) + " UTC" : t;
}

// A fleet's units: "Fleet of 5 units measured 2026-12-02 10:40 to 11:20 UTC by gpuprobe commit
// 1234abcd, full; driver 580.159.04" (each list of distinct values, "—" where none is recorded).
std::string fleet_provenance_line(const model::fleet &f) {
  std::set<std::string> when, commits, modes, drivers;
  const auto add = [](std::set<std::string> &to, const model::fleet_unit &u, const char *key) {
    if (const auto w = u.word(key))
      to.insert(*w);
  };
  for (const auto &u : f.units) {
    add(when, u, "measured_utc"), add(commits, u, "analysis_commit");
    add(modes, u, "mode"), add(drivers, u, "driver");
  }
  const auto list = [](const std::set<std::string> &v) {
    std::string s;
    for (const auto &x : v)
      s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? std::string("not recorded") : s;
  };
  std::string s =
      "Fleet of " + std::to_string(f.units.size()) + " units of " +
      std::to_string(f.models.size()) + " model(s), measured " +
      (when.empty()       ? std::string("at times not recorded")
       : when.size() == 1 ? utc_minutes(*when.begin())
                          : utc_minutes(*when.begin()) + " to " + utc_minutes(*when.rbegin()));
  return s + " by gpuprobe commit " + list(commits) + ", " + list(modes) + "; driver " +
         list(drivers);
}

// When, by what and how the folder was measured, from its profile: "measured 2026-11-27 02:32
// UTC by gpuprobe 0.1.0 (590916b7b924), full, seed 1; driver 580.159.04 (CUDA 13.0)".
std::string provenance_line(const inputs &in) {
  if (!in.profile && in.fleet) // a fleet: its units' range of dates, builds, modes and drivers
    return fleet_provenance_line(*in.fleet);
  if (!in.profile)
    return "Provenance: not recorded (the folder has no profile.json)";
  const auto &p = *in.profile;
  const std::string when = utc_minutes(p.meta_text("created_utc"));
  std::string s = "Measured " + (when == "-" ? std::string("at a time not recorded") : when) +
                  " by gpuprobe " + p.meta_text("version") + " (commit " + p.commit() + "), " +
                  p.mode();
  if (const auto seed = p.seed())
    s += ", seed " + std::to_string(*seed);
  s += "; driver " + p.device_text("driver_release") + " (CUDA " + p.device_text("driver_version") +
       ")";
  return s;
}

// The folder's own path dropped from what the page lists: paths relative to the results folder,
// not the drawing machine's.
void relative_paths(const std::string &dir, report_content &c) {
  std::string prefix = dir;
  while (prefix.size() > 1 && prefix.back() == '/')
    prefix.pop_back();
  prefix += '/';
  for (auto *list : {&c.sources, &c.skipped, &c.not_drawn, &c.missing})
    for (auto &s : *list)
      for (auto at = s.find(prefix); at != std::string::npos; at = s.find(prefix, at))
        s.erase(at, prefix.size());
}

// Figure ids name files (figures/<id>.csv) and links: a safe name each, and no two alike.
void safe_figure_ids(report_content &c) {
  std::set<std::string> seen;
  for (auto &f : c.figures) {
    std::string id = safe_id(f.id);
    for (int k = 2; !seen.insert(id).second; ++k)
      id = safe_id(f.id) + "-" + std::to_string(k);
    f.id = id;
  }
}

} // namespace

report_content build_report(const std::string &dir) {
  report_content c;
  const inputs in = scan(dir, c);
  c.device = in.device.empty() ? "device not recorded (2017-format inputs only)" : in.device;
  c.provenance = provenance_line(in);
  for (const auto &part : parts())
    draw_part(part, in, c);
  safe_figure_ids(c);
  relative_paths(dir, c);
  if (in.fleet && !in.profile && in.raw.empty())
    c.missing.clear(); // a fleet folder: its units' own pages hold those parts
  return c;
}

} // namespace gpuprobe::report
