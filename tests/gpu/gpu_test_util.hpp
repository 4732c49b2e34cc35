#pragma once
// GPU tests skip cleanly where no CUDA device exists (the CI machine).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuprobe::test {

// Whether this machine has a working CUDA device. "absent": no NVIDIA device node and CUDA finds
// none (the CI machine: the test skips). "broken": a GPU host (/dev/nvidiactl or /dev/nvidia0,
// or GPUPROBE_EXPECT_GPU=1) where CUDA fails: a broken driver is a failure, never a skipped
// suite. CUDA_VISIBLE_DEVICES that hides every GPU is a choice, and skips.
enum class gpu_state { present, absent, broken };
inline gpu_state probe_gpu(std::string *why = nullptr) {
  static const auto state = [] {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess && n > 0)
      return std::pair<gpu_state, std::string>{gpu_state::present, ""};
    const std::string said = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    const char *visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (e == cudaErrorNoDevice && visible)
      return std::pair<gpu_state, std::string>{
          gpu_state::absent, "CUDA_VISIBLE_DEVICES='" + std::string(visible) + "' hides every GPU"};
    const bool gpu_host = std::ifstream("/dev/nvidiactl").good() ||
                          std::ifstream("/dev/nvidia0").good() ||
                          std::getenv("GPUPROBE_EXPECT_GPU") != nullptr;
    return std::pair<gpu_state, std::string>{gpu_host ? gpu_state::broken : gpu_state::absent,
                                             said};
  }();
  if (why)
    *why = state.second;
  return state.first;
}
inline bool have_gpu() { return probe_gpu() == gpu_state::present; }

// Waits for the device; a kernel's error becomes an exception (the test fails, naming it).
inline void sync_or_throw() {
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("kernel: ") + cudaGetErrorString(e));
}

#define GPUPROBE_REQUIRE_GPU()                                                                     \
  do {                                                                                             \
    std::string gpu_why_;                                                                          \
    switch (::gpuprobe::test::probe_gpu(&gpu_why_)) {                                              \
    case ::gpuprobe::test::gpu_state::absent:                                                      \
      GTEST_SKIP() << "no CUDA device (" << gpu_why_ << ")";                                       \
    case ::gpuprobe::test::gpu_state::broken:                                                      \
      GTEST_FAIL() << "a GPU host whose CUDA does not work (a broken driver?): " << gpu_why_;      \
    case ::gpuprobe::test::gpu_state::present:                                                     \
      break;                                                                                       \
    }                                                                                              \
  } while (0)

// Runs a shell command, returns its stdout (and the exit code through `rc`).
inline std::string shell(const std::string &cmd, int *rc = nullptr);

// The device malloc heap is sized once per process, at the first kernel that mallocs: a test that
// needs its own heap runs in a process of its own. In the test, the parent re-runs this binary on this test alone with
// GPUPROBE_FRESH_TEST naming it and takes the child's verdict: 0 there, and in the child 1 (the
// body runs); 2 when the child skipped.
inline int fresh_process_run() {
  const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = std::string(info->test_suite_name()) + "." + info->name();
  if (const char *env = std::getenv("GPUPROBE_FRESH_TEST"); env && name == env)
    return 1;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  int rc = 0;
  const std::string log = shell(
      "GPUPROBE_FRESH_TEST='" + name + "' '" + self + "' --gtest_filter='" + name + "' 2>&1", &rc);
  std::printf("[in its own process] %s: exit %d\n", name.c_str(), rc);
  const bool ran = log.find("[  PASSED  ] 1 test") != std::string::npos;
  const bool skipped = log.find("[  SKIPPED ] 1 test") != std::string::npos;
  EXPECT_EQ(rc, 0) << log.substr(log.size() > 6000 ? log.size() - 6000 : 0);
  EXPECT_TRUE(ran || skipped || rc != 0) << "the child ran no test:\n" << log;
  return skipped ? 2 : 0;
}
#define GPUPROBE_IN_FRESH_PROCESS()                                                                \
  do {                                                                                             \
    const int fresh_ = ::gpuprobe::test::fresh_process_run();                                      \
    if (fresh_ == 2)                                                                               \
      GTEST_SKIP() << "skipped in its own process";                                                \
    if (fresh_ == 0)                                                                               \
      return;                                                                                      \
  } while (0)

inline std::string shell(const std::string &cmd, int *rc) {
  std::string out;
  FILE *p = popen(cmd.c_str(), "r");
  if (!p)
    return out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    out.append(buf, n);
  const int status = pclose(p);
  if (rc)
    *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// SASS of every function in `binary` for the device's architecture: name -> text.
inline std::map<std::string, std::string> sass_by_function(const std::string &binary,
                                                           const std::string &arch) {
  const std::string text = shell("cuobjdump -sass -arch " + arch + " " + binary + " 2>/dev/null");
  std::map<std::string, std::string> out;
  std::string current;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto f = line.find("Function : ");
    if (f != std::string::npos) {
      current = line.substr(f + 11);
      continue;
    }
    if (!current.empty())
      out[current] += line + "\n";
  }
  return out;
}

inline std::vector<std::string> load_opcodes(const std::string &sass) {
  std::vector<std::string> ops;
  std::regex ldg(R"((LDG\.[A-Z0-9_.]+))");
  for (std::sregex_iterator it(sass.begin(), sass.end(), ldg), end; it != end; ++it)
    ops.push_back((*it)[1]);
  return ops;
}

inline std::string device_arch() {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess)
    return "sm_90";
  return "sm_" + std::to_string(p.major) + std::to_string(p.minor);
}

} // namespace gpuprobe::test
