// The peer harness under bad input: an allocator whose heap cannot be made (1 TiB asked
// of a GPU with 80-141 GB) fails its cell with the reason and the process ends normally, for
// gpuprobe's allocators and every peer built in. One process per allocator, as the device
// scripts run them.
#include "gpu_test_util.hpp"
#include "tests/common/binary_path.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {
bool bench_built() {
  const std::string bench = gpuprobe::test::bench_binary();
  return !bench.empty() && std::filesystem::exists(bench);
}
// gpuprobe-bench's BM_peers cells on a 1 GiB heap without the ladder, `args` added: the JSON it
// wrote (discarded when the run failed or wrote none; `log` has its output). `name` names the file.
nlohmann::json run_small_cells(const std::string &args, const std::string &name, std::string &log) {
  const std::string out = ::testing::TempDir() + "/" + name + ".json";
  std::filesystem::remove(out);
  int rc = 0;
  log = gpuprobe::test::shell(gpuprobe::test::bench_binary() +
                                  " --gpuprobe_peers_heap=1G --gpuprobe_peers_no_ladder " + args +
                                  " --benchmark_out=" + out + " --benchmark_out_format=json 2>&1",
                              &rc);
  if (rc != 0)
    return nlohmann::json(nlohmann::json::value_t::discarded);
  std::ifstream in(out);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}
} // namespace

TEST(Peers, AHeapThatCannotBeMadeFailsItsCellWithTheReason) {
  GPUPROBE_REQUIRE_GPU();
  const std::string bench = gpuprobe::test::bench_binary();
  if (bench.empty() || !std::filesystem::exists(bench))
    GTEST_SKIP() << "gpuprobe-bench is not built (no Google Benchmark)";
  const std::string cell_filter = "/size:16/threads:16384/state:empty/";
  int rc = 0;
  const std::string list =
      gpuprobe::test::shell(bench + " --benchmark_list_tests --benchmark_filter='^BM_peers/.*" +
                                cell_filter + "' 2>/dev/null",
                            &rc);
  ASSERT_EQ(rc, 0) << list;
  std::istringstream lines(list);
  int tried = 0;
  for (std::string cell; std::getline(lines, cell);) {
    const std::string alloc = cell.substr(9, cell.find('/', 9) - 9);
    if (alloc == "cuda_malloc")
      continue; // its heap is what the driver grants, not what was asked: it may serve the cell
    const std::string out = ::testing::TempDir() + "/peers_bad_heap_" + alloc + ".json";
    std::filesystem::remove(out);
    const std::string log = gpuprobe::test::shell(
        bench + " --gpuprobe_peers_heap=1T --gpuprobe_peers_no_ladder --benchmark_filter='^" +
            cell.substr(0, cell.find("/iterations")) + "/' --benchmark_out=" + out +
            " --benchmark_out_format=json 2>&1",
        &rc);
    ++tried;
    // 1: every case failed (the bench's exit code); -1: a signal, i.e. the process died.
    EXPECT_EQ(rc, 1) << alloc << ":\n" << log;
    std::ifstream in(out);
    const auto doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || doc["benchmarks"].size() != 1) {
      ADD_FAILURE() << alloc << ": no whole JSON written\n" << log;
      continue; // the next allocator is still tried
    }
    const auto &b = doc["benchmarks"][0];
    EXPECT_TRUE(b.value("error_occurred", false)) << alloc << " served a 1 TiB heap?";
    const std::string why = b.value("error_message", "");
    EXPECT_FALSE(why.empty()) << alloc;
    std::printf("%-16s %s\n", alloc.c_str(), why.c_str());
  }
  EXPECT_GE(tried, 3) << "rw_malloc, corw64 and bump are always built";
}

// rw_malloc's register budget: the harness builds its malloc kernel for the blocks an SM
// rw_malloc states (kernel_min_blocks, 4 of 256 threads), and the cell records what the kernel
// took. Unbounded, the inlined malloc path took 87-95 registers and an SM held 2 blocks; at 67
// registers (bound 3) an SM held 3 and BM_peers' 16 B cells at 2^17 threads were 1.3x slower than
// at 64. This fails if the bound is lost or the path needs more than 64 registers again.
TEST(Peers, RwMallocsKernelHoldsFourBlocksAnSm) {
  GPUPROBE_REQUIRE_GPU();
  if (!bench_built())
    GTEST_SKIP() << "gpuprobe-bench is not built (no Google Benchmark)";
  std::string log;
  const auto doc =
      run_small_cells("--benchmark_filter='^BM_peers/rw_malloc/size:16/threads:16384/state:empty/'",
                      "peers_rw_malloc_kernel", log);
  ASSERT_FALSE(doc.is_discarded()) << log;
  ASSERT_EQ(doc["benchmarks"].size(), 1u) << log;
  const auto &b = doc["benchmarks"][0];
  ASSERT_FALSE(b.value("error_occurred", false)) << b.value("error_message", "");
  const double regs = b.value("malloc_regs", 0.0), blocks = b.value("malloc_blocks_per_sm", 0.0);
  std::printf("rw_malloc's malloc kernel: %.0f registers, %.0f blocks of 256 an SM\n", regs,
              blocks);
  EXPECT_GT(regs, 0.0);
  EXPECT_LE(regs, 64.0);
  EXPECT_GE(blocks, 4.0);
}

// --gpuprobe_peers_warp_clock: every cell it runs carries the warp clock's counters, each warp's
// cycles counted (p50 > 0), the percentiles in order, the launches' slowest warps between the
// slowest of all and a fifth of it, and the cell still passes its checks.
TEST(Peers, WarpClockCountsEveryWarp) {
  GPUPROBE_REQUIRE_GPU();
  if (!bench_built())
    GTEST_SKIP() << "gpuprobe-bench is not built (no Google Benchmark)";
  std::string log;
  const auto doc = run_small_cells(
      "--gpuprobe_peers_warp_clock --benchmark_filter='^BM_peers/(rw_malloc|bump)/size:(16|mixed)/"
      "threads:16384/state:empty/'",
      "peers_warp_clock", log);
  ASSERT_FALSE(doc.is_discarded()) << log;
  ASSERT_EQ(doc["benchmarks"].size(), 4u) << log;
  for (const auto &b : doc["benchmarks"]) {
    const std::string name = b.value("name", "");
    ASSERT_FALSE(b.value("error_occurred", false)) << name << ": " << b.value("error_message", "");
    const double p50 = b.value("warp_cycles_p50", 0.0), p90 = b.value("warp_cycles_p90", 0.0),
                 p99 = b.value("warp_cycles_p99", 0.0), max = b.value("warp_cycles_max", 0.0);
    std::printf("%-60s warp cycles p50 %.0f p90 %.0f p99 %.0f max %.0f, starts spread %.2f us\n",
                name.c_str(), p50, p90, p99, max, b.value("warp_start_spread_us", -1.0));
    EXPECT_GT(p50, 0.0) << name;
    EXPECT_LE(p50, p90) << name;
    EXPECT_LE(p90, p99) << name;
    EXPECT_LE(p99, max) << name;
    const double slowest = b.value("warp_cycles_slowest", 0.0);
    // The mean of the 5 launches' slowest warps: at most the slowest of all, at least a fifth of
    // it.
    EXPECT_LE(slowest, max) << name;
    EXPECT_GE(slowest * 5, max) << name;
    EXPECT_GE(b.value("warp_start_spread_us", -1.0), 0.0) << name;
  }
}
