// A per-level probe's rows read back onto the profile's levels (probes/level_target.hpp).
#include "probes/level_target.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"
#include "model/result_levels.hpp"

#include <cmath>
#include <filesystem>

namespace gpuprobe::probes {

namespace fs = std::filesystem;
using nlohmann::json;

void for_each_matched_level(
    const results_folder &folder, const char *file, const char *key, model::tlb_hierarchy &tlb,
    const std::function<void(model::tlb_level &, const nlohmann::json &)> &f) {
  const fs::path rf = folder.raw(file);
  if (!fs::exists(rf))
    return;
  const json r = read_json_file(rf.string());
  require_schema(r, schema::result, rf.string());
  std::vector<model::result_level> rows;
  try {
    rows = model::result_levels(r, key);
  } catch (const std::exception &e) { // a mistyped key: one line naming the file
    throw error("'" + rf.string() + "': " + e.what());
  }
  for (const auto &rl : rows)
    for (std::size_t k = 0; k < tlb.levels.size(); ++k) {
      model::tlb_level &L = tlb.levels[k];
      if (rl.id.names(L, model::level_label(false, k))) {
        try {
          f(L, rl.row);
        } catch (const error &e) { // a probe's reader refused the row: one line naming the file
          throw error("'" + rf.string() + "': " + e.what());
        }
      }
    }
}

} // namespace gpuprobe::probes
