#include "findings/fleet.hpp"
#include "findings/compare.hpp"
#include "model/file_head.hpp"

#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/escape.hpp"
#include "common/json_io.hpp"
#include "common/outputs.hpp"
#include "common/results_folder.hpp"
#include "common/schema.hpp"
#include "common/stats.hpp"
#include "model/atomics.hpp"
#include "model/profile.hpp"
#include "model/run_folder.hpp"
#include "model/tuning.hpp"
#include "model/validation.hpp"
#include "probes/sharing/analysis.hpp" // canonical_groups, group_sizes
#include "probes/tlb/levels.hpp"       // level_label

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

namespace gpuprobe::findings {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool has_results(const fs::path &raw) {
  if (!fs::is_directory(raw))
    return false;
  for (const auto &e : fs::directory_iterator(raw))
    if (e.path().extension() == ".json")
      return true;
  return false;
}

// characterize.log: what `characterize --devices` keeps of each GPU's run (also of one that
// failed before writing any result).
bool is_unit(const fs::path &d) {
  const results_folder f{d};
  return fs::is_regular_file(f.profile()) || has_results(f.raw()) ||
         fs::is_regular_file(d / "characterize.log");
}

// From characterize.log: "gpuprobe characterize: <model> (<uuid>) -> <dir>" and its last line.
void read_log(const fs::path &log, json &device, std::string &last) {
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty())
      last = line;
    const std::string head = "gpuprobe characterize: ";
    const auto open = line.rfind(" (GPU-"), close = line.find(") -> ");
    if (device.is_null() && line.rfind(head, 0) == 0 && open != std::string::npos &&
        close != std::string::npos && close > open)
      device = {{"name", line.substr(head.size(), open - head.size())},
                {"uuid", line.substr(open + 2, close - open - 2)}};
  }
}

// The SM -> group map as text ("{0,1,44,45} {2,3,46,47}"): equal maps, equal text.
std::string group_text(const std::vector<int> &g) {
  std::string s = "{";
  for (std::size_t i = 0; i < g.size(); ++i)
    s += (i ? "," : "") + std::to_string(g[i]);
  return s + "}";
}
std::string group_map(const std::vector<std::vector<int>> &groups) {
  std::string s;
  for (const auto &g : groups)
    s += (s.empty() ? "" : " ") + group_text(g);
  return s;
}

