#include "probes/tlb/synthesis.hpp"

#include "common/defaults.hpp"
#include "common/linear.hpp"
#include "common/steps.hpp"
#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace gpuprobe::probes {

namespace {

using tlb::cache_level;
using tlb::replacement;

struct point {
  std::size_t curve = 0;
  std::uint64_t stride = 0, hops = 0;
  double y = 0, w0 = 1; // cycles per hop; 1 / the curve's noise squared
};

struct design {
  std::vector<point> pts;
  std::size_t curves = 0;
  double noise = 0; // a typical curve's noise: the median over points of their curve's sigma
};

// Every point of every curve: its means where the curve has them (a ramp is linear in the mean),
// weighted by the curve's own noise.
design design_of(const tlb_dataset &d) {
  design out;
  for (const auto &c : d.curves) {
    const auto &y = c.mean_cycles.size() == c.cycles.size() ? c.mean_cycles : c.cycles;
    const std::uint64_t stride = std::uint64_t(std::llround(c.stride_bytes));
    if (y.size() < 4 || stride == 0)
      continue;
    const double sigma = curve_noise(y, defaults::min_noise_cycles);
    for (std::size_t i = 0; i < y.size(); ++i)
      out.pts.push_back({out.curves, stride,
                         std::uint64_t(std::max(1.0, std::round(c.footprint_bytes[i] / double(stride)))),
                         y[i], 1 / (sigma * sigma)});
    ++out.curves;
  }
  std::vector<double> sigma;
  for (const auto &p : out.pts)
    sigma.push_back(1 / std::sqrt(p.w0));
  const auto mid = sigma.begin() + std::ptrdiff_t(sigma.size() / 2);
  std::nth_element(sigma.begin(), mid, sigma.end()); // the upper middle of an even count
  out.noise = sigma.empty() ? 0 : *mid;
  return out;
}

using column = std::vector<double>;

// A level's share of missed hops at every point of the design: its column in the model.
column predicted(const design &D, const cache_level &L) {
  column c(D.pts.size());
  for (std::size_t i = 0; i < D.pts.size(); ++i)
    c[i] = tlb::miss_share(L, D.pts[i].stride, D.pts[i].hops);
  return c;
}

double huber(double r, double k) {
  const double a = std::fabs(r);
  return a <= k ? 0.5 * r * r : k * a - 0.5 * k * k;
}

struct solution {
  std::vector<double> penalty; // per column, >= 0
  std::vector<double> se;      // standard error per column (0 where held at 0)
  std::vector<double> resid;   // in noise sigmas
  double loss = 0;
};

// The points and columns less their curve's weighted mean (one baseline per curve).
struct centered {
  const design *D = nullptr;
  const std::vector<double> *w = nullptr;
  std::vector<double> sw; // each curve's weight
  std::vector<double> dy; // y less its curve's mean
  std::vector<column> d;  // each column less its curve's mean
};

// Pointers to the centered columns, the form fit_centered takes.
std::vector<const column *> pointers(const centered &z) {
  std::vector<const column *> d;
  for (const auto &c : z.d)
    d.push_back(&c);
  return d;
}

column center_column(const centered &z, const column &x) {
  const auto &D = *z.D;
  const auto &w = *z.w;
  std::vector<double> m(D.curves, 0);
  for (std::size_t i = 0; i < D.pts.size(); ++i)
    m[D.pts[i].curve] += w[i] * x[i];
  column out(x.size());
  for (std::size_t i = 0; i < D.pts.size(); ++i) {
    const auto c = D.pts[i].curve;
    out[i] = x[i] - (z.sw[c] > 0 ? m[c] / z.sw[c] : 0);
  }
  return out;
}

centered center(const design &D, const std::vector<const column *> &cols,
                const std::vector<double> &w) {
  centered z;
  z.D = &D;
  z.w = &w;
  z.sw.assign(D.curves, 0);
  column y(D.pts.size());
  for (std::size_t i = 0; i < D.pts.size(); ++i) {
    z.sw[D.pts[i].curve] += w[i];
    y[i] = D.pts[i].y;
  }
  z.dy = center_column(z, y);
  for (const auto *c : cols)
    z.d.push_back(center_column(z, *c));
  return z;
}

// Non-negative least squares of the normal equations A p = b (K x K): the most negative penalty
// is held at 0 and the rest solved again, until none is negative; standard errors from A's
// inverse.
void nonnegative(const std::vector<double> &A, const std::vector<double> &b, std::size_t K,
                 solution &s) {
  std::vector<bool> on(K, true);
  s.penalty.assign(K, 0);
  s.se.assign(K, 0);
  for (;;) {
    std::vector<std::size_t> idx;
    for (std::size_t j = 0; j < K; ++j)
      if (on[j])
        idx.push_back(j);
    const std::size_t m = idx.size();
    std::vector<double> Aa(m * m), ba(m), x;
    for (std::size_t a = 0; a < m; ++a) {
      ba[a] = b[idx[a]];
      for (std::size_t c = 0; c < m; ++c)
        Aa[a * m + c] = A[idx[a] * K + idx[c]];
    }
    std::fill(s.penalty.begin(), s.penalty.end(), 0.0);
    if (m && !solve_linear(Aa, ba, m, x)) {
      on[idx.back()] = false; // a column that is another's: hold the later one at 0
      continue;
    }
    std::size_t worst = K;
    for (std::size_t a = 0; a < m; ++a) {
      s.penalty[idx[a]] = x[a];
      if (x[a] < 0 && (worst == K || x[a] < s.penalty[worst]))
        worst = idx[a];
    }
    if (worst == K) {
      for (std::size_t a = 0; a < m; ++a) { // the diagonal of A's inverse, column by column
        std::vector<double> e(m, 0), col;
        e[a] = 1;
        if (solve_linear(Aa, e, m, col))
          s.se[idx[a]] = std::sqrt(std::max(0.0, col[a]));
      }
      return;
    }
    on[worst] = false;
  }
}

// The fit of the centered columns `d` (pointers into z.d, or a candidate's): penalties, their
// errors, the residuals in noise sigmas and the robust loss.
solution fit_centered(const centered &z, const std::vector<const column *> &d, double k,
                      bool keep_residuals) {
  const auto &D = *z.D;
  const auto &w = *z.w;
  const std::size_t K = d.size(), n = D.pts.size();
  std::vector<double> A(K * K, 0), b(K, 0);
  for (std::size_t j = 0; j < K; ++j) {
    const column &dj = *d[j];
    for (std::size_t i = 0; i < n; ++i)
      b[j] += w[i] * dj[i] * z.dy[i];
    for (std::size_t l = j; l < K; ++l) {
      const column &dl = *d[l];
      double a = 0;
      for (std::size_t i = 0; i < n; ++i)
        a += w[i] * dj[i] * dl[i];
      A[j * K + l] = A[l * K + j] = a;
    }
  }
  solution s;
  nonnegative(A, b, K, s);
  if (keep_residuals)
    s.resid.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    double r = z.dy[i];
    for (std::size_t j = 0; j < K; ++j)
      r -= s.penalty[j] * (*d[j])[i];
    r *= std::sqrt(D.pts[i].w0);
    if (keep_residuals)
      s.resid[i] = r;
    s.loss += huber(r, k);
  }
  return s;
}

