// A GPU's UUID as gpuprobe records it, on seeded random byte strings: "GPU-" then the 16 bytes in
// order as lower-case hex, grouped 8-4-4-4-12, and nothing else.
#include "common/gpu_uuid.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

TEST(GpuUuid, SixteenBytesAreWrittenAsNvidiaSmiWritesThem) {
  EXPECT_EQ(
      gpuprobe::format_gpu_uuid("\x2d\xcb\xe5\xfe\x39\xcf\xca\x66\x3a\x9f\x03\xb7\x96\xaf\x88\xa2"),
      "GPU-2dcbe5fe-39cf-ca66-3a9f-03b796af88a2"); // a committed H100's, as nvidia-smi says
  std::mt19937 rng(16);
  for (int n = 0; n < 500; ++n) {
    unsigned char b[16];
    for (auto &x : b)
      x = static_cast<unsigned char>(rng());
    const std::string s = gpuprobe::format_gpu_uuid(b);
    ASSERT_EQ(s.size(), 40u) << s;
    ASSERT_EQ(s.substr(0, 4), "GPU-");
    std::string hex;
    for (std::size_t i = 4; i < s.size(); ++i)
      if (i == 12 || i == 17 || i == 22 || i == 27)
        ASSERT_EQ(s[i], '-') << s;
      else
        hex += s[i];
    for (int k = 0; k < 16; ++k)
      ASSERT_EQ(std::stoi(hex.substr(2 * k, 2), nullptr, 16), b[k]) << s;
    ASSERT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos) << s;
  }
}
