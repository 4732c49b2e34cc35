// The scripts a device round ends with (dev/README.md), run on committed files: each prints
// what it says it prints. (rw_malloc_goals.sh printed nothing for several stops after the report's
// heading changed, and nothing failed.)
#include "pipeline/bench_stage.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <filesystem>
#include <iterator>
#include <unistd.h>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

using gpuprobe::test::run_binary;
using gpuprobe::test::temp_path;
using nlohmann::json;

const std::string k_src = GPUPROBE_SOURCE_DIR;

// The lines of `text` that start with `prefix`, with Markdown's backslash escapes dropped.
std::vector<std::string> rows_starting(const std::string &text, const std::string &prefix) {
  std::vector<std::string> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::string plain;
    for (char ch : line)
      if (ch != '\\')
        plain += ch;
    if (plain.rfind(prefix, 0) == 0)
      rows.push_back(plain);
  }
  return rows;
}

// A goal-table row without its last cell (the verdict) where it is a 2^14-thread row: that table
// was committed when every thread count's goal was 1x the best peer; 2^14's is 1.25x now.
std::string without_small_launch_verdict(const std::string &row) {
  if (row.find("| 16384 |") == std::string::npos)
    return row;
  const std::size_t end = row.rfind('|', row.size() - 2);
  return row.substr(0, end);
}