// Weighted least squares of the points on the columns with one baseline per curve and
// non-negative penalties.
solution solve(const design &D, const std::vector<const column *> &cols,
               const std::vector<double> &w, double k) {
  const centered z = center(D, cols, w);
  return fit_centered(z, pointers(z), k, true);
}

// The robust fit: weights re-drawn from the residuals (Huber) a few times.
solution evaluate(const design &D, const std::vector<const column *> &cols, double k,
                  std::vector<double> *weights_out = nullptr) {
  std::vector<double> w(D.pts.size());
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] = D.pts[i].w0;
  solution s = solve(D, cols, w, k);
  for (int it = 0; it < 4; ++it) {
    for (std::size_t i = 0; i < w.size(); ++i)
      w[i] = D.pts[i].w0 * std::min(1.0, k / std::max(1e-12, std::fabs(s.resid[i])));
    s = solve(D, cols, w, k);
  }
  if (weights_out)
    *weights_out = w;
  return s;
}

struct option {
  cache_level L;
  column col;
  std::size_t same_as = 0; // the first option with this very column (itself where none)
};

bool power_of_two(std::uint64_t v) { return v && !(v & (v - 1)); }

// The structures a proposal may have: entries a power of two near its own (or its own count,
// fully associative, where that is no power of two), every ways x sets of them up to max_ways
// ways, each set index and replacement; and its ramp fit's own ways x sets.
std::vector<option> options_of(const design &D, const level_proposal &p,
                               const synthesis_options &o) {
  std::vector<cache_level> ls;
  const int page_log = int(std::lround(std::log2(std::max(4096.0, p.page_bytes))));
  const auto add = [&](std::uint64_t sets, std::uint64_t ways, int cover_log) {
    for (int x = 0; x < (sets > 1 ? 2 : 1); ++x)
      for (int r = 0; r < (ways > 1 ? 2 : 1); ++r) {
        cache_level L;
        L.sets = sets;
        L.ways = ways;
        L.coverage_bytes = std::uint64_t(1) << cover_log;
        L.xor_index = x == 1;
        L.repl = r ? replacement::random : replacement::lru;
        L.penalty_cycles = 1;
        if (std::none_of(ls.begin(), ls.end(), [&](const cache_level &q) {
              return q.sets == L.sets && q.ways == L.ways && q.xor_index == L.xor_index &&
                     q.repl == L.repl && q.coverage_bytes == L.coverage_bytes;
            }))
          ls.push_back(L);
      }
  };
  const bool own_first = p.ways >= 1 && p.sets >= 1 && power_of_two(std::uint64_t(p.sets));
  if (own_first)
    add(std::uint64_t(p.sets), std::uint64_t(std::llround(p.ways)), page_log);
  const std::uint64_t own = std::uint64_t(std::max(1.0, std::round(p.entries)));
  if (!power_of_two(own))
    add(1, own, page_log);
  // Pages the strides allow: [min_page_bytes, max_page_bytes], or coverage_octaves either side of
  // the page where the proposal gives no bounds. Where the page shrinks, the entries
  // hold (strides above the page count hops) or the reach does (strides below it see a
  // footprint): either, within a factor of two.
  const auto log_of = [](double b) { return int(std::lround(std::log2(std::max(4096.0, b)))); };
  const int lo = std::max(12, p.min_page_bytes > 0 ? log_of(p.min_page_bytes)
                                                   : page_log - o.coverage_octaves);
  const int hi = p.max_page_bytes > 0 ? std::min(40, log_of(p.max_page_bytes))
                                      : page_log + o.coverage_octaves;
  for (int c = lo; c <= hi; ++c)
    for (std::uint64_t e = 2; e <= (1ull << 24); e *= 2) {
      const double same_reach = p.entries * std::exp2(double(page_log - c));
      if (double(e) < std::min(p.entries, same_reach) / 2.1 ||
          double(e) > std::max(p.entries, same_reach) * 2.1)
        continue;
      add(1, e, c);
      for (std::uint64_t s = 2; s <= e / 2; s *= 2)
        if (e / s <= std::uint64_t(o.max_ways))
          add(s, e / s, c);
    }
  // Nearest the proposal first: the search keeps the earlier of two equal fits, so what the sweep
  // cannot tell stays as the rise detectors read it.
  const auto distance = [&](const cache_level &L) {
    return std::fabs(std::log2(double(L.coverage_bytes)) - double(page_log)) +
           std::fabs(std::log2(double(L.entries()) / std::max(1.0, p.entries))) +
           (L.xor_index ? 0.01 : 0) + (L.repl == replacement::random ? 0.02 : 0);
  };
  std::stable_sort(ls.begin() + (own_first ? 1 : 0), ls.end(),
                   [&](const cache_level &a, const cache_level &b) {
                     return distance(a) < distance(b);
                   });
  std::vector<option> out;
  for (const auto &L : ls) {
    option op{L, predicted(D, L), out.size()};
    // Structures the sweep cannot tell apart predict the same curves: searched once.
    for (std::size_t j = 0; j < out.size(); ++j)
      if (out[j].same_as == j && out[j].col == op.col) {
        op.same_as = j;
        break;
      }
    out.push_back(std::move(op));
  }
  return out;
}

