// The probe catalog (probes/catalog.hpp): each probe named once, run by a subcommand that exists,
// and every committed raw result is of a probe the catalog knows (so the report draws it).
#include "common/json_io.hpp"
#include "common/schema.hpp"
#include "probes/catalog.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

namespace fs = std::filesystem;
using namespace gpuprobe;

TEST(ProbeCatalog, EachProbeOnceAndItsCommandRuns) {
  std::set<std::string> ids;
  for (const auto &p : probes::probe_catalog()) {
    EXPECT_TRUE(ids.insert(p.id).second) << p.id << " twice";
    EXPECT_EQ(probes::find_probe(p.id), &p);
    const auto r = test::run_gpuprobe(std::string(p.command) + " --help");
    EXPECT_EQ(r.exit_code, 0) << "gpuprobe " << p.command << " --help: " << r.err;
  }
  EXPECT_EQ(probes::find_probe("no-such-probe"), nullptr);
}

TEST(ProbeCatalog, EveryCommittedRawResultIsOfAKnownProbe) {
  std::size_t results = 0;
  for (const auto &e : gpuprobe::test::committed_result_files()) {
    if (!e.is_regular_file() || e.path().extension() != ".json" ||
        e.path().parent_path().filename() != "raw")
      continue;
    const auto doc = read_json_file(e.path().string());
    if (doc.value("schema", "") != gpuprobe::schema::result.id())
      continue;
    ++results;
    EXPECT_NE(probes::find_probe(doc.value("probe", "")), nullptr) << e.path();
  }
  EXPECT_GE(results,
            16u); // the two committed runs: tlb, tlb_real, sampling, conflict, sharing, atomics
}