// rw_malloc_goals.sh on the committed rw_malloc run of issue 35 and the peers it was judged
// against: the 54 cells' rows, each as the goal table committed with that run reads (the
// 2^14-thread rows but their verdicts, judged at 1.25x since).
TEST(Scripts, RwMallocGoalsPrintsTheCommittedGoalTable) {
  const std::string run = k_src + "/tests/fixtures/rw-malloc-issue35/h100-15a70598";
  const std::string out = temp_path("rw_malloc_goals");
  const auto r =
      run_binary("PLOT_SCRIPT=" + gpuprobe::test::stub_plot_script() + " bash",
                 k_src + "/dev/rw_malloc_goals.sh " GPUPROBE_BINARY " " + k_src +
                             "/tests/fixtures/peers/nvidia-h100-80gb-hbm3-4748ab49 " + run +
                             "/runs/bench-peers-rw_malloc.json " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream f(run + "/goals-after.md");
  const std::string committed((std::istreambuf_iterator<char>(f)), {});
  for (const char *state : {"| empty heap |", "| after a churn"}) {
    auto now = rows_starting(r.out, state), then = rows_starting(committed, state);
    for (auto *rows : {&now, &then})
      for (auto &row : *rows)
        row = without_small_launch_verdict(row);
    EXPECT_EQ(now, then) << state;
    EXPECT_GE(now.size(), 18u) << state << ": " << r.out.substr(0, 400);
  }
}

// bench_ab.py on the committed before/after runs of issue 35: every case once, its ratio the
// minimum real_time of B over A's, and the summary line counting them.
TEST(Scripts, BenchAbRatiosAreEachCasesBestTimes) {
  const std::string runs = k_src + "/tests/fixtures/rw-malloc-issue35/h100-3c330819/runs/";
  const std::string a = runs + "bench-peers-rw_malloc-before.json",
                    b = runs + "bench-peers-rw_malloc.json";
  const auto r = run_binary("python3", k_src + "/dev/bench_ab.py " + a + " " + a + " -- " + b);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto best = [](const std::string &path) {
    std::map<std::string, double> t;
    const json doc = json::parse(std::ifstream(path)); // held: the loop reads into it
    for (const auto &c : doc["benchmarks"]) {
      const std::string name = c["name"].get<std::string>();
      const std::string key = name.substr(0, name.find("/iterations"));
      const double v = c["real_time"].get<double>();
      t[key] = t.count(key) ? std::min(t[key], v) : v;
    }
    return t;
  };
  const auto ta = best(a), tb = best(b);
  int rows = 0;
  for (const auto &[name, t] : ta) {
    const auto at = r.out.find("| " + name + " |");
    ASSERT_NE(at, std::string::npos) << name;
    const std::string row = r.out.substr(at, r.out.find('\n', at) - at);
    const double ratio = std::stod(row.substr(row.rfind('|', row.size() - 2) + 1));
    EXPECT_NEAR(ratio, tb.at(name) / t, 0.0006) << row;
    ++rows;
  }
  EXPECT_EQ(rows, 54);
  EXPECT_NE(r.out.find("54 cases: B / A median"), std::string::npos) << r.out;
  const auto none = run_binary("python3", k_src + "/dev/bench_ab.py " + a);
  EXPECT_NE(none.exit_code, 0) << "no '--': the usage, and a failure";
}

// rw_malloc_goals49.py on generated goal tables (12 seeded sets of 1-3 tables, the report's row
// shape with random ratios about the bars, 1.25 at 2^14 and 1 above, some cells no peer served):
// each table's count and the count met in every table of a set are the rule's, worked out here.
TEST(Scripts, RwMallocGoals49CountsTheCellsUnderIssue49sBars) {
  std::mt19937 rng(49);
  const char *states[] = {"empty heap", "after a churn to 50 % occupancy"};
  const unsigned threads[] = {16384, 131072, 1048576};
  for (int set = 0; set < 12; ++set) {
    const int tables = 1 + int(rng() % 3);
    std::vector<std::map<std::string, bool>> met(tables);
    std::string arg, want;
    for (int k = 0; k < tables; ++k) {
      std::string text = "| state | threads | size | rw | peer | ratio | rw+f | peer+f | ratio | "
                         "bump | goals |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
      for (const char *state : states)
        for (unsigned t : threads)
          for (unsigned size : {16u, 256u, 4096u}) {
            const std::string key =
                std::string(state) + "/" + std::to_string(t) + "/" + std::to_string(size);
            const double bar = t == 16384 ? 1.25 : 1.0;
            const auto ratio = [&] { // about the bar, now and then on it
              const int r = int(rng() % 9);
              return r == 0 ? bar : bar * (0.6 + 0.1 * r);
            };
            const double m = ratio(), f = ratio();
            const bool served = rng() % 10 != 0;
            char row[256];
            std::snprintf(row, sizeof row,
                          "| %s | %u | %u B | 0.01 | %s | %s | 0.02 | x | %.3g | | x |\n", state, t,
                          size, served ? "0.01 gallatin" : "",
                          served ? std::to_string(m).c_str() : "", f);
            text += row;
            if (served)
              met[k][key] = m <= bar && f <= bar;
          }
      const std::string path =
          temp_path("goals49_" + std::to_string(set) + "_" + std::to_string(k) + ".md");
      std::ofstream(path) << text;
      arg += (k ? "," : "") + path;
      int n = 0;
      for (const auto &[key, ok] : met[k])
        n += ok;
      want += (k ? ", " : "") + std::to_string(n);
    }
    int every = 0;
    for (const auto &[key, ok] : met[0]) {
      bool all = true;
      for (const auto &m : met)
        all = all && m.count(key) && m.at(key);
      every += all;
    }
    const auto r = run_binary("python3", k_src + "/dev/rw_malloc_goals49.py " + arg);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("met in " + want + " of"), std::string::npos) << want << "\n" << r.out;
    EXPECT_NE(r.out.find("in every table: " + std::to_string(every) + "\n"), std::string::npos)
        << every << "\n"
        << r.out;
  }
  EXPECT_NE(run_binary("python3", k_src + "/dev/rw_malloc_goals49.py").exit_code, 0);
}

