// The host half of tlb-conflict: the levels to test and the JSON (the search: search.cpp).
#include "common/envelope.hpp"
#include "common/units.hpp"
#include "model/fields.hpp"
#include "probes/conflict/analysis.hpp"
#include "probes/conflict/driver.hpp"
#include "probes/instruments/list_chase.hpp"

#include <algorithm>

namespace gpuprobe::probes {

using nlohmann::json;

double conflict_target::penalty_cycles() const {
  if (!tested.structure)
    return 0;
  return tested.structure->after_cycles.value_or(0) - tested.structure->before_cycles.value_or(0);
}

std::vector<conflict_target> plan_conflict(const model::tlb_hierarchy &tlb) {
  return plan_levels<conflict_target>(tlb, [](conflict_target &t, std::size_t) {
    const model::tlb_level &L = t.tested;
    if (!L.structure || !L.structure->resolved)
      t.skipped = "its structure is not resolved: no capacity to start from";
    else if (t.coverage_bytes() % (2u << 20) != 0)
      t.skipped = "its coverage (" + format_bytes(double(t.coverage_bytes())) +
                  ") is not a whole number of 2 MiB alias slots";
    else if (t.entries() + 64 > list_chase::max_pages()) // 64: conflict_options' max_scan
      t.skipped = "more than " + std::to_string(list_chase::max_pages()) + " pages per walk";
    else if (!(t.penalty_cycles() > 0))
      t.skipped = "no miss penalty in the profile";
  });
}

std::uint64_t conflict_range_bytes(const std::vector<conflict_target> &ts,
                                   const conflict_options &o) {
  std::uint64_t b = 0;
  for (const auto &t : ts)
    if (t.skipped.empty())
      b = std::max(b, (std::uint64_t(prediction_start(o, o.predict_windows)) + t.entries() +
                       2 * o.max_scan) *
                          t.coverage_bytes());
  return b;
}

namespace {

json sets_json(const conflict_level_result &l) {
  json sets = json::array();
  for (const auto &s : l.sets) {
    json j = {{"window_start", s.window_start},
              {"onset_pages", s.onset_pages},
              {"hit_cycles", s.hit_cycles},
              {"missing", s.missing},
              {"target", s.target},
              {"members", s.members},
              {"size", s.members.size()},
              {"method", s.method},
              {"tests", s.tests}};
    if (!s.dropped.empty())
      j["dropped"] = s.dropped;
    if (!s.failed.empty())
      j["failed"] = s.failed;
    sets.push_back(j);
  }
  return sets;
}

json predictions_json(const conflict_level_result &l) {
  json predictions = json::array();
  for (const auto &p : l.predictions) {
    json j = {{"window_start", p.window_start},
              {"onset_pages", p.onset_pages},
              {"target", p.target},
              {"predicted", p.predicted},
              {"hit_without_predicted", p.hit_without_predicted},
              {"missed_without_others", p.missed_without_others},
              {"partners_confirmed", p.partners_confirmed},
              {"method", p.method},
              {"held", p.held()}};
    if (p.method == "onset union")
      j.update({{"onset_union", p.onset_union},
                {"union_in_predicted_sets", p.union_in_predicted_sets},
                {"union_sets", p.union_sets}});
    if (!p.failed.empty())
      j["failed"] = p.failed;
    predictions.push_back(j);
  }
  return predictions;
}

// The fully associative level's diagnostics (repeated walks, walks from each home SM) and the
// group walks and rotations, each where measured.
void diagnostics_json(const conflict_level_result &l, json &j) {
  if (!l.repeats.empty()) {
    json reps = json::array();
    for (const auto &rp : l.repeats)
      reps.push_back({{"when", rp.when},
                      {"start", rp.start},
                      {"pages", rp.pages},
                      {"walks", rp.walks},
                      {"missed", rp.missed},
                      {"hit_cycles", rp.hit_cycles},
                      {"worst_excess_cycles", rp.worst_excess_cycles}});
    j["repeats"] = reps;
  }
  if (!l.homes.empty()) {
    json homes = json::array();
    for (const auto &h : l.homes)
      homes.push_back({{"offset", h.offset},
                       {"smid", h.smid},
                       {"hit_cycles", h.hit_cycles},
                       {"walks", h.walks},
                       {"missed_entries_minus_one", h.missed_e_minus_1},
                       {"missed_entries", h.missed_e},
                       {"excess_cycles", h.excess_e},
                       {"calibrated_fraction", h.fraction},
                       {"calibrated_missed_entries", h.calibrated_missed_e},
                       {"calibrated_missed_entries_plus_one", h.calibrated_missed_e1},
                       {"missed_entries_plus_one", h.missed_e1}});
    j["home_walks"] = homes;
  }
  if (!l.group_walks.empty()) {
    json gws = json::array();
    for (const auto &g : l.group_walks)
      gws.push_back({{"per_group", g.per_group},
                     {"groups", g.groups},
                     {"most_in_a_set", g.most_in_a_set},
                     {"walks", g.walks},
                     {"most_missing", g.most_missing},
                     {"hit_cycles", g.hit_cycles}});
    j["group_walks"] = gws;
  }
  if (!l.rotations.empty()) {
    json rots = json::array();
    for (const auto &rt : l.rotations)
      rots.push_back({{"window_start", rt.window_start},
                      {"pages", rt.pages},
                      {"first", rt.first},
                      {"missing", rt.missing}});
    j["rotations"] = rots;
  }
}

} // namespace

json to_json(const conflict_result &r) {
  json levels = json::array();
  for (const auto &l : r.levels) {
    json j = {{"level", l.target.level},       {"coverage_bytes", l.target.coverage_bytes()},
              {"entries", l.target.entries()}, {"penalty_cycles", l.target.penalty_cycles()},
              {"va_base", l.va_base},          {"sets", sets_json(l)},
              {"seconds", l.seconds}};
    if (!l.predictions.empty())
      j["predictions"] = predictions_json(l);
    if (l.miss_min_cycles > 0)
      j["miss_threshold"] = {{"fraction_of_penalty", l.target.miss_fraction},
                             {"dearest_hit_of_e_minus_1_cycles", l.hit_max_cycles},
                             {"cheapest_miss_of_e_plus_1_cycles", l.miss_min_cycles}};
    diagnostics_json(l, j);
    if (!l.target.skipped.empty())
      j["skipped"] = l.target.skipped;
    levels.push_back(j);
  }
  return result_document("tlb-conflict", r, "tlb_conflict",
                         {{"profile", r.profile},
                          {"search",
                           {{"windows", r.options.windows},
                            {"onset_start_share", r.options.onset_start_share},
                            {"halves", r.options.infer_halves ? "inferred" : "tested"},
                            {"split", r.options.generalized_split ? "generalized" : "quarters"},
                            {"timed_laps", r.options.timed_laps}}},
                          {"range_bytes", r.range_bytes},
                          {"levels", levels},
                          {"wall_seconds", r.wall_seconds}});
}

} // namespace gpuprobe::probes

