#include "analysis/tuning.hpp"

#include "common/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpuprobe::analysis {

using nlohmann::json;

json region_decision::to_json() const {
  return {{"regions", regions}, {"max_region_bytes", max_region_bytes}, {"page_bytes", page_bytes}, {"sm_region", sm_region},
          {"level", level.empty() ? json(nullptr) : json(level)}, {"reason", reason}};
}

region_decision decide_regions(const json& profile) {
  if (!profile.contains("tlb") || !profile["tlb"].is_object()) throw error("tune: the profile has no tlb block (run gpuprobe characterize)");
  const json& tlb = profile["tlb"];
  region_decision d;
  const json* best = nullptr;
  std::string where;
  for (const char* key : {"levels", "candidates"}) {
    const auto list = tlb.value(key, json::array());
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json& L = tlb[key][i];
      const json s = L.value("sharing", json::object());
      if (s.value("scope", "") != "groups" || !s.contains("groups") || s["groups"].empty()) continue;
      if (!best || L.value("reach_bytes", 0.0) > best->value("reach_bytes", 0.0)) best = &L, where = std::string(key) + "[" + std::to_string(i) + "]";
    }
    if (best) break;  // a measured level is preferred to a candidate
  }
  if (!best) {
    d.reason = "no TLB level or candidate with SM groups in the profile: one region (the whole pool)";
    return d;
  }
  const double reach = best->value("reach_bytes", 0.0), page = best->value("page_bytes", 0.0);
  if (!(reach > 0) || !(page > 0)) throw error("tune: " + where + " lacks reach_bytes or page_bytes");
  const auto& groups = (*best)["sharing"]["groups"];
  d.regions = int(groups.size());
  d.page_bytes = page;
  d.max_region_bytes = std::floor(reach / page) * page;  // whole pages of the level
  d.level = where;
  int max_sm = 0;
  for (const auto& g : groups)
    for (const auto& sm : g) max_sm = std::max(max_sm, sm.get<int>());
  d.sm_region.assign(std::size_t(max_sm) + 1, -1);
  for (std::size_t r = 0; r < groups.size(); ++r)
    for (const auto& sm : groups[r]) d.sm_region[std::size_t(sm.get<int>())] = int(r);
  int spare = 0;  // SMs in no group share the regions round-robin
  for (auto& r : d.sm_region)
    if (r < 0) r = spare++ % d.regions;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s reaches %.4g GiB in %.4g MiB pages and is shared by %d SM groups: one region of at most that reach per group",
                where.c_str(), reach / double(1ull << 30), page / double(1 << 20), d.regions);
  d.reason = buf;
  return d;
}

json word_decision::to_json(const std::vector<word_point>& points) const {
  json p = json::array();
  for (const auto& w : points)
    p.push_back({{"free_fraction", w.free_fraction}, {"ms32", w.ms32}, {"ms64", w.ms64}, {"tas32_eq5", w.tas32}, {"tas64_eq5", w.tas64}});
  return {{"word_bits", word_bits}, {"geomean_ratio_64_over_32", geomean_ratio}, {"reason", reason}, {"measurements", p}};
}

word_decision decide_word_size(const std::vector<word_point>& points, double tie) {
  if (points.empty()) throw error("tune: no word-size measurements");
  double log_sum = 0;
  for (const auto& p : points) {
    if (!(p.ms32 > 0) || !(p.ms64 > 0)) throw error("tune: a word-size measurement is not positive");
    log_sum += std::log(p.ms64 / p.ms32);
  }
  word_decision d;
  d.geomean_ratio = std::exp(log_sum / double(points.size()));
  char buf[256];
  if (std::fabs(d.geomean_ratio - 1) <= tie) {
    d.word_bits = 32;
    std::snprintf(buf, sizeof buf, "64-bit words take %.3fx the time of 32-bit ones (geometric mean over %zu free fractions): within %.0f%%, 32 kept",
                  d.geomean_ratio, points.size(), tie * 100);
  } else {
    d.word_bits = d.geomean_ratio < 1 ? 64 : 32;
    std::snprintf(buf, sizeof buf, "64-bit words take %.3fx the time of 32-bit ones (geometric mean over %zu free fractions): %d chosen",
                  d.geomean_ratio, points.size(), d.word_bits);
  }
  d.reason = buf;
  return d;
}

}  // namespace gpuprobe::analysis
