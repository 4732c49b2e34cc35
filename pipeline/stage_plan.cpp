#include "pipeline/stage_plan.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/results_folder.hpp"
#include "model/file_head.hpp"
#include "probes/catalog.hpp"

#include <cctype>
#include <filesystem>
#include <optional>
#include <set>

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

namespace {

std::vector<stage> plan_of_catalog(const plan_request &r) {
  std::vector<stage> s;
  for (const auto &p : probes::probe_catalog())
    if (p.plan)
      p.plan(r, s);
  return s;
}

} // namespace

std::vector<stage> plan_stages(bool quick, int device, unsigned long long seed) {
  return plan_of_catalog({quick, device, seed, nullptr});
}

std::vector<stage> sharing_stages(const model::tlb_hierarchy &tlb, bool quick, int device,
                                  unsigned long long seed) {
  return plan_of_catalog({quick, device, seed, &tlb});
}

stage_order order_stages(std::vector<stage> planned, bool map_late) {
  // Under map_late: the stages that move first (alias-free, not keeping their place, reading only
  // stages that move first themselves).
  std::set<std::string> early;
  if (map_late)
    for (const auto &st : planned) {
      bool moves = st.alias_free && !st.keeps_place;
      for (const auto &r : st.reads)
        moves = moves && early.count(r) > 0;
      if (moves)
        early.insert(st.name);
    }
  stage_order o;
  for (auto &st : planned)
    if (early.count(st.name))
      o.first.push_back(st);
  for (auto &st : planned)
    if (!early.count(st.name))
      (st.runs_last ? o.last : o.first).push_back(st);
  return o;
}

namespace {

// The head of a stage's finished file (one of the schemas a stage writes, of a version this build
// reads), read once; none when the file is missing, unreadable or of another schema (the stage
// runs again).
std::optional<model::file_head> finished_head(const std::string &path) {
  if (!fs::exists(path))
    return std::nullopt;
  try {
    auto head = model::read_file_head(path);
    const std::string &id = head.schema;
    if (schema::result.reads(id) || schema::profile.reads(id) || schema::tuning.reads(id) ||
        schema::validation.reads(id))
      return head;
  } catch (const std::exception &) {
    // unreadable: run the stage again
  }
  return std::nullopt;
}

} // namespace

bool stage_done(const std::string &path) { return finished_head(path).has_value(); }

stage_check check_stage(const std::string &path, const stage &s, const std::string &uuid) {
  const auto found = finished_head(path);
  if (!found)
    return {false, "not run yet"};
  const model::file_head &head = *found;
  const std::vector<std::string> args(head.argv.empty() ? head.argv.end() : head.argv.begin() + 1,
                                      head.argv.end()); // the arguments after the program
  if (args != s.args) {
    std::string was;
    for (const auto &a : args)
      was += (was.empty() ? "" : " ") + a;
    return {false, "made with other arguments (" +
                       (was.empty() ? std::string("none recorded") : was) + ")"};
  }
  const std::string &was_uuid = head.uuid;
  if (was_uuid != uuid)
    return {false, "measured on another GPU (" +
                       (was_uuid.empty() ? std::string("none recorded") : was_uuid) + ")"};
  const std::string &version = head.version;
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
    std::string was;
    try {
      was = model::read_file_head(p.string()).uuid;
    } catch (const std::exception &) {
      continue; // unreadable: its stage runs again
    }
    if (!was.empty() && was != uuid)
      return p.string() + " was measured on " + was + ", this is " + uuid;
  }
  return "";
}

} // namespace gpuprobe::pipeline
