#include "probes/sharing/analysis.hpp"
#include "probes/sharing/driver.hpp"

#include "analysis/input_text.hpp"
#include "common/device_info.hpp"
#include "common/enum_names.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/stats.hpp"
#include "common/steps.hpp"
#include "probes/result_file.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>

namespace gpuprobe::probes {

using namespace analysis; // the analysis/ tools: fits, input text, statistics, the models

namespace {
constexpr enum_table<sharing_scope, 4> k_scopes = {{sharing_scope::private_, "private"},
                                                   {sharing_scope::groups, "groups"},
                                                   {sharing_scope::global, "global"},
                                                   {sharing_scope::inconclusive, "inconclusive"}};
} // namespace

std::string to_string(sharing_scope s) { return enum_name(k_scopes, s); }

namespace {

std::vector<std::string> split_ws(const std::string &s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string t; in >> t;)
    out.push_back(t);
  return out;
}

double robust_sigma(std::vector<double> v) {
  if (v.size() < 2)
    return 0;
  const double m = median(v);
  for (auto &x : v)
    x = std::fabs(x - m);
  return 1.4826 * median(v);
}

// Otsu's split of a sample into two classes: the value that maximises the between-class
// variance (midpoint between the two sorted neighbours it falls between).
double otsu_threshold(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  std::vector<double> prefix(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + v[i];
  double best = -1, thr = v.empty() ? 0 : v.front();
  for (std::size_t k = 1; k < n; ++k) {
    if (v[k] == v[k - 1])
      continue;
    const double w0 = double(k) / double(n), w1 = 1 - w0;
    const double m0 = prefix[k] / double(k), m1 = (prefix[n] - prefix[k]) / double(n - k);
    const double between = w0 * w1 * (m0 - m1) * (m0 - m1);
    if (between > best) {
      best = between;
      thr = 0.5 * (v[k - 1] + v[k]);
    }
  }
  return thr;
}

struct union_find {
  std::vector<int> p;
  explicit union_find(int n) : p(n) { std::iota(p.begin(), p.end(), 0); }
  int find(int a) { return p[a] == a ? a : p[a] = find(p[a]); }
  void join(int a, int b) { p[find(a)] = find(b); }
};

std::string join_ints(const std::vector<int> &v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

// One data line of the matrix ("SM cell cell ..."): its SM id and latencies into `m` (an empty
// line: nothing), or the file and line of what is wrong with it.
void matrix_row(const std::vector<std::string> &tok, std::size_t columns, const std::string &source,
                int lineno, sharing_matrix &m) {
  if (tok.empty())
    return;
  double id;
  if (!parse_number(tok[0], id))
    fail_at(source, lineno, "row label '" + tok[0] + "' is not an SM id");
  if (tok.size() - 1 != columns)
    fail_at(source, lineno,
            "row has " + std::to_string(tok.size() - 1) + " cells, the header " +
                std::to_string(columns) + " columns");
  std::vector<double> row;
  for (std::size_t k = 1; k < tok.size(); ++k) {
    double v;
    if (!parse_number(tok[k], v) || v < 0)
      fail_at(source, lineno, "cell '" + tok[k] + "' is not a latency");
    row.push_back(v);
  }
  m.sm_ids.push_back(int(id));
  m.cycles.push_back(std::move(row));
}

} // namespace

sharing_matrix parse_tlbsharing_txt(const std::string &text, const std::string &source) {
  sharing_matrix m;
  m.source = source;
  m.format = "cuda-gpu-tlb";
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  enum { before, header, rows, done } state = before;
  std::vector<int> cols;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (lineno == 1 && line.rfind('#', 0) == 0) { // "#Tesla K80: cuda 3.7"
      const auto colon = line.find(':');
      m.device_name = line.substr(1, colon == std::string::npos ? std::string::npos : colon - 1);
      continue;
    }
    if (state == done)
      continue;
    if (line.find("absolute values") != std::string::npos) {
      state = header;
      continue;
    }
    if (state == before)
      continue;
    if (line.rfind('#', 0) == 0) {
      if (state == header) {
        for (const auto &t : split_ws(line.substr(1))) {
          double v;
          if (!parse_number(t, v))
            fail_at(source, lineno, "column header '" + t + "' is not an SM id");
          cols.push_back(int(v));
        }
        state = rows;
        continue;
      }
      state = done; // "#--- which SMs share TLB ---": the tool's own verdict, not data
      continue;
    }
    if (state != rows)
      fail_at(source, lineno, "data before the column header");
    matrix_row(split_ws(line), cols.size(), source, lineno, m);
  }
  if (cols.empty() || m.cycles.empty())
    throw gpuprobe::error(
        source + ": no '--- absolute values ---' matrix: not a cuda-gpu-tlb TLBsharing file");
  if (m.cycles.size() != cols.size())
    throw gpuprobe::error(source + ": " + std::to_string(m.cycles.size()) + " rows for " +
                          std::to_string(cols.size()) + " columns: the matrix must be square");
  if (m.sm_ids != cols)
    throw gpuprobe::error(source + ": row SM ids differ from the column SM ids");
  return m;
}

sharing_matrix parse_sharing_result(const nlohmann::json &doc, const std::string &source) {
  const auto res =
      read_result_file(doc, source, "tlb-sharing", "tlb-sharing",
                       [](const nlohmann::json &d) { return probes::sharing_result_from_json(d); });
  return square_matrix_of(res, source);
}

sharing_matrix square_matrix_of(const probes::sharing_result &r, const std::string &source) {
  sharing_matrix m = matrix_of(r, source);
  const auto n = m.sm_ids.size();
  bool square = n > 0 && m.cycles.size() == n && m.baseline.size() == n;
  for (const auto &row : m.cycles)
    square = square && row.size() == n;
  if (!square)
    throw gpuprobe::error("'" + source + "': the sharing matrix is not square over its SM ids");
  return m;
}

sharing_matrix matrix_of(const probes::sharing_result &r, const std::string &source) {
  sharing_matrix m;
  m.source = source;
  m.format = "gpuprobe";
  m.device = r.device; // null for a sample the probe has not finished
  m.device_name = r.device.is_object() ? device_info_from_json(r.device).name : "";
  m.sm_ids = r.sm_ids;
  m.cycles = r.mean_cycles;
  m.baseline = r.baseline_mean_cycles;
  m.params = r.params;
  return m;
}

bool sample_is_global(const probes::sharing_result &r) { return sample_not_global(r).empty(); }

std::string sample_not_global(const probes::sharing_result &r) {
  const auto a = analyze_sharing(matrix_of(r, "the sample"));
  if (a.scope == sharing_scope::global)
    return "";
  std::string why = "the sample: " + to_string(a.scope) + ", " + a.reason;
  for (const auto &note : a.notes)
    why += "; " + note;
  return why;
}

sharing_matrix load_sharing_input(const std::string &path) {
  const auto in = read_input(path);
  if (in.is_json)
    return parse_sharing_result(read_json_file(path), path);
  return parse_tlbsharing_txt(in.text, path);
}

namespace {

// Whether a group is a union of TPC pairs {2j, 2j+1}.
bool is_pair_union(std::vector<int> g) {
  std::sort(g.begin(), g.end());
  if (g.size() % 2)
    return false;
  for (std::size_t i = 0; i < g.size(); i += 2)
    if (g[i] % 2 != 0 || g[i + 1] != g[i] + 1)
      return false;
  return true;
}

// Whether a group is a contiguous SM-id range.
bool is_range(std::vector<int> g) {
  std::sort(g.begin(), g.end());
  return g.back() - g.front() + 1 == int(g.size());
}

// The id gaps between consecutive members of each group (a TPC pair counts once when every group
// is a union of pairs).
std::vector<double> member_gaps(const std::vector<std::vector<int>> &groups, bool pairs) {
  std::vector<double> gaps;
  for (const auto &g0 : groups) {
    std::vector<int> g = g0;
    std::sort(g.begin(), g.end());
    std::vector<int> starts;
    for (std::size_t i = 0; i < g.size(); i += (pairs ? 2 : 1))
      starts.push_back(g[i]);
    for (std::size_t i = 1; i < starts.size(); ++i)
      gaps.push_back(starts[i] - starts[i - 1]);
  }
  return gaps;
}

} // namespace

std::string describe_structure(const std::vector<std::vector<int>> &groups, int sm_count) {
  if (groups.empty())
    return "";
  bool all_pairs = true, all_pair_unions = true, all_ranges = true;
  std::map<std::size_t, int> sizes;
  std::size_t covered = 0;
  for (const auto &g : groups) {
    all_pairs = all_pairs && g.size() == 2 && is_pair_union(g);
    all_pair_unions = all_pair_unions && is_pair_union(g);
    all_ranges = all_ranges && is_range(g);
    sizes[g.size()]++;
    covered += g.size();
  }
  const std::vector<double> gaps = member_gaps(groups, all_pair_unions);
  std::string s;
  if (all_pairs) {
    s = "pairs of consecutive SM ids {2j, 2j+1}: one TPC (2 SMs) per group";
  } else {
    if (all_ranges)
      s = all_pair_unions
              ? "each group is a contiguous SM-id range, a union of TPC pairs {2j, 2j+1}"
              : "each group is a contiguous SM-id range";
    else if (all_pair_unions)
      s = "each group is a union of TPC pairs {2j, 2j+1}";
    else
      s = "groups are not contiguous id ranges";
    if (!all_ranges && !gaps.empty()) {
      const double gap = median(gaps);
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "; members are interleaved with an id stride of about %.0f%s (SMs numbered "
                    "round-robin across the sharing units, as on GPCs)",
                    gap, all_pair_unions ? " between their TPC pairs" : "");
      s += buf;
    }
  }
  s += "; " + std::to_string(groups.size()) + " groups of";
  bool first = true;
  for (auto it = sizes.rbegin(); it != sizes.rend(); ++it, first = false)
    s += (first ? " " : ", ") + std::to_string(it->second) + " x " + std::to_string(it->first) +
         " SMs";
  if (sizes.size() > 1)
    s += " (unequal: units with fewer SMs, consistent with floor-swept TPCs)";
  if (sm_count > 0 && int(covered) < sm_count)
    s += "; " + std::to_string(sm_count - int(covered)) + " SMs in no group";
  return s;
}

