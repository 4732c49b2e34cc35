#pragma once
// Reading tuning.json (`gpuprobe tune`, schema gpuprobe.tuning/1 or /2) into an alloc::tuning, for
// user code that builds tuned allocators:
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
#include "common/json_depth.hpp"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
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

namespace detail {

// Bounds no GPU comes near; the loader refuses more (a value that would wrap or be truncated is
// refused, never converted).
inline constexpr std::uint64_t k_max_tuning_file_bytes = 64ull << 20;
inline constexpr int k_max_tuning_depth = 64;
inline constexpr unsigned k_max_regions = 4096;          // a region per SM group at most
inline constexpr std::size_t k_max_sm_map = 4096;        // SM ids (H100: 132)
inline constexpr std::uint64_t k_max_bytes = 1ull << 50; // 1 PiB: any pool, region or scope

// Text from a file made safe for a terminal line: control characters (a newline, an escape)
// shown as \xNN, so a UUID cannot start a line of its own or move the cursor.
inline std::string printable(const std::string &s) {
  std::string out;
  for (const unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      const char *hex = "0123456789abcdef";
      out += {'\\', 'x', hex[c >> 4], hex[c & 15]};
    } else {
      out += char(c);
    }
  }
  return out;
}

// `key` of `a` as a whole number in [lo, hi]; absent: `dflt`. 32.9, -1, 2^32 + 64 for a 32-bit
// field, true or "64" are refused with the field's name.
inline std::uint64_t whole_field(const nlohmann::json &a, const char *key, std::uint64_t lo,
                                 std::uint64_t hi, std::uint64_t dflt, bool required = false) {
  const auto it = a.find(key);
  if (it == a.end() || (it->is_null() && !required)) {
    if (required)
      throw std::runtime_error(std::string("\"") + key + "\" is missing");
    return dflt;
  }
  std::uint64_t v = 0;
  if (it->is_number_unsigned()) {
    v = it->get<std::uint64_t>();
  } else if (it->is_number_integer()) {
    if (it->get<std::int64_t>() < 0)
      throw std::runtime_error(std::string("\"") + key + "\" is " + it->dump() +
                               ", not >= " + std::to_string(lo));
    v = std::uint64_t(it->get<std::int64_t>());
  } else if (it->is_number_float()) {
    const double d = it->get<double>();
    if (!(d >= 0 && d <= double(hi) && d == double(std::uint64_t(d))))
      throw std::runtime_error(std::string("\"") + key + "\" is " + it->dump() +
                               ", not a whole number in " + std::to_string(lo) + ".." +
                               std::to_string(hi));
    v = std::uint64_t(d);
  } else {
    throw std::runtime_error(std::string("\"") + key + "\" is " + it->dump().substr(0, 40) +
                             ", not a number");
  }
  if (v < lo || v > hi)
    throw std::runtime_error(std::string("\"") + key + "\" is " + std::to_string(v) + ", not in " +
                             std::to_string(lo) + ".." + std::to_string(hi));
  return v;
}

inline bool power_of_two(std::uint64_t v) { return v && !(v & (v - 1)); }

} // namespace detail