struct search {
  const design &D;
  const std::vector<std::vector<option>> &opts;
  double k;

  std::vector<const column *> columns(const std::vector<std::size_t> &active,
                                      const std::vector<std::size_t> &choice) const {
    std::vector<const column *> c;
    for (auto q : active)
      c.push_back(&opts[q][choice[q]].col);
    return c;
  }
  double loss_of(const std::vector<std::size_t> &active,
                 const std::vector<std::size_t> &choice) const {
    return evaluate(D, columns(active, choice), k).loss;
  }
  // Each level's structure in turn, the others held: the one the whole sweep fits best (weights
  // from the model before the pass), until no level changes.
  void descend(const std::vector<std::size_t> &active, std::vector<std::size_t> &choice,
               int passes) const {
    for (int pass = 0; pass < passes; ++pass) {
      std::vector<double> w;
      evaluate(D, columns(active, choice), k, &w);
      bool changed = false;
      for (std::size_t a = 0; a < active.size(); ++a) {
        const auto q = active[a];
        const centered z = center(D, columns(active, choice), w);
        auto d = pointers(z);
        double best = fit_centered(z, d, k, false).loss;
        std::size_t pick = choice[q];
        for (std::size_t o = 0; o < opts[q].size(); ++o) {
          if (o == choice[q] || opts[q][o].same_as != o)
            continue;
          const column x = center_column(z, opts[q][o].col);
          d[a] = &x;
          const double l = fit_centered(z, d, k, false).loss;
          if (l < best - 1e-9) {
            best = l;
            pick = o;
          }
        }
        changed |= pick != choice[q];
        choice[q] = pick;
      }
      if (!changed)
        break;
    }
  }
};