namespace {

using matrix = std::vector<std::vector<double>>;

double max_cell(const sharing_matrix &m) {
  double mx = 0;
  for (const auto &r : m.cycles)
    for (double v : r)
      mx = std::max(mx, v);
  for (double v : m.baseline)
    mx = std::max(mx, v);
  return mx;
}

// Each victim's unshared level (its baseline, else its row's median) and its positive control
// (the diagonal above it); the median control and the noise of the cells below half of it.
void reference_and_control(const sharing_matrix &m, sharing_analysis &a, std::vector<double> &ref,
                           std::vector<double> &pos) {
  const int n = int(m.sm_ids.size());
  ref.assign(std::size_t(n), 0), pos.assign(std::size_t(n), 0);
  for (int i = 0; i < n; ++i) {
    if (a.has_baseline) {
      ref[i] = m.baseline[i];
    } else {
      std::vector<double> off;
      for (int k = 0; k < n; ++k)
        if (k != i)
          off.push_back(m.cycles[i][k]);
      ref[i] = median(off);
    }
    pos[i] = m.cycles[i][i] - ref[i];
  }
  a.control_cycles = median(pos);
  // The noise of a cell within its victim's round: each row's unshared cells about that row's own
  // median. A victim's whole row moves with its latency's drift over the round (the baseline
  // again differs by up to 2 cycles on an H200); pooled about the baseline, that drift
  // counted as noise (1.6 cycles against 0.8 within rows) and failed L1's +9.7-cycle control.
  std::vector<double> low_res;
  for (int i = 0; i < n; ++i) {
    std::vector<double> row;
    for (int k = 0; k < n; ++k)
      if (k != i && m.cycles[i][k] - ref[i] < 0.5 * std::max(a.control_cycles, 0.0))
        row.push_back(m.cycles[i][k] - ref[i]);
    const double centre = row.size() >= 3 ? median(row) : 0; // too few to centre: about ref
    for (double r : row)
      low_res.push_back(r - centre);
  }
  a.noise_cycles = std::max(robust_sigma(low_res), 0.3); // 0.3: integer rounding alone
}

// A diagonal that does not stand above the noise: global where every cell is L2-or-slower and no
// baseline says otherwise, else the matrix cannot show sharing.
void weak_control(const sharing_matrix &m, double max_cell, const sharing_analysis_options &opt,
                  sharing_analysis &a) {
  char buf[400];
  if (!a.has_baseline && max_cell >= opt.l2_min_cycles) {
    a.scope = sharing_scope::global;
    std::snprintf(
        buf, sizeof buf,
        "the diagonal equals the rest (%+.1f cycles, noise %.1f) and every cell is at "
        "L2-or-slower latency: every disruptor evicts every victim, a level shared by all SMs",
        a.control_cycles, a.noise_cycles);
    a.shared_pairs = a.pairs;
    a.groups.push_back(m.sm_ids);
  } else {
    std::snprintf(buf, sizeof buf,
                  "positive control failed: the victim evicting itself costs %+.1f cycles over %s "
                  "(noise %.1f), so this matrix cannot show sharing",
                  a.control_cycles, a.has_baseline ? "the no-disruptor baseline" : "the row median",
                  a.noise_cycles);
  }
  a.reason = buf;
}

// Each directed cell's rise over its victim's reference, in units of the victim's control (rows
// whose own control is weak use the median control); `xs` the off-diagonal ones.
matrix normalised(const sharing_matrix &m, const std::vector<double> &ref,
                  const std::vector<double> &pos, sharing_analysis &a, std::vector<double> &xs) {
  const int n = int(m.sm_ids.size());
  int weak_rows = 0;
  matrix x(n, std::vector<double>(n, 0));
  for (int i = 0; i < n; ++i) {
    double p = pos[i];
    if (p < 0.5 * a.control_cycles) {
      p = a.control_cycles;
      ++weak_rows;
    }
    for (int k = 0; k < n; ++k) {
      x[i][k] = (m.cycles[i][k] - ref[i]) / p;
      if (k != i)
        xs.push_back(x[i][k]);
    }
  }
  if (weak_rows)
    a.notes.push_back(std::to_string(weak_rows) +
                      " victim SM(s) saw a diagonal below half the median control; "
                      "their cells were scaled by the median control");
  return x;
}

// The threshold on x: between two clusters (some pairs shared), else below one raised cluster
// (all shared), else half the control (none shared).
void choose_threshold(const std::vector<double> &xs, const sharing_analysis_options &opt,
                      sharing_analysis &a) {
  const double floor_x = 0.3 / a.control_cycles;
  const double t = otsu_threshold(xs);
  std::vector<double> lo, hi;
  for (double v : xs)
    (v <= t ? lo : hi).push_back(v);
  bool two = !lo.empty() && !hi.empty();
  if (two) {
    const double spread = std::max({robust_sigma(lo), robust_sigma(hi), floor_x});
    two = (median(hi) - median(lo)) / spread >= opt.separation_sigmas;
    // Both clusters raised past half the diagonal's rise: every disruptor evicts the victim, some
    // a little more (a far L2 half) — one raised cluster, not a split between shared and not.
    two = two && median(lo) < 0.5;
  }
  if (two) {
    a.threshold_x = t;
  } else {
    const double mx = median(xs), sx = std::max(robust_sigma(xs), floor_x);
    if (mx > opt.control_sigmas * sx && mx > 0.15)
      // One raised cluster: all shared. Its threshold is at most half the diagonal's rise: under a
      // tight cluster at ~1 (a level every SM shares) mx - 6 sx sat just below the median, and a
      // few disruptors that evict 5 % less (the far L2 half) fell out of it.
      a.threshold_x = std::max(0.1, std::min(0.5, mx - opt.control_sigmas * sx));
    else
      a.threshold_x = 0.5; // one cluster at the reference: none shared
  }
  a.threshold_cycles = a.threshold_x * a.control_cycles;
}

// Where most pairs share, the few that do not, named with their x both ways (victim<-disruptor
// first): a near-global matrix's exceptions are what tell a slow SM from a second structure.
void unshared_examples(const sharing_matrix &m, const matrix &x,
                       const std::vector<std::vector<char>> &shared, sharing_analysis &a) {
  const int n = int(m.sm_ids.size());
  const int unshared = a.pairs - a.shared_pairs;
  if (unshared == 0 || a.shared_pairs < unshared)
    return;
  std::string ex;
  int named = 0;
  for (int i = 0; i < n && named < 4; ++i)
    for (int k = i + 1; k < n && named < 4; ++k)
      if (!shared[i][k]) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%s%d<-%d %.2f, %d<-%d %.2f", named ? "; " : "", m.sm_ids[i],
                      m.sm_ids[k], x[i][k], m.sm_ids[k], m.sm_ids[i], x[k][i]);
        ex += buf;
        ++named;
      }
  a.notes.push_back(std::to_string(unshared) + " pair(s) not shared, x (victim<-disruptor): " + ex +
                    (unshared > named ? "; ..." : ""));
}

