#pragma once
// Decisions of `gpuprobe tune` that follow from measurements alone (host-only, testable): each
// returns its choice, the reason in one sentence, and the numbers behind it.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe::analysis {

// TLB-scoped pool regions. The translations that matter are those of the pages a kernel uses
// after get_page, so a pool is cut into regions of one TLB reach each (aligned to the level's
// page size), and each SM group sharing that level gets its own region. From the profile's
// largest level (or candidate) whose sharing analysis found groups; otherwise one region, and
// the reason says why.
struct region_decision {
  int regions = 1;
  double max_region_bytes = 0;  // the level's reach in whole pages; a pool of P bytes uses regions of
                                // min(this, P / regions) rounded down to page_bytes (0: the whole pool)
  double page_bytes = 0;
  std::vector<int> sm_region;  // SM id -> region (empty: every SM in region 0)
  std::string level;           // "levels[i]" / "candidates[i]" used, or ""
  std::string reason;
  nlohmann::json to_json() const;
};
region_decision decide_regions(const nlohmann::json& profile);

// Bitmap word size from a measurement of RW-BM/CoRW with 32- and 64-bit words at several free
// fractions: the size whose geometric-mean time is lower, unless the two are within `tie`
// (relative), when 32 is kept (the smaller LockMap). Theorems 1-2's TAS beside each point.
struct word_point {
  double free_fraction = 0;
  double ms32 = 0, ms64 = 0;          // medians
  double tas32 = 0, tas64 = 0;        // Eq. 5 for w = 32, 64
};
struct word_decision {
  int word_bits = 32;
  double geomean_ratio = 1;  // ms64 / ms32
  std::string reason;
  nlohmann::json to_json(const std::vector<word_point>& points) const;
};
word_decision decide_word_size(const std::vector<word_point>& points, double tie = 0.03);

}  // namespace gpuprobe::analysis
