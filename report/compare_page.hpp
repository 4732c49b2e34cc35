#pragma once
// `gpuprobe compare --html FILE`: one self-contained page, side by side. The
// provenance of A and B, every finding that differs with its rule, and, for each TLB level with a
// finding that differs, the two runs' sweeps at the level's page stride overlaid (mean cycles per
// hop against footprint, from each folder's raw/tlb.json) and, where both measured every SM, the
// two per-SM penalty maps overlaid; the findings that are the same last, folded. Inline SVG, no
// script, nothing fetched. Host-only.
#include "findings/compare.hpp"
#include "model/run_folder.hpp"

#include <string>

namespace gpuprobe::report {

// `a`, `b`: the folders compared (nullptr for a fleet baseline: no sweeps to draw).
std::string compare_page_html(const findings::compare_result &r, const model::run_folder *a,
                              const model::run_folder *b);

} // namespace gpuprobe::report