// Every step of dev/device_round.sh is in its usage (the comment at its top) and in
// dev/README.md's table: a step added to one and not the others fails here.
TEST(Scripts, EveryDeviceRoundStepIsListedWhereTheUsageAndTheReadmeSayIt) {
  std::ifstream script(k_src + "/dev/device_round.sh"), readme(k_src + "/dev/README.md");
  const std::string text((std::istreambuf_iterator<char>(script)), {});
  const std::string table((std::istreambuf_iterator<char>(readme)), {});
  static const std::regex step(R"re(\nstep_([a-z0-9_]+)\(\))re");
  int steps = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), step), end; it != end; ++it) {
    std::string name = (*it)[1];
    std::replace(name.begin(), name.end(), '_', '-');
    ++steps;
    EXPECT_NE(table.find("`" + name + "`"), std::string::npos)
        << name << " not in dev/README.md";
    const std::regex usage("\n#   ([a-z0-9 |-]*[ |])?" + name + "( |\n)");
    EXPECT_TRUE(std::regex_search(text, usage)) << name << " not in device_round.sh's usage";
  }
  EXPECT_GE(steps, 20);
}

// device_round.sh bench-ab times the grid `gpuprobe run`'s bench stage runs: its filter is
// pipeline::bench_filter(), written out in the script (a shell step cannot call it).
TEST(Scripts, BenchAbTimesTheRunsOwnGrid) {
  std::ifstream script(k_src + "/dev/device_round.sh");
  const std::string text((std::istreambuf_iterator<char>(script)), {});
  const auto at = text.find("\nstep_bench_ab()");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NE(text.find("filter='" + gpuprobe::pipeline::bench_filter() + "'", at), std::string::npos)
      << "bench-ab's filter is not " << gpuprobe::pipeline::bench_filter();
}

} // namespace

