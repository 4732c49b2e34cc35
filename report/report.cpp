// `gpuprobe report`: reads a results folder (scan), hands it to each part of the page in the
// order of the registry below, and leaves rendering to render.cpp.
#include "report/parts.hpp"

#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/escape.hpp"
#include "common/json_io.hpp"
#include "common/results_folder.hpp"
#include "model/file_head.hpp"
#include "probes/catalog.hpp"
#include "probes/sharing/probe.hpp" // the 2017 tool's formats are its and tlb's
#include "probes/tlb/probe.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

namespace gpuprobe::report {

namespace fs = std::filesystem;
using nlohmann::json;

json report_figure::manifest() const {
  json v = json::array(), b = json::array();
  for (const auto &[x, label] : vlines)
    v.push_back({{"x", x}, {"label", label}});
  for (const auto &[lo, hi] : boxes)
    b.push_back({lo, hi});
  return {{"id", id},         {"title", title},    {"kind", kind}, {"xlabel", xlabel},
          {"ylabel", ylabel}, {"logx", logx},      {"logy", logy}, {"vlines", v},
          {"boxes", b},       {"csv", id + ".csv"}};
}

namespace detail {

std::string num(double x, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", digits, x);
  return b;
}
void row(std::ostringstream &o, const std::string &series, const std::string &style, double x,
         double y) {
  if (std::isfinite(x) && std::isfinite(y))
    o << csv_field(series) << ',' << style << ',' << num(x, 10) << ',' << num(y, 10) << '\n';
}

std::string device_line(const json &d) {
  const auto text = [&](const char *k) {
    return d.contains(k) ? (d[k].is_string() ? d[k].get<std::string>() : d[k].dump()) : "?";
  };
  std::string line = text("name") + ", " + text("sm_count") + " SMs, UUID " + text("uuid") + ", " +
                     describe_driver(d);
  const double mhz = d.contains("sm_clock_mhz_seen") && d["sm_clock_mhz_seen"].is_number()
                         ? d["sm_clock_mhz_seen"].get<double>()
                         : 0.0;
  if (mhz > 0)
    line += ", SM clock seen " + std::to_string(static_cast<long>(std::lround(mhz))) + " MHz";
  return line;
}

const std::vector<raw_input> &inputs::of(const std::string &id) const {
  static const std::vector<raw_input> none;
  const auto it = raw.find(id);
  return it == raw.end() ? none : it->second;
}

std::vector<std::string> inputs::paths_of(const std::string &id) const {
  std::vector<std::string> p;
  for (const auto &r : of(id))
    p.push_back(r.path);
  return p;
}

} // namespace detail

namespace {

using namespace detail;

// A folder file read into its model (model/), or listed under `skipped` with the reason.
template <class Slot, class FromJson>
bool load_model(const fs::path &f, Slot &slot, FromJson from_json, report_content &c) {
  std::error_code gone;
  if (!fs::exists(f, gone) && !fs::is_symlink(f, gone))
    return false;
  try {
    slot = from_json(read_json_file(f.string()), f.string());
    return true;
  } catch (const std::exception &e) {
    c.skipped.push_back(f.string() + ": " + e.what());
    return false;
  }
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
void take_folder_files(const std::string &dir, const results_folder &folder,
                       const std::string &folder_uuid, inputs &in, report_content &c) {
  const fs::path val = folder.validation(), tun = folder.tuning();
  if (load_model(tun, in.tuning, model::tuning_from_json, c))
    c.sources.push_back(tun.string());
  if (load_model(val, in.validation, model::validation_from_json, c))
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
  if (load_model(fl, in.fleet, model::fleet_from_json, c)) {
    c.sources.push_back(fl.string());
    if (in.device.empty())
      in.device = "a fleet: " + std::to_string(in.fleet->units.size()) + " units of " +
                  std::to_string(in.fleet->models.size()) + " model(s)";
  }
}

// Nothing drawn: a folder of unit folders is a fleet's input; else nothing valid was there.
void refuse_empty(const std::string &dir, const report_content &c) {
  std::error_code ec;
  int units = 0;
  for (const auto &e : fs::directory_iterator(dir, ec))
    units += e.is_directory(ec) && fs::exists(e.path() / results_folder::profile_file, ec);
  if (units > 0)
    throw error("report: '" + dir + "' holds no results of its own but " + std::to_string(units) +
                " unit folder(s): draw one with `gpuprobe report --input " + dir +
                "/<unit> --out ...`, or all of them with `gpuprobe fleet --input " + dir +
                " --out <folder>` and then `gpuprobe report --input <folder> --out ...`");
  throw error("report: '" + dir +
              (c.skipped.empty()
                   ? "' holds nothing to draw (no raw/ results, profile.json, tuning.json, "
                     "validation.json or fleet.json)"
                   : "' holds nothing valid to draw (" + std::to_string(c.skipped.size()) +
                         " file(s) refused, the first: " + c.skipped.front() + ")"));
}

inputs scan(const std::string &dir, report_content &c) {
  refuse_raw_folder(dir);
  inputs in;
  const results_folder folder{dir};
  const auto files = raw_files(folder, c);
  // The folder's GPU, from its profile: a raw result, tuning or validation of another is foreign.
  const fs::path prof = folder.profile();
  load_model(prof, in.profile, model::profile_from_json, c);
  const std::string folder_uuid = in.profile ? in.profile->gpu_uuid() : "";
  for (const auto &p : files) {
    const std::string path = p.string(), ext = p.extension().string();
    if (ext == ".csv") // the 2017 tool's outputs: the tlb and tlb-sharing parts draw them
      in.raw[catalog::tlb::entry.id].push_back({path, nullptr});
    else if (ext == ".txt")
      in.raw[catalog::sharing::entry.id].push_back({path, nullptr});
    else if (ext != ".json" || !take_raw_json_listed(path, folder_uuid, folder, in, c))
      continue;
    c.sources.push_back(path);
  }
  if (in.profile) {
    c.sources.push_back(prof.string());
    if (in.device.empty() && in.profile->device.is_object() && !in.profile->device.empty())
      in.device = device_line(in.profile->device);
  }
  take_folder_files(dir, folder, folder_uuid, in, c);
  if (c.sources.empty() && c.not_drawn.empty())
    refuse_empty(dir, c);
  return in;
}

// The parts of the page, in order: the summary and the fleet, each probe's (its catalog entry's
// draw, in catalog order), then the rest. Adding a figure or table that no probe owns: its file
// and one line here.
const std::vector<std::pair<std::string, part_fn>> &parts() {
  static const std::vector<std::pair<std::string, part_fn>> all = [] {
    std::vector<std::pair<std::string, part_fn>> p = {{"summary", summary_part},
                                                      {"fleet", fleet_part}};
    for (const auto &probe : probes::probe_catalog())
      if (probe.draw)
        p.emplace_back(probe.id, probe.draw);
    p.insert(p.end(), {{"theory", theory_part},
                       {"peers", peers_part},
                       {"tuning", tuning_part},
                       {"validation", validation_part}});
    return p;
  }();
  return all;
}

// One part drawn; a value it cannot draw (a ragged matrix, a null where a number belongs) leaves
// that part out, listed under "not drawn" (exit 3), and the rest of the page is drawn.
void draw_part(const std::string &name, part_fn part, const inputs &in, report_content &c) {
  const auto figures = c.figures.size(), tables = c.tables.size();
  try {
    part(in, c);
  } catch (const std::exception &e) {
    c.figures.resize(figures);
    c.tables.resize(tables);
    c.skipped.push_back("the " + name + " part: " + e.what());
  }
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
  for (const auto &[name, part] : parts())
    draw_part(name, part, in, c);
  safe_figure_ids(c);
  if (in.fleet && !in.profile && in.raw.empty())
    c.missing.clear(); // a fleet folder: its units' own pages hold those parts
  return c;
}

} // namespace gpuprobe::report