void read_profile(const model::profile &p, fleet_unit &u) {
  // Which analysis made the profile: units analysed by different commits may differ by the
  // analysis alone (`characterize --reanalyze` on each folder makes them comparable).
  if (p.meta.is_object() && p.meta.contains("git_commit") && p.meta["git_commit"].is_string())
    u.text["analysis_commit"] = p.meta["git_commit"].get<std::string>();
  // The rest of where the unit's figures come from: the fleet page's provenance table.
  u.text["mode"] = p.mode();
  u.text["driver"] = p.device_text("driver_release");
  u.text["measured_utc"] = p.meta_text("created_utc");
  const auto &levels = p.tlb.levels;
  for (std::size_t k = 0; k < levels.size(); ++k) {
    const auto &L = levels[k];
    const std::string n = model::level_label(false, k) + ".";
    // A value the profile does not hold stays absent (never a 0 that a median or a table reads).
    if (L.entries)
      u.numbers[n + "entries"] = *L.entries;
    if (L.ways) { // the structure, where the profile resolved it
      u.numbers[n + "ways"] = *L.ways;
      if (L.sets)
        u.numbers[n + "sets"] = *L.sets;
      if (L.full_miss_bytes)
        u.numbers[n + "full_miss_gib"] = *L.full_miss_bytes / double(1ull << 30);
    }
    u.numbers[n + "coverage_mib"] =
        L.coverage_bytes / double(1 << 20); // a level's coverage is always there
    u.numbers[n + "reach_gib"] = L.reach_bytes / double(1ull << 30);
    if (L.miss_penalty_cycles)
      u.numbers[n + "penalty_cycles"] = *L.miss_penalty_cycles;
    u.text[n + "sharing"] = L.sharing ? L.sharing->scope : "not measured";
    // A global level's groups are every SM it was measured on (all, or a spread sample of them):
    // its scope says all there is, so there is no map to compare.
    if (L.sharing && L.sharing->scope != "global" && L.sharing->groups &&
        !L.sharing->groups->empty()) {
      const auto groups = probes::canonical_groups(*L.sharing->groups);
      u.numbers[n + "groups"] = double(groups.size());
      u.text[n + "group_sizes"] = probes::group_sizes(groups);
      u.text[n + "group_map"] = group_map(groups);
      u.groups[model::level_label(false, k)] = groups;
    }
    // The per-SM pass (tlb-per-sm): each map's width and the SMs apart from the unit's others, so
    // the fleet shows where units' maps differ (compare A B names the SMs between two).
    if (L.per_sm && !L.per_sm->sms.empty()) {
      const auto width = [](const std::vector<double> &v) {
        const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
        return *hi - *lo;
      };
      u.numbers[n + "per_sm_hit_width"] = width(L.per_sm->hit_cycles);
      u.numbers[n + "per_sm_penalty_width"] = width(L.per_sm->penalty_cycles);
      u.numbers[n + "per_sm_penalty_median"] = median(L.per_sm->penalty_cycles);
      std::string apart;
      for (const int sm : L.per_sm->apart_sms.value_or(std::vector<int>{}))
        apart += (apart.empty() ? "SM " : ", SM ") + std::to_string(sm);
      u.text[n + "per_sm_apart"] = apart.empty() ? "none" : apart;
    }
    const model::level_check *c =
        p.tlb.cross_check ? p.tlb.cross_check->find(model::level_label(false, k)) : nullptr;
    if (c && c->sampling && c->sampling->ratio)
      u.numbers[n + "sampling_ratio"] = *c->sampling->ratio;
  }
  for (const auto &v : model::atomics_of(p)) {
    const model::atomics_fit fit = v.fit.value_or(model::atomics_fit{});
    const std::string name = "atomics." + (v.variant.empty() ? std::string("?") : v.variant);
    if (fit.model == "power" && fit.power_exponent)
      u.numbers[name + ".exponent"] = *fit.power_exponent;
    else if (fit.slope_cycles_per_thread)
      u.numbers[name + ".slope"] = *fit.slope_cycles_per_thread;
  }
}

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

} // namespace

fleet_unit read_unit(const std::string &folder) {
  fleet_unit u;
  u.folder = folder;
  const fs::path d(folder);
  json device;
  const results_folder f{d};
  std::optional<model::run_folder> run; // a finished unit's folder, read once
  if (fs::exists(f.profile())) {
    run = model::read_run_folder(folder);
    device = run->prof.device;
    read_profile(run->prof, u);
    u.status = "complete";
  } else if (!has_results(f.raw())) {
    std::string last;
    read_log(d / "characterize.log", device, last);
    u.status = "failed: " + (last.empty() ? std::string("characterize.log is empty") : last);
  } else {
    std::vector<std::string> stages;
    for (const auto &e : fs::directory_iterator(f.raw()))
      if (e.path().extension() == ".json") {
        stages.push_back(e.path().stem().string());
        if (device.is_null()) {
          try {
            device = model::read_file_head(e.path().string()).device;
          } catch (const std::exception &) {
            // an unreadable stage file: another one may name the device
          }
        }
      }
    std::sort(stages.begin(), stages.end());
    std::string have;
    for (const auto &s : stages)
      have += (have.empty() ? "" : ", ") + s;
    u.status = "incomplete: no profile.json (raw/ has " + have +
               "): characterize did not finish; run it again on this GPU to resume";
  }
  if (!device.is_object())
    device = json::object();
  const device_info who = device_info_from_json(device);
  u.model = who.name.empty() ? std::string("unknown model") : who.name;
  u.uuid = who.uuid;
  if (u.uuid.empty())
    throw error("fleet: " + folder + " does not record its GPU's UUID");
  if (run && run->tuning) {
    const alloc::tuning &a = run->tuning->allocator;
    u.numbers["tuning.word_bits"] = a.word_bits;
    u.numbers["tuning.regions"] = a.regions;
    u.text["tuning.crw_start"] = alloc::to_string(a.crw);
  }
  if (run && run->valid) {
    std::map<std::string, int> verdicts;
    for (const auto &w : run->valid->workloads)
      ++verdicts[w.verdict];
    for (const auto &[verdict, n] : verdicts)
      u.numbers["validation." + verdict] = n;
  }
  return u;
}

