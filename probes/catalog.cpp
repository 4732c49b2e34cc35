#include "probes/catalog.hpp"

namespace gpuprobe::probes {

const std::vector<probe_descriptor> &probe_catalog() {
  static const std::vector<probe_descriptor> all = {
      {"tlb", "tlb", report_use::tlb_curves, "pointer chase per stride over growing footprints"},
      {"tlb-sharing", "tlb-sharing", report_use::sharing_matrix,
       "which SMs share one TLB level: a disruptor SM against a reader SM"},
      {"tlb-sampling", "tlb-sampling", report_use::through_profile,
       "random reads just below and above each level's reach"},
      {"tlb-conflict", "tlb-conflict", report_use::through_profile,
       "minimal conflict sets of each level: its ways and set index"},
      {"atomics", "atomics", report_use::atomics_curves,
       "atomic latency vs contending threads, per operation and width"},
  };
  return all;
}

const probe_descriptor *find_probe(const std::string &id) {
  for (const auto &p : probe_catalog())
    if (id == p.id)
      return &p;
  return nullptr;
}

} // namespace gpuprobe::probes