namespace gpuprobe::probes {

conflict_level_read conflict_level_from_json(const json &row) {
  using model::kind_error;
  using model::part_of_kind;
  const std::string where = "a tlb-conflict level";
  if (!row.is_object())
    throw error(where + " is " + std::string(row.type_name()) + ", not an object");
  // A whole number no less than 0 (an address, a page index), else one line naming `key`.
  const auto unsigned_of = [](const json &v, const std::string &at, const char *key,
                              const char *want) {
    if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<std::int64_t>() < 0))
      throw kind_error(at, key, v, want);
    return v.get<std::uint64_t>();
  };
  conflict_level_read r;
  if (const auto *sk = part_of_kind(row, "skipped", &json::is_string, "a string", where)) {
    r.skipped = sk->get<std::string>();
    return r;
  }
  if (const auto *p =
          part_of_kind(row, "coverage_bytes", "page_bytes", &json::is_number, "a number", where)) {
    // The summary shifts addresses by its log2: 1 B .. 2^48 B keeps the shift in 0..48.
    r.coverage_bytes = p->get<double>();
    if (!(r.coverage_bytes >= 1 && r.coverage_bytes <= 0x1p48))
      throw kind_error(where, "coverage_bytes", *p, "a byte count from 1 to 2^48");
  }
  if (const auto *b = part_of_kind(row, "va_base", &json::is_number_integer, "an address", where))
    r.va_base = unsigned_of(*b, where, "va_base", "an address");
  if (const auto *sets = part_of_kind(row, "sets", &json::is_array, "a list", where))
    for (const auto &s : *sets) {
      const std::string at = where + "'s set";
      if (!s.is_object())
        throw kind_error(where, "sets[]", s, "an object");
      conflict_level_read::set x;
      if (const auto *o =
              part_of_kind(s, "onset_pages", &json::is_number_integer, "a whole number", at))
        x.onset_pages = o->get<int>();
      if (const auto *m = part_of_kind(s, "missing", &json::is_array, "a list", at))
        x.missing = m->size();
      if (const auto *f = part_of_kind(s, "failed", &json::is_string, "a string", at))
        x.failed = f->get<std::string>();
      if (const auto *m = part_of_kind(s, "members", &json::is_array, "a list", at))
        for (const auto &p : *m)
          x.members.push_back(unsigned_of(p, at, "members[]", "a page index"));
      if (const auto *m = part_of_kind(s, "method", &json::is_string, "a string", at))
        x.method = m->get<std::string>();
      r.sets.push_back(std::move(x));
    }
  if (const auto *ps = part_of_kind(row, "predictions", &json::is_array, "a list", where))
    for (const auto &p : *ps) {
      if (!p.is_object())
        throw kind_error(where, "predictions[]", p, "an object");
      conflict_level_read::prediction x;
      x.made = !p.contains("failed");
      if (const auto *h =
              part_of_kind(p, "held", &json::is_boolean, "a boolean", where + "'s prediction"))
        x.held = h->get<bool>();
      r.predictions.push_back(x);
    }
  return r;
}

} // namespace gpuprobe::probes
