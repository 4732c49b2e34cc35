#include "report/parts.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace gpuprobe::report::detail {

namespace {

// One BM_peers/<alloc>/size:<s>/threads:<n>/state:<empty|churn|classchurn> case
// (bench/peers/README.md).
struct peer_result {
  std::string alloc, size, state;
  double threads = 0;
  bool ok = false;
  double malloc_ms = 0, free_ms = 0;
  // min / max over the timed launches (0 when the file predates them), the first launch on the
  // state's heap, and the occupancy ladder (served_to < 0: not run)
  double malloc_min = 0, malloc_max = 0, free_min = 0, free_max = 0;
  double first_malloc = 0, first_free = 0;
  double served_to = -1;
  int ladder_stop = 0;
  // The malloc kernel as built: registers a thread and blocks of 256 threads an SM (0: the file
  // predates the counters).
  double kernel_regs = 0, kernel_blocks = 0;
  std::string error;
};

// "BM_peers/a/size:16/threads:16384/state:empty/iterations:5/manual_time" -> its fields.
std::optional<peer_result> parse(const model::bench_case &b) {
  const std::string &name = b.name;
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
  r.ok = !b.error_occurred;
  if (r.ok) {
    r.malloc_ms = b.real_time_ms();
    r.free_ms = b.number_or("free_ms", 0.0);
    r.malloc_min = b.number_or("malloc_min_ms", 0.0);
    r.malloc_max = b.number_or("malloc_max_ms", 0.0);
    r.free_min = b.number_or("free_min_ms", 0.0);
    r.free_max = b.number_or("free_max_ms", 0.0);
    r.first_malloc = b.number_or("first_malloc_ms", 0.0);
    r.first_free = b.number_or("first_free_ms", 0.0);
    r.served_to = b.number_or("served_to", -1.0);
    r.ladder_stop = int(b.number_or("ladder_stop", 0.0));
    r.kernel_regs = b.number_or("malloc_regs", 0.0);
    r.kernel_blocks = b.number_or("malloc_blocks_per_sm", 0.0);
  } else {
    r.error = b.error_message.empty() ? "failed" : b.error_message;
  }
  return r;
}

// Where an allocator stands in the tables: gpuprobe's first, then the baselines, then the peers.
const std::vector<std::string> &known_allocators() {
  static const std::vector<std::string> order = {
      "rw_malloc",      "corw64",          "bump",         "gallatin",   "gallatin_8k",
      "ouroboros_page", "ouroboros_chunk", "scatteralloc", "cuda_malloc"};
  return order;
}
int rank_of(const std::string &a) {
  const auto &order = known_allocators();
  const auto it = std::find(order.begin(), order.end(), a);
  return it == order.end() ? int(order.size()) : int(it - order.begin());
}
// The public peers rw_malloc's goals are judged against.
bool is_peer(const std::string &a) { return rank_of(a) >= 3 && rank_of(a) <= 7; }
const std::vector<std::string> &sizes() {
  static const std::vector<std::string> s = {"16", "256", "1024", "4096", "8192", "mixed"};
  return s;
}
const std::vector<std::string> &states() {
  static const std::vector<std::string> s = {"empty", "churn", "classchurn"};
  return s;
}
std::string size_label(const std::string &s) { return s == "mixed" ? "mixed 4 B-8 KiB" : s + " B"; }
std::string state_label(const std::string &s) {
  if (s == "churn")
    return "after a churn to 50 % occupancy";
  if (s == "classchurn")
    return "after a churn by size class to 50 % occupancy";
  return "empty heap";
}
// A failed cell, shortly: out of memory is a result (with how full the churn left the heap,
// where the harness said); blocks overwritten (one block handed to two threads) are the
// allocator's fault, whatever else the launch did; anything else is an error.
std::string failure(const peer_result &r) {
  const auto end = r.error.find(" threads without memory");
  if (end == std::string::npos)
    return "failed: " + r.error;
  const auto of = r.error.rfind(": ", end);
  const std::string refused =
      of != std::string::npos ? r.error.substr(of + 2, end - of - 2) : "some";
  const auto over = r.error.find(" blocks overwritten", end);
  const auto comma = r.error.rfind(", ", over);
  const std::string overwritten = over != std::string::npos && comma != std::string::npos
                                      ? r.error.substr(comma + 2, over - comma - 2)
                                      : "0";
  if (overwritten != "0")
    return "failed: " + overwritten + " blocks overwritten (handed to two threads)" +
           (refused.rfind("0 of ", 0) == 0 ? "" : ", " + refused + " threads refused");
  std::string s = "out of memory (" + refused + " threads refused";
  const auto pct = r.error.find(" % of the heap");
  const auto eq = r.error.rfind("= ", pct);
  if (pct != std::string::npos && eq != std::string::npos)
    s += ", heap " + r.error.substr(eq + 2, pct - eq - 2) + " % occupied";
  return s + ")";
}
std::string count(double n) { return std::to_string((long long)n); }
// "0.161 (0.158-0.165)": a mean and its launches' spread, where the file has it.
std::string spread(double mean, double lo, double hi) {
  return hi > 0 ? num(mean, 3) + " (" + num(lo, 3) + "-" + num(hi, 3) + ")" : num(mean, 3);
}
std::string served(const peer_result &r) {
  if (r.served_to < 0)
    return "no ladder";
  static const char *why[] = {"",
                              ", the launch does not fit higher",
                              ", the fill was refused higher",
                              ", refused higher",
                              ", too slow to go higher",
                              ", not tried higher"};
  return num(100 * r.served_to, 2) + " %" +
         (r.ladder_stop > 0 && r.ladder_stop < 6 ? why[r.ladder_stop] : "");
}

using cell_key =
    std::tuple<std::string, std::string, double, std::string>; // alloc, size, threads, state

struct peer_cells {
  std::map<cell_key, peer_result> cells;
  std::vector<std::string> allocs;
  std::vector<double> threads;
  std::map<std::string, std::set<std::string>> ran_on; // allocator -> "unit, gpuprobe commit"
  // allocator -> its malloc kernels as the cells recorded them ("79 registers, 3 blocks of 256 an
  // SM"; "not recorded" for files before the counters)
  std::map<std::string, std::set<std::string>> kernels;
  std::set<std::string> units; // the units recorded
  const peer_result *find(const std::string &a, const std::string &s, double n,
                          const std::string &st) const {
    const auto it = cells.find({a, s, n, st});
    return it == cells.end() ? nullptr : &it->second;
  }
};

// A grid per state: rows allocator x threads, a column per size, `cell` for each result.
template <class Cell>
void state_grid(report_content &c, const peer_cells &p, const std::string &state,
                const std::string &title, const std::string &note, Cell cell) {
  report_table t{title + ", " + state_label(state), {"allocator", "threads"}, {}, note};
  for (const auto &s : sizes())
    t.header.push_back(size_label(s));
  for (const auto &a : p.allocs)
    for (const double n : p.threads) {
      std::vector<std::string> r = {a, count(n)};
      bool any_cell = false;
      for (const auto &s : sizes()) {
        const auto *x = p.find(a, s, n, state);
        any_cell = any_cell || x;
        r.push_back(!x ? "not run" : x->ok ? cell(*x) : failure(*x));
      }
      if (any_cell)
        t.rows.push_back(std::move(r));
    }
  if (!t.rows.empty())
    c.tables.push_back(std::move(t));
}

// The best served peer of a cell by `cost` (nullptr: no peer served it).
template <class Cost>
const peer_result *best_peer(const peer_cells &p, const std::string &s, double n,
                             const std::string &state, Cost cost) {
  const peer_result *best = nullptr;
  for (const auto &a : p.allocs)
    if (const auto *x = p.find(a, s, n, state); is_peer(a) && x && x->ok)
      if (!best || cost(*x) < cost(*best))
        best = x;
  return best;
}

// The most threads of a launch so small that rw_malloc's goal against the best peer is 1.25x
// (goal_slack): such a launch lasts about one warp's chain and the launch itself.
constexpr double k_small_launch_threads = 1 << 14;
double goal_slack(double threads) { return threads <= k_small_launch_threads ? 1.25 : 1.0; }

// One cell of the goal table: rw_malloc's malloc and malloc + free against the best peer's (the
// cheapest `bm`, `bp` that served it; at most `slack` times theirs), and against the bump pointer
// where that goal applies; the goals it misses, in words, go to `misses`.
std::vector<std::string> goal_row(const peer_result &rw, const peer_result *bm,
                                  const peer_result *bp, const peer_result *bump, bool bump_goal,
                                  double slack, std::vector<std::string> &misses) {
  std::vector<std::string> row;
  if (!rw.ok) {
    misses.push_back("rw_malloc " + failure(rw));
    row.insert(row.end(), {"-", "", "", "-", "", "", ""});
    return row;
  }
  auto vs = [&](const peer_result *b, auto cost, const char *what) {
    if (!b) {
      row.insert(row.end(), {num(cost(rw), 3), "not compared (no peer served)", ""});
      return;
    }
    const double q = cost(rw) / cost(*b);
    row.insert(row.end(), {num(cost(rw), 3), num(cost(*b), 3) + " " + b->alloc, num(q, 3)});
    if (q > slack)
      misses.push_back(std::string(what) +
                       (slack > 1.0 ? " over " + num(slack, 3) + "x " : " slower than ") +
                       b->alloc);
  };
  vs(
      bm, [](const peer_result &r) { return r.malloc_ms; }, "malloc");
  vs(
      bp, [](const peer_result &r) { return r.malloc_ms + r.free_ms; }, "malloc + free");
  if (bump_goal && bump && bump->ok) {
    const double q = rw.malloc_ms / bump->malloc_ms;
    row.push_back(num(q, 3));
    if (q > 2.0)
      misses.push_back("over 2x the bump pointer");
  } else {
    row.push_back("");
  }
  return row;
}

// The goals (a benchmark, not a test), per cell: rw_malloc's malloc no slower than the best
// peer's, its malloc + free no slower than the best peer's malloc + free (at 2^14 threads and
// fewer: at most 1.25x each), and within 2x the bump pointer at 2^20 threads for requests up to
// 256 B. A cell no peer served is "not compared".
void goals_table(report_content &c, const peer_cells &p) {
  report_table g{"rw_malloc against the goals",
                 {"state", "threads", "size", "rw_malloc malloc (ms)", "best peer malloc (ms)",
                  "ratio", "rw_malloc malloc + free (ms)", "best peer malloc + free (ms)", "ratio",
                  "rw_malloc / bump", "goals"},
                 {},
                 ""};
  int met = 0, missed = 0, not_compared = 0;
  auto malloc_cost = [](const peer_result &r) { return r.malloc_ms; };
  auto pair_cost = [](const peer_result &r) { return r.malloc_ms + r.free_ms; };
  for (const auto &state : states())
    for (const double n : p.threads)
      for (const auto &s : sizes()) {
        const auto *rw = p.find("rw_malloc", s, n, state);
        if (!rw)
          continue;
        const auto *bm = best_peer(p, s, n, state, malloc_cost);
        const bool bump_goal = n >= (1 << 20) && s != "mixed" && std::atoi(s.c_str()) <= 256;
        std::vector<std::string> misses;
        std::vector<std::string> row = {state_label(state), count(n), size_label(s)};
        const auto cells = goal_row(*rw, bm, best_peer(p, s, n, state, pair_cost),
                                    p.find("bump", s, n, state), bump_goal, goal_slack(n), misses);
        row.insert(row.end(), cells.begin(), cells.end());
        std::string verdict;
        if (!misses.empty()) {
          verdict = "not met: " + misses[0];
          for (std::size_t i = 1; i < misses.size(); ++i)
            verdict += "; " + misses[i];
          ++missed;
        } else if (!bm) {
          verdict = "not compared";
          ++not_compared;
        } else {
          verdict = "met";
          ++met;
        }
        row.push_back(verdict);
        g.rows.push_back(std::move(row));
      }
  if (g.rows.empty())
    return;
  g.note = "Goals (a benchmark, not a test): rw_malloc's malloc launch no slower than the best "
           "peer's (gallatin, gallatin_8k, ouroboros_page, ouroboros_chunk, scatteralloc: the "
           "fastest that served the cell), its malloc + free no slower than the best peer's (at "
           "2^14 threads and fewer, where a launch lasts about one warp's chain, at most 1.25x "
           "each), and within 2x the bump pointer at 2^20 threads for 16 and 256 B. A cell that "
           "no peer served is not compared. Met in " +
           std::to_string(met) + ", not met in " + std::to_string(missed) + ", not compared in " +
           std::to_string(not_compared) + " of " + std::to_string(met + missed + not_compared) +
           " cells.";
  c.tables.push_back(std::move(g));
}

// Where each allocator's cells were measured: the unit and the gpuprobe commit from each file's
// context. A folder gathered from several runs may hold several units of one model; its
// comparisons then cross units, and this table says so.
void units_table(report_content &c, const peer_cells &p) {
  report_table t{
      "Where each allocator ran", {"allocator", "unit, gpuprobe commit", "malloc kernel"}, {}, ""};
  const auto joined = [](const std::set<std::string> &xs) {
    std::string s;
    for (const auto &x : xs)
      s += (s.empty() ? "" : "; ") + x;
    return s;
  };
  for (const auto &a : p.allocs) {
    const auto k = p.kernels.find(a);
    t.rows.push_back(
        {a, joined(p.ran_on.at(a)), k == p.kernels.end() ? "not recorded" : joined(k->second)});
  }
  t.note = p.units.size() > 1
               ? "These cells were measured on " + std::to_string(p.units.size()) +
                     " units: comparisons between allocators of different units cross units of "
                     "the GPU model. \"not recorded\": a cell killed by its time limit, whose file "
                     "the script wrote."
               : "One unit. \"not recorded\": a cell killed by its time limit, whose file the "
                 "script wrote.";
  t.note += " The malloc kernel: the registers a thread ptxas gave the harness' malloc kernel for "
            "this allocator and the blocks of 256 threads an SM holds with them (bench/peers/"
            "README.md); \"not recorded\": cells measured before BM_peers recorded them.";
  c.tables.push_back(std::move(t));
}

} // namespace

