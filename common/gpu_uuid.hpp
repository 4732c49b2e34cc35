#pragma once
// A GPU's UUID as gpuprobe records it and nvidia-smi prints it ("GPU-" and 16 bytes in hex as
// 8-4-4-4-12), from the 16 bytes of cudaUUID_t. Host-only, header-only: the library and the
// allocators' users (alloc::load_tuning asks for the running GPU's) format it alike.
#include <cstdio>
#include <string>

namespace gpuprobe {

inline std::string format_gpu_uuid(const void *uuid_bytes) {
  const auto *b = static_cast<const unsigned char *>(uuid_bytes);
  char s[48];
  std::snprintf(s, sizeof s,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return s;
}

} // namespace gpuprobe
