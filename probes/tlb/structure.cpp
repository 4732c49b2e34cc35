#include "probes/tlb/structure.hpp"

#include "common/stats.hpp"
#include "common/steps.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpuprobe::probes {

namespace {

double share(double hops, double sets, double ways) {
  const double e = sets * ways;
  if (hops <= e)
    return 0;
  if (hops >= sets * (ways + 1))
    return 1;
  return (hops - e) * (ways + 1) / hops;
}

std::string fmt(const char *f, double a, double b = 0, double c = 0) {
  char s[200];
  std::snprintf(s, sizeof s, f, a, b, c);
  return s;
}

struct line {
  double slope = 0, intercept = 0;
  double x_se = INFINITY; // standard error of the x-intercept (the points' scatter about the line)
  double x_intercept() const { return -intercept / slope; }
};
// Least squares through the points `idx` of (x, y).
line line_fit(const std::vector<double> &x, const std::vector<double> &y,
              const std::vector<std::size_t> &idx) {
  double mx = 0, my = 0;
  for (auto i : idx)
    mx += x[i], my += y[i];
  mx /= double(idx.size());
  my /= double(idx.size());
  double sxx = 0, sxy = 0;
  for (auto i : idx) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  line l;
  l.slope = sxx > 0 ? sxy / sxx : 0;
  l.intercept = my - l.slope * mx;
  if (idx.size() > 2 && l.slope != 0) {
    double ss = 0;
    for (auto i : idx) {
      const double d = y[i] - (l.intercept + l.slope * x[i]);
      ss += d * d;
    }
    const double s2 = ss / double(idx.size() - 2), x0 = l.x_intercept();
    l.x_se = std::sqrt(s2 / (l.slope * l.slope) *
                       (1.0 / double(idx.size()) + (x0 - mx) * (x0 - mx) / sxx));
  }
  return l;
}

} // namespace

double structure_cycles(double hops, double sets, double ways, double before, double penalty) {
  return before + penalty * share(hops, sets, ways);
}

