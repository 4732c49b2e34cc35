#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

using namespace gpuprobe;

TEST(JsonIo, AtomicWriteLeavesNoTemporary) {
  const auto path = test::temp_path("a.json");
  write_json_atomic(path, {{"schema", "gpuprobe.result/1"}, {"x", 1}});
  EXPECT_EQ(read_json_file(path)["x"], 1);
  for (const auto &e :
       std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

TEST(JsonIo, WriteIntoMissingFolderFails) {
  EXPECT_THROW(write_json_atomic("/nonexistent-dir/x.json", json::object()), error);
}

TEST(JsonIo, SchemaChecks) {
  EXPECT_NO_THROW(require_schema({{"schema", "gpuprobe.profile/1"}}, "gpuprobe.profile", 1, "p"));
  EXPECT_THROW(require_schema({{"schema", "gpuprobe.profile/2"}}, "gpuprobe.profile", 1, "p"),
               error);
  EXPECT_THROW(require_schema({{"schema", "other/1"}}, "gpuprobe.profile", 1, "p"), error);
  EXPECT_THROW(require_schema({{"x", 1}}, "gpuprobe.profile", 1, "p"), error);
  EXPECT_THROW(require_schema({{"schema", "gpuprobe.profile/x"}}, "gpuprobe.profile", 1, "p"),
               error);
}

TEST(JsonIo, MetadataRecordsCommitArgvSeed) {
  const char *argv[] = {"gpuprobe", "tlb"};
  const auto m = run_metadata(2, argv, 42);
  EXPECT_EQ(m["seed"], 42);
  EXPECT_EQ(m["argv"][1], "tlb");
  EXPECT_FALSE(m["git_commit"].get<std::string>().empty());
  EXPECT_EQ(m["created_utc"].get<std::string>().size(), 20u);
}

// The driver's release as nvidia-smi shows it, from /proc/driver/nvidia/version (both layouts).
TEST(DeviceInfo, DriverReleaseFromProcText) {
  EXPECT_EQ(gpuprobe::parse_driver_release("NVRM version: NVIDIA UNIX Open Kernel Module for "
                                           "x86_64  580.159.04  Release Build\nGCC version: 12\n"),
            "580.159.04");
  EXPECT_EQ(gpuprobe::parse_driver_release(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19\n"),
            "535.104.05");
  EXPECT_EQ(gpuprobe::parse_driver_release("no driver here"), "");
  EXPECT_EQ(
      gpuprobe::describe_driver({{"driver_version", "13.0"}, {"driver_release", "580.159.04"}}),
      "driver 580.159.04 (CUDA 13.0)");
  EXPECT_EQ(gpuprobe::describe_driver({{"driver_version", "13.0"}}), "CUDA driver API 13.0");
}

// A command reads each file once (read_once_scope): on seeded sequences of reads and rewrites of a
// few files (gpuprobe's atomic rename, and another program's in place), every read returns the
// file's current content, and the disk is read once per version of a file read, never more.
TEST(JsonIo, AScopeReadsEachFileOnceAndEachNewVersionAgain) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "gpuprobe_read_once_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::mt19937 rng(79);
  for (int round = 0; round < 40; ++round) {
    const int files = 1 + int(rng() % 4);
    std::vector<gpuprobe::json> now(files);
    std::vector<bool> read_since_write(files, false);
    std::vector<std::size_t> pad(files, 0);
    const auto path = [&](int k) { return (dir / ("f" + std::to_string(k) + ".json")).string(); };
    for (int k = 0; k < files; ++k)
      gpuprobe::write_json_atomic(path(k), now[k] = {{"v", k}});
    const gpuprobe::read_once_scope scope;
    std::size_t expected = 0;
    const std::size_t before = gpuprobe::reads_from_disk();
    for (int op = 0; op < 60; ++op) {
      const int k = int(rng() % files);
      switch (rng() % 5) {
      case 0: // rewritten as gpuprobe writes: a temporary renamed in, read again
        gpuprobe::write_json_atomic(path(k), now[k] = {{"v", int(rng() % 1000)}, {"op", op}});
        read_since_write[k] = false;
        pad[k] = 0;
        break;
      case 1: // rewritten in place by another program, longer than any version since the last
              // rename (a change within one clock tick shows in the size)
        now[k]["pad"] = std::string(++pad[k], 'x');
        std::ofstream(path(k), std::ios::trunc) << now[k].dump();
        read_since_write[k] = false;
        break;
      case 2:
        EXPECT_EQ(gpuprobe::json::parse(gpuprobe::read_text_file(path(k))), now[k])
            << "round " << round;
        expected += !read_since_write[k];
        read_since_write[k] = true;
        break;
      default:
        EXPECT_EQ(gpuprobe::read_json_file(path(k)), now[k]) << "round " << round;
        expected += !read_since_write[k];
        read_since_write[k] = true;
      }
    }
    EXPECT_EQ(gpuprobe::reads_from_disk() - before, expected) << "round " << round;
  }
  // Outside a scope every read goes to the disk.
  const std::string p = (dir / "f0.json").string();
  const std::size_t before = gpuprobe::reads_from_disk();
  gpuprobe::read_json_file(p);
  gpuprobe::read_json_file(p);
  EXPECT_EQ(gpuprobe::reads_from_disk() - before, 2u);
  fs::remove_all(dir);
}
