#pragma once
// A probe's result file read by the probe's own reader, as every analysis that takes one reads it
// (tlb's levels, tlb-sharing's matrix). Host-only.
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "model/file_head.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace gpuprobe::probes {

// `doc` (a gpuprobe.result/2 of probe `probe`) read by `read`, its device block kept; each refusal
// one line naming `source`: another schema, another probe ("is not a WHAT result (probe 'P')"),
// or what the reader refused ("malformed WHAT result (...)").
template <class Read>
auto read_result_file(const nlohmann::json &doc, const std::string &source, const char *probe,
                      const char *what, Read &&read) {
  require_schema(doc, schema::result, source);
  if (const auto head = model::file_head_from_json(doc, source); head.probe != probe)
    throw gpuprobe::error("'" + source + "' is not a " + what + " result (probe '" +
                          (head.probe.empty() ? "?" : head.probe) + "')");
  decltype(read(doc)) r; // the probe's own reader: its keys are spelt once
  try {
    r = read(doc);
  } catch (const gpuprobe::error &e) {
    throw gpuprobe::error("'" + source + "': malformed " + what + " result (" +
                          std::string(e.what()) + ")");
  }
  r.device = doc.at("device");
  return r;
}

} // namespace gpuprobe::probes