namespace {

// The plateaus before and after the rise: first guesses from the window's ends, then from the
// runs they classify; r gets their levels and noise. [first_mid, last_mid): the points between.
void find_plateaus(const std::vector<double> &y, double floor, const structure_options &opt,
                   structure_fit &r, std::size_t &first_mid, std::size_t &last_mid) {
  const std::size_t n = y.size();
  double noise = curve_noise(y, floor); // the whole window's, until the plateaus are known
  const std::size_t tail = std::size_t(opt.min_plateau_points);
  double lo = median(y, 0, std::max<std::size_t>(tail, n / 3)), hi = median(y, n - tail, n);
  first_mid = 0, last_mid = n;
  for (int pass = 0; pass < 8; ++pass) {
    const double p = hi - lo;
    if (!(p > 0))
      break;
    const double thr = std::max(4.0 * noise / p, opt.min_share);
    const std::size_t was_first = first_mid, was_last = last_mid;
    first_mid = 0;
    while (first_mid < n && (y[first_mid] - lo) / p < thr)
      ++first_mid;
    last_mid = n;
    while (last_mid > first_mid && (y[last_mid - 1] - lo) / p > 1 - thr)
      --last_mid;
    if (first_mid < tail || n - last_mid < tail || (first_mid == was_first && last_mid == was_last))
      break;
    // The plateaus: each run's median (the window starts and ends halfway to the next levels,
    // far from their creep), and their noise away from the ramp: its own rise is not noise, and
    // its first misses (shares of a percent) must not hide in a noise they inflate.
    lo = median(y, 0, first_mid);
    hi = median(y, last_mid, n);
    const std::size_t a = std::max(std::min<std::size_t>(first_mid, 3), first_mid - first_mid / 3);
    const std::size_t b =
        std::min(std::max<std::size_t>(last_mid, n - 3), last_mid + (n - last_mid) / 3);
    noise = std::max(curve_noise(std::vector<double>(y.begin(), y.begin() + long(a)), floor),
                     curve_noise(std::vector<double>(y.begin() + long(b), y.end()), floor));
  }
  r.noise_cycles = noise;
  r.before_cycles = lo;
  r.after_cycles = hi;
}

// No point inside the rise: a fully associative level (one set) where the step is one hop wide.
bool fit_step(structure_fit &r) {
  r.shape = "step";
  const double gap = r.first_full_entries - r.last_hit_entries;
  if (gap > 1 + 1e-9) {
    r.why = fmt("a step between %.0f and %.0f hops with no point between: the sets (at most "
                "%.0f) are not resolved",
                r.last_hit_entries, r.first_full_entries, gap);
    return false;
  }
  r.entries = r.onset_fit = r.last_hit_entries;
  r.sets = 1;
  r.ways = r.entries;
  r.full_miss_entries = r.entries + 1;
  r.slope = r.entries + 1;
  r.full_fit = r.full_miss_entries;
  return true;
}

// The ramp's ends: misses per lap are (W + 1)(N - E) on the ramp, hits per lap W (F - N) with
// F = S (W + 1); each end is the x-intercept of a line through the ramp's points nearest it (all
// of them when fewer than two lie on its side). The slope over the whole ramp is kept as a
// cross-check (a miss on the ramp may cost less than at the plateau: the page walk's own caches
// hit more often while fewer hops miss). Sets r.onset_fit, r.full_fit, and their two standard
// errors in e_se, f_se.
bool ramp_ends(const std::vector<double> &rh, const std::vector<double> &rm, structure_fit &r,
               double &e_se, double &f_se) {
  // The points nearest each end: within a tenth of the rise when three lie there, else within
  // a quarter (four at least), else the whole ramp. Near its ends the ramp is straightest.
  std::vector<std::size_t> all(rh.size());
  for (std::size_t i = 0; i < rh.size(); ++i)
    all[i] = i;
  const auto near_end = [&](bool onset) {
    for (const auto &[share, least] : {std::pair{0.1, 3u}, std::pair{0.25, 4u}}) {
      std::vector<std::size_t> v;
      for (auto i : all)
        if (onset ? rm[i] / rh[i] <= share : rm[i] / rh[i] >= 1 - share)
          v.push_back(i);
      if (v.size() >= least)
        return v;
    }
    return all;
  };
  const auto first = near_end(true), last = near_end(false);
  std::vector<double> hits(rh.size());
  for (std::size_t i = 0; i < rh.size(); ++i)
    hits[i] = rh[i] - rm[i];
  const auto e_line = line_fit(rh, rm, first), f_line = line_fit(rh, hits, last);
  r.slope = line_fit(rh, rm, all).slope;
  if (!(e_line.slope > 0) || !(f_line.slope < 0)) {
    r.why = "the ramp does not rise steadily between its ends";
    return false;
  }
  r.onset_fit = e_line.x_intercept();
  r.full_fit = f_line.x_intercept();
  e_se = 2 * e_line.x_se, f_se = 2 * f_line.x_se; // two standard errors (~95 %, few points)
  return true;
}

// The ways and sets the ends give: E and S = F - E, their ratio W, in whole numbers, known well
// enough that neither could be the next number.
bool ways_and_sets(const structure_options &opt, double e_se, double f_se, structure_fit &r) {
  const double sets_fit = r.full_fit - r.onset_fit;
  if (!(sets_fit > 0.5)) {
    r.why = fmt("the ramp's ends (%.1f, %.1f hops) do not enclose a set", r.onset_fit, r.full_fit);
    return false;
  }
  // The whole number of ways whose full-miss point F = E (W + 1) / W lies nearest the fitted one.
  double w = 0, err = INFINITY;
  for (int k = 1; k <= opt.max_ways; ++k) {
    const double d = std::fabs(r.onset_fit * (k + 1) / k - r.full_fit);
    if (d < err)
      err = d, w = k;
  }
  if (err > std::max(3.0, 0.01 * r.full_fit)) {
    r.why = fmt("misses begin at %.1f and every hop misses from %.1f hops: no whole number of "
                "ways in 1..%.0f fits",
                r.onset_fit, r.full_fit, opt.max_ways);
    return false;
  }
  // The ends must be known well enough that neither the sets (E / W: the onset to W / 2) nor
  // the ways (W = E / (F - E): the ends to about S / 2W) could be the next number.
  r.onset_se = std::isfinite(e_se) ? e_se : 0;
  r.full_se = std::isfinite(f_se) ? f_se : 0;
  if ((std::isfinite(e_se) && e_se > std::max(1.0, std::min(0.5 * w, 0.5 * sets_fit / (w + 1)))) ||
      (std::isfinite(f_se) && f_se > std::max(1.0, 0.5 * sets_fit / w))) {
    r.why = fmt("misses begin at %.0f (+- %.1f) and every hop misses from %.0f hops", r.onset_fit,
                e_se, r.full_fit) +
            fmt(" (+- %.1f): the noise hides the sets", f_se);
    return false;
  }
  const double s = std::max(1.0, std::round(r.onset_fit / w));
  if (std::fabs(s * w - r.onset_fit) > std::max(2.0, 0.01 * r.onset_fit)) {
    r.why =
        fmt("misses begin at %.1f hops, not a whole number of sets of %.0f ways", r.onset_fit, w);
    return false;
  }
  r.ways = w;
  r.sets = s;
  r.entries = s * w;
  r.full_miss_entries = s * (w + 1);
  return true;
}

// Both ends measured, not extrapolated: a point at the plateau near each (the sweep bisects both
// ends; a sweep that did not leaves them to a line through the ramp's middle), and none that
// contradicts them.
bool ends_measured(structure_fit &r) {
  const double reach = std::max(4.0, 0.05 * r.sets);
  if (r.entries - r.last_hit_entries > reach ||
      r.first_full_entries - r.full_miss_entries > reach) {
    r.why = fmt("the ramp's ends are extrapolated: no point within %.0f hops of %.0f", reach,
                r.entries - r.last_hit_entries > reach ? r.entries : r.full_miss_entries) +
            fmt(" (measured: no miss at %.0f, every hop missing at %.0f); a sweep of this "
                "version bisects both ends",
                r.last_hit_entries, r.first_full_entries);
    return false;
  }
  const double tol = std::max(2.0, 0.01 * r.entries);
  if (r.entries < r.last_hit_entries - tol || r.full_miss_entries > r.first_full_entries + tol) {
    r.why = fmt("the fit's ends (%.0f, %.0f hops) contradict the points measured", r.entries,
                r.full_miss_entries) +
            fmt(" (no miss at %.0f, every hop missing at %.0f)", r.last_hit_entries,
                r.first_full_entries);
    return false;
  }
  return true;
}

// A ramp: its ends, the ways and sets they give, and both ends measured.
bool fit_ramp(const std::vector<double> &rh, const std::vector<double> &rm,
              const structure_options &opt, structure_fit &r) {
  r.shape = "ramp";
  if (rh.size() < 4) {
    r.why = fmt("%.0f point(s) inside the ramp (between %.0f and %.0f hops): its ends are not "
                "resolved",
                double(rh.size()), r.last_hit_entries, r.first_full_entries);
    return false;
  }
  double e_se = 0, f_se = 0;
  return ramp_ends(rh, rm, r, e_se, f_se) && ways_and_sets(opt, e_se, f_se, r) && ends_measured(r);
}

} // namespace

