// The source tree's floors (docs/layout.md), one per folder: every #include goes to the same floor
// or a lower one, and no file includes itself through others. A probe's folder is one floor: its
// cli.cpp, plan.cpp and draw.cpp fill the probe kit's plain data (probes/kit.hpp), which cli/,
// pipeline/ and report/ above interpret.
#include "common/results_folder.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// The library's folders and their floors, from the bottom (docs/layout.md).
const std::vector<std::pair<std::string, int>> &floors() {
  static const std::vector<std::pair<std::string, int>> all = {
      {"common/", 0},     // helpers
      {"allocators/", 0}, // the header-only allocators
      {"model/", 1},      // the files' types, their readers and writers
      {"analysis/", 2}, // the tools the probes' analyses use: fits, statistics, input text, models
      {"probes/", 3},   // the probes, each declaring its command, stages and report part (kit.hpp)
      {"findings/", 4}, // what reads many probes' results: the profile's assembly, compare, fleet
      {"tune/", 4},     // profile -> tuning
      {"report/", 5},     {"pipeline/", 6}, {"cli/", 7}};
  return all;
}

// The floor of a source file (its path from the source root), by its folder alone; -1 when it is
// none of the library's (tests, bench, scripts).
int floor_of(const std::string &p) {
  for (const auto &[prefix, floor] : floors())
    if (p.rfind(prefix, 0) == 0)
      return floor;
  return -1;
}

std::vector<std::string> includes_of(const fs::path &file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  static const std::regex inc(R"re(#include "([^"]+)")re");
  std::vector<std::string> out;
  for (std::sregex_iterator it(s.begin(), s.end(), inc), end; it != end; ++it)
    out.push_back((*it)[1]);
  return out;
}

// f(path, path from the source root) for every source file of the library's folders.
void for_each_source(const fs::path &root,
                     const std::function<void(const fs::path &, const std::string &)> &f) {
  for (const auto &[dir, floor] : floors())
    for (const auto &e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".cuh"))
        f(e.path(), fs::relative(e.path(), root).generic_string());
    }
}

std::map<std::string, std::vector<std::string>> include_graph(const fs::path &root) {
  std::map<std::string, std::vector<std::string>> g;
  for_each_source(root, [&](const fs::path &path, const std::string &rel) {
    for (const auto &i : includes_of(path))
      if (fs::exists(root / i))
        g[rel].push_back(i);
      else if (!fs::exists(path.parent_path() / i)) // a sibling include (the allocators')
        ADD_FAILURE() << rel << " includes \"" << i << "\", which is not in the tree";
  });
  return g;
}

// The namespaces a file of the library opens (docs/layout.md, "Namespaces follow the folders"): its
// folder's own; in a probe folder, gpuprobe::probes and gpuprobe::probes::<its name> (and below
// it). The catalog's header forward-declares the other floors' types and opens theirs.
bool namespace_allowed(const std::string &rel, const std::string &ns) {
  const auto in = [&](const char *prefix) { return rel.rfind(prefix, 0) == 0; };
  const auto under = [&](const std::string &root) {
    return ns == root || ns.rfind(root + "::", 0) == 0;
  };
  if (rel == "probes/catalog.hpp")
    return true;
  if (in("probes/")) {
    const auto slash = rel.find('/', 7);
    if (slash == std::string::npos) // the catalog, in gpuprobe::probes; the kit, probes::kit
      return ns == "gpuprobe::probes" || under("gpuprobe::probes::kit");
    return ns == "gpuprobe::probes" || under("gpuprobe::probes::" + rel.substr(7, slash - 7));
  }
  if (in("common/"))
    return ns == "gpuprobe" || ns == "gpuprobe::defaults" || ns == "gpuprobe::detail" ||
           ns == "gpuprobe::schema";
  if (in("allocators/"))
    return under("gpuprobe::alloc") || under("gpuprobe::workloads");
  for (const char *folder : {"model", "analysis", "findings", "tune", "report", "pipeline", "cli"})
    if (in((std::string(folder) + "/").c_str()))
      return under(std::string("gpuprobe::") + folder);
  return false;
}

} // namespace