// What one entry holds: each level's entry whole, or filled in halves (two sectors): every
// structure of the level is offered again in halves and the whole model searched once more; the
// halves stay where they lower the loss by a level's cost.
void refine_sectors(const design &D, const synthesis_options &opt,
                    std::vector<std::vector<option>> &opts, const std::vector<std::size_t> &active,
                    std::vector<std::size_t> &choice) {
  for (const auto q : active) {
    const double now = search{D, opts, opt.huber}.loss_of(active, choice);
    const std::size_t whole = opts[q].size();
    for (std::size_t o = 0; o < whole; ++o) {
      const cache_level &L = opts[q][o].L;
      if (opts[q][o].same_as != o || L.sector_bytes || L.coverage_bytes < 8192)
        continue;
      cache_level halves = L;
      halves.sector_bytes = L.coverage_bytes / 2;
      opts[q].push_back({halves, predicted(D, halves), opts[q].size()});
    }
    auto c = choice;
    const search S{D, opts, opt.huber};
    S.descend(active, c, 2);
    if (opts[q][c[q]].L.sector_bytes && S.loss_of(active, c) < now - opt.level_cost)
      choice = c;
    else
      opts[q].resize(whole); // the entry is whole: its halves leave the search
  }
}

// Where the proposals leave a misfit, the level that explains most of it: a fully associative
// level of every page from 4 KiB to 512 MiB and every power-of-two count from 8 to 65,536 is
// tried beside the others; the best, where it lowers the loss by a level's cost, is proposed,
// its structure searched, and the whole model searched again.
void add_missing_levels(const design &D, const synthesis_options &opt,
                        std::vector<level_proposal> &all, std::vector<std::vector<option>> &opts,
                        std::vector<std::size_t> &active, std::vector<std::size_t> &choice) {
  for (int added = 0; added < opt.max_added; ++added) {
    const search S{D, opts, opt.huber};
    std::vector<double> w;
    evaluate(D, S.columns(active, choice), opt.huber, &w);
    const centered z = center(D, S.columns(active, choice), w);
    auto d = pointers(z);
    const double now = fit_centered(z, d, opt.huber, false).loss;
    d.push_back(nullptr);
    double best = now;
    level_proposal pick;
    for (int c = 12; c <= 29; ++c)
      for (int e = 3; e <= 16; ++e) {
        cache_level L;
        L.sets = 1;
        L.ways = std::uint64_t(1) << e;
        L.coverage_bytes = std::uint64_t(1) << c;
        const column cx = center_column(z, predicted(D, L));
        d.back() = &cx;
        const double l = fit_centered(z, d, opt.huber, false).loss;
        if (l < best) {
          best = l;
          pick = {double(L.ways), double(L.coverage_bytes), 0, 0,
                  double(L.coverage_bytes) / 2, double(L.coverage_bytes) * 2};
        }
      }
    if (now - best < opt.level_cost)
      return;
    all.push_back(pick);
    opts.push_back(options_of(D, pick, opt));
    active.push_back(all.size() - 1);
    auto c = choice;
    c.push_back(0); // nearest the grid's pick: its fully associative count at its page
    const search S2{D, opts, opt.huber};
    S2.descend(active, c, 2);
    // A level the model adds must cost what the family calls recoverable: 3 x the noise.
    if (evaluate(D, S2.columns(active, c), opt.huber).penalty.back() <
        opt.min_added_penalty_sigmas * D.noise) {
      active.pop_back();
      all.pop_back();
      opts.pop_back();
      return;
    }
    choice = c;
  }
}

} // namespace