// Pairs shared in both directions (one direction only: noted, not shared), joined into groups.
void share_and_group(const sharing_matrix &m, const matrix &x, const sharing_analysis_options &opt,
                     sharing_analysis &a) {
  const int n = int(m.sm_ids.size());
  union_find uf(n);
  std::vector<std::vector<char>> shared(n, std::vector<char>(n, 0));
  std::vector<std::string> asym_examples;
  for (int i = 0; i < n; ++i)
    for (int k = i + 1; k < n; ++k) {
      const bool ik = x[i][k] > a.threshold_x, ki = x[k][i] > a.threshold_x;
      if (ik && ki) {
        shared[i][k] = shared[k][i] = 1;
        ++a.shared_pairs;
        uf.join(i, k);
      } else if (ik != ki) {
        ++a.asymmetric_pairs;
        if (asym_examples.size() < 4)
          asym_examples.push_back(std::to_string(ik ? m.sm_ids[i] : m.sm_ids[k]) + "<-" +
                                  std::to_string(ik ? m.sm_ids[k] : m.sm_ids[i]));
      }
    }
  unshared_examples(m, x, shared, a);
  if (a.asymmetric_pairs) {
    std::string ex;
    for (const auto &e : asym_examples)
      ex += (ex.empty() ? "" : ", ") + e;
    a.notes.push_back(std::to_string(a.asymmetric_pairs) +
                      " pair(s) raised in one direction only (victim<-disruptor: " + ex +
                      (a.asymmetric_pairs > 4 ? ", ..." : "") + "); treated as not shared");
  }
  std::map<int, std::vector<int>> comp;
  for (int i = 0; i < n; ++i)
    comp[uf.find(i)].push_back(i);
  for (const auto &[root, members] : comp) {
    if (members.size() < 2)
      continue;
    std::vector<int> ids;
    int in_pairs = 0, all_pairs = 0;
    for (std::size_t u = 0; u < members.size(); ++u) {
      ids.push_back(m.sm_ids[members[u]]);
      for (std::size_t v = u + 1; v < members.size(); ++v, ++all_pairs)
        in_pairs += shared[members[u]][members[v]];
    }
    std::sort(ids.begin(), ids.end());
    if (in_pairs < opt.clique_fraction * all_pairs)
      a.notes.push_back("group {" + join_ints(ids) +
                        "} is joined through intermediaries: " + std::to_string(in_pairs) + " of " +
                        std::to_string(all_pairs) + " pairs shared");
    a.groups.push_back(ids);
  }
  std::sort(a.groups.begin(), a.groups.end());
}