namespace {

// The includes of `g` that go up a floor, each "FILE (floor F) includes I (floor G)".
std::vector<std::string> upward_includes(const std::map<std::string, std::vector<std::string>> &g) {
  std::vector<std::string> up;
  for (const auto &[file, incs] : g)
    for (const auto &i : incs)
      if (floor_of(i) > floor_of(file))
        up.push_back(file + " (floor " + std::to_string(floor_of(file)) + ") includes " + i +
                     " (floor " + std::to_string(floor_of(i)) + ")");
  return up;
}

} // namespace

TEST(Layout, EveryIncludeGoesToTheSameFloorOrALowerOne) {
  const auto g = include_graph(GPUPROBE_SOURCE_DIR);
  ASSERT_GT(g.size(), 100u) << "the tree was not read";
  std::size_t edges = 0;
  for (const auto &[file, incs] : g) {
    ASSERT_GE(floor_of(file), 0) << file << " is on no floor: name it in floor_of";
    edges += incs.size();
  }
  for (const auto &u : upward_includes(g))
    ADD_FAILURE() << u;
  EXPECT_GT(edges, 300u);
}

// The rule on seeded, generated trees: files in random folders with random includes; the check
// names exactly the includes whose folder's floor (as the table gives it) is above the includer's.
TEST(Layout, TheUpwardIncludeCheckFindsEveryUpwardEdgeOfGeneratedTrees) {
  std::mt19937 rng(79);
  for (int tree = 0; tree < 200; ++tree) {
    // Each file in a random folder, put in a subfolder at times; its floor taken from the table
    // here, not from floor_of, so the check's reading of paths is tested too.
    std::vector<std::pair<std::string, int>> files;
    const int n = 2 + int(rng() % 30);
    for (int k = 0; k < n; ++k) {
      const auto &[folder, floor] = floors()[rng() % floors().size()];
      files.emplace_back(folder + (rng() % 2 ? "sub/" : "") + "f" + std::to_string(k) + ".hpp",
                         floor);
    }
    std::map<std::string, std::vector<std::string>> g;
    std::size_t expected = 0;
    for (const auto &[f, floor] : files)
      for (int e = int(rng() % 5); e > 0; --e) {
        const auto &[i, its_floor] = files[rng() % files.size()];
        g[f].push_back(i);
        expected += its_floor > floor;
      }
    EXPECT_EQ(upward_includes(g).size(), expected) << "tree " << tree;
  }
  // And by hand: a probe's file that includes cli/ is named; cli/ including a probe's is not.
  EXPECT_EQ(upward_includes({{"probes/tlb/cli.cpp", {"cli/common.hpp"}}}).size(), 1u);
  EXPECT_TRUE(upward_includes({{"cli/registry.cpp", {"probes/catalog.hpp"}}}).empty());
}

TEST(Layout, NoIncludeCycle) {
  const auto g = include_graph(GPUPROBE_SOURCE_DIR);
  std::map<std::string, int> state; // 1 on the path, 2 done
  std::vector<std::string> path;
  std::function<void(const std::string &)> visit = [&](const std::string &f) {
    state[f] = 1;
    path.push_back(f);
    if (const auto it = g.find(f); it != g.end())
      for (const auto &i : it->second) {
        if (state[i] == 1) {
          std::string cycle;
          for (auto p = std::find(path.begin(), path.end(), i); p != path.end(); ++p)
            cycle += *p + " -> ";
          ADD_FAILURE() << "include cycle: " << cycle << i;
        } else if (state[i] == 0)
          visit(i);
      }
    path.pop_back();
    state[f] = 2;
  };
  for (const auto &[file, incs] : g)
    if (state[file] == 0)
      visit(file);
}

// A new top folder of sources gets a floor: every folder of the tree holding C++ or CUDA files is
// a floor of the library's or one of the folders outside it.
TEST(Layout, EveryFolderOfSourcesHasAFloor) {
  const fs::path root = GPUPROBE_SOURCE_DIR;
  const std::set<std::string> outside = {"tests", "bench", "dev", "scripts", "cmake", "reports"};
  int folders = 0;
  for (const auto &d : fs::directory_iterator(root)) {
    const std::string name = d.path().filename().string();
    if (!d.is_directory() || name[0] == '.' || name.rfind("build", 0) == 0 || outside.count(name))
      continue;
    bool sources = false;
    for (const auto &e : fs::recursive_directory_iterator(d.path())) {
      const std::string ext = e.path().extension().string();
      sources = sources || ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".cuh";
    }
    if (!sources)
      continue;
    ++folders;
    EXPECT_GE(floor_of(name + "/x.hpp"), 0)
        << name << "/ holds sources but no floor: name it in floor_of";
  }
  EXPECT_GE(folders, 10);
}