structure_fit fit_structure(const std::vector<double> &h, const std::vector<double> &y,
                            double floor, const structure_options &opt) {
  structure_fit r;
  const std::size_t n = y.size();
  const std::size_t need = 2 * std::size_t(opt.min_plateau_points) + 1;
  if (n < need || h.size() != n) {
    r.why = "too few points (" + std::to_string(n) + ") around the level";
    return r;
  }
  std::size_t first_mid = 0, last_mid = n; // [first_mid, last_mid): between the two runs
  find_plateaus(y, floor, opt, r, first_mid, last_mid);
  const double noise = r.noise_cycles, lo = r.before_cycles, hi = r.after_cycles;
  const std::size_t tail = std::size_t(opt.min_plateau_points);
  const double p = hi - lo;
  if (!(p > 0) || p < opt.min_snr * noise) {
    r.why = fmt("the rise (%.1f cycles) is only %.1f x the point noise (%.2f cycles)", p,
                noise > 0 ? p / noise : 0, noise);
    return r;
  }
  if (first_mid < tail) {
    r.why = "fewer than " + std::to_string(tail) + " points before misses begin";
    return r;
  }
  if (n - last_mid < tail) {
    r.why = "fewer than " + std::to_string(tail) + " points past where every hop misses";
    return r;
  }
  r.last_hit_entries = h[first_mid - 1];
  r.first_full_entries = h[last_mid];
  r.ramp_points = int(last_mid - first_mid);
  // Points on the ramp: any share the noise cannot explain (the ends' fits need the first and
  // last few misses per lap, at shares of a percent).
  const double thr = std::max(4.0 * noise / p, opt.min_share);
  std::vector<double> rh, rm; // ramp points: hops and misses per lap (share x hops)
  for (std::size_t i = first_mid; i < last_mid; ++i) {
    const double f = (y[i] - lo) / p;
    if (f > thr && f < 1 - thr) {
      rh.push_back(h[i]);
      rm.push_back(f * h[i]);
    }
  }
  if (!(rh.empty() ? fit_step(r) : fit_ramp(rh, rm, opt, r)))
    return r;
  double ss = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = y[i] - structure_cycles(h[i], r.sets, r.ways, lo, p);
    ss += d * d;
  }
  r.residual_cycles = std::sqrt(ss / double(n));
  if (r.residual_cycles > opt.max_residual * p + 3 * noise) {
    r.why = fmt("the model misfits the curve by %.1f cycles RMS (%.1f %% of the penalty)",
                r.residual_cycles, 100 * r.residual_cycles / p);
    return r;
  }
  r.resolved = true;
  return r;
}

