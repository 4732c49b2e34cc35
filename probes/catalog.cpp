// The catalog: one line per probe (its probe.hpp's entry; a level probe's entry() is made by
// level_entry, probes/level_probe.hpp), in the order `gpuprobe --help`, the
// report's parts and characterize's stages follow.
#include "probes/catalog.hpp"

#include "probes/atomics/probe.hpp"
#include "probes/clock/probe.hpp"
#include "probes/conflict/probe.hpp"
#include "probes/coverage/probe.hpp"
#include "probes/per_sm/probe.hpp"
#include "probes/sampling/probe.hpp"
#include "probes/sharing/probe.hpp"
#include "probes/tlb/probe.hpp"

namespace gpuprobe::probes {

const std::vector<probe_descriptor> &probe_catalog() {
  static const std::vector<probe_descriptor> all = {
      probes::tlb::entry,        probes::sharing::entry,    probes::sampling::entry(),
      probes::conflict::entry(), probes::coverage::entry(), probes::per_sm::entry(),
      probes::atomics::entry,    probes::clock::entry,
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