double model_confidence(double gain, double penalty_over_noise, bool added) {
  // Logistic coefficients fitted on the family (scripts/simulated_family.sh's GPUs, seeds 45 and
  // 46, 300 a mode: SimulatedGpus.DISABLED_FitTheModelsCalibration prints them).
  constexpr double c0 = -1.0315, c_gain = 0.8826, c_penalty = -0.3873, c_added = -0.9473;
  const double x = c0 + c_gain * std::log10(std::max(gain, 1.0)) +
                   c_penalty * std::log10(std::max(penalty_over_noise, 0.1)) +
                   c_added * (added ? 1 : 0);
  return 1 / (1 + std::exp(-x));
}

synthesis_fit fit_fixed(const tlb_dataset &data, const std::vector<cache_level> &levels,
                        const synthesis_options &opt) {
  synthesis_fit out;
  const design D = design_of(data);
  out.points = int(D.pts.size());
  std::vector<column> cols;
  for (const auto &L : levels)
    cols.push_back(predicted(D, L));
  std::vector<const column *> c;
  for (const auto &x : cols)
    c.push_back(&x);
  const solution s = evaluate(D, c, opt.huber);
  out.fitted = true;
  out.loss = s.loss;
  out.loss_without_levels = evaluate(D, {}, opt.huber).loss;
  for (std::size_t k = 0; k < levels.size(); ++k) {
    fitted_level f;
    f.proposal = k;
    f.level = levels[k];
    f.level.penalty_cycles = s.penalty[k];
    f.penalty_lo = std::max(0.0, s.penalty[k] - 2 * s.se[k]);
    f.penalty_hi = s.penalty[k] + 2 * s.se[k];
    out.levels.push_back(f);
  }
  return out;
}

std::string model_words(const cache_level &L) {
  char b[160];
  if (L.sector_bytes && L.sector_bytes < L.coverage_bytes) {
    cache_level whole = L;
    whole.sector_bytes = 0;
    std::snprintf(b, sizeof b, ", each entry filled in %llu sectors of %s",
                  (unsigned long long)(L.coverage_bytes / L.sector_bytes),
                  format_bytes(double(L.sector_bytes)).c_str());
    return model_words(whole) + b;
  }
  if (L.sets <= 1)
    std::snprintf(b, sizeof b, "%llu entries, fully associative, %s",
                  (unsigned long long)L.ways, tlb::replacement_name(L.repl));
  else
    std::snprintf(b, sizeof b, "%llu ways x %llu sets, %s index, %s", (unsigned long long)L.ways,
                  (unsigned long long)L.sets, tlb::index_name(L), tlb::replacement_name(L.repl));
  return b;
}