fit_intervals intervals_of(const structure_fit &f) {
  fit_intervals v;
  if (!f.resolved)
    return v;
  v.stated = true;
  const double pen = f.after_cycles - f.before_cycles, dp = 2 * f.noise_cycles;
  v.penalty_lo = pen - dp;
  v.penalty_hi = pen + dp;
  if (f.shape == "step") {
    v.entries_lo = v.entries_hi = f.entries;
    v.ways_lo = v.ways_hi = f.ways;
    v.sets_lo = v.sets_hi = 1;
    v.how = "a step bracketed by its points (no miss at " + fmt("%.0f", f.last_hit_entries) +
            " hops, every hop missing at " + fmt("%.0f", f.first_full_entries) +
            "); penalty +- 2 x the curve's noise";
    return v;
  }
  // The ends +- 2 SE; an end the fit gave no error for: the measured bracket around it.
  const double e_lo =
      f.onset_se > 0 ? f.onset_fit - f.onset_se : std::min(f.onset_fit, f.last_hit_entries);
  const double e_hi = f.onset_se > 0 ? f.onset_fit + f.onset_se : f.onset_fit;
  const double f_lo = f.full_se > 0 ? f.full_fit - f.full_se : f.full_fit;
  const double f_hi =
      f.full_se > 0 ? f.full_fit + f.full_se : std::max(f.full_fit, f.first_full_entries);
  v.entries_lo = std::floor(e_lo);
  v.entries_hi = std::ceil(e_hi);
  v.sets_lo = std::max(1.0, std::floor(f_lo - e_hi));
  v.sets_hi = std::ceil(f_hi - e_lo);
  v.ways_lo = e_lo / v.sets_hi;
  v.ways_hi = e_hi / v.sets_lo;
  v.how = "the ramp's fitted ends +- 2 standard errors (sets = F - E, ways = E / sets over them); "
          "penalty +- 2 x the curve's noise";
  return v;
}

} // namespace gpuprobe::probes
