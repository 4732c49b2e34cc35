#include "pipeline/stage_plan.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/results_folder.hpp"

#include <cctype>
#include <filesystem>

namespace gpuprobe::pipeline {

namespace fs = std::filesystem;
using nlohmann::json;

std::string default_results_dir(const std::string &gpu_name, const std::string &uuid) {
  std::string slug;
  for (char c : gpu_name) {
    const char l = char(std::tolower(static_cast<unsigned char>(c)));
    if (std::isalnum(static_cast<unsigned char>(l)))
      slug += l;
    else if (!slug.empty() && slug.back() != '-')
      slug += '-';
  }
  while (!slug.empty() && slug.back() == '-')
    slug.pop_back();
  std::string hex;
  for (char c : uuid.rfind("GPU-", 0) == 0 ? uuid.substr(4) : uuid)
    if (std::isxdigit(static_cast<unsigned char>(c)) && hex.size() < 8)
      hex += char(std::tolower(static_cast<unsigned char>(c)));
  return "results/" + (slug.empty() ? std::string("gpu") : slug) + "-" +
         (hex.empty() ? std::string("unknown") : hex);
}

std::vector<stage> plan_stages(bool quick, int device, unsigned long long seed) {
  const std::string dev = std::to_string(device), sd = std::to_string(seed);
  std::vector<stage> s;
  // The hierarchy: the aliased chase (one physical chunk at every slot of 4 x the memory), whose
  // steps are translation alone, with strides 64 KiB..1 GiB (quick: 2 MiB..256 MiB, 4 points an
  // octave instead of 8).
  std::vector<std::string> alias = {"tlb", "--alloc", "alias", "--device", dev, "--no-control"};
  if (quick)
    // 4096 timed hops, as the full sweep: fewer sample part of a lap of the 4096-entry level,
    // whose misses fall on a few sets' pages, and its ramp's ends then wander (issue 37).
    alias.insert(alias.end(), {"--min-stride", "2M", "--max-stride", "256M", "--points-per-octave",
                               "4", "--samples", "4096"});
  alias.insert(alias.end(), {"--seed", sd, "--out", "raw/tlb.json"});
  s.push_back({"tlb", "raw/tlb.json", alias, {}});
  // The application-level cross-check: a chase over real memory (cudaMalloc, most of the memory)
  // with the L2-capacity control; its L2 slice costs show as the p10/p90 split.
  std::vector<std::string> real = {"tlb",          "--alloc", "cudamalloc",   "--device", dev,
                                   "--min-stride", "2M",      "--max-stride", "128M"};
  if (quick)
    real.insert(real.end(), {"--points-per-octave", "4", "--samples", "512"});
  real.insert(real.end(), {"--seed", sd, "--out", "raw/tlb_real.json"});
  s.push_back({"tlb_real", "raw/tlb_real.json", real, {}});
  s.push_back({"tlb_profile",
               "raw/tlb_profile.json",
               {"analyze", "tlb", "--input", "raw/tlb.json", "--out", "raw/tlb_profile.json"},
               {"tlb"}});
  s.push_back(
      {"tlb_real_profile",
       "raw/tlb_real_profile.json",
       {"analyze", "tlb", "--input", "raw/tlb_real.json", "--out", "raw/tlb_real_profile.json"},
       {"tlb_real"}});
  // A stage that tests the TLB profile's levels: `command` over raw/tlb_profile.json into
  // raw/<name>.json, with `quick_args` under --quick.
  const auto of_profile = [&](const std::string &name, const std::string &command,
                              const std::vector<std::string> &quick_args) {
    std::vector<std::string> a = {command, "--device", dev, "--profile", "raw/tlb_profile.json"};
    if (quick)
      a.insert(a.end(), quick_args.begin(), quick_args.end());
    a.insert(a.end(), {"--seed", sd, "--out", "raw/" + name + ".json"});
    s.push_back({name, "raw/" + name + ".json", a, {"tlb_profile"}});
  };
  // The workload-level cross-check: random reads over real memory just below and above each
  // level's reach (a level past the device memory is skipped, with the reason).
  of_profile("tlb_sampling", "tlb-sampling", {"--reps", "3"});
  // Each level's ways a second way: minimal conflict sets on the alias range.
  of_profile("tlb_conflict", "tlb-conflict", {"--windows", "2"});
  if (quick)
    s.push_back({"atomics",
                 "raw/atomics.json",
                 {"atomics", "--device", dev, "--variants", "same_u32", "distinct_u32", "--samples",
                  "1024", "--seed", sd, "--out", "raw/atomics.json"},
                 {}});
  else
    s.push_back({"atomics",
                 "raw/atomics.json",
                 {"atomics", "--device", dev, "--seed", sd, "--out", "raw/atomics.json"},
                 {}});
  return s;
}

std::vector<stage> sharing_stages(const model::tlb_hierarchy &tlb, bool quick, int device,
                                  unsigned long long seed) {
  std::vector<stage> s;
  const auto &levels = tlb.levels, &candidates = tlb.candidates;
  auto add = [&](const std::string &name, const std::string &flag, int k) {
    std::vector<std::string> a = {
        "tlb-sharing",          "--device", std::to_string(device), "--profile",
        "raw/tlb_profile.json", flag,       std::to_string(k),      "--seed",
        std::to_string(seed),   "--out",    "raw/" + name + ".json"};
    // Quick: the first 16 SMs. Full: 16 SMs spread over the GPU first, every SM only where
    // they are not all sharing (a global level is global after a few GPCs' pairs; issue 33).
    a.insert(a.end(), {quick ? "--max-sms" : "--sample-sms", "16"});
    s.push_back({name, "raw/" + name + ".json", a, {"tlb_profile"}});
  };
  double top_level = 0;
  for (std::size_t k = 1; k <= levels.size(); ++k) {
    add("sharing_" + model::level_label(false, k - 1), "--level", int(k));
    top_level = std::max(top_level, levels[k - 1].reach_bytes);
  }
  if (!candidates.empty()) {
    std::size_t best = 0; // the candidate with the largest reach (the one the scoped workloads use)
    for (std::size_t k = 0; k < candidates.size(); ++k)
      if (candidates[k].reach_bytes > candidates[best].reach_bytes)
        best = k;
    if (candidates[best].reach_bytes > top_level)
      add("sharing_" + model::level_label(true, best), "--candidate", int(best + 1));
  }
  return s;
}

bool stage_done(const std::string &path) {
  if (!fs::exists(path))
    return false;
  try {
    const json doc = read_json_file(path);
    const std::string id = doc.value("schema", "");
    return id == schema::result.id() || id == schema::profile.id() || id == schema::tuning.id() ||
           id == schema::validation.id();
  } catch (const std::exception &) {
    return false; // unreadable: run the stage again
  }
}

stage_check check_stage(const std::string &path, const stage &s, const std::string &uuid) {
  if (!stage_done(path))
    return {false, "not run yet"};
  const json doc = read_json_file(path);
  const json meta = doc.value("meta", json::object());
  std::vector<std::string> args;
  const json argv = meta.value("argv", json::array());
  for (std::size_t i = 1; i < argv.size(); ++i)
    args.push_back(argv[i].is_string() ? argv[i].get<std::string>() : argv[i].dump());
  if (args != s.args) {
    std::string was;
    for (const auto &a : args)
      was += (was.empty() ? "" : " ") + a;
    return {false, "made with other arguments (" +
                       (was.empty() ? std::string("none recorded") : was) + ")"};
  }
  const std::string was_uuid = doc.value("device", json::object()).value("uuid", std::string());
  if (was_uuid != uuid)
    return {false, "measured on another GPU (" +
                       (was_uuid.empty() ? std::string("none recorded") : was_uuid) + ")"};
  const std::string version = meta.value("version", std::string());
  if (version != GPUPROBE_VERSION)
    return {false,
            "made by gpuprobe " + (version.empty() ? std::string("of unknown version") : version)};
  return {true, ""};
}

std::string other_gpu_results(const std::string &dir, const std::string &uuid) {
  const results_folder folder{dir};
  for (const fs::path &p : {folder.profile(), folder.tuning(), folder.validation()}) {
    if (!fs::exists(p))
      continue;
    json doc;
    try {
      doc = read_json_file(p.string());
    } catch (const std::exception &) {
      continue; // unreadable: its stage runs again
    }
    const std::string was = doc.value("device", json::object()).value("uuid", std::string());
    if (!was.empty() && was != uuid)
      return p.string() + " was measured on " + was + ", this is " + uuid;
  }
  return "";
}

} // namespace gpuprobe::pipeline
