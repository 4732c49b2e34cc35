#pragma once
// Reading tuning.json (`gpuprobe tune`, schema gpuprobe.tuning/1) into an alloc::tuning, for user
// code that builds tuned allocators:
//   std::string note;
//   const auto t = gpuprobe::alloc::load_tuning("tuning.json", running_gpu_uuid, note);
//   if (!note.empty()) std::fprintf(stderr, "%s\n", note.c_str());
//   gpuprobe::alloc::with_word(t, [&](auto w) { gpuprobe::alloc::corw<decltype(w)> pool(cfg, t);
//   ... });
// The file's "allocator" block is read, and the GPU it was measured on ("profile.device_uuid":
// the unit whose SM groups made the SM -> region map). SM groups differ between units of one
// model, so on another GPU the map is dropped (bind_to_gpu) and `note` says so in one line.
// The rest of the file (reasons, measurements) is for people.
// Errors are one-line std::runtime_error messages. Needs nlohmann-json.
#include "allocators/tuning.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace gpuprobe::alloc {

// tuning.json's "allocator" block: written by `gpuprobe tune` with this function and read back by
// tuning_from_json below, the one place its keys are spelt. measured_on is not in the block (the
// file's "profile.device_uuid" says it).
inline nlohmann::json allocator_block_json(const tuning &t) {
  return {{"word_bits", t.word_bits},
          {"regions", t.regions},
          {"max_region_bytes", t.max_region_bytes},
          {"region_align_bytes", t.region_align_bytes},
          {"sm_region", t.sm_region},
          {"crw_start", to_string(t.crw)},
          {"vm_page_bytes", t.vm_page_bytes},
          {"tlb_scope_bytes", t.tlb_scope_bytes},
          {"tlb_scope_midpoint_bytes", t.tlb_scope_midpoint_bytes}};
}

inline tuning tuning_from_json(const nlohmann::json &doc, const std::string &where = "tuning") {
  auto fail = [&](const std::string &why) { return std::runtime_error(where + ": " + why); };
  if (!doc.is_object() || !doc.contains("schema") || !doc["schema"].is_string())
    throw fail("no \"schema\" (not a gpuprobe tuning file)");
  const std::string schema = doc["schema"];
  const std::string family = "gpuprobe.tuning/";
  if (schema.rfind(family, 0) != 0)
    throw fail("schema is '" + schema + "', expected gpuprobe.tuning/1");
  if (schema != family + "1")
    throw fail("schema '" + schema + "' is newer than this build reads (gpuprobe.tuning/1)");
  if (!doc.contains("allocator") || !doc["allocator"].is_object())
    throw fail("no \"allocator\" block");
  const auto &a = doc["allocator"];
  tuning t;
  try {
    const auto &dev = doc.contains("device") && doc["device"].is_object() ? doc["device"]
                                                                          : nlohmann::json::object();
    const auto &prof = doc.contains("profile") && doc["profile"].is_object()
                           ? doc["profile"]
                           : nlohmann::json::object();
    t.measured_on = prof.value("device_uuid", dev.value("uuid", std::string()));
    t.word_bits = a.at("word_bits").get<int>();
    t.regions = a.at("regions").get<unsigned>();
    t.max_region_bytes = a.value("max_region_bytes", std::uint64_t(0));
    t.region_align_bytes = a.value("region_align_bytes", std::uint64_t(0));
    t.sm_region = a.value("sm_region", std::vector<std::uint16_t>{});
    t.crw = parse_crw_start(a.value("crw_start", std::string("thread")));
    t.vm_page_bytes = a.value("vm_page_bytes", std::uint64_t(2u << 20));
    t.tlb_scope_bytes = a.value("tlb_scope_bytes", std::uint64_t(0));
    t.tlb_scope_midpoint_bytes = a.value("tlb_scope_midpoint_bytes", std::uint64_t(0));
  } catch (const std::exception &e) {
    throw fail(std::string("bad \"allocator\" block: ") + e.what());
  }
  if (t.word_bits != 32 && t.word_bits != 64)
    throw fail("word_bits must be 32 or 64");
  if (t.regions == 0)
    throw fail("regions must be at least 1");
  for (auto r : t.sm_region)
    if (r >= t.regions)
      throw fail("sm_region names region " + std::to_string(r) + " of " +
                 std::to_string(t.regions));
  return t;
}

// What of `t` holds on the GPU `running_uuid`: all of it on the unit it was measured on (or when
// the file does not say which); on another unit the SM -> region map is dropped (the word size,
// CRW start and TLB scope depend on the model, not the unit, and stay). Returns "" or the one line
// that says what was dropped and which commands re-derive it.
inline std::string bind_to_gpu(tuning &t, const std::string &running_uuid,
                               const std::string &where = "tuning") {
  if (t.measured_on.empty() || running_uuid.empty() || t.measured_on == running_uuid)
    return "";
  const std::string was = t.measured_on;
  t.measured_on = running_uuid;
  if (!t.scoped())
    return "";
  const unsigned regions = t.regions;
  t.sm_region.clear();
  t.regions = 1;
  return where + ": measured on " + was + ", running on " + running_uuid + ": its SM -> region " +
         "map (" + std::to_string(regions) + " regions) is dropped, as SM groups differ between " +
         "units; word size, CRW start and TLB scope are kept; `gpuprobe characterize` and " +
         "`gpuprobe tune` on this GPU re-derive the map";
}

inline tuning load_tuning(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(path + ": cannot open");
  nlohmann::json doc;
  try {
    in >> doc;
  } catch (const std::exception &e) {
    throw std::runtime_error(path + ": not valid JSON (" + std::string(e.what()).substr(0, 120) +
                             ")");
  }
  return tuning_from_json(doc, path);
}

// load_tuning, then bind_to_gpu for the GPU it runs on: `note` receives the line, or "".
inline tuning load_tuning(const std::string &path, const std::string &running_uuid,
                          std::string &note) {
  tuning t = load_tuning(path);
  note = bind_to_gpu(t, running_uuid, path);
  return t;
}

} // namespace gpuprobe::alloc
