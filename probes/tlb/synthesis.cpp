#include "probes/tlb/synthesis.hpp"

#include "common/defaults.hpp"
#include "common/linear.hpp"
#include "common/steps.hpp"
#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <unordered_map>

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

// A curve's noise as the model weighs it: the MAD of its neighbouring differences. The detectors'
// curve_noise also takes a mean jitter (so that their steps do not count as noise), which a ramp's
// run of rises inflates: on a quick sweep's short curves a level's ramp read a noise of 1.03 as
// 2.95, and the model, weighing each curve by 1 / sigma^2, took a ninth of its evidence. The
// jitter stays the fallback where the MAD is under the floor (integer-valued flat curves).
double model_noise(const std::vector<double> &y) {
  const double sigma = differences_sigma(y);
  return sigma >= defaults::min_noise_cycles ? sigma
                                             : curve_noise(y, defaults::min_noise_cycles);
}

// Every point of every curve: its means where the curve has them (a ramp is linear in the mean),
// weighted by the curve's own noise.
design design_of(const tlb_dataset &d) {
  design out;
  for (const auto &c : d.curves) {
    const auto &y = c.mean_cycles.size() == c.cycles.size() ? c.mean_cycles : c.cycles;
    const std::uint64_t stride = std::uint64_t(std::llround(c.stride_bytes));
    if (y.size() < 4 || stride == 0)
      continue;
    const double sigma = model_noise(y);
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

// Pointers to columns, the form the fits take.
std::vector<const column *> pointers(const std::vector<column> &cols) {
  std::vector<const column *> d;
  for (const auto &c : cols)
    d.push_back(&c);
  return d;
}
std::vector<const column *> pointers(const centered &z) { return pointers(z.d); }

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
                 solution &s, bool errors = true) {
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
      for (std::size_t a = 0; a < m && errors; ++a) { // the diagonal of A's inverse, column by column
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
  const int page_log = int(std::lround(std::log2(std::max(4096.0, p.coverage_bytes))));
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
  // Pages the strides allow: [min_coverage_bytes, max_coverage_bytes], or coverage_octaves either
  // side of the page where the proposal gives no bounds. Where the page shrinks, the entries hold
  // (strides above the page count hops) or the reach does (strides below it see a footprint):
  // either, within a factor of two.
  const auto log_of = [](double b) { return int(std::lround(std::log2(std::max(4096.0, b)))); };
  const int lo = std::max(12, p.min_coverage_bytes > 0 ? log_of(p.min_coverage_bytes)
                                                       : page_log - o.coverage_octaves);
  const int hi = p.max_coverage_bytes > 0 ? std::min(40, log_of(p.max_coverage_bytes))
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

// Every structure the analyzer can name, as one pool searched by every level: pages of 4 KiB to
// 512 MiB, 8 to 65,536 entries, fully associative or 2 to max_ways ways, either set index and
// either replacement. Structures the sweep cannot tell apart (the same column) are searched once,
// as the first in this order (fully associative, then the fewest sets, modulo before xor, lru
// before random); a structure that misses nowhere in the sweep is left out.
struct pool {
  std::vector<cache_level> L;
  std::vector<column> col;
  std::vector<std::vector<cache_level>> alike; // every structure of the same column, L first
};

pool pool_of(const design &D, const synthesis_options &o) {
  pool P;
  // A column depends on a point's stride and hops alone: each pair is predicted once.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> keys;
  std::vector<std::size_t> key_of(D.pts.size());
  {
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> index;
    for (std::size_t i = 0; i < D.pts.size(); ++i) {
      const auto k = std::make_pair(D.pts[i].stride, D.pts[i].hops);
      const auto [it, fresh] = index.try_emplace(k, keys.size());
      if (fresh)
        keys.push_back(k);
      key_of[i] = it->second;
    }
  }
  std::vector<double> at(keys.size());
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> seen; // a column's hash -> entries
  const auto hash = [](const column &c) {
    std::uint64_t h = 1469598103934665603ull;
    for (const double v : c) {
      std::uint64_t b = 0;
      std::memcpy(&b, &v, sizeof b);
      h = (h ^ b) * 1099511628211ull;
    }
    return h;
  };
  for (int c = 12; c <= 29; ++c)
    for (int e = 3; e <= 16; ++e)
      for (int w = e; w >= 1; --w) { // fully associative first, then ever more sets
        if (w < e && (1 << w) > o.max_ways)
          continue;
        for (int x = 0; x < (w < e ? 2 : 1); ++x)
          for (int r = 0; r < 2; ++r) {
            cache_level L;
            L.ways = std::uint64_t(1) << w;
            L.sets = std::uint64_t(1) << (e - w);
            L.coverage_bytes = std::uint64_t(1) << c;
            L.xor_index = x == 1;
            L.repl = r ? replacement::random : replacement::lru;
            L.penalty_cycles = 1;
            for (std::size_t k = 0; k < keys.size(); ++k)
              at[k] = tlb::miss_share(L, keys[k].first, keys[k].second);
            if (std::all_of(at.begin(), at.end(), [](double v) { return v == 0; }))
              continue;
            column col(D.pts.size());
            for (std::size_t i = 0; i < col.size(); ++i)
              col[i] = at[key_of[i]];
            auto &same = seen[hash(col)];
            const auto known = std::find_if(same.begin(), same.end(),
                                            [&](std::size_t j) { return P.col[j] == col; });
            if (known != same.end()) {
              P.alike[*known].push_back(L);
              continue;
            }
            same.push_back(P.L.size());
            P.alike.push_back({L});
            P.L.push_back(L);
            P.col.push_back(std::move(col));
          }
      }
  return P;
}

// The pool's columns against the model's, under the model's robust weights: every dot product a
// move needs, formed once a step. The weighted least-squares loss of any of the model's columns
// with at most one of the pool's follows from them: 0.5 (y'Wy - 2 p'b + p'Ap).
struct gram {
  std::size_t K = 0;
  std::vector<double> A, b; // the model's columns: K x K, K
  double yy = 0;
  std::vector<double> xa, xx, xy; // each pool column against the model's (P x K), itself, y
};

gram gram_of(const centered &z, const pool &P) {
  const auto &w = *z.w;
  const std::size_t n = w.size();
  gram G;
  G.K = z.d.size();
  G.A.assign(G.K * G.K, 0);
  G.b.assign(G.K, 0);
  for (std::size_t i = 0; i < n; ++i)
    G.yy += w[i] * z.dy[i] * z.dy[i];
  for (std::size_t j = 0; j < G.K; ++j) {
    for (std::size_t i = 0; i < n; ++i)
      G.b[j] += w[i] * z.d[j][i] * z.dy[i];
    for (std::size_t l = j; l < G.K; ++l) {
      double v = 0;
      for (std::size_t i = 0; i < n; ++i)
        v += w[i] * z.d[j][i] * z.d[l][i];
      G.A[j * G.K + l] = G.A[l * G.K + j] = v;
    }
  }
  G.xa.assign(P.col.size() * G.K, 0);
  G.xx.assign(P.col.size(), 0);
  G.xy.assign(P.col.size(), 0);
  // The model's columns and y are centered per curve under w, so a pool column's products with
  // them need no centering; its own square loses each curve's weighted mean.
  std::vector<double> per_curve(z.sw.size());
  for (std::size_t c = 0; c < P.col.size(); ++c) {
    const column &x = P.col[c];
    std::fill(per_curve.begin(), per_curve.end(), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      const double wx = w[i] * x[i];
      per_curve[z.D->pts[i].curve] += wx;
      G.xx[c] += wx * x[i];
      G.xy[c] += wx * z.dy[i];
      for (std::size_t j = 0; j < G.K; ++j)
        G.xa[c * G.K + j] += wx * z.d[j][i];
    }
    for (std::size_t k = 0; k < per_curve.size(); ++k)
      if (z.sw[k] > 0)
        G.xx[c] -= per_curve[k] * per_curve[k] / z.sw[k];
  }
  return G;
}

constexpr std::size_t none = std::numeric_limits<std::size_t>::max();

// The weighted least-squares loss of the model's columns `keep` and pool column `c` (none: no
// pool column), penalties non-negative.
double quadratic_loss(const gram &G, const std::vector<std::size_t> &keep, std::size_t c) {
  const std::size_t m = keep.size() + (c != none ? 1 : 0);
  std::vector<double> A(m * m), b(m);
  for (std::size_t j = 0; j < keep.size(); ++j) {
    b[j] = G.b[keep[j]];
    for (std::size_t l = 0; l < keep.size(); ++l)
      A[j * m + l] = G.A[keep[j] * G.K + keep[l]];
  }
  if (c != none) {
    const std::size_t x = m - 1;
    for (std::size_t j = 0; j < keep.size(); ++j)
      A[j * m + x] = A[x * m + j] = G.xa[c * G.K + keep[j]];
    A[x * m + x] = G.xx[c];
    b[x] = G.xy[c];
  }
  solution s;
  nonnegative(A, b, m, s, false);
  double q = G.yy;
  for (std::size_t j = 0; j < m; ++j) {
    q -= 2 * s.penalty[j] * b[j];
    for (std::size_t l = 0; l < m; ++l)
      q += s.penalty[j] * s.penalty[l] * A[j * m + l];
  }
  return 0.5 * q;
}

// The robust loss plus a level's cost per level; infinite where an added level (the last, with
// `added`) costs less than what the family calls recoverable: min_added_penalty_sigmas x the
// noise.
double penalized_loss(const design &D, const synthesis_options &opt, const std::vector<column> &c,
                      bool added) {
  const solution s = evaluate(D, pointers(c), opt.huber);
  if (added && s.penalty.back() < opt.min_added_penalty_sigmas * D.noise)
    return std::numeric_limits<double>::infinity();
  return s.loss + opt.level_cost * double(c.size());
}

// The hierarchy after a move: levels `out1` and `out2` (none: no level) left out, and a level
// `in` with its column `in_col` and origin `in_origin` put in (in == nullptr: none).
void apply_move(const std::vector<cache_level> &levels, const std::vector<column> &cols,
                const std::vector<std::size_t> &origin, std::size_t out1, std::size_t out2,
                const cache_level *in, const column *in_col, std::size_t in_origin,
                std::vector<cache_level> &L2, std::vector<column> &C2,
                std::vector<std::size_t> &O2) {
  for (std::size_t a = 0; a < levels.size(); ++a)
    if (a != out1 && a != out2) {
      L2.push_back(levels[a]);
      C2.push_back(cols[a]);
      O2.push_back(origin[a]);
    }
  if (in) {
    L2.push_back(*in);
    C2.push_back(*in_col);
    O2.push_back(in_origin);
  }
}

// The hierarchy searched over the whole pool from where the proposals led: a level's structure
// replaced by any of the pool's, a level added, a level dropped, or two merged into one. Each
// step ranks every such move by its weighted least-squares loss plus a level's cost per level,
// fits the best few robustly, and takes the one that lowers the robust loss plus the levels'
// cost most, until none does.
void improve_over_pool(const design &D, const synthesis_options &opt, const pool &P,
                       std::vector<cache_level> &levels, std::vector<column> &cols,
                       std::vector<std::size_t> &origin, std::size_t next_origin) {
  const auto penalized = [&](const std::vector<column> &c, bool added = false) {
    return penalized_loss(D, opt, c, added);
  };
  struct move {
    double score;
    std::size_t out1, out2, in; // levels left out (none: no level), the pool's column put in
  };
  double now = penalized(cols);
  for (int step = 0; step < 16; ++step) {
    const auto all = pointers(cols);
    std::vector<double> w;
    evaluate(D, all, opt.huber, &w);
    const centered z = center(D, all, w);
    const gram G = gram_of(z, P);
    const std::size_t K = cols.size();
    const auto without = [&](std::size_t o1, std::size_t o2) {
      std::vector<std::size_t> keep;
      for (std::size_t a = 0; a < K; ++a)
        if (a != o1 && a != o2)
          keep.push_back(a);
      return keep;
    };
    const double cost = opt.level_cost;
    const double base = quadratic_loss(G, without(none, none), none) + cost * double(K);
    std::vector<move> moves;
    const auto every_column = [&](std::size_t o1, std::size_t o2) {
      const auto keep = without(o1, o2);
      for (std::size_t c = 0; c < P.col.size(); ++c)
        moves.push_back({quadratic_loss(G, keep, c) + cost * double(keep.size() + 1), o1, o2, c});
    };
    every_column(none, none); // a level added
    for (std::size_t a = 0; a < K; ++a) {
      every_column(a, none); // replaced
      moves.push_back({quadratic_loss(G, without(a, none), none) + cost * double(K - 1), a, none,
                       none}); // dropped
      for (std::size_t b2 = a + 1; b2 < K; ++b2)
        every_column(a, b2); // two merged into one
    }
    const std::size_t top = std::min<std::size_t>(8, moves.size());
    std::partial_sort(moves.begin(), moves.begin() + std::ptrdiff_t(top), moves.end(),
                      [](const move &x, const move &y) { return x.score < y.score; });
    double best = now - 0.5;
    bool found = false;
    std::vector<cache_level> bestL;
    std::vector<column> bestC;
    std::vector<std::size_t> bestO;
    for (std::size_t m = 0; m < top && moves[m].score < base - 0.5; ++m) {
      const move &mv = moves[m];
      std::vector<cache_level> L2;
      std::vector<column> C2;
      std::vector<std::size_t> O2;
      // A replaced level keeps its origin, a merge the first's; an added level is new.
      const bool put = mv.in != none;
      apply_move(levels, cols, origin, mv.out1, mv.out2, put ? &P.L[mv.in] : nullptr,
                 put ? &P.col[mv.in] : nullptr, mv.out1 == none ? next_origin : origin[mv.out1],
                 L2, C2, O2);
      const double then = penalized(C2, mv.in != none && mv.out1 == none);
      if (then < best) {
        found = true;
        best = then;
        bestL = std::move(L2);
        bestC = std::move(C2);
        bestO = std::move(O2);
      }
    }
    if (!found)
      return;
    if (!bestO.empty() && bestO.back() == next_origin)
      ++next_origin;
    now = best;
    levels = std::move(bestL);
    cols = std::move(bestC);
    origin = std::move(bestO);
  }
}

// What one entry holds: each level's entry whole, or filled in halves (two sectors: a hop to a
// half not yet filled misses although the entry's tag is present). A level in halves replaces
// that level, or that level and another (a whole entry beside a level of half its coverage
// imitates halves at one more level's cost), where it lowers the loss plus the levels' cost and
// the halves' own (sector_cost). True where an entry was split.
bool split_entries(const design &D, const synthesis_options &opt, std::vector<cache_level> &levels,
                   std::vector<column> &cols, std::vector<std::size_t> &origin) {
  const auto penalized = [&](const std::vector<column> &c) {
    return penalized_loss(D, opt, c, false);
  };
  bool split = false;
  for (;;) {
    const double now = penalized(cols);
    double best = now;
    std::size_t pick = levels.size(), also = levels.size();
    cache_level halves_of_pick;
    column halves_col;
    for (std::size_t a = 0; a < levels.size(); ++a) {
      const cache_level &L = levels[a];
      if (L.sector_bytes || L.coverage_bytes < 8192)
        continue;
      cache_level halves = L;
      halves.sector_bytes = L.coverage_bytes / 2;
      const column hc = predicted(D, halves);
      for (std::size_t b = 0; b <= levels.size(); ++b) { // b == size: a alone
        if (b == a)
          continue;
        std::vector<cache_level> L2;
        std::vector<column> c;
        std::vector<std::size_t> O2;
        apply_move(levels, cols, origin, a, b, &halves, &hc, 0, L2, c, O2);
        const double l = penalized(c) + opt.sector_cost;
        if (l < best) {
          best = l;
          pick = a;
          also = b;
          halves_of_pick = halves;
          halves_col = hc;
        }
      }
    }
    if (pick == levels.size())
      return split;
    split = true;
    std::vector<cache_level> L2;
    std::vector<column> C2;
    std::vector<std::size_t> O2;
    apply_move(levels, cols, origin, pick, also, &halves_of_pick, &halves_col,
               also < levels.size() ? std::min(origin[pick], origin[also]) : origin[pick], L2, C2,
               O2);
    levels = std::move(L2);
    cols = std::move(C2);
    origin = std::move(O2);
  }
}

} // namespace

double model_confidence(double gain, double penalty_over_noise, bool added) {
  // Logistic coefficients fitted on simulated GPUs of seeds 145 and 146 (200 a mode, none of the
  // family table's: SimulatedGpus.DISABLED_FitTheModelsCalibration prints them).
  constexpr double c0 = 1.7144, c_gain = 1.3445, c_penalty = -1.1034, c_added = -0.4658;
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

namespace {

// The hierarchy the proposals lead to: each proposal's structure searched near its own entries and
// page (the first option is the ramp fit's own, or the proposal's count).
void start_from_proposals(const design &D, const std::vector<level_proposal> &proposals,
                          const synthesis_options &opt, std::vector<cache_level> &levels,
                          std::vector<column> &cols, std::vector<std::size_t> &origin) {
  std::vector<std::vector<option>> opts;
  for (const auto &p : proposals)
    opts.push_back(options_of(D, p, opt));
  std::vector<std::size_t> active, choice(proposals.size(), 0);
  for (std::size_t q = 0; q < proposals.size(); ++q)
    active.push_back(q);
  search{D, opts, opt.huber}.descend(active, choice, 1);
  for (const auto q : active) {
    levels.push_back(opts[q][choice[q]].L);
    cols.push_back(opts[q][choice[q]].col);
    origin.push_back(q);
  }
}

// A level no rise proposed (origin >= `proposed`) stays only where its penalty is at least
// min_added_penalty_sigmas x the sweep's typical noise.
void prune_added(const design &D, const synthesis_options &opt, std::size_t proposed,
                 std::vector<cache_level> &levels, std::vector<column> &cols,
                 std::vector<std::size_t> &origin) {
  for (bool pruned = true; pruned;) {
    pruned = false;
    const solution s = evaluate(D, pointers(cols), opt.huber);
    for (std::size_t a = 0; a < levels.size() && !pruned; ++a)
      if (origin[a] >= proposed && s.penalty[a] < opt.min_added_penalty_sigmas * D.noise) {
        levels.erase(levels.begin() + std::ptrdiff_t(a));
        cols.erase(cols.begin() + std::ptrdiff_t(a));
        origin.erase(origin.begin() + std::ptrdiff_t(a));
        pruned = true;
      }
  }
}

// Structures of other pages that predict every point as `f`'s does (`col`): the level is stated
// at the largest such page (fewest entries at it), an upper bound.
void state_largest_page(const pool &P, const column &col, fitted_level &f) {
  if (f.level.sector_bytes)
    return;
  for (std::size_t j = 0; j < P.col.size(); ++j) {
    if (P.col[j] != col)
      continue;
    for (const auto &L : P.alike[j])
      if (L.coverage_bytes != f.level.coverage_bytes) {
        f.page_is_upper_bound = true;
        if (L.coverage_bytes > f.level.coverage_bytes ||
            (L.coverage_bytes == f.level.coverage_bytes && L.entries() < f.level.entries())) {
          const double penalty = f.level.penalty_cycles;
          f.level = L;
          f.level.penalty_cycles = penalty;
        }
      }
    return;
  }
}

// The structures the sweep cannot tell from `f`'s: any of the pool that, beside the other levels
// (`keep`), fits within `bound` of the weighted least-squares loss.
void widen_intervals(const pool &P, const gram &G, const std::vector<std::size_t> &keep,
                     double bound, fitted_level &f) {
  f.entries_lo = f.entries_hi = double(f.level.entries());
  f.sets_lo = f.sets_hi = double(f.level.sets);
  f.ways_lo = f.ways_hi = double(f.level.ways);
  f.coverage_lo = f.coverage_hi = double(f.level.coverage_bytes);
  for (std::size_t j = 0; j < P.col.size(); ++j) {
    if (quadratic_loss(G, keep, j) > bound)
      continue;
    for (const auto &L : P.alike[j]) {
      f.coverage_lo = std::min(f.coverage_lo, double(L.coverage_bytes));
      f.coverage_hi = std::max(f.coverage_hi, double(L.coverage_bytes));
      f.entries_lo = std::min(f.entries_lo, double(L.entries()));
      f.entries_hi = std::max(f.entries_hi, double(L.entries()));
      f.sets_lo = std::min(f.sets_lo, double(L.sets));
      f.sets_hi = std::max(f.sets_hi, double(L.sets));
      f.ways_lo = std::min(f.ways_lo, double(L.ways));
      f.ways_hi = std::max(f.ways_hi, double(L.ways));
      f.alternatives_differ |= L.xor_index != f.level.xor_index || L.repl != f.level.repl;
    }
  }
}

} // namespace

synthesis_fit fit_hierarchy(const tlb_dataset &data, const std::vector<level_proposal> &proposals,
                            const synthesis_options &opt) {
  synthesis_fit out;
  const design D = design_of(data);
  out.points = int(D.pts.size());
  if (D.pts.size() < 16)
    return out;
  out.loss_without_levels = evaluate(D, {}, opt.huber).loss;
  std::vector<cache_level> levels;
  std::vector<column> cols;
  std::vector<std::size_t> origin;
  start_from_proposals(D, proposals, opt, levels, cols, origin);
  // The proposals led here; the pool of every structure may explain the sweep better.
  const pool P = pool_of(D, opt);
  split_entries(D, opt, levels, cols, origin);
  improve_over_pool(D, opt, P, levels, cols, origin, proposals.size());
  if (split_entries(D, opt, levels, cols, origin))
    improve_over_pool(D, opt, P, levels, cols, origin, proposals.size() + levels.size());
  prune_added(D, opt, proposals.size(), levels, cols, origin);
  for (std::size_t q = 0; q < proposals.size(); ++q)
    if (std::find(origin.begin(), origin.end(), q) == origin.end())
      out.dropped.push_back(q);
  const auto cp = pointers(cols);
  std::vector<double> w;
  const solution fin = evaluate(D, cp, opt.huber, &w);
  out.loss = fin.loss;
  out.fitted = true;
  const centered z = center(D, cp, w);
  const double best = fit_centered(z, pointers(z), opt.huber, false).loss;
  const gram G = gram_of(z, P);
  std::vector<std::size_t> every(levels.size());
  for (std::size_t a = 0; a < every.size(); ++a)
    every[a] = a;
  const double best_q = quadratic_loss(G, every, none);
  for (std::size_t a = 0; a < levels.size(); ++a) {
    fitted_level f;
    f.proposal = origin[a];
    f.level = levels[a];
    f.level.penalty_cycles = fin.penalty[a];
    std::vector<const column *> others;
    std::vector<std::size_t> keep;
    for (std::size_t b = 0; b < levels.size(); ++b)
      if (b != a) {
        others.push_back(&z.d[b]);
        keep.push_back(b);
      }
    f.gain = fit_centered(z, others, opt.huber, false).loss - best; // the others refitted
    f.noise_cycles = D.noise;
    f.added = origin[a] >= proposals.size();
    f.confidence = model_confidence(f.gain, fin.penalty[a] / std::max(1e-9, f.noise_cycles),
                                    f.added);
    f.penalty_lo = std::max(0.0, fin.penalty[a] - 2 * fin.se[a]);
    f.penalty_hi = fin.penalty[a] + 2 * fin.se[a];
    state_largest_page(P, cols[a], f);
    widen_intervals(P, G, keep, best_q + opt.interval_loss, f);
    out.levels.push_back(f);
  }
  return out;
}

} // namespace gpuprobe::probes
