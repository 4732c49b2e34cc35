// The host half of the sharing probe: the level under test, the pool policy, the round order,
// the result's JSON.
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/units.hpp"
#include "model/fields.hpp"
#include "probes/sharing/driver.hpp"
#include "probes/sharing/kernel.hpp"

#include <algorithm>
#include <cmath>

namespace gpuprobe::probes {

using nlohmann::json;

sharing_layout plan_sharing(std::uint64_t coverage_bytes, std::uint64_t entries, double overfill) {
  if (coverage_bytes < 256)
    throw error("tlb-sharing: page size must be at least 256 bytes");
  if (entries < 2)
    throw error("tlb-sharing: a level needs at least 2 entries");
  if (!(overfill > 1.0) || overfill > 4.0)
    throw error("tlb-sharing: --overfill must be in (1, 4]");
  sharing_layout l;
  l.coverage_bytes = coverage_bytes;
  l.victim_pages = static_cast<std::uint64_t>(std::ceil(double(entries) * overfill / 2));
  l.disruptor_pages = l.victim_pages;
  l.line_span = coverage_bytes;
  return l;
}

std::string describe(const level_spec &L) {
  return std::to_string(L.entries()) + " x " + format_bytes(double(L.coverage_bytes())) +
         " (reach " + format_bytes(double(L.entries()) * double(L.coverage_bytes())) + ")";
}

level_spec level_from_profile(const model::tlb_hierarchy &tlb, const std::string &path,
                              bool candidate, int index) {
  const std::string what = candidate ? "candidate" : "level";
  const auto &list = candidate ? tlb.candidates : tlb.levels;
  if (list.empty())
    throw error(
        "'" + path + "' has no TLB " + what +
        " to test (none was found); give --coverage-bytes and --entries to test a hypothesis");
  if (index < 1 || index > int(list.size()))
    throw error("--" + what + " " + std::to_string(index) + ": the profile has " + what + "s 1.." +
                std::to_string(list.size()) + " (" + (candidate ? "C" : "L") + "1.." +
                (candidate ? "C" : "L") + std::to_string(list.size()) + ", numbered from 1)");
  const model::tlb_level &j = list[std::size_t(index - 1)];
  if (!j.entries)
    throw error("'" + path + "': " + what + " " + std::to_string(index) + " lacks its entries");
  level_spec L;
  L.tested = j;
  L.origin = path + " " + what + " " + std::to_string(index);
  return L;
}

level_spec hypothesis(std::uint64_t coverage_bytes, double entries, const std::string &origin) {
  level_spec L;
  L.tested.coverage_bytes = double(coverage_bytes);
  L.tested.entries = entries;
  L.tested.reach_bytes = double(coverage_bytes) * entries;
  L.origin = origin;
  return L;
}

pool_choice choose_sharing_pool(const sharing_options &o, double budget, std::uint64_t gran) {
  const level_spec &L = o.level;
  plan_sharing(L.coverage_bytes(), L.entries(),
               o.overfill); // validates the options before any GPU work
  const bool sparse_ok = gran && L.coverage_bytes() > gran && L.coverage_bytes() % gran == 0;
  // Alias: one chunk of the granularity at every slot; page j's chain word sits at its own line
  // of that chunk (the spread offsets), so the pages must be whole chunks and no more than the
  // chunk has lines.
  const auto asked = plan_sharing(L.coverage_bytes(), L.entries(), o.overfill);
  const bool alias_ok = gran && L.coverage_bytes() % gran == 0 && o.spread_lines &&
                        asked.victim_pages + asked.disruptor_pages <= gran / 128;
  pool_choice c{o.alloc, o.overfill};
  if (c.alloc == "alias" && !alias_ok)
    throw error("--alloc alias needs pages that are whole VMM chunks (" +
                format_bytes(double(gran)) + "), spread lines and at most " +
                std::to_string(gran / 128) + " pages; level " + describe(L) + " walks " +
                std::to_string(asked.victim_pages + asked.disruptor_pages));
  if (c.alloc == "auto" && alias_ok)
    c.alloc = "alias";
  if (c.alloc == "alias")
    return c; // almost no memory: one chunk, whatever the level's reach
  if (c.alloc == "auto") {
    const double fit =
        std::floor((budget / double(L.coverage_bytes()) - 2) / double(L.entries()) * 100) / 100;
    if (fit >= c.overfill) {
      c.alloc = "cudamalloc";
    } else if (fit >= o.min_overfill) {
      c.alloc = "cudamalloc";
      c.overfill = fit;
    } else {
      c.alloc = sparse_ok ? "vmm-sparse" : "none";
    }
  }
  const auto layout = plan_sharing(L.coverage_bytes(), L.entries(), c.overfill);
  const std::uint64_t pages = layout.victim_pages + layout.disruptor_pages;
  const double need_dense = double(pages) * double(layout.coverage_bytes);
  const double need_sparse = double(pages) * double(gran);
  const std::string what = describe(L);
  if (c.alloc == "none" || (c.alloc == "cudamalloc" && need_dense > budget) ||
      (c.alloc == "vmm-sparse" && (!sparse_ok || need_sparse > budget)))
    throw error("level " + what + " is too large to test: victim + disruptor walk " +
                std::to_string(pages) + " pages = " + format_bytes(need_dense) + " of memory" +
                (sparse_ok ? " (" + format_bytes(need_sparse) + " sparse)" : std::string()) +
                ", but only " + format_bytes(budget) + " may be used");
  if (c.alloc != "cudamalloc" && c.alloc != "vmm-sparse")
    throw error("--alloc must be auto, alias, cudamalloc or vmm-sparse");
  return c;
}

std::vector<int> victim_rounds(std::size_t i, const std::vector<int> &sms, std::mt19937_64 &rng,
                               std::vector<std::size_t> &order) {
  // Baseline, then the control, then every other SM in a random order (drift is not a pattern).
  order.clear();
  for (std::size_t k = 0; k < sms.size(); ++k)
    if (k != i)
      order.push_back(k);
  std::shuffle(order.begin(), order.end(), rng);
  order.insert(order.begin(), i);
  // A discarded warm-up round first (the first walk of a launch ran slow on H100), and the
  // baseline both before and after the pairs: the faster of the two is the unshared latency.
  std::vector<int> rounds = {-1, -1};
  for (auto k : order)
    rounds.push_back(sms[k]);
  rounds.push_back(-1);
  return rounds;
}

// The result's keys, once, for its reader and its writer (model/fields.hpp).
template <class F> void fields(sharing_result &r, F &f) {
  f.required("params", r.params);
  f.required("sm_ids", r.sm_ids);
  f.required("mean_cycles", r.mean_cycles);
  f.required("median_cycles", r.median_cycles);
  f.required("baseline_mean_cycles", r.baseline_mean_cycles);
  f.required("baseline_median_cycles", r.baseline_median_cycles);
  f.required("baseline_drift_cycles", r.baseline_drift_cycles);
  f.required("wall_seconds", r.wall_seconds);
}

json to_json(const sharing_result &r) { return model::write_result(r, "tlb-sharing", "sharing"); }

sharing_result sharing_result_from_json(const json &doc) {
  return model::read_result<sharing_result>(doc, "tlb-sharing", "sharing");
}

sharing_params sharing_params_from_json(const json &params) {
  using model::kind_error;
  using model::part_of_kind;
  const std::string where = "a tlb-sharing result's params";
  sharing_params p;
  if (!model::object_or_null(params, where))
    return p;
  if (const auto *e = part_of_kind(params, "entries", &json::is_number, "a number", where))
    p.entries = e->get<double>();
  if (const auto *g =
          part_of_kind(params, "coverage_bytes", "page_bytes", &json::is_number, "a number", where))
    p.coverage_bytes = g->get<double>();
  if (const auto *a = part_of_kind(params, "alloc", &json::is_string, "a string", where))
    p.alloc = a->get<std::string>();
  if (const auto *s = part_of_kind(params, "sample", &json::is_object, "an object", where)) {
    sharing_params::sample_read x;
    const std::string at = where + " sample";
    if (const auto *n = part_of_kind(*s, "sms", &json::is_number_integer, "a whole number", at))
      x.sms = n->get<long long>();
    if (const auto *n = part_of_kind(*s, "of", &json::is_number_integer, "a whole number", at))
      x.of = n->get<long long>();
    if (const auto *f = part_of_kind(*s, "finding", &json::is_string, "a string", at))
      x.finding = f->get<std::string>();
    p.sample = x;
  }
  return p;
}

sharing_params sharing_params_of_document(const json &doc) {
  const std::string where = "a tlb-sharing result";
  if (!doc.is_object())
    throw error(where + " is " + std::string(doc.type_name()) + ", not an object");
  const auto *s = model::part_of_kind(doc, "sharing", &json::is_object, "an object", where);
  const auto *p =
      s ? model::part_of_kind(*s, "params", &json::is_object, "an object", where) : nullptr;
  return p ? sharing_params_from_json(*p) : sharing_params{};
}

std::vector<std::size_t> spread_sm_indices(std::size_t count, std::size_t n) {
  std::vector<std::size_t> out;
  n = std::min(n, count);
  for (std::size_t k = 0; k < n; ++k)
    out.push_back(k * count / n);
  return out;
}

} // namespace gpuprobe::probes
