// tune and validate refuse bad input before touching a GPU: a missing, broken or future-version
// file, or a profile lacking what a decision needs, is a one-line error with no output file.
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using gpuprobe::test::expect_one_line_error;
using gpuprobe::test::run_gpuprobe;
using gpuprobe::test::temp_path;
using gpuprobe::test::write_temp;
using nlohmann::json;

TEST(CliTune, BadProfilesAreOneLineErrors) {
  const auto out = temp_path("tuning_never.json");
  expect_one_line_error(run_gpuprobe("tune --profile /nonexistent/profile.json --out " + out), out,
                        "profile.json");
  expect_one_line_error(run_gpuprobe("tune --profile " +
                                     write_temp("p_broken.json", "{\"schema\": ") + " --out " +
                                     out),
                        out, "p_broken.json");
  expect_one_line_error(
      run_gpuprobe("tune --profile " +
                   write_temp("p_future.json", json{{"schema", "gpuprobe.profile/9"}}.dump()) +
                   " --out " + out),
      out, "schema version 9");
  expect_one_line_error(
      run_gpuprobe("tune --profile " +
                   write_temp("p_other.json", json{{"schema", "gpuprobe.tuning/1"}}.dump()) +
                   " --out " + out),
      out, "gpuprobe.profile");
  expect_one_line_error(
      run_gpuprobe(
          "tune --profile " +
          write_temp("p_notlb.json",
                     json{{"schema", "gpuprobe.profile/1"}, {"device", json::object()}}.dump()) +
          " --out " + out),
      out, "no \"tlb\" block");
  // A candidate with groups but no reach: the region decision cannot be made.
  const json no_reach = {{"schema", "gpuprobe.profile/1"},
                         {"device", json::object()},
                         {"tlb",
                          {{"candidates",
                            {{{"coverage_bytes", 2097152},
                              {"sharing", {{"scope", "groups"}, {"groups", {{0, 1}}}}}}}}}}};
  expect_one_line_error(run_gpuprobe("tune --profile " +
                                     write_temp("p_noreach.json", no_reach.dump()) + " --out " +
                                     out),
                        out, "reach_bytes");
  expect_one_line_error(
      run_gpuprobe("tune --profile " +
                   write_temp("p_ok.json", json{{"schema", "gpuprobe.profile/1"}}.dump()) +
                   " --out /nonexistent-dir/t.json"),
      "/nonexistent-dir/t.json", "does not exist");
}

TEST(CliValidate, BadTuningFilesAreOneLineErrors) {
  const auto out = temp_path("validation_never.json");
  expect_one_line_error(run_gpuprobe("validate --tuning /nonexistent/tuning.json --out " + out),
                        out, "tuning.json");
  expect_one_line_error(
      run_gpuprobe("validate --tuning " + write_temp("t_broken.json", "[1, 2") + " --out " + out),
      out, "t_broken.json");
  const std::string future = write_temp(
      "t_future.json", json{{"schema", "gpuprobe.tuning/3"}, {"allocator", json::object()}}.dump());
  expect_one_line_error(run_gpuprobe("validate --tuning " + future + " --out " + out), out,
                        "schema version 3");
  const std::string no_block =
      write_temp("t_noblock.json", json{{"schema", "gpuprobe.tuning/1"}}.dump());
  expect_one_line_error(run_gpuprobe("validate --tuning " + no_block + " --out " + out), out,
                        "allocator");
  expect_one_line_error(run_gpuprobe("validate --tuning " + no_block + " --reps 5 --out " + out),
                        out, "at least 10");
  expect_one_line_error(
      run_gpuprobe("validate --tuning " + no_block + " --pool-gib 2 --out " + out), out,
      "at least 8");
}
