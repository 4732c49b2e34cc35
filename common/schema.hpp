#pragma once
// Every schema gpuprobe writes or reads, named once: a family and the version this build writes
// (and the newest it reads). A file's "schema" field is "<family>/<version>".
#include <string>

namespace gpuprobe::schema {

struct family {
  const char *name;
  int version;
  std::string id() const { return std::string(name) + "/" + std::to_string(version); }
};

inline constexpr family result{"gpuprobe.result", 1};   // one probe's raw measurements
inline constexpr family profile{"gpuprobe.profile", 1}; // analyze tlb / characterize
inline constexpr family sharing{"gpuprobe.sharing", 1}; // analyze sharing
inline constexpr family tuning{"gpuprobe.tuning", 1};   // tune (also read by alloc::load_tuning)
inline constexpr family validation{"gpuprobe.validation", 1}; // validate
inline constexpr family fleet{"gpuprobe.fleet", 1};           // fleet (many units merged)
inline constexpr family compare{"gpuprobe.compare", 1};       // compare (two runs)

} // namespace gpuprobe::schema