inline tuning tuning_from_json(const nlohmann::json &doc, const std::string &where = "tuning") {
  auto fail = [&](const std::string &why) { return std::runtime_error(where + ": " + why); };
  if (!doc.is_object() || !doc.contains("schema") || !doc["schema"].is_string())
    throw fail("no \"schema\" (not a gpuprobe tuning file)");
  const std::string schema = doc["schema"];
  const std::string family = "gpuprobe.tuning/";
  if (schema.rfind(family, 0) != 0)
    throw fail("schema is '" + schema + "', expected gpuprobe.tuning/N");
  if (schema != family + "1" && schema != family + "2") // 2 renamed a key in "decisions" only
    throw fail("schema '" + schema + "' is newer than this build reads (gpuprobe.tuning/2)");
  if (!doc.contains("allocator") || !doc["allocator"].is_object())
    throw fail("no \"allocator\" block");
  const auto &a = doc["allocator"];
  tuning t;
  try {
    using detail::whole_field;
    const auto &dev = doc.contains("device") && doc["device"].is_object()
                          ? doc["device"]
                          : nlohmann::json::object();
    const auto &prof = doc.contains("profile") && doc["profile"].is_object()
                           ? doc["profile"]
                           : nlohmann::json::object();
    t.measured_on = prof.value("device_uuid", dev.value("uuid", std::string()));
    t.word_bits = int(whole_field(a, "word_bits", 0, 1024, 0, true));
    if (t.word_bits != 32 && t.word_bits != 64)
      throw std::runtime_error("word_bits must be 32 or 64, not " + std::to_string(t.word_bits));
    t.regions = unsigned(whole_field(a, "regions", 1, detail::k_max_regions, 1, true));
    t.max_region_bytes = whole_field(a, "max_region_bytes", 0, detail::k_max_bytes, 0);
    t.region_align_bytes = whole_field(a, "region_align_bytes", 0, detail::k_max_bytes, 0);
    if (t.region_align_bytes && !detail::power_of_two(t.region_align_bytes))
      throw std::runtime_error("\"region_align_bytes\" is " + std::to_string(t.region_align_bytes) +
                               ", not a power of two");
    if (a.contains("sm_region") && !a["sm_region"].is_null()) {
      const auto &m = a["sm_region"];
      if (!m.is_array() || m.size() > detail::k_max_sm_map)
        throw std::runtime_error("\"sm_region\" is not a list of at most " +
                                 std::to_string(detail::k_max_sm_map) + " region numbers");
      for (std::size_t s = 0; s < m.size(); ++s) {
        const nlohmann::json cell = {{"sm_region", m[s]}};
        t.sm_region.push_back(
            std::uint16_t(whole_field(cell, "sm_region", 0, t.regions - 1, 0, true)));
      }
    }
    t.crw = parse_crw_start(a.value("crw_start", std::string("thread")));
    t.vm_page_bytes = whole_field(a, "vm_page_bytes", 4096, 1ull << 40, 2u << 20);
    if (!detail::power_of_two(t.vm_page_bytes))
      throw std::runtime_error("\"vm_page_bytes\" is " + std::to_string(t.vm_page_bytes) +
                               ", not a power of two");
    t.tlb_scope_bytes = whole_field(a, "tlb_scope_bytes", 0, detail::k_max_bytes, 0);
    t.tlb_scope_midpoint_bytes =
        whole_field(a, "tlb_scope_midpoint_bytes", 0, detail::k_max_bytes, 0);
  } catch (const std::exception &e) {
    throw fail(std::string("bad \"allocator\" block: ") + e.what());
  }
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
  return detail::printable(where) + ": measured on " + detail::printable(was) + ", running on " +
         detail::printable(running_uuid) + ": its SM -> region " +
         "map (" + std::to_string(regions) + " regions) is dropped, as SM groups differ between " +
         "units; word size, CRW start and TLB scope are kept; `gpuprobe characterize` and " +
         "`gpuprobe tune` on this GPU re-derive the map";
}

// Reads `path` as gpuprobe's own readers do: a regular file (not a FIFO, a device or a folder) of
// at most 64 MiB, nested at most 64 deep, then tuning_from_json's checks on every field.
inline tuning load_tuning(const std::string &path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw std::runtime_error(path + ": cannot open (" + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode))
    throw std::runtime_error(path + ": not a regular file (a folder, device, FIFO or socket)");
  if (std::uint64_t(st.st_size) > detail::k_max_tuning_file_bytes)
    throw std::runtime_error(path + ": " + std::to_string(st.st_size >> 20) +
                             " MiB, more than a tuning file holds (64 MiB)");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error(path + ": cannot open");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (json_too_deep_at(text, detail::k_max_tuning_depth)) // before any value is built
    throw std::runtime_error(path + ": nested deeper than " +
                             std::to_string(detail::k_max_tuning_depth) +
                             " levels: not a tuning file");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
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
