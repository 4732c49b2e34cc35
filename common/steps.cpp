#include "common/steps.hpp"

#include "common/stats.hpp"

#include <algorithm>
#include <cmath>

namespace gpuprobe {

double differences_sigma(const std::vector<double> &y) {
  if (y.size() < 3)
    return 0;
  std::vector<double> d;
  d.reserve(y.size() - 1);
  for (std::size_t i = 1; i < y.size(); ++i)
    d.push_back(y[i] - y[i - 1]);
  const double m = median(d);
  for (double &v : d)
    v = std::fabs(v - m);
  return 1.4826 * median(d) / std::sqrt(2.0);
}

double curve_noise(const std::vector<double> &y, double min_noise) {
  if (y.size() < 3)
    return min_noise;
  const double sigma = differences_sigma(y);
  // The MAD is 0 on integer-valued flat curves; fall back to jitter that the MAD misses, taken
  // as the smaller of each pair of neighbouring differences: a jittered point moves both of its
  // differences, a step only one, so the steps being looked for do not count as noise (the mean
  // absolute difference did, and a coarse sweep with big steps hid its small ones).
  double jitter = 0;
  for (std::size_t i = 2; i < y.size(); ++i)
    jitter += std::min(std::fabs(y[i] - y[i - 1]), std::fabs(y[i - 1] - y[i - 2]));
  jitter /= static_cast<double>(y.size() - 2);
  return std::max({sigma, jitter, min_noise});
}

namespace {

struct candidate {
  std::size_t index;
  double jump;
};

constexpr std::size_t kMinBefore = 3, kMinAfter = 2;

// A curve of whole cycles (every value a multiple of half a cycle: the median of a sweep's
// integer hop times) moves by at least one cycle: its quantum. A curve of means has none (0).
double quantum_of(const std::vector<double> &y) {
  for (double v : y)
    if (std::fabs(2 * v - std::round(2 * v)) > 1e-9)
      return 0;
  return 1;
}

// What the steps of one curve share: its noise, the threshold a rise must pass, the window.
struct scan {
  const std::vector<double> &x, &y;
  const step_options &opt;
  std::size_t n, w;
  double sigma, threshold;
  double quantum; // quantum_of(y)
};

// 1. Local jumps: median of up to w points after i minus median of up to w points before.
std::vector<double> local_jumps(const scan &c) {
  std::vector<double> jump(c.n, 0.0);
  for (std::size_t i = kMinBefore; i + kMinAfter <= c.n; ++i)
    jump[i] = median(c.y, i, std::min(c.n, i + c.w)) - median(c.y, i >= c.w ? i - c.w : 0, i);
  return jump;
}

// 2. Candidates: local maxima of the jump above the threshold, each moved to the split that fits
//    two flat levels best (a sharp step gives the same windowed jump at several splits).
std::vector<candidate> candidates(const scan &c, const std::vector<double> &jump) {
  const auto &y = c.y;
  const std::size_t n = c.n, w = c.w;
  std::vector<candidate> cand;
  for (std::size_t i = kMinBefore; i + kMinAfter <= n; ++i) {
    if (jump[i] < c.threshold)
      continue;
    bool is_max = true;
    for (std::size_t j = (i > w ? i - w : 1); j < std::min(n, i + w + 1); ++j)
      if (j != i && (jump[j] > jump[i] || (jump[j] == jump[i] && j < i)))
        is_max = false;
    if (!is_max)
      continue;
    const std::size_t a = i >= w ? i - w : 0;
    const std::size_t b = std::min(n, i + w);
    const double lo = median(y, a, i), hi = median(y, i, b);
    std::size_t best = i;
    double best_cost = INFINITY;
    for (std::size_t j = std::max(kMinBefore, i - std::min(i, w / 2));
         j <= std::min(n - kMinAfter, i + w / 2); ++j) {
      double cost = 0;
      for (std::size_t k = a; k < b; ++k)
        cost += std::fabs(y[k] - (k < j ? lo : hi));
      if (cost < best_cost - 1e-12) {
        best_cost = cost;
        best = j;
      }
    }
    const double local =
        median(y, best, std::min(n, best + w)) - median(y, best >= w ? best - w : 0, best);
    if (cand.empty() || cand.back().index != best)
      cand.push_back({best, local});
  }
  return cand;
}

// 3. Keep rises that come from a flat level and are sustained: the points before the split must
//    not scatter more than noise allows, and the curve must never fall back by more than
//    (1 - sustain_fraction) of the rise (a TLB miss does not go away with more data). Returns
//    their onsets.
std::vector<std::size_t> accepted_rises(const scan &c, const std::vector<candidate> &cand) {
  const auto &x = c.x, &y = c.y;
  const auto &opt = c.opt;
  const std::size_t n = c.n, w = c.w;
  std::vector<std::size_t> accepted;
  double plateau = -INFINITY; // the level reached after the last accepted rise
  for (const auto &cd : cand) {
    const std::size_t i = cd.index;
    // A ramp (misses growing with the footprint, as with non-LRU replacement) has its largest
    // local jump late; walk back to where the curve first leaves the level before.
    // A point joins the ramp when it stands half a threshold and a tenth of the rise above the
    // level before: the few cycles a curve creeps up just below a large step (replacement
    // starting to miss) move its boundary by only as much as they weigh. And more than the
    // curve's quantum: a sweep's medians are whole cycles, so one cycle is a wiggle, not a creep
    // (a 10-cycle rise's tenth is one cycle, and two +1 wiggles began L1's rise 2 points early).
    const double tenth = 0.1 * cd.jump;
    std::size_t onset = i;
    const std::size_t floor_idx =
        std::max<std::size_t>(accepted.empty() ? 0 : accepted.back(), kMinBefore);
    while (onset - 1 >= floor_idx) { // floor_idx >= kMinBefore > 0
      const std::size_t j = onset - 1;
      const double base = std::max(median(y, j >= 2 * w ? j - 2 * w : 0, j), plateau);
      if (y[j] - base >= std::max(0.5 * c.threshold, tenth) && y[j] - base > c.quantum &&
          y[j] <= y[onset] + c.sigma)
        onset = j;
      else
        break;
    }
    const std::size_t a = onset >= 2 * w ? onset - 2 * w : 0;
    std::vector<double> prior(y.begin() + static_cast<long>(a),
                              y.begin() + static_cast<long>(onset));
    const double prior_med = median(prior);
    for (double &v : prior)
      v = std::fabs(v - prior_med);
    const bool after_previous =
        !accepted.empty() && x[onset - 1] <= opt.merge_ratio * x[accepted.back()];
    const double before = std::max(median(y, onset >= w ? onset - w : 0, onset), plateau);
    const double level = median(y, i, std::min(n, i + w));
    const bool flat_before =
        1.4826 * median(prior) <= std::max(opt.flat_sigmas * c.sigma, 0.25 * (level - before));
    double lowest = INFINITY;
    for (std::size_t j = i; j + 3 <= n; ++j)
      lowest = std::min(lowest, median(y, j, j + 3));
    if (lowest == INFINITY)
      lowest = median(y, i, n);
    const double rise = level - before; // above the highest level seen so far (no dip recovery)
    const bool sustained = lowest - before >= opt.sustain_fraction * std::min(rise, cd.jump);
    if (rise >= c.threshold && sustained && (flat_before || after_previous) &&
        (accepted.empty() || onset > accepted.back())) {
      accepted.push_back(onset);
      plateau = level;
    }
  }
  return accepted;
}

// 4. Merge rises close in footprint into one transition (associativity smears a boundary over a
//    few footprints); the onset is the first rise, the level after is the last's.
std::vector<step> merged(const scan &c, const std::vector<std::size_t> &accepted) {
  const auto &x = c.x, &y = c.y;
  std::vector<step> out;
  for (std::size_t k = 0; k < accepted.size();) {
    std::size_t last = k;
    while (last + 1 < accepted.size() &&
           x[accepted[last + 1] - 1] <= c.opt.merge_ratio * x[accepted[last]])
      ++last;
    const std::size_t i = accepted[k];
    const std::size_t prev = k > 0 ? accepted[k - 1] : 0;
    const std::size_t next = last + 1 < accepted.size() ? accepted[last + 1] : c.n;
    const std::size_t j = accepted[last];
    step s;
    s.index = i;
    s.x_lo = x[i - 1];
    s.x_hi = x[i];
    // The level before: the median of the second half of the points since the previous
    // transition (a plateau, not the few points where the curve creeps up just below this one).
    s.before = median(y, prev + (i - prev) / 2, i);
    // The level after: the median of the second half of the points from the last rise to the
    // next transition (or the curve's end). On a long plateau that is the plateau, not the few
    // points where a curve creeps up before its next step; on a short ramp, near its top, not
    // the first points of a smeared boundary still rising.
    s.after = median(y, j + (next - j) / 2, next);
    s.jump = s.after - s.before;
    s.noise = c.sigma;
    s.snr = s.jump / c.sigma;
    if (s.jump >= c.threshold)
      out.push_back(s);
    k = last + 1;
  }
  return out;
}

} // namespace

std::vector<step> detect_steps(const std::vector<double> &x, const std::vector<double> &y,
                               const step_options &opt) {
  const std::size_t n = y.size();
  if (n < 5 || x.size() != n)
    return {};
  const double sigma = curve_noise(y, opt.min_noise);
  const scan c{x,
               y,
               opt,
               n,
               static_cast<std::size_t>(opt.window),
               sigma,
               opt.snr_min * sigma,
               quantum_of(y)};
  return merged(c, accepted_rises(c, candidates(c, local_jumps(c))));
}

namespace {

// The split of [lo, hi) that two flat levels fit best (least squares: the medians' window jump
// is flat over several positions around a step); `i` when none fits better.
std::size_t best_split(const std::vector<double> &y, std::size_t lo, std::size_t hi,
                       std::size_t i) {
  std::size_t best = i;
  double best_sse = INFINITY;
  for (std::size_t j = lo + 2; j + 2 <= hi; ++j) {
    double sl = 0, sr = 0, ql = 0, qr = 0;
    for (std::size_t k = lo; k < hi; ++k)
      (k < j ? sl : sr) += y[k], (k < j ? ql : qr) += y[k] * y[k];
    const double nl = double(j - lo), nr = double(hi - j);
    const double sse = (ql - sl * sl / nl) + (qr - sr * sr / nr);
    if (sse < best_sse - 1e-9)
      best_sse = sse, best = j;
  }
  return best;
}

// The rise at i between the plateaus on either side (each up to the neighbouring rise or the
// curve's end): a step when the plateau before is flat, the rise stands snr_min standard errors
// of the two plateaus' medians and 3.5 point sigmas high, and the curve never falls back below
// most of it.
bool plateau_step(const std::vector<double> &x, const std::vector<double> &y,
                  const std::vector<double> &jump, std::size_t i, std::size_t last, std::size_t m,
                  double sigma, double se_m, double snr_min, const step_options &opt, step &s) {
  const std::size_t n = y.size();
  std::size_t a = last ? last : 0, b = n;
  for (std::size_t j = i + m; j + m <= n; ++j)
    if (jump[j] >= 4 * se_m && jump[j] >= 2 * sigma) {
      b = j;
      break;
    }
  std::vector<double> prior(y.begin() + long(a), y.begin() + long(i));
  const double before = median(prior), after = median(y, i, b);
  for (double &v : prior)
    v = std::fabs(v - before);
  const bool flat_before = 1.4826 * median(prior) <= opt.flat_sigmas * sigma;
  double lowest = INFINITY; // the curve never falls back below most of the rise
  for (std::size_t j = i; j + m <= n; ++j)
    lowest = std::min(lowest, median(y, j, j + m));
  const double rise = after - before;
  const double se = 1.2533 * sigma * std::sqrt(1.0 / double(i - a) + 1.0 / double(b - i));
  if (!flat_before || rise < snr_min * se || rise < 3.5 * sigma ||
      lowest - before < opt.sustain_fraction * rise)
    return false;
  s.index = i;
  s.x_lo = x[i - 1];
  s.x_hi = x[i];
  s.before = before;
  s.after = after;
  s.jump = rise;
  s.noise = se;
  s.snr = rise / se;
  return true;
}

} // namespace

std::vector<step> detect_plateau_steps(const std::vector<double> &x, const std::vector<double> &y,
                                       const std::vector<step> &known, int points, double snr_min,
                                       const step_options &opt) {
  std::vector<step> out;
  const std::size_t n = y.size(), m = static_cast<std::size_t>(points);
  if (m < 3 || n < 2 * m || x.size() != n)
    return out;
  const double sigma = curve_noise(y, opt.min_noise);
  const double se_m = 1.2533 * sigma * std::sqrt(2.0 / double(m));
  std::vector<double> jump(n, 0.0);
  for (std::size_t i = m; i + m <= n; ++i)
    jump[i] = median(y, i, i + m) - median(y, i - m, i);
  // Only below the first rise the single-point detector found: the small first level it missed
  // (past that rise, a long plateau's standard error makes a cycle or two "significant").
  double first_known = INFINITY;
  for (const auto &k : known)
    first_known = std::min(first_known, k.x_lo);
  const auto near_known = [&](double xi) { return xi * opt.merge_ratio >= first_known; };
  std::size_t last = 0; // index of the last accepted rise (0: none)
  for (std::size_t c = m; c + m <= n; ++c) {
    if (jump[c] < 4 * se_m || jump[c] < 2 * sigma) // screening; the test is on whole plateaus
      continue;
    std::size_t i = c;
    bool is_max = true; // the largest jump within m points either side
    for (std::size_t j = i - m; j < std::min(n - m + 1, i + m + 1); ++j)
      if (j != i && (jump[j] > jump[i] || (jump[j] == jump[i] && j < i)))
        is_max = false;
    if (!is_max || near_known(x[i]) || (last && i < last + m))
      continue;
    const std::size_t best = best_split(y, i - m, std::min(n, i + m), i);
    if ((last && best < last + m) || best < m || best + m > n)
      continue;
    i = best; // the scan goes on from c: it never moves back
    step s;
    if (!plateau_step(x, y, jump, i, last, m, sigma, se_m, snr_min, opt, s))
      continue;
    out.push_back(s);
    last = i;
    c = std::max(c, i + m - 1); // the next rise lies a plateau further
  }
  return out;
}

} // namespace gpuprobe