TEST(Layout, FloorsAreReadFromPaths) { // the rule above, on one file of each kind
  EXPECT_EQ(floor_of("common/units.hpp"), 0);
  EXPECT_EQ(floor_of("model/profile.hpp"), 1);
  EXPECT_EQ(floor_of("analysis/fit.hpp"), 2);
  EXPECT_EQ(floor_of("probes/clock/driver.hpp"), 3);
  EXPECT_EQ(floor_of("probes/clock/cli.cpp"), 3); // a probe's files are one floor, whatever they do
  EXPECT_EQ(floor_of("probes/tlb/plan.cpp"), 3);
  EXPECT_EQ(floor_of("probes/catalog.cpp"), 3);
  EXPECT_EQ(floor_of("findings/characterize.cpp"), 4);
  EXPECT_EQ(floor_of("report/parts.hpp"), 5);
  EXPECT_EQ(floor_of("pipeline/stage_plan.hpp"), 6);
  EXPECT_EQ(floor_of("cli/common.hpp"), 7);
  EXPECT_EQ(floor_of("tests/host/layout_test.cpp"), -1);
}

TEST(Layout, NamespacesFollowTheFolders) {
  const fs::path root = GPUPROBE_SOURCE_DIR;
  static const std::regex opens(R"re(^namespace (gpuprobe[A-Za-z_:]*) \{)re");
  int files = 0;
  for_each_source(root, [&](const fs::path &path, const std::string &rel) {
    std::ifstream in(path);
    std::string line;
    ++files;
    while (std::getline(in, line)) {
      std::smatch m;
      if (std::regex_search(line, m, opens)) {
        EXPECT_TRUE(namespace_allowed(rel, m[1])) << rel << " opens " << m[1];
      }
    }
  });
  EXPECT_GT(files, 100);
  // The rule itself, on one file of each kind.
  EXPECT_TRUE(namespace_allowed("probes/tlb/levels.cpp", "gpuprobe::probes"));
  EXPECT_TRUE(namespace_allowed("probes/tlb/cli.cpp", "gpuprobe::probes::tlb"));
  EXPECT_TRUE(namespace_allowed("probes/tlb/forward.cpp", "gpuprobe::probes::tlb"));
  EXPECT_FALSE(namespace_allowed("probes/tlb/levels.cpp", "gpuprobe::analysis"));
  EXPECT_FALSE(namespace_allowed("probes/tlb/cli.cpp", "gpuprobe::probes::sharing"));
  EXPECT_FALSE(namespace_allowed("probes/tlb/cli.cpp", "gpuprobe::catalog::tlb"));
  EXPECT_FALSE(namespace_allowed("findings/fleet.cpp", "gpuprobe::probes"));
  EXPECT_TRUE(namespace_allowed("probes/kit.hpp", "gpuprobe::probes::kit"));
  EXPECT_FALSE(namespace_allowed("probes/kit.hpp", "gpuprobe::cli"));
  EXPECT_TRUE(namespace_allowed("report/parts.hpp", "gpuprobe::report::detail"));
  EXPECT_FALSE(namespace_allowed("model/profile.hpp", "gpuprobe"));
}