synthesis_fit fit_hierarchy(const tlb_dataset &data, const std::vector<level_proposal> &proposals,
                            const synthesis_options &opt) {
  synthesis_fit out;
  const design D = design_of(data);
  out.points = int(D.pts.size());
  if (proposals.empty() || D.pts.size() < 16)
    return out;
  std::vector<std::vector<option>> opts;
  for (const auto &p : proposals)
    opts.push_back(options_of(D, p, opt));
  const search S{D, opts, opt.huber};
  std::vector<std::size_t> active, choice(proposals.size(), 0);
  for (std::size_t q = 0; q < proposals.size(); ++q)
    active.push_back(q); // the first option is the ramp fit's own, or the proposal's count
  S.descend(active, choice, 3);
  refine_sectors(D, opt, opts, active, choice);
  std::vector<level_proposal> all = proposals;
  add_missing_levels(D, opt, all, opts, active, choice);
  out.loss_without_levels = evaluate(D, {}, opt.huber).loss;
  // Drop the proposal whose absence costs least while that cost is below a level's.
  std::vector<double> gain(all.size(), 0);
  for (;;) {
    const double now = S.loss_of(active, choice);
    std::size_t weakest = active.size();
    std::vector<std::size_t> weakest_choice;
    double least = std::numeric_limits<double>::infinity();
    for (std::size_t a = 0; a < active.size(); ++a) {
      auto rest = active;
      rest.erase(rest.begin() + std::ptrdiff_t(a));
      auto c = choice;
      S.descend(rest, c, 1);
      const double g = S.loss_of(rest, c) - now;
      gain[active[a]] = g;
      if (g < least) {
        least = g;
        weakest = a;
        weakest_choice = c;
      }
    }
    if (weakest == active.size() || least >= opt.level_cost)
      break;
    if (active[weakest] < proposals.size())
      out.dropped.push_back(active[weakest]);
    active.erase(active.begin() + std::ptrdiff_t(weakest));
    choice = weakest_choice;
  }
  std::vector<double> w;
  const solution fin = evaluate(D, S.columns(active, choice), opt.huber, &w);
  out.loss = fin.loss;
  out.fitted = true;
  for (std::size_t a = 0; a < active.size(); ++a) {
    const auto q = active[a];
    fitted_level f;
    f.proposal = q;
    f.level = opts[q][choice[q]].L;
    f.level.penalty_cycles = fin.penalty[a];
    f.gain = gain[q];
    f.noise_cycles = D.noise;
    f.added = q >= proposals.size();
    f.confidence = model_confidence(f.gain, fin.penalty[a] / std::max(1e-9, f.noise_cycles),
                                    f.added);
    f.penalty_lo = std::max(0.0, fin.penalty[a] - 2 * fin.se[a]);
    f.penalty_hi = fin.penalty[a] + 2 * fin.se[a];
    // The structures the sweep cannot tell from the best: within interval_loss of it.
    auto cols = S.columns(active, choice);
    const double best = solve(D, cols, w, opt.huber).loss;
    f.entries_lo = f.entries_hi = double(f.level.entries());
    f.sets_lo = f.sets_hi = double(f.level.sets);
    f.ways_lo = f.ways_hi = double(f.level.ways);
    for (const auto &op : opts[q]) {
      cols[a] = &op.col;
      if (solve(D, cols, w, opt.huber).loss > best + opt.interval_loss)
        continue;
      f.entries_lo = std::min(f.entries_lo, double(op.L.entries()));
      f.entries_hi = std::max(f.entries_hi, double(op.L.entries()));
      f.sets_lo = std::min(f.sets_lo, double(op.L.sets));
      f.sets_hi = std::max(f.sets_hi, double(op.L.sets));
      f.ways_lo = std::min(f.ways_lo, double(op.L.ways));
      f.ways_hi = std::max(f.ways_hi, double(op.L.ways));
      f.alternatives_differ |= op.L.xor_index != f.level.xor_index || op.L.repl != f.level.repl;
    }
    out.levels.push_back(f);
  }
  return out;
}

} // namespace gpuprobe::probes
