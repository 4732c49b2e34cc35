#pragma once
// The "levels" list of a stage's result (tlb_conflict, tlb_coverage, tlb_per_sm, ...: each row one
// level of the profile it tested), read with the keys that say which level each row measured, so
// characterize attaches a row to its level without looking into the row itself. Host-only.
#include "model/fields.hpp"
#include "model/profile.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace gpuprobe::model {

// Which level of a profile a stage measured: its label and the geometry it tested. It answers for
// the profile's level of that label whose coverage is the same and whose entries are within half an
// entry (a stage measured for another geometry, before the profile was derived again, answers
// for none): one rule for every stage's rows (for_each_matched_level) and tlb-sharing's files.
struct level_id {
  std::string label;     // "L2"
  double coverage_bytes = 0; // what one entry of the level covers, as the stage tested it
  double entries = 0;    // and its entries
  bool same_geometry(const tlb_level &L) const {
    return coverage_bytes == L.coverage_bytes && std::fabs(entries - L.entries.value_or(0)) < 0.5;
  }
  bool names(const tlb_level &L, const std::string &label_of_L) const {
    return label == label_of_L && same_geometry(L);
  }
};

struct result_level {
  level_id id;        // the level the row measured
  nlohmann::json row; // the row as written, for the probe's own reader
};

// doc[key]["levels"] (none where either is missing); a row that is no object, or whose level,
// coverage or entries is of another kind, is refused in one line naming the key (gpuprobe::error).
inline std::vector<result_level> result_levels(const nlohmann::json &doc, const std::string &key) {
  using nlohmann::json;
  std::vector<result_level> out;
  const auto body = doc.find(key);
  if (body == doc.end() || !body->is_object())
    return out;
  const auto list = body->find("levels");
  if (list == body->end() || !list->is_array())
    return out;
  const std::string where = key + " level";
  for (const auto &row : *list) {
    if (!row.is_object())
      throw error(key + ": a level's row is " + row.type_name() + ", not an object");
    result_level r;
    r.row = row;
    take_old_name(r.row, "coverage_bytes", "page_bytes"); // the key's name before version 2
    if (const json *l = part_of_kind(row, "level", &json::is_string, "a string", where))
      r.id.label = l->get<std::string>();
    if (const json *p = part_of_kind(r.row, "coverage_bytes", &json::is_number, "a number", where))
      r.id.coverage_bytes = p->get<double>();
    if (const json *e = part_of_kind(row, "entries", &json::is_number, "a number", where))
      r.id.entries = e->get<double>();
    out.push_back(std::move(r));
  }
  return out;
}

} // namespace gpuprobe::model
