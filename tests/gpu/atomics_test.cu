// Atomics probe on a real GPU: the un-aggregated kernels issue one atomic per thread (SASS),
// nvcc's atomicAdd is aggregated (so the SASS check can fail), no atomic is lost, and
// contention raises latency.
#include "gpu_test_util.hpp"
#include "probes/atomics/kernel.hpp"
#include "tests/common/binary_path.hpp"

#include <regex>

using namespace gpuprobe;
using gpuprobe::test::device_arch;
using gpuprobe::test::sass_by_function;
using gpuprobe::test::shell;

namespace {

int count(const std::string &text, const std::string &re) {
  std::regex r(re);
  return int(
      std::distance(std::sregex_iterator(text.begin(), text.end(), r), std::sregex_iterator()));
}

// SASS of the atomics kernel whose mangled name holds `tag` and `type` ("j" u32, "y" u64).
std::string kernel_sass(const std::map<std::string, std::string> &sass, const std::string &tag,
                        const std::string &type) {
  for (const auto &[name, text] : sass)
    if (name.find("atomics_kernel") != std::string::npos &&
        name.find(tag + "E" + type) != std::string::npos)
      return text;
  return "";
}

} // namespace

TEST(AtomicsGpu, UnaggregatedKernelsHaveOneAtomicPerThreadInSass) {
  GPUPROBE_REQUIRE_GPU();
  if (shell("command -v cuobjdump").empty())
    GTEST_SKIP() << "cuobjdump not installed";
  const auto sass = sass_by_function(test::gpuprobe_binary(), device_arch());
  const std::string atomic = R"(\b(ATOMG|ATOM|RED|REDG)\.)";
  const std::string warp_vote = R"(\b(VOTEU?\.|U?POPC|MATCH\.))";
  for (const std::string type : {"j", "y"}) {
    for (const std::string tag : {"same_unaggregated", "distinct_lines"}) {
      const auto text = kernel_sass(sass, tag, type);
      ASSERT_FALSE(text.empty()) << tag << "/" << type << " not found in SASS";
      EXPECT_EQ(count(text, atomic), 1) << tag << "/" << type << ":\n" << text;
      EXPECT_EQ(count(text, warp_vote), 0) << tag << "/" << type << " is warp-aggregated:\n"
                                           << text;
    }
    const auto agg = kernel_sass(sass, "compiler_aggregated", type);
    ASSERT_FALSE(agg.empty());
    EXPECT_GT(count(agg, warp_vote), 0)
        << "nvcc no longer aggregates atomicAdd; the contrast variant is moot:\n"
        << agg;
  }
}

TEST(AtomicsGpu, CountsEveryOperationAndContentionCostsLatency) {
  GPUPROBE_REQUIRE_GPU();
  probes::atomics_probe probe(1 << 16);
  const auto one = probe.measure(probes::atomic_variant::same_u32, 1, 256);
  const auto many = probe.measure(probes::atomic_variant::same_u32, 1 << 16, 1 << 16);
  EXPECT_EQ(many.counter_delta, 1u << 16);
  EXPECT_GE(one.samples, 256u);
  // An atomic is performed in L2: it cannot come back faster than an L2 round trip (~250+).
  for (auto v : probes::all_atomic_variants())
    EXPECT_GT(probe.measure(v, 1, 64).mean_cycles, 200)
        << probes::to_string(v) << ": the clock did not wait for the atomic";
  EXPECT_GT(many.mean_cycles, 4 * one.mean_cycles) << one.mean_cycles << " vs " << many.mean_cycles;
  const auto agg = probe.measure(probes::atomic_variant::aggregated_u32, 1 << 16, 1 << 16);
  EXPECT_LT(agg.mean_cycles, many.mean_cycles); // one atomic per warp queues 32x fewer
  const auto distinct = probe.measure(probes::atomic_variant::distinct_u64, 1 << 16, 1 << 16);
  EXPECT_EQ(distinct.counter_delta, 1u << 16);
  const auto cas = probe.measure(probes::atomic_variant::cas_u64, 1024, 1024);
  EXPECT_EQ(cas.counter_delta, 1024u);
}