// The scope from the shared pairs, its one-sentence reason, and a sample's note.
void verdict(const sharing_matrix &m, const sharing_analysis_options &opt, sharing_analysis &a) {
  const int n = int(m.sm_ids.size());
  char buf[400];
  if (a.shared_pairs == 0) {
    a.scope = sharing_scope::private_;
    std::snprintf(
        buf, sizeof buf,
        "only the diagonal rises (+%.1f cycles, noise %.1f): no other SM evicts a victim's entries",
        a.control_cycles, a.noise_cycles);
  } else if (a.shared_pairs >= opt.global_fraction * a.pairs) {
    a.scope = sharing_scope::global;
    std::snprintf(buf, sizeof buf,
                  "%d of %d pairs evict each other as the diagonal does (+%.1f cycles): one level "
                  "for all SMs",
                  a.shared_pairs, a.pairs, a.control_cycles);
  } else {
    a.scope = sharing_scope::groups;
    std::snprintf(buf, sizeof buf,
                  "%zu groups: %d of %d pairs share (threshold x > %.2f, +%.1f cycles; control "
                  "+%.1f, noise %.1f)",
                  a.groups.size(), a.shared_pairs, a.pairs, a.threshold_x, a.threshold_cycles,
                  a.control_cycles, a.noise_cycles);
    a.structure = describe_structure(a.groups, n);
  }
  a.reason = buf;
  // tlb-sharing --sample-sms: said once, where the verdict is read.
  if (const auto sample = probes::sharing_params_from_json(m.params).sample;
      sample && sample->sms.value_or(0) == n)
    a.reason += "; measured on " + std::to_string(n) + " of " +
                std::to_string(sample->of.value_or(0)) +
                " SMs spread over the GPU (a level every pair of them shares is global)";
}

} // namespace