// node_timeline.py on generated nodes (12 seeded sets of 2-4 units, each a stamped `run --verbose`:
// some of its stages in order, each with its start and end lines, lines that mark a phase and lines
// that do not, then the exit): every marking line once, all in time order, nothing else; each
// unit's stages as the intervals it was given.
TEST(Scripts, NodeTimelineMergesTheUnitsOnOneClock) {
  const std::vector<std::string> all = {"bench", "characterize", "tune", "validate", "report"};
  const std::vector<std::string> marks = {"[scope]   vmm        pool of 133 GiB made in 3.5 s",
                                          "[tlb] 384 GiB of virtual range: mapped in 7.4 s",
                                          "[pools] the vmm pool of 133 GiB kept",
                                          "  decision times: regions 3.9 s, TLB scope 9.2 s"};
  const std::vector<std::string> noise = {"[scope]   vmm        133 GiB sampled, scope 64 GiB",
                                          "    L1 (16 x 16 MiB): one entry covers 16 MiB",
                                          "[12/24] hash_join/4M   vmm   1.0 -> 1.1 ms, 0.4 s"};
  std::mt19937 rng(48);
  for (int set = 0; set < 12; ++set) {
    const int units = 2 + int(rng() % 3);
    std::string args;
    std::size_t expect_marked = 0;
    std::vector<std::string> expect_spans;
    for (int u = 0; u < units; ++u) {
      std::ostringstream f, spans;
      long t = long(rng() % 300); // hundredths of a second
      const auto line = [&](const std::string &text) {
        char stamp[32];
        std::snprintf(stamp, sizeof stamp, "%7.2f ", double(t) / 100);
        f << stamp << text << "\n";
        t += long(rng() % 400);
      };
      spans << "gpu" << u << ": ";
      bool first = true;
      for (const auto &stage : all) {
        if (rng() % 4 == 0)
          continue;
        char pad[64];
        std::snprintf(pad, sizeof pad, "[run] %-12s", stage.c_str());
        const long start = t;
        line(pad);
        ++expect_marked;
        for (int k = int(rng() % 6); k > 0; --k) {
          const bool mark = rng() % 2 == 0;
          line(mark ? marks[rng() % marks.size()] : noise[rng() % noise.size()]);
          expect_marked += mark;
        }
        const long end = t;
        std::snprintf(pad, sizeof pad, "[run] %-12s %4ld s  gpuprobe %s: done", stage.c_str(),
                      (end - start) / 100, stage.c_str());
        line(pad);
        ++expect_marked;
        char span[96];
        std::snprintf(span, sizeof span, "%s%s %.1f-%.1f", first ? "" : ", ", stage.c_str(),
                      double(start) / 100, double(end) / 100);
        spans << span;
        first = false;
      }
      line("exit 0");
      ++expect_marked;
      const std::string path = gpuprobe::test::write_temp(
          "node_timeline_" + std::to_string(set) + "_" + std::to_string(u) + ".txt", f.str());
      args += " gpu" + std::to_string(u) + "=" + path;
      expect_spans.push_back(first ? spans.str() + "no [run] stage lines (--verbose?)"
                                   : spans.str());
    }
    const auto r = run_binary("python3", k_src + "/dev/node_timeline.py" + args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream out(r.out);
    std::string row;
    std::size_t marked = 0;
    double last = -1;
    while (std::getline(out, row) && !row.empty()) {
      const double at = std::stod(row);
      EXPECT_GE(at, last) << "set " << set << ": " << row;
      last = at;
      for (const auto &n : noise)
        EXPECT_EQ(row.find(n), std::string::npos) << "set " << set << ": a line of no phase";
      ++marked;
    }
    EXPECT_EQ(marked, expect_marked) << "set " << set;
    for (const auto &s : expect_spans) {
      ASSERT_TRUE(std::getline(out, row)) << "set " << set;
      EXPECT_EQ(row, s) << "set " << set;
    }
  }
  EXPECT_NE(run_binary("python3", k_src + "/dev/node_timeline.py").exit_code, 0)
      << "no unit: the usage, and a failure";
}

// driver_lock_table.py on generated rounds (10 seeded sets: a lone reference and a pair of
// processes, each a few reps of map/access/unmap phases at random times, with lines that are no
// phase): each phase's mean seconds, its ratio to the reference's, and the pair's overlap (the
// share of one's phase time during which the other ran), as computed here from the same phases.
TEST(Scripts, DriverLockTableGivesEachPhaseAndTheOverlap) {
  struct ph {
    std::string name;
    double begin, end, median;
  };
  const std::vector<std::string> names = {"map", "access", "unmap"};
  std::mt19937 rng(4848);
  const auto uni = [&](double a, double b) {
    return a + (b - a) * std::uniform_real_distribution<double>(0, 1)(rng);
  };
  const auto make = [&](double t, int reps) {
    std::vector<ph> out;
    for (int r = 0; r < reps; ++r)
      for (const auto &n : names) {
        const double len = uni(0.05, 3.0);
        out.push_back({n, t, t + len, uni(1, 90)});
        t += len + uni(0.0, 0.5);
      }
    return out;
  };
  const auto write = [&](const std::string &file, const std::vector<ph> &v) {
    std::ostringstream f;
    f << "dev 0: a line of no phase\n";
    for (std::size_t i = 0; i < v.size(); ++i) {
      char line[300];
      std::snprintf(line, sizeof line,
                    "dev 0 rep %zu %-7s calls %7d  %.3f..%.3f  %6.2f s  busy %6.2f s  per call us: "
                    "median %8.1f  p99 %8.1f  max %9.1f\n",
                    i / 3, v[i].name.c_str(), 100, v[i].begin, v[i].end, v[i].end - v[i].begin,
                    v[i].end - v[i].begin, v[i].median, v[i].median * 2, v[i].median * 3);
      f << line;
    }
    return gpuprobe::test::write_temp(file, f.str());
  };
  // Times are printed with 3 decimals (seconds with 2): compute from what the file says.
  const auto round_to = [](double x, double q) { return std::round(x / q) * q; };
  const auto mean_of = [&](const std::vector<ph> &v, const std::string &n) {
    double s = 0;
    int k = 0;
    for (const auto &p : v)
      if (p.name == n) {
        s += round_to(p.end - p.begin, 0.01);
        ++k;
      }
    return s / k;
  };
  const auto overlap = [&](const std::vector<ph> &a, const std::vector<ph> &b) {
    double total = 0, both = 0; // each file's phases follow one another: no union needed
    for (const auto &p : a) {
      const double s1 = round_to(p.begin, 0.001), e1 = round_to(p.end, 0.001);
      total += e1 - s1;
      for (const auto &q : b)
        both += std::max(0.0, std::min(e1, round_to(q.end, 0.001)) -
                                  std::max(s1, round_to(q.begin, 0.001)));
    }
    return both / total;
  };
  for (int set = 0; set < 10; ++set) {
    const int reps = 1 + int(rng() % 3);
    const double t0 = 1.7e9 + uni(0, 1e3);
    const auto ref = make(t0, reps), a = make(t0 + 60, reps),
               b = make(t0 + 60 + uni(-4, 4), 1 + int(rng() % 3));
    const std::string dir = "driver_lock_" + std::to_string(set) + "_";
    const auto r = run_binary("python3", k_src + "/dev/driver_lock_table.py " +
                                             write(dir + "lock_alone_gpu0.txt", ref) + " " +
                                             write(dir + "lock_both_a.txt", a) + " " +
                                             write(dir + "lock_both_b.txt", b));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, std::vector<std::string>> rows; // "case phase" -> its cells
    std::istringstream out(r.out);
    for (std::string line; std::getline(out, line);) {
      std::istringstream cells(line);
      std::vector<std::string> c;
      for (std::string x; cells >> x;)
        c.push_back(x);
      if (c.size() == 7 && c[0].rfind("_lock_") != std::string::npos)
        rows[c[0].substr(c[0].rfind("_lock_") + 1) + " " + c[1]] = c;
    }
    ASSERT_EQ(rows.size(), 9u) << "set " << set << "\n" << r.out;
    const double ov_a = overlap(a, b), ov_b = overlap(b, a);
    for (const auto &n : names) {
      for (const auto &[name, v] : {std::pair{"lock_both_a", a}, std::pair{"lock_both_b", b}}) {
        const auto &c = rows.at(std::string(name) + " " + n);
        EXPECT_NEAR(std::stod(c[3]), mean_of(v, n), 1e-3)
            << "set " << set << " " << name << " " << n;
        EXPECT_NEAR(std::stod(c[4]), mean_of(v, n) / mean_of(ref, n), 0.006)
            << "set " << set << " " << name << " " << n;
        EXPECT_NEAR(std::stod(c[6]), std::string(name) == "lock_both_a" ? ov_a : ov_b, 0.006)
            << "set " << set << " " << name << " " << n;
      }
      EXPECT_EQ(rows.at("lock_alone_gpu0 " + n)[6], "-") << "the reference has no partner";
      EXPECT_EQ(rows.at("lock_alone_gpu0 " + n)[4], "1.00");
    }
  }
  EXPECT_NE(run_binary("python3", k_src + "/dev/driver_lock_table.py").exit_code, 0)
      << "no file: the usage, and a failure";
}

// driver_pressure.py on generated runs (10 seeded sets: a stamped run of 2-5 stages, a lone probe
// and a probe beside the run, each timed phase with its own per-call median): per stage, the
// probe's samples whose midpoint falls in it, their median and largest ratio to the lone probe's
// median, as computed here; a stage with no sample reads "-". Every other set times `ctx` phases
// (--phase ctx); the other phase of each probe (map, reset) is written too and must be left out.
TEST(Scripts, DriverPressureGivesEachStagesLoad) {
  std::mt19937 rng(4849);
  const auto uni = [&](double a, double b) {
    return a + (b - a) * std::uniform_real_distribution<double>(0, 1)(rng);
  };
  const auto probe_line = [](const char *name, double b, double e, double med) {
    char line[300];
    std::snprintf(line, sizeof line,
                  "dev 1 rep 0 %-7s calls       4  %.3f..%.3f  %6.2f s  busy %6.2f s  per call "
                  "us: median %8.1f  p99 %8.1f  max %9.1f\n",
                  name, b, e, e - b, e - b, med, med, med);
    return std::string(line);
  };
  const std::vector<std::string> names = {"bench", "characterize", "tune", "validate", "report"};
  for (int set = 0; set < 10; ++set) {
    const bool ctx = set % 2 == 1;
    const char *timed = ctx ? "ctx" : "access", *other = ctx ? "reset" : "map";
    const double start = 1.7e9 + uni(0, 1e4);
    std::ostringstream run, base, probe;
    // The lone probe: an odd count of phases, so its median is one of them.
    std::vector<double> base_meds;
    for (int k = 0, n = 1 + 2 * int(rng() % 5); k < n; ++k) {
      base_meds.push_back(std::round(uni(20000, 40000) * 10) / 10);
      base << probe_line(other, start - 100.5 + k, start - 100.4 + k, uni(1, 1e5));
      base << probe_line(timed, start - 100 + k, start - 99.8 + k, base_meds.back());
    }
    std::sort(base_meds.begin(), base_meds.end());
    const double b = base_meds[base_meds.size() / 2];
    struct stage {
      std::string name;
      double from, to;
      std::vector<double> xs;
    };
    std::vector<stage> stages;
    double t = uni(0.1, 1.0);
    for (int k = 0, n = 2 + int(rng() % 4); k < n; ++k) {
      const double len = uni(3, 20);
      stages.push_back(
          {names[k], std::round(t * 100) / 100, std::round((t + len) * 100) / 100, {}});
      t += len + uni(0.0, 0.05);
    }
    for (const auto &s : stages) {
      char a[128], z[128];
      std::snprintf(a, sizeof a, "%7.2f [run] %-12s\n", s.from, s.name.c_str());
      std::snprintf(z, sizeof z, "%7.2f [run] %-12s %4d s  gpuprobe %s: done\n", s.to,
                    s.name.c_str(), int(s.to - s.from), s.name.c_str());
      run << a << "   " << std::fixed << std::setprecision(2) << (s.from + s.to) / 2
          << " a line inside\n"
          << z;
    }
    char last[64];
    std::snprintf(last, sizeof last, "%7.2f exit 0\n", t + 0.1);
    run << last;
    // Probe phases at random times across the run; each sample lands in the stage its midpoint
    // falls in (none where it falls between stages or past the end).
    for (double p = uni(0, 0.5); p < t + 2; p += uni(0.2, 1.2)) {
      const double len = uni(0.05, 0.4), med = std::round(uni(15000, 90000) * 10) / 10;
      const double pb = std::round((start + p) * 1000) / 1000,
                   pe = std::round((start + p + len) * 1000) / 1000;
      probe << probe_line(timed, pb, pe, med);
      probe << probe_line(other, pe, pe + 0.01, uni(1, 1e5));
      const double mid = (pb + pe) / 2 - start;
      for (auto &s : stages)
        if (s.from <= mid && mid < s.to)
          s.xs.push_back(med / b);
    }
    const std::string tag = "driver_pressure_" + std::to_string(set);
    char start_text[64];
    std::snprintf(start_text, sizeof start_text, "%.3f", start);
    const auto r = run_binary(
        "python3", k_src + "/dev/driver_pressure.py " + (ctx ? "--phase ctx " : "") +
                       gpuprobe::test::write_temp(tag + "_run.txt", run.str()) + " " + start_text +
                       " " + gpuprobe::test::write_temp(tag + "_base.txt", base.str()) + " " +
                       gpuprobe::test::write_temp(tag + "_probe.txt", probe.str()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream out(r.out);
    std::map<std::string, std::vector<std::string>> rows;
    for (std::string line; std::getline(out, line) && !(line.empty() && !rows.empty());) {
      std::istringstream cells(line);
      std::vector<std::string> c;
      for (std::string x; cells >> x;)
        c.push_back(x);
      if (c.size() == 6 && std::find(names.begin(), names.end(), c[0]) != names.end())
        rows[c[0]] = c;
    }
    ASSERT_EQ(rows.size(), stages.size()) << "set " << set << "\n" << r.out;
    for (auto &s : stages) {
      const auto &c = rows.at(s.name);
      EXPECT_EQ(std::stoul(c[3]), s.xs.size()) << "set " << set << " " << s.name;
      if (s.xs.empty()) {
        EXPECT_EQ(c[4], "-") << "set " << set << " " << s.name;
        continue;
      }
      std::sort(s.xs.begin(), s.xs.end());
      const std::size_t n = s.xs.size();
      const double med = n % 2 ? s.xs[n / 2] : (s.xs[n / 2 - 1] + s.xs[n / 2]) / 2;
      EXPECT_NEAR(std::stod(c[4]), med, 0.006) << "set " << set << " " << s.name;
      EXPECT_NEAR(std::stod(c[5]), s.xs.back(), 0.006) << "set " << set << " " << s.name;
    }
  }
  EXPECT_NE(run_binary("python3", k_src + "/dev/driver_pressure.py").exit_code, 0)
      << "no arguments: the usage, and a failure";
}

// docs/results.md is the script's output, never typed by hand: the committed page equals what
// dev/results_page.py writes from the committed runs (the check fails on any edit of either).
TEST(Scripts, TheResultsPageIsWhatItsScriptWritesFromTheCommittedRuns) {
  const auto r = run_binary("python3", k_src + "/dev/results_page.py --check");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::ifstream page(k_src + "/docs/results.md");
  const std::string text((std::istreambuf_iterator<char>(page)), {});
  for (const char *unit : {"GPU-5dc71e3e", "GPU-bba9cd54", "GPU-c7c2dadc", "GPU-f83ecb16",
                           "GPU-bc72dbee", "NVIDIA H200", "rw_malloc"})
    EXPECT_NE(text.find(unit), std::string::npos) << unit;
}

// docs/analyze-tlb.md's family tables are scripts/simulated_family.sh's output: the script, run
// with --docs on a copy of the page, replaces the block between its markers with the tables it
// printed and leaves every other line; the committed page's block was written at 1,000 GPUs.
TEST(Scripts, TheFamilyTablesInTheDocsAreWhatTheScriptWrites) {
  std::ifstream page(k_src + "/docs/analyze-tlb.md");
  const std::string text((std::istreambuf_iterator<char>(page)), {});
  const std::string begin = "<!-- begin: scripts/simulated_family.sh",
                    end = "<!-- end: scripts/simulated_family.sh -->";
  const auto a = text.find(begin), b = text.find(end);
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  EXPECT_EQ(text.compare(a, begin.size() + 6, begin + " 1000 "), 0) << "written at 1,000 GPUs";
  EXPECT_NE(text.substr(a, b - a).find("| full, the model (default) |"), std::string::npos);
  const auto dir = std::filesystem::temp_directory_path() /
                   ("gpuprobe_test_family_docs_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto copy = dir / "analyze-tlb.md";
  std::filesystem::copy_file(k_src + "/docs/analyze-tlb.md", copy);
  const auto build = std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path();
  const auto r = run_binary("env", "BUILD=" + build.string() + " bash " + k_src +
                                       "/scripts/simulated_family.sh 3 --docs " + copy.string());
  std::ifstream in(copy);
  const std::string after((std::istreambuf_iterator<char>(in)), {});
  std::filesystem::remove_all(dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto a2 = after.find(begin), b2 = after.find(end);
  ASSERT_NE(b2, std::string::npos);
  EXPECT_EQ(after.substr(0, a2), text.substr(0, a)) << "the page before the block is kept";
  EXPECT_EQ(after.substr(b2), text.substr(b)) << "the page after the block is kept";
  const std::string block = after.substr(a2, b2 - a2);
  EXPECT_EQ(block.compare(0, begin.size() + 3, begin + " 3 "), 0) << block.substr(0, 80);
  for (const char *row : {"| full | 3 |", "| quick | 3 |", "| full, the model (default) |",
                          "| --model |"})
    EXPECT_NE(block.find(row), std::string::npos) << row << " missing from\n" << block;
}
