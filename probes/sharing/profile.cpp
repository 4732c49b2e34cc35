// The tlb-sharing probe's part of profile.json: each level's (or candidate's) sharing from
// raw/sharing_<label>.json, where it was measured for this level's geometry.
#include "model/profile.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/results_folder.hpp"
#include "common/units.hpp"
#include "model/result_levels.hpp"
#include "probes/sharing/analysis.hpp"
#include "probes/sharing/driver.hpp"
#include "probes/sharing/probe.hpp"

#include <cmath>
#include <filesystem>

namespace gpuprobe::probes::sharing {

namespace {

void attach(const results_folder &folder, std::vector<model::tlb_level> &list, bool candidate) {
  namespace fs = std::filesystem;
  using nlohmann::json;
  for (std::size_t k = 0; k < list.size(); ++k) {
    model::tlb_level &L = list[k];
    const fs::path f =
        folder.raw(results_folder::raw_file::sharing(model::level_label(candidate, k)));
    L.sharing = model::level_sharing{};
    if (!fs::exists(f))
      continue; // "not measured"
    // A sharing file measured for another geometry (an earlier analysis labelled levels
    // differently) is not this level's answer: its params tell.
    const json doc = read_json_file(f.string()); // read once: its params, then its matrix
    probes::sharing_params params;
    try {
      params = probes::sharing_params_of_document(doc);
    } catch (const error &e) { // one line naming the file
      throw error("'" + f.string() + "': " + e.what());
    }
    const double e = params.entries.value_or(0), pg = params.coverage_bytes.value_or(0);
    if (e > 0 && pg > 0 && !model::level_id{"", pg, e}.same_geometry(L)) {
      L.sharing->detail["note"] = results_folder::raw_rel(f.filename().string()) +
                                  " was measured for " + std::to_string(std::lround(e)) + " x " +
                                  format_bytes(pg) +
                                  ": run characterize on the GPU to measure this level";
      continue;
    }
    auto s = probes::sharing_model(
        probes::analyze_sharing(probes::parse_sharing_result(doc, f.string())));
    s.source = results_folder::raw_rel(f.filename().string());
    model::check_sm_ids(s);
    L.sharing = std::move(s);
  }
}

} // namespace

void contribute(const results_folder &folder, model::profile &p) {
  attach(folder, p.tlb.levels, false);
  attach(folder, p.tlb.candidates, true);
}

} // namespace gpuprobe::probes::sharing
