#pragma once
// The "levels" list of a stage's result (tlb_conflict, tlb_coverage, tlb_per_sm, ...: each row one
// level of the profile it tested), read with the keys that say which level each row measured, so
// characterize attaches a row to its level without looking into the row itself. Host-only.
#include "model/fields.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpuprobe::model {

struct result_level {
  std::string level;     // "L2"
  double page_bytes = 0; // the level's page as the stage tested it
  double entries = 0;    // and its entries
  nlohmann::json row;    // the row as written, for the probe's own reader
};

// doc[key]["levels"] (none where either is missing); a row whose level, page or entries is of the
// wrong type is refused (impossible_value, naming it).
inline std::vector<result_level> result_levels(const nlohmann::json &doc, const std::string &key) {
  std::vector<result_level> out;
  const auto body = doc.find(key);
  if (body == doc.end() || !body->is_object())
    return out;
  const auto list = body->find("levels");
  if (list == body->end() || !list->is_array())
    return out;
  for (const auto &row : *list) {
    if (!row.is_object())
      throw impossible_value(key + ": a level's row is not an object");
    result_level r;
    r.row = row;
    json j = row;
    take(j, "level", r.level);
    take(j, "page_bytes", r.page_bytes);
    take(j, "entries", r.entries);
    out.push_back(std::move(r));
  }
  return out;
}

} // namespace gpuprobe::model
