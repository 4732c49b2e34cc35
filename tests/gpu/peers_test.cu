// The peer harness under bad input (issue 27): an allocator whose heap cannot be made (1 TiB asked
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
