#pragma once
// Reading tuning.json (`gpuprobe tune`, schema gpuprobe.tuning/1) into an alloc::tuning, for user
// code that builds tuned allocators:
//   const auto t = gpuprobe::alloc::load_tuning("tuning.json");
//   gpuprobe::alloc::with_word(t, [&](auto w) { gpuprobe::alloc::corw<decltype(w)> pool(cfg, t);
//   ... });
// Only the file's "allocator" block is read; the rest (reasons, measurements) is for people.
// Errors are one-line std::runtime_error messages. Needs nlohmann-json.
#include "allocators/tuning.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace gpuprobe::alloc {

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
    t.word_bits = a.at("word_bits").get<int>();
    t.regions = a.at("regions").get<unsigned>();
    t.max_region_bytes = a.value("max_region_bytes", std::uint64_t(0));
    t.region_align_bytes = a.value("region_align_bytes", std::uint64_t(0));
    t.sm_region = a.value("sm_region", std::vector<std::uint16_t>{});
    t.crw = parse_crw_start(a.value("crw_start", std::string("thread")));
    t.vm_page_bytes = a.value("vm_page_bytes", std::uint64_t(2u << 20));
    t.tlb_scope_bytes = a.value("tlb_scope_bytes", std::uint64_t(0));
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

} // namespace gpuprobe::alloc