namespace {

// The unit folders under `in` (it, when it is one): a unit's raw/ is not searched for others; a
// folder that cannot be read, a loop of links, or a raw/ without a gpuprobe result goes to
// `refused` with its reason, and the walk goes on.
std::vector<fs::path> unit_folders(const std::string &in, std::vector<std::string> &refused) {
  std::vector<fs::path> found;
  if (is_unit(in))
    return {fs::path(in)};
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(in, ec); it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (ec) { // an unreadable folder: listed, the walk goes on
      refused.push_back(in + ": " + ec.message());
      ec.clear();
      continue;
    }
    std::error_code st;
    if (!it->is_directory(st)) {
      if (st) // a loop of links: listed with the reason, never followed
        refused.push_back(it->path().string() + ": " + st.message());
      continue;
    }
    if (is_unit(it->path())) {
      found.push_back(it->path());
      it.disable_recursion_pending(); // a unit's raw/ is not another unit
    } else if (it->path().filename() == results_folder::raw_dir) {
      refused.push_back(it->path().parent_path().string() + ": raw/ holds no gpuprobe result");
      it.disable_recursion_pending();
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Why folder `f` is not a unit, without the prefixes read_unit's message repeats.
std::string not_a_unit(const fs::path &f, const std::exception &e) {
  std::string why = e.what();
  if (why.rfind("fleet: ", 0) == 0)
    why = why.substr(7);
  if (why.rfind(f.string() + " ", 0) == 0)
    why = why.substr(f.string().size() + 1);
  return f.string() + ": " + why;
}

} // namespace

std::vector<fleet_unit> find_units(const std::vector<std::string> &inputs,
                                   std::vector<std::string> *not_units) {
  std::vector<fleet_unit> units;
  std::map<std::string, std::string> seen; // uuid -> folder
  for (const auto &in : inputs) {
    if (!fs::is_directory(in))
      throw error("fleet: '" + in + "' is not a folder");
    std::vector<std::string> refused;
    const std::vector<fs::path> found = unit_folders(in, refused);
    for (const auto &f : found) {
      fleet_unit u;
      try {
        u = read_unit(f.string());
      } catch (const std::exception &e) { // not a unit: gpuprobe-bench results, a broken file
        if (!not_units)
          throw;
        refused.push_back(not_a_unit(f, e));
        continue;
      }
      const auto [it, fresh] = seen.emplace(u.uuid, u.folder);
      if (!fresh)
        throw error("fleet: " + u.uuid + " is in two folders, " + it->second + " and " + u.folder +
                    ": give one folder per GPU");
      units.push_back(std::move(u));
    }
    if (found.empty() && refused.empty())
      throw error("fleet: no unit folder (profile.json, or raw/ with gpuprobe results) under '" +
                  in + "'");
    if (not_units)
      not_units->insert(not_units->end(), refused.begin(), refused.end());
    else if (!refused.empty())
      throw error("fleet: " + refused.front());
  }
  if (units.empty() && not_units && !not_units->empty())
    throw error("fleet: no unit among the folders found (" + std::to_string(not_units->size()) +
                " not units, the first: " + not_units->front() + ")");
  return units;
}

double robust_spread::score(double x) const { return std::fabs(x - median) / scale; }

robust_spread spread_of(const std::vector<double> &xs, const fleet_rule &rule) {
  robust_spread s;
  s.median = median(xs);
  std::vector<double> dev;
  for (double x : xs)
    dev.push_back(std::fabs(x - s.median));
  s.mad = median(dev);
  s.scale = std::max({s.mad, rule.floor_fraction * std::fabs(s.median), 1e-12});
  return s;
}

namespace {

using units_of = std::vector<const fleet_unit *>;

// One figure over a model's complete units: its median and spread, the units past the outlier
// rule (3 or more units), and a line of its values where they differ.
void number_parameter(const std::string &name, const units_of &done, const fleet_rule &rule,
                      model::fleet_model &fm) {
  std::vector<double> xs;
  model::fleet_parameter &p = fm.parameters[name];
  for (auto *u : done)
    if (auto it = u->numbers.find(name); it != u->numbers.end()) {
      xs.push_back(it->second);
      p.values[u->uuid] = it->second;
    }
  const auto sp = spread_of(xs, rule);
  const double med = sp.median, mad = sp.mad;
  // A miss penalty is an outlier only where compare would call it DIFFERENT from the median too
  // (one bar for both: a 1.5-cycle L1 difference is no outlier for being 15 x the spread of
  // units that agree to a tenth of a cycle).
  const bool penalty = name.size() > 14 && name.substr(name.size() - 14) == "penalty_cycles";
  // With two units neither is "the odd one": their difference is listed instead.
  if (xs.size() >= 3)
    for (auto *u : done)
      if (auto it = u->numbers.find(name); it != u->numbers.end()) {
        const double score = sp.score(it->second);
        if (score > rule.limit &&
            (!penalty || std::fabs(it->second - med) > analysis::penalty_bar(it->second, med))) {
          char why[256];
          std::snprintf(why, sizeof why,
                        "%s = %.4g against the model's median %.4g: %.1f x the spread (MAD "
                        "%.3g, at least %.0f %% of the median) > %.1f",
                        name.c_str(), it->second, med, score, mad, 100 * rule.floor_fraction,
                        rule.limit);
          p.outliers.push_back({u->uuid, it->second, score, why});
        }
      }
  const double lo = *std::min_element(xs.begin(), xs.end()),
               hi = *std::max_element(xs.begin(), xs.end());
  if (xs.size() >= 2 && hi - lo > rule.floor_fraction * std::fabs(med)) {
    std::string d = name + ":";
    for (const auto &[uuid, v] : p.values)
      d += " " + uuid.substr(0, std::min<std::size_t>(12, uuid.size())) + " " + number(v);
    fm.differences.push_back(d);
  }
  p.median = med, p.mad = mad, p.n = xs.size(), p.min = lo, p.max = hi;
}

// A text figure whose units disagree: a line of its variants and who has each; a group map is
// told by the groups it does not share with the most common map.
void text_difference(const std::string &name, const units_of &done, model::fleet_model &fm) {
  std::map<std::string, std::vector<std::string>> variants; // value -> uuids
  for (auto *u : done)
    if (auto it = u->text.find(name); it != u->text.end())
      variants[it->second].push_back(u->uuid);
  if (variants.size() <= 1)
    return;
  const bool map = name.size() > 10 && name.substr(name.size() - 10) == ".group_map";
  std::string common;
  std::size_t most = 0;
  for (const auto &[value, uuids] : variants)
    if (uuids.size() > most)
      most = uuids.size(), common = value;
  // The groups of a map, as text, from the first unit that has it.
  const std::string level = name.substr(0, name.find('.'));
  const auto groups = [&](const std::string &value) {
    std::set<std::string> g;
    for (auto *u : done)
      if (auto it = u->text.find(name); it != u->text.end() && it->second == value) {
        for (const auto &grp : u->groups.at(level))
          g.insert(group_text(grp));
        break;
      }
    return g;
  };
  std::string d = name + " differs:";
  for (const auto &[value, uuids] : variants) {
    std::string who;
    for (const auto &id : uuids)
      who += (who.empty() ? "" : ", ") + id.substr(0, std::min<std::size_t>(12, id.size()));
    std::string shown = value;
    if (map && value != common) {
      const auto mine = groups(value), theirs = groups(common);
      shown = "groups not in the most common map:";
      for (const auto &g : mine)
        if (!theirs.count(g))
          shown += " " + g;
    } else if (map) {
      shown = "the most common map";
    }
    d += " [" + who + "] " + (shown.size() > 160 ? shown.substr(0, 157) + "..." : shown) + ";";
  }
  fm.differences.push_back(d);
}

// A unit analysed by another commit than most of its model's units may differ by the method, not
// the hardware (the fleet example: L2 2163 entries at the ramp's middle against 2048 at its onset),
// as compare says of two runs: its outliers leave the list for a line of the differences that says
// so, and how to compare hardware with hardware.
void set_method_outliers_apart(const units_of &done, model::fleet_model &fm) {
  std::map<std::string, std::string> commit_of; // uuid -> analysis commit
  std::map<std::string, std::size_t> by_commit;
  for (auto *u : done)
    if (auto it = u->text.find("analysis_commit"); it != u->text.end()) {
      commit_of[u->uuid] = it->second;
      ++by_commit[it->second];
    }
  if (by_commit.size() < 2)
    return;
  const auto most =
      std::max_element(by_commit.begin(), by_commit.end(), [](const auto &a, const auto &b) {
        return a.second < b.second;
      })->first;
  for (auto &[name, p] : fm.parameters) {
    std::vector<model::fleet_outlier> kept;
    for (auto &o : p.outliers) {
      const auto c = commit_of.find(o.uuid);
      if (c == commit_of.end() || c->second == most) {
        kept.push_back(std::move(o));
        continue;
      }
      fm.differences.push_back(name + ": " +
                               o.uuid.substr(0, std::min<std::size_t>(12, o.uuid.size())) + " " +
                               number(o.value) + " (median " + number(p.median) +
                               ") was analysed by " + c->second + ", most units by " + most +
                               ": a method difference, not an outlier; `gpuprobe characterize "
                               "--reanalyze` each unit to compare hardware with hardware");
    }
    p.outliers = std::move(kept);
  }
}

} // namespace

model::fleet merge_fleet(const std::vector<fleet_unit> &units, const fleet_rule &rule) {
  model::fleet f;
  f.schema = schema::fleet.id();
  f.outlier_rule = "|x - median| / max(MAD, " + std::to_string(rule.floor_fraction).substr(0, 4) +
                   " x |median|) > " + std::to_string(rule.limit).substr(0, 3) +
                   ", among 3 or more complete units of one model; a miss penalty also past " +
                   "compare's bar (the larger of 1 % and 0.5 cycles)";
  f.units = units;
  std::map<std::string, units_of> by_model;
  for (const auto &u : units)
    by_model[u.model].push_back(&u);
  for (const auto &[model, list] : by_model) {
    model::fleet_model &fm = f.models[model];
    units_of done;
    for (auto *u : list)
      if (u->status == "complete")
        done.push_back(u);
    std::set<std::string> names, texts;
    for (auto *u : done) {
      for (const auto &[k, v] : u->numbers)
        names.insert(k);
      for (const auto &[k, v] : u->text)
        texts.insert(k);
    }
    for (const auto &name : names)
      number_parameter(name, done, rule, fm);
    set_method_outliers_apart(done, fm);
    for (const auto &name : texts)
      if (name != "measured_utc") // when a unit ran is provenance, never a difference
        text_difference(name, done, fm);
    for (auto *u : list)
      fm.units.push_back({u->uuid, u->folder, u->status});
    fm.complete = done.size();
  }
  return f;
}

namespace {

// A level's cell: "2048 x 32 MiB, +95, groups ..."; a value the unit's profile does not hold
// reads "—" (never a 0), a level it has not at all "—" alone.
std::string cell(const fleet_unit &u, const std::string &level) {
  const auto n = [&](const std::string &k) { return u.number(level + "." + k); };
  if (!n("coverage_mib"))
    return "—";
  const auto text = [](const std::optional<double> &v, const char *fmt) {
    char b[64];
    std::snprintf(b, sizeof b, fmt, v.value_or(0));
    return v ? std::string(b) : std::string("—");
  };
  std::string s = text(n("entries"), "%.0f") + " x " + text(n("coverage_mib"), "%.0f") + " MiB, +" +
                  text(n("penalty_cycles"), "%.0f");
  auto sh = u.text.find(level + ".sharing");
  if (sh != u.text.end()) {
    auto sizes = u.text.find(level + ".group_sizes");
    s += ", " +
         (sh->second == "groups" && sizes != u.text.end()
              ? std::to_string(int(n("groups").value_or(0))) + " groups (" + sizes->second + ")"
              : sh->second);
  }
  return s;
}

} // namespace

std::string fleet_markdown(const model::fleet &fleet, bool plain) {
  const auto markdown_text = [plain](const std::string &s) {
    return plain ? terminal_text(s) : gpuprobe::markdown_text(s);
  };
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

} // namespace gpuprobe::findings
