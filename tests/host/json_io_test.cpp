#include "common/device_info.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>

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