sharing_analysis analyze_sharing(const sharing_matrix &m, const sharing_analysis_options &opt) {
  sharing_analysis a;
  const int n = int(m.sm_ids.size());
  a.has_baseline = !m.baseline.empty();
  a.pairs = n * (n - 1) / 2;
  if (n < 2) {
    a.reason = "fewer than 2 SMs in the matrix";
    return a;
  }
  const double highest = max_cell(m);
  if (highest < opt.l1_hit_max_cycles) {
    char buf[300];
    std::snprintf(buf, sizeof buf,
                  "every cell is below %.0f cycles (max %.0f): L1-hit latency, the walk never "
                  "reached L2, so the TLB was never exercised",
                  opt.l1_hit_max_cycles, highest);
    a.reason = buf;
    return a;
  }
  std::vector<double> ref, pos;
  reference_and_control(m, a, ref, pos);
  if (!(a.control_cycles > opt.control_sigmas * a.noise_cycles)) {
    weak_control(m, highest, opt, a);
    return a;
  }
  std::vector<double> xs;
  const matrix x = normalised(m, ref, pos, a, xs);
  choose_threshold(xs, opt, a);
  share_and_group(m, x, opt, a);
  verdict(m, opt, a);
  return a;
}

model::level_sharing sharing_model(const sharing_analysis &a) {
  model::level_sharing s;
  s.scope = to_string(a.scope);
  s.groups = a.groups;
  s.reason = a.reason;
  s.detail = {{"structure", a.structure},
              {"positive_control_cycles", a.control_cycles},
              {"noise_cycles", a.noise_cycles},
              {"threshold_x", a.threshold_x},
              {"threshold_cycles", a.threshold_cycles},
              {"reference",
               a.has_baseline ? "baseline (no disruptor)" : "row median (no baseline in input)"},
              {"pairs", a.pairs},
              {"shared_pairs", a.shared_pairs},
              {"asymmetric_pairs", a.asymmetric_pairs},
              {"notes", a.notes}};
  return s;
}

nlohmann::json to_json(const sharing_analysis &a) { return model::to_json(sharing_model(a)); }

std::vector<std::vector<int>> canonical_groups(std::vector<std::vector<int>> groups) {
  for (auto &g : groups)
    std::sort(g.begin(), g.end());
  std::sort(groups.begin(), groups.end());
  return groups;
}

std::string group_sizes(const std::vector<std::vector<int>> &groups) {
  std::map<std::size_t, int, std::greater<>> count;
  for (const auto &g : groups)
    ++count[g.size()];
  std::string s;
  for (const auto &[size, n] : count)
    s += (s.empty() ? "" : " + ") + std::to_string(n) + " x " + std::to_string(size);
  return s;
}

} // namespace gpuprobe::probes
