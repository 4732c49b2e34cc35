#include "findings/characterize.hpp"

#include "common/results_folder.hpp"
#include "common/schema.hpp"
#include "probes/catalog.hpp"

#include <filesystem>

namespace gpuprobe::findings {

namespace fs = std::filesystem;
using nlohmann::json;

model::profile assemble_profile(const std::string &dir, const json &stages_run,
                                const json &conditions) {
  const results_folder folder{fs::path(dir)};
  model::profile p =
      model::read_profile(folder.raw(results_folder::raw_file::tlb_profile).string());
  p.schema = schema::profile.id();
  p.meta = json::object();
  p.detail = {{"conditions", conditions}};
  for (const auto &probe : probes::probe_catalog()) // each probe's part, from its own files
    if (probe.contribute)
      probe.contribute(folder, p);
  p.stages.emplace();
  for (const auto &st : stages_run)
    p.stages->push_back(model::stage_record_from_json(st));
  return p;
}

} // namespace gpuprobe::findings
