#pragma once
// Every schema gpuprobe writes or reads, named once: a family and the version this build writes
// (and the newest it reads). A file's "schema" field is "<family>/<version>". A version this build
// writes reads every earlier one: where a key was renamed, the reader takes its old name too.
#include <string>

namespace gpuprobe::schema {

struct family {
  const char *name;
  int version;
  std::string id() const { return std::string(name) + "/" + std::to_string(version); }
  // `schema` is this family's, of a version this build reads ("<name>/1" .. id()).
  bool reads(const std::string &schema) const {
    for (int v = 1; v <= version; ++v)
      if (schema == std::string(name) + "/" + std::to_string(v))
        return true;
    return false;
  }
};

// Version 2 of result, profile, tuning and fleet: what one entry of a TLB level covers is stored as
// "coverage_bytes" ("coverage_bound", "coverage_note", "<level>.coverage_mib", the evidence's
// "strides_below_coverage"), not "page_bytes" ("page_bound", "page_note", "<level>.page_mib",
// "strides_below_page") as in version 1.
inline constexpr family result{"gpuprobe.result", 2};   // one probe's raw measurements
inline constexpr family profile{"gpuprobe.profile", 2}; // analyze tlb / characterize
inline constexpr family sharing{"gpuprobe.sharing", 1}; // analyze sharing
inline constexpr family tuning{"gpuprobe.tuning", 2};   // tune (also read by alloc::load_tuning)
inline constexpr family validation{"gpuprobe.validation", 1}; // validate
inline constexpr family fleet{"gpuprobe.fleet", 2};           // fleet (many units merged)
inline constexpr family compare{"gpuprobe.compare", 1};       // compare (two runs)

} // namespace gpuprobe::schema
