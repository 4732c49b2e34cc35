// Input parsing: the cuda-gpu-tlb CSV format, gpuprobe results, and clear errors on bad input.
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "probes/tlb/data.hpp"
#include "probes/tlb/driver.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <fstream>

using namespace gpuprobe::probes;

namespace {
std::string error_of(const std::string &text) {
  tlb_dataset d;
  try {
    parse_cuda_gpu_tlb_csv(text, "x.csv", d);
  } catch (const gpuprobe::error &e) {
    return e.what();
  }
  return "";
}
} // namespace

TEST(TlbCsv, ParsesHeaderStridesAndMissingCells) {
  tlb_dataset d;
  parse_cuda_gpu_tlb_csv("#Tesla K80: cuda 3.7, reduction mode: "
                         "avg\n#,64,128,\n1,241,242,\n1.5,241,,\n2,245,250,\n2.5,246,,\n",
                         "k.csv", d);
  EXPECT_EQ(d.device_name, "Tesla K80");
  ASSERT_EQ(d.curves.size(), 1u); // the 128 KB column has only 2 points: dropped
  EXPECT_EQ(d.curves[0].stride_bytes, 64 * 1024.0);
  ASSERT_EQ(d.curves[0].footprint_bytes.size(), 4u);
  EXPECT_EQ(d.curves[0].footprint_bytes[1], 1.5 * 1024 * 1024);
  EXPECT_EQ(d.curves[0].cycles[2], 245);
}

TEST(TlbCsv, NonNumericCellNamesFileAndLine) {
  const auto e = error_of("#G: x\n#,64,\n1,241,\n2,abc,\n");
  EXPECT_NE(e.find("x.csv:4"), std::string::npos) << e;
  EXPECT_NE(e.find("abc"), std::string::npos) << e;
}

TEST(TlbCsv, MalformedInputsAreErrors) {
  EXPECT_NE(error_of("1,2,3\n"), "");                   // no header
  EXPECT_NE(error_of("#G: x\n#,64,\n"), "");            // no rows
  EXPECT_NE(error_of("#G: x\n#,sixty,\n1,2,\n"), "");   // bad stride
  EXPECT_NE(error_of("#G: x\n#,64,\n-1,241,\n"), "");   // negative footprint
  EXPECT_NE(error_of("#G: x\n#,64,\n1,241,7,9\n"), ""); // too many cells
}

TEST(TlbInputs, MissingFileIsAnError) {
  EXPECT_THROW(load_tlb_inputs({"/nonexistent/file.csv"}), gpuprobe::error);
  EXPECT_THROW(load_tlb_inputs(std::vector<std::string>{}), gpuprobe::error);
}

TEST(TlbInputs, GpuprobeResultRoundTrip) {
  gpuprobe::probes::tlb_result r; // written as the probe writes it, read by the analysis
  r.device = {{"name", "Sim GPU"}, {"l2_bytes", 50000000}};
  r.alloc = "vmm";
  for (std::uint64_t h = 1; h <= 10; ++h)
    r.points.push_back({2097152, h * 2097152, h, h > 5 ? 300.0 : 270.0, 0, 0, 0, 1, 0, false});
  const nlohmann::json doc = gpuprobe::probes::to_json(r);
  const auto path = gpuprobe::test::temp_path("r.json");
  gpuprobe::write_json_atomic(path, doc);
  const auto d = load_tlb_inputs({path});
  EXPECT_EQ(d.device_name, "Sim GPU");
  EXPECT_EQ(d.alloc, "vmm");
  EXPECT_EQ(d.l2_bytes, 50000000);
  ASSERT_EQ(d.curves.size(), 1u);
  EXPECT_EQ(d.curves[0].cycles.size(), 10u);
}

TEST(TlbInputs, FutureSchemaAndWrongProbeAreErrors) {
  const auto path = gpuprobe::test::temp_path("f.json");
  gpuprobe::write_json_atomic(path, {{"schema", "gpuprobe.result/9"}, {"probe", "tlb"}});
  EXPECT_THROW(load_tlb_inputs({path}), gpuprobe::error);
  gpuprobe::write_json_atomic(path, {{"schema", "gpuprobe.result/1"}, {"probe", "atomics"}});
  EXPECT_THROW(load_tlb_inputs({path}), gpuprobe::error);
  gpuprobe::write_json_atomic(path,
                              {{"schema", "gpuprobe.result/1"}, {"probe", "tlb"}, {"tlb", 3}});
  EXPECT_THROW(load_tlb_inputs({path}), gpuprobe::error);
  std::ofstream(path) << "{ broken";
  EXPECT_THROW(load_tlb_inputs({path}), gpuprobe::error);
}

// A document the caller parsed already (the report's scan) is read as given, not from its file:
// the committed runs' tlb.json, each given under a path that does not exist, give the same curves
// as read from the file.
TEST(TlbInputs, AGivenDocumentIsReadAsGivenNotFromItsFile) {
  for (const char *unit : {"nvidia-h100-80gb-hbm3-bba9cd54", "nvidia-h200-bc72dbee"}) {
    const std::string path = gpuprobe::test::committed_run(unit) + "/raw/tlb.json";
    const nlohmann::json doc = gpuprobe::read_json_file(path);
    const auto from_file = load_tlb_inputs(std::vector<std::string>{path});
    const auto given = load_tlb_inputs(std::vector<tlb_input>{{path + ".absent", &doc}});
    ASSERT_EQ(given.curves.size(), from_file.curves.size()) << unit;
    for (std::size_t k = 0; k < given.curves.size(); ++k) {
      EXPECT_EQ(given.curves[k].stride_bytes, from_file.curves[k].stride_bytes) << unit;
      EXPECT_EQ(given.curves[k].footprint_bytes, from_file.curves[k].footprint_bytes) << unit;
      EXPECT_EQ(given.curves[k].cycles, from_file.curves[k].cycles) << unit;
    }
  }
}