namespace {

// Every BM_peers cell of the folder's gpuprobe-bench files, the allocators (peers' rank order)
// and thread counts they cover, and which unit and commit ran each allocator.
peer_cells collect_cells(const inputs &in) {
  peer_cells p;
  for (const auto &[path, bench] : in.bench) {
    const std::string unit = bench.context_or("gpu_uuid", "");
    const std::string ran_on = (unit.empty() ? "not recorded" : unit) + ", " +
                               bench.context_or("gpuprobe_commit", "not recorded");
    for (const auto &b : bench.cases)
      if (auto r = parse(b)) {
        p.cells[{r->alloc, r->size, r->threads, r->state}] = *r;
        p.allocs.push_back(r->alloc);
        p.threads.push_back(r->threads);
        p.ran_on[r->alloc].insert(ran_on);
        if (r->ok && r->kernel_regs > 0)
          p.kernels[r->alloc].insert(count(r->kernel_regs) + " registers, " +
                                     count(r->kernel_blocks) + " blocks of 256 an SM");
        if (!unit.empty())
          p.units.insert(unit);
      }
  }
  std::sort(p.allocs.begin(), p.allocs.end(), [](const std::string &a, const std::string &b) {
    return rank_of(a) != rank_of(b) ? rank_of(a) < rank_of(b) : a < b;
  });
  p.allocs.erase(std::unique(p.allocs.begin(), p.allocs.end()), p.allocs.end());
  std::sort(p.threads.begin(), p.threads.end());
  p.threads.erase(std::unique(p.threads.begin(), p.threads.end()), p.threads.end());

  return p;
}

// One heap state: a figure per size (malloc time against threads, a line per allocator) and its
// three grids (malloc / free, the first launch, the largest occupancy served).
void state_part(const std::string &state, const peer_cells &p, report_content &c) {
  // Figures: malloc time against threads, one per size, a line per allocator.
  for (const auto &s : sizes()) {
    std::ostringstream o;
    o << "series,style,x,y\n";
    bool any = false;
    for (const auto &a : p.allocs)
      for (const double n : p.threads)
        if (const auto *r = p.find(a, s, n, state); r && r->ok) {
          row(o, a, "line", n, r->malloc_ms);
          any = true;
        }
    if (any)
      c.figures.push_back(
          {"peers_malloc_" + state + "_" + s,
           "One malloc per thread, " + size_label(s) + ", " + state_label(state) + " (BM_peers)",
           "lines",
           "threads",
           "malloc launch (ms)",
           true,
           true,
           {},
           {},
           o.str()});
  }
  const std::string how =
      "Each cell: a fresh heap of the same size for every allocator, " +
      std::string(state == "churn" ? "churned with mixed sizes (4 B-8 KiB) to 50 % occupancy, "
                  : state == "classchurn"
                      ? "churned by size class (whole classes freed at once) to 50 % "
                        "occupancy, "
                      : "") +
      "one malloc per thread with a write into each block, timed with CUDA events: the mean of "
      "5 launches (min-max in brackets) after a first one on the state's heap, the ranges "
      "checked after timing, then a timed free. \"not run\": not in this run (cuda_malloc is "
      "capped past 2^17 threads and after churn, ouroboros_chunk past 2^17 threads, unless "
      "--gpuprobe_uncapped).";
  state_grid(c, p, state, "Allocators against the peers: malloc / free (ms)", how,
             [](const peer_result &r) {
               return spread(r.malloc_ms, r.malloc_min, r.malloc_max) + " / " +
                      spread(r.free_ms, r.free_min, r.free_max);
             });
  state_grid(
      c, p, state, "The first launch on the state's heap: malloc / free (ms)",
      "The launch before the timed ones, on the heap as it was made (or churned): a "
      "peer that formats its heap lazily pays for it here.",
      [](const peer_result &r) { return num(r.first_malloc, 3) + " / " + num(r.first_free, 3); });
  state_grid(c, p, state, "The largest occupancy at which the cell is still served",
             "From the state, the heap is filled further with the state's kind of requests to "
             "50, 60, 70, 80 and 90 % (live requested bytes over the heap) and the cell's launch "
             "is made once at each; the ladder stops where the fill is refused, the launch is "
             "refused, or the launch would not fit (level + launch over 95 % of the heap).",
             served);
}

} // namespace

void peers_part(const inputs &in, report_content &c) {
  const peer_cells p = collect_cells(in);
  if (p.cells.empty())
    return; // BM_peers is optional: a results folder without it lacks nothing
  for (const auto &state : states())
    state_part(state, p, c);
  goals_table(c, p);
  units_table(c, p);
}

} // namespace gpuprobe::report::detail