// No raw file name appears outside the probes' folders and the results-folder
// type. Every other file names a stage's file through results_folder::raw_file, so renaming one is
// one line. The names are the type's own constants; code (not a comment) outside probes/ that
// spells one in a string literal is named here.
TEST(Layout, RawFileNamesOnlyInTheResultsFolderType) {
  using raw = gpuprobe::results_folder::raw_file;
  const std::vector<std::string> names = {
      raw::tlb,          raw::tlb_real,     raw::tlb_profile,  raw::tlb_real_profile,
      raw::tlb_sampling, raw::tlb_conflict, raw::tlb_coverage, raw::tlb_per_sm,
      raw::atomics,      raw::bench_getpage};
  const fs::path root = GPUPROBE_SOURCE_DIR;
  static const std::regex literal(R"re("([^"\\]|\\.)*")re");
  int files = 0;
  for_each_source(root, [&](const fs::path &path, const std::string &rel) {
    if (rel.rfind("common/results_folder.", 0) == 0 || rel.rfind("probes/", 0) == 0)
      return;
    ++files;
    std::ifstream in(path);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (line.find_first_not_of(' ') == std::string::npos ||
          line.compare(line.find_first_not_of(' '), 2, "//") != 0)
        for (std::sregex_iterator it(line.begin(), line.end(), literal), end; it != end; ++it)
          for (const auto &name : names) {
            const std::string s = it->str();
            // the name itself, or ending a path ("raw/tlb.json")
            const bool spelt = s == "\"" + name + "\"" ||
                               (s.size() > name.size() + 1 &&
                                s.compare(s.size() - name.size() - 1, name.size(), name) == 0 &&
                                s[s.size() - name.size() - 2] == '/');
            EXPECT_FALSE(spelt) << rel << ":" << n << " spells " << s;
          }
  });
  EXPECT_GT(files, 100);
}

namespace {

// Where a text names a GPU unit (GPU- and 8 hex digits, not inside a file name such as
// h100-GPU-4b0f0e28-run.log) or a development round (r65, stop 64): the first such, else "".
std::string unit_or_round(const std::string &text) {
  static const std::regex uuid("GPU-[0-9a-f]{8}"), round("\\b(r[0-9]{2,3}|[Ss]top [0-9]+)\\b");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), uuid); it != std::sregex_iterator();
       ++it) {
    const auto at = std::size_t(it->position());
    if (at == 0 || (text[at - 1] != '-' && text[at - 1] != '/' && text[at - 1] != '_'))
      return it->str();
  }
  std::smatch m;
  return std::regex_search(text, m, round) ? m.str() : "";
}

} // namespace

// The rule on a seeded family of generated lines: words that come near an id (r, stop, stops,
// GPU, GPU-, hex, a number) and at most one unit id, round id or file name holding a unit id; the
// rule names exactly the lines with an id.
TEST(Docs, TheUnitAndRoundRuleOnGeneratedLines) {
  std::mt19937 rng(78);
  const std::vector<std::string> words = {"the",    "L2",   "sweep",    "r",    "stop",
                                          "stops",  "GPU",  "GPU-",     "x",    "MiB",
                                          "rounds", "r2d2", "4b0f0e28", "sm_90"};
  const char hex[] = "0123456789abcdef";
  int named = 0;
  for (int i = 0; i < 2000; ++i) {
    std::vector<std::string> line;
    for (int w = 0; w < 8; ++w)
      line.push_back(words[rng() % words.size()]);
    std::string id(8, '0');
    for (char &c : id)
      c = hex[rng() % 16];
    const int kind =
        int(rng() % 5); // 0: none, 1: a unit, 2: one in a file name, 3: r<n>, 4: stop n
    const std::string put = kind == 1   ? "GPU-" + id
                            : kind == 2 ? "runs/h100-GPU-" + id + "-run.log"
                            : kind == 3 ? "r" + std::to_string(10 + rng() % 990)
                            : kind == 4 ? "stop " + std::to_string(1 + rng() % 99)
                                        : "";
    if (!put.empty())
      line.insert(line.begin() + std::ptrdiff_t(rng() % 9), put);
    std::string text;
    for (const auto &w : line)
      text += w + " ";
    const bool has = kind == 1 || kind == 3 || kind == 4;
    EXPECT_EQ(!unit_or_round(text).empty(), has) << text;
    named += has;
  }
  EXPECT_GT(named, 1000);
}

// docs/ and the README are for users: no GPU unit and no development round, except the generated
// results page and the evidence index (docs/evidence.md), whose job is to name them.
TEST(Docs, NameNoUnitAndNoRound) {
  const fs::path root = GPUPROBE_SOURCE_DIR;
  std::vector<fs::path> pages = {root / "README.md"};
  for (const auto &e : fs::directory_iterator(root / "docs"))
    if (e.path().extension() == ".md" && e.path().filename() != "results.md" &&
        e.path().filename() != "evidence.md")
      pages.push_back(e.path());
  ASSERT_GT(pages.size(), 10u);
  for (const auto &p : pages) {
    std::ifstream in(p);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      EXPECT_EQ(unit_or_round(line), "") << p.filename().string() << ":" << n << ": " << line;
  }
}
