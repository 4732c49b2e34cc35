#include "analysis/report_parts.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>

namespace gpuprobe::analysis::report_detail {

namespace {

// One BM_peers/<alloc>/size:<s>/threads:<n>/state:<empty|churn> case (bench/peers/README.md).
struct peer_result {
  std::string alloc, size, state;
  double threads = 0;
  bool ok = false;
  double malloc_ms = 0, free_ms = 0;
  std::string error;
};

double to_ms(double t, const std::string &unit) {
  if (unit == "ns")
    return t * 1e-6;
  if (unit == "us")
    return t * 1e-3;
  if (unit == "s")
    return t * 1e3;
  return t; // ms
}

// "BM_peers/a/size:16/threads:16384/state:empty/iterations:5/manual_time" -> its fields.
std::optional<peer_result> parse(const json &b) {
  const std::string name = b.value("name", "");
  if (name.rfind("BM_peers/", 0) != 0)
    return std::nullopt;
  std::vector<std::string> part;
  std::stringstream ss(name);
  for (std::string p; std::getline(ss, p, '/');)
    part.push_back(p);
  if (part.size() < 5 || part[2].rfind("size:", 0) != 0 || part[3].rfind("threads:", 0) != 0 ||
      part[4].rfind("state:", 0) != 0)
    return std::nullopt;
  peer_result r;
  r.alloc = part[1];
  r.size = part[2].substr(5);
  r.threads = std::atof(part[3].c_str() + 8);
  r.state = part[4].substr(6);
  r.ok = !b.value("error_occurred", false);
  if (r.ok) {
    const std::string unit = b.value("time_unit", "ms");
    r.malloc_ms = to_ms(b.value("real_time", 0.0), unit);
    r.free_ms = b.value("free_ms", 0.0);
  } else {
    r.error = b.value("error_message", "failed");
  }
  return r;
}

// Where an allocator stands in the tables: gpuprobe's first, then the baselines, then the peers.
int rank_of(const std::string &a) {
  static const std::vector<std::string> order = {"rw_malloc",  "corw64",         "bump",
                                                 "gallatin",   "ouroboros_page", "ouroboros_chunk",
                                                 "cuda_malloc"};
  const auto it = std::find(order.begin(), order.end(), a);
  return it == order.end() ? int(order.size()) : int(it - order.begin());
}
const std::vector<std::string> &sizes() {
  static const std::vector<std::string> s = {"16", "256", "1024", "4096", "8192", "mixed"};
  return s;
}
std::string size_label(const std::string &s) { return s == "mixed" ? "mixed 4 B-8 KiB" : s + " B"; }
std::string state_label(const std::string &s) {
  return s == "churn" ? "after a churn to 50 % occupancy" : "empty heap";
}
// A failed cell, shortly: out of memory is a result (with how full the churn left the heap,
// where the harness said), anything else an error.
std::string failure(const peer_result &r) {
  const auto end = r.error.find(" threads without memory");
  if (end == std::string::npos)
    return "failed: " + r.error;
  const auto of = r.error.rfind(": ", end);
  std::string s = "out of memory (" +
                  (of != std::string::npos ? r.error.substr(of + 2, end - of - 2) : "some") +
                  " threads refused";
  const auto pct = r.error.find(" % of the heap");
  const auto eq = r.error.rfind("= ", pct);
  if (pct != std::string::npos && eq != std::string::npos)
    s += ", heap " + r.error.substr(eq + 2, pct - eq - 2) + " % occupied";
  return s + ")";
}
std::string count(double n) { return std::to_string((long long)n); }

using key =
    std::tuple<std::string, std::string, double, std::string>; // alloc, size, threads, state

} // namespace

void peers_part(const inputs &in, report_content &c) {
  std::map<key, peer_result> cells;
  std::vector<std::string> allocs;
  std::vector<double> threads;
  for (const auto &[path, doc] : in.bench)
    for (const auto &b : doc["benchmarks"])
      if (auto r = parse(b)) {
        cells[{r->alloc, r->size, r->threads, r->state}] = *r;
        allocs.push_back(r->alloc);
        threads.push_back(r->threads);
      }
  if (cells.empty())
    return; // BM_peers is optional: a results folder without it lacks nothing
  std::sort(allocs.begin(), allocs.end(), [](const std::string &a, const std::string &b) {
    return rank_of(a) != rank_of(b) ? rank_of(a) < rank_of(b) : a < b;
  });
  allocs.erase(std::unique(allocs.begin(), allocs.end()), allocs.end());
  std::sort(threads.begin(), threads.end());
  threads.erase(std::unique(threads.begin(), threads.end()), threads.end());
  auto find = [&](const std::string &a, const std::string &s, double n,
                  const std::string &st) -> const peer_result * {
    const auto it = cells.find({a, s, n, st});
    return it == cells.end() ? nullptr : &it->second;
  };

  for (const std::string state : {"empty", "churn"}) {
    // Figure: malloc time of mixed sizes against threads, one line per allocator.
    report_figure f{"peers_malloc_" + state,
                    "One malloc per thread, mixed sizes, " + state_label(state) + " (BM_peers)",
                    "lines",
                    "threads",
                    "malloc launch (ms)",
                    true,
                    true,
                    {},
                    {},
                    ""};
    std::ostringstream o;
    o << "series,style,x,y\n";
    bool any = false;
    for (const auto &a : allocs)
      for (const double n : threads)
        if (const auto *r = find(a, "mixed", n, state); r && r->ok) {
          row(o, a, "line", n, r->malloc_ms);
          any = true;
        }
    if (any) {
      f.csv = o.str();
      c.figures.push_back(std::move(f));
    }
    report_table t{"Allocators against the peers: malloc / free (ms), " + state_label(state),
                   {"allocator", "threads"},
                   {},
                   ""};
    for (const auto &s : sizes())
      t.header.push_back(size_label(s));
    for (const auto &a : allocs)
      for (const double n : threads) {
        std::vector<std::string> r = {a, count(n)};
        bool any_cell = false;
        for (const auto &s : sizes()) {
          const auto *p = find(a, s, n, state);
          any_cell = any_cell || p;
          r.push_back(!p      ? "not run"
                      : p->ok ? num(p->malloc_ms, 3) + " / " + num(p->free_ms, 3)
                              : failure(*p));
        }
        if (any_cell)
          t.rows.push_back(std::move(r));
      }
    t.note =
        "Each cell: a fresh heap of the same size for every allocator, " +
        std::string(state == "churn" ? "churned with mixed sizes (4 B-8 KiB) to 50 % occupancy, "
                                     : "") +
        "one malloc per thread with a write into each block, timed with CUDA events (mean "
        "of 5 launches after a first one on the fresh heap), the ranges checked after "
        "timing, then a timed free. \"not run\": not in this run (cuda_malloc is capped past "
        "2^17 threads and after churn, ouroboros_chunk past 2^17 threads, unless "
        "--gpuprobe_uncapped).";
    c.tables.push_back(std::move(t));
  }

  // The goals: rw_malloc at least as fast as Gallatin in every cell, and within 3x the bump
  // pointer for requests up to 256 B.
  report_table g{"rw_malloc against the goals",
                 {"state", "threads", "size", "rw_malloc (ms)", "Gallatin (ms)",
                  "rw_malloc / Gallatin", "bump (ms)", "rw_malloc / bump", "goals"},
                 {},
                 ""};
  int met = 0, missed = 0;
  for (const std::string state : {"empty", "churn"})
    for (const double n : threads)
      for (const auto &s : sizes()) {
        const auto *rw = find("rw_malloc", s, n, state);
        const auto *gal = find("gallatin", s, n, state);
        const auto *bump = find("bump", s, n, state);
        if (!rw || (!gal && !bump))
          continue;
        std::vector<std::string> misses;
        std::string vs_gal = "", vs_bump = "";
        if (!rw->ok) {
          misses.push_back("rw_malloc " + failure(*rw));
        } else {
          if (gal && gal->ok) {
            const double q = rw->malloc_ms / gal->malloc_ms;
            vs_gal = num(q, 3);
            if (q > 1.0)
              misses.push_back("slower than Gallatin");
          } else if (gal) {
            vs_gal = "-"; // Gallatin refused: rw_malloc served
          }
          if (bump && bump->ok && s != "mixed" && std::atoi(s.c_str()) <= 256) {
            const double q = rw->malloc_ms / bump->malloc_ms;
            vs_bump = num(q, 3);
            if (q > 3.0)
              misses.push_back("over 3x the bump pointer");
          }
        }
        (misses.empty() ? met : missed) += 1;
        std::string verdict = "met";
        if (!misses.empty()) {
          verdict = "not met: " + misses[0];
          for (std::size_t i = 1; i < misses.size(); ++i)
            verdict += "; " + misses[i];
        }
        g.rows.push_back(
            {state_label(state), count(n), size_label(s), rw->ok ? num(rw->malloc_ms, 3) : "-",
             gal ? (gal->ok ? num(gal->malloc_ms, 3) : failure(*gal)) : "not run", vs_gal,
             bump && bump->ok ? num(bump->malloc_ms, 3) : "not run", vs_bump, verdict});
      }
  if (!g.rows.empty()) {
    g.note =
        "Goals (a benchmark, not a test): rw_malloc's malloc launch no slower than "
        "Gallatin's in every cell, and within 3x the bump pointer's for 16 and 256 B. Met in " +
        std::to_string(met) + " of " + std::to_string(met + missed) + " cells.";
    c.tables.push_back(std::move(g));
  }
}

} // namespace gpuprobe::analysis::report_detail
