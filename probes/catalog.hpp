#pragma once
// Every probe, named once: the "probe" field of its result (gpuprobe.result/1), the subcommand
// that runs it, and what the report does with its results. The report's scan and the tests
// iterate this list. Adding a probe: its files (probes/<name>.cu, _driver, _result,
// cli/<name>_cmd.cpp) and one line in probe_catalog(). (A list, not self-registration from each
// file: the probes live in a static library, whose objects the linker drops when nothing else
// names them, and the list would then differ between binaries.) Host-only.
#include <string>
#include <vector>

namespace gpuprobe::probes {

// What `gpuprobe report` does with a probe's raw result.
enum class report_use {
  tlb_curves,      // the TLB part: curves per stride, the levels when there is no profile
  sharing_matrix,  // the sharing part: a heatmap per file
  atomics_curves,  // the atomics part: latency vs threads, the fits
  through_profile, // drawn from profile.json's tables (cross-check, structure), not from the file
};

struct probe_descriptor {
  const char *id;      // the result's "probe" field
  const char *command; // `gpuprobe <command>` runs it
  report_use use;
  const char *what; // one line, as --help and the README say it
};

const std::vector<probe_descriptor> &probe_catalog();
// The probe whose results carry `id`, or nullptr.
const probe_descriptor *find_probe(const std::string &id);

} // namespace gpuprobe::probes
