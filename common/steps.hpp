#pragma once
// Step (change-point) detection on a latency-vs-footprint curve (the sweep refines around
// the rises it finds; the analyzers group them into levels).
//
// A TLB level shows as a sustained rise: below the boundary every access hits, above it a
// fixed fraction misses, and the latency never comes back down with a larger footprint.
// detect_steps finds such rises and rejects wiggles, using only numbers taken from the curve
// itself (its noise), never a fixed cycle threshold.
#include "common/defaults.hpp"

#include <cstddef>
#include <vector>

namespace gpuprobe {

struct step_options {
  double snr_min = defaults::step_snr_min;       // a rise must be this many noise sigmas
  double min_noise = defaults::min_noise_cycles; // floor on sigma in cycles
  int window = 4;                                // points on each side for the local medians
  double merge_ratio = 1.30;     // rises closer than this footprint ratio form one transition
  double sustain_fraction = 0.6; // the curve after the rise must keep this share of it
  double flat_sigmas = 2.5;      // robust spread (MAD) of the points before a rise, in sigmas
};

struct step {
  std::size_t index = 0; // first point above the boundary
  double x_lo = 0;       // last footprint before the rise (still low)
  double x_hi = 0;       // first footprint after the rise
  double before = 0;     // level before (median)
  double after = 0;      // level after the whole transition (median)
  double jump = 0;       // after - before
  double noise = 0;      // sigma of the curve
  double snr = 0;        // jump / noise
};

// 1.4826 * the MAD of a curve's first differences / sqrt(2): its noise where steps and ramps are
// rare among its differences (0 under 3 points).
double differences_sigma(const std::vector<double> &y);
// Robust noise of a curve: the larger of differences_sigma, the mean jitter of neighbouring
// differences (the smaller of each pair) and min_noise.
double curve_noise(const std::vector<double> &y, double min_noise);

// x must be strictly increasing; y the same length. Returns rises in order of x.
std::vector<step> detect_steps(const std::vector<double> &x, const std::vector<double> &y,
                               const step_options &opt = {});

// Rises too small for single points (a few noise sigmas) but clear between long plateaus: the
// medians of `points` points on either side differ by `snr_min` of their standard errors
// (1.25 sigma / sqrt(n) each, n the points of each plateau up to the neighbouring rise), the
// points before are flat and the curve never falls back. A step's snr is in those standard
// errors, and it is 3.5 sigma at least. Only rises below the first one in `known` (the
// single-point detector's, within opt.merge_ratio) are looked for: for mean curves (the 2017
// CSV), whose first level can cost 4-6 sigma of a single point.
std::vector<step> detect_plateau_steps(const std::vector<double> &x, const std::vector<double> &y,
                                       const std::vector<step> &known, int points = 10,
                                       double snr_min = 8, const step_options &opt = {});

} // namespace gpuprobe
