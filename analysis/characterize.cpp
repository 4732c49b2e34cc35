#include "analysis/characterize.hpp"

#include "analysis/sharing.hpp"
#include "analysis/tlb_levels.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

namespace gpuprobe::analysis {

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

std::vector<stage> plan_stages(bool quick, double memory_bytes, int device,
                               unsigned long long seed) {
  const std::string dev = std::to_string(device);
  const auto gib = [](double b) {
    return std::to_string(static_cast<long long>(std::floor(b / double(1ull << 30)))) + "G";
  };
  std::vector<stage> s;
  // The default sweep (strides 64 KiB..1 GiB up to most of the memory), then the upper half of
  // the memory densely with the strides that separate a 2 MiB..32 MiB-page level.
  if (quick)
    s.push_back({"tlb",
                 "raw/tlb.json",
                 {"tlb", "--device", dev, "--min-stride", "2M", "--max-stride", "64M",
                  "--points-per-octave", "4", "--samples", "512", "--out", "raw/tlb.json"}});
  else
    s.push_back({"tlb", "raw/tlb.json", {"tlb", "--device", dev, "--out", "raw/tlb.json"}});
  s.push_back({"tlb_tail",
               "raw/tlb_tail.json",
               {"tlb",
                "--device",
                dev,
                "--strides",
                "2M",
                "4M",
                "8M",
                "16M",
                "32M",
                "64M",
                "128M",
                "--min-bytes",
                gib(memory_bytes / 2),
                "--points-per-octave",
                quick ? "16" : "64",
                "--samples",
                quick ? "2048" : "8192",
                "--no-control",
                "--out",
                "raw/tlb_tail.json"}});
  for (auto &st : s)
    st.args.insert(st.args.end() - 2, {"--seed", std::to_string(seed)}); // before --out FILE
  s.push_back({"tlb_profile",
               "raw/tlb_profile.json",
               {"analyze", "tlb", "--input", "raw/tlb.json", "raw/tlb_tail.json", "--out",
                "raw/tlb_profile.json"}});
  const std::string sd = std::to_string(seed);
  if (quick)
    s.push_back({"atomics",
                 "raw/atomics.json",
                 {"atomics", "--device", dev, "--variants", "same_u32", "distinct_u32", "--samples",
                  "1024", "--seed", sd, "--out", "raw/atomics.json"}});
  else
    s.push_back({"atomics",
                 "raw/atomics.json",
                 {"atomics", "--device", dev, "--seed", sd, "--out", "raw/atomics.json"}});
  return s;
}

std::vector<stage> sharing_stages(const json &tlb_profile, bool quick, int device,
                                  unsigned long long seed) {
  std::vector<stage> s;
  const json tlb = tlb_profile.value("tlb", json::object());
  const auto levels = tlb.value("levels", json::array()),
             candidates = tlb.value("candidates", json::array());
  auto add = [&](const std::string &name, const std::string &flag, int k) {
    std::vector<std::string> a = {
        "tlb-sharing",          "--device", std::to_string(device), "--profile",
        "raw/tlb_profile.json", flag,       std::to_string(k),      "--seed",
        std::to_string(seed),   "--out",    "raw/" + name + ".json"};
    if (quick)
      a.insert(a.end(), {"--max-sms", "16"});
    s.push_back({name, "raw/" + name + ".json", a});
  };
  double top_level = 0;
  for (std::size_t k = 1; k <= levels.size(); ++k) {
    add("sharing_" + level_label(false, k - 1), "--level", int(k));
    top_level = std::max(top_level, levels[k - 1].value("reach_bytes", 0.0));
  }
  if (!candidates.empty()) {
    std::size_t best = 0; // the candidate with the largest reach (the one the scoped workloads use)
    for (std::size_t k = 0; k < candidates.size(); ++k)
      if (candidates[k].value("reach_bytes", 0.0) > candidates[best].value("reach_bytes", 0.0))
        best = k;
    if (candidates[best].value("reach_bytes", 0.0) > top_level)
      add("sharing_" + level_label(true, best), "--candidate", int(best + 1));
  }
  return s;
}

bool stage_done(const std::string &path) {
  if (!fs::exists(path))
    return false;
  try {
    const json doc = read_json_file(path);
    const std::string id = doc.value("schema", "");
    return id == schema::result.id() || id == schema::profile.id();
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

json assemble_profile(const std::string &dir, const json &stages_run, const json &conditions) {
  const fs::path d(dir);
  const json tp = read_json_file((d / "raw/tlb_profile.json").string());
  require_schema(tp, schema::profile, (d / "raw/tlb_profile.json").string());
  json tlb = tp.value("tlb", json::object());
  auto attach = [&](const char *key, bool candidate) {
    if (!tlb.contains(key))
      return;
    for (std::size_t k = 0; k < tlb[key].size(); ++k) {
      const fs::path f = d / "raw" / ("sharing_" + level_label(candidate, k) + ".json");
      if (!fs::exists(f)) {
        tlb[key][k]["sharing"] = {{"scope", "not measured"}};
        continue;
      }
      const auto a = analyze_sharing(load_sharing_input(f.string()));
      json s = to_json(a);
      s["source"] = "raw/" + f.filename().string();
      tlb[key][k]["sharing"] = s;
    }
  };
  attach("levels", false);
  attach("candidates", true);
  json atomics = json::array();
  const fs::path af = d / "raw/atomics.json";
  json device = tp.value("device", json::object());
  if (fs::exists(af)) {
    const json a = read_json_file(af.string());
    require_schema(a, schema::result, af.string());
    for (const auto &v : a["atomics"].value("variants", json::array()))
      atomics.push_back({{"variant", v.value("variant", "")},
                         {"fit", v.value("fit", json::object())},
                         {"queue_model", v.value("queue_model", json::object())}});
    if (a.contains("device"))
      device = a["device"];
  }
  return {{"schema", schema::profile.id()},
          {"device", device},
          {"tlb", tlb},
          {"atomics", {{"source", "raw/atomics.json"}, {"variants", atomics}}},
          {"conditions", conditions},
          {"stages", stages_run}};
}

} // namespace gpuprobe::analysis
