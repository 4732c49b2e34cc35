#pragma once
// A TLB level's structure from one stride's curve of mean cycles per hop (strides at or above
// the level's page, so every hop is its own entry).
//
// A level of S sets of W ways (capacity E = S * W) under a cyclic chase of N = E + k pages
// (k <= S) holds W + 1 pages in k sets: those miss on every visit, the rest hit. The share of
// hops that miss is f(N) = (N - E)(W + 1) / N between N = E (misses begin) and N = S (W + 1)
// (every hop misses): a ramp whose start is the capacity, whose length is the sets and whose
// slope (misses per lap grow by W + 1 per page) checks the ways (E / S). A fully associative level
// (S = 1) steps from E to E + 1. The fit recovers E, W and S from the curve, says how well the
// model explains it, and says "not resolved" (with the reason) rather than guess.
#include <string>
#include <vector>

namespace gpuprobe::probes {

struct structure_options {
  int max_ways = 64;          // larger: fully associative within the data's resolution
  double min_snr = 8;         // the penalty must be this many point-noise sigmas
  double max_residual = 0.05; // RMS misfit as a share of the penalty, at most
  int min_plateau_points = 2; // points on each plateau (before and after the ramp)
  double whole_ways = 0.25;   // slope - 1 must be within this of a whole number of ways
  double min_share = 0.005;   // a point is inside the transition past this share of it
};

struct structure_fit {
  bool resolved = false;
  std::string shape;  // "step" (no point inside the transition) or "ramp"
  std::string why;    // when not resolved: what the data lack
  double entries = 0; // capacity: where misses begin (S * W when resolved)
  double sets = 0, ways = 0;
  double full_miss_entries = 0;     // S * (W + 1): where every hop misses
  double onset_fit = 0;             // the ramp's start (x-intercept of misses per lap near it)
  double full_fit = 0;              // the ramp's end (x-intercept of hits per lap near it)
  double onset_se = 0, full_se = 0; // two standard errors of each end (0: not fitted)
  double slope = 0;                 // misses per lap added per page over the whole ramp (W + 1 when
                                    // a miss costs the same everywhere on it)
  double before_cycles = 0, after_cycles = 0; // plateaus (mean cycles per hop)
  double residual_cycles = 0;                 // RMS of data - model over the window
  double noise_cycles = 0;                    // point-to-point noise of the curve
  int ramp_points = 0;                        // points strictly inside the transition
  double last_hit_entries = 0;                // the largest hop count measured with no miss
  double first_full_entries = 0; // the smallest hop count measured with every hop missing
};

// `hops` strictly increasing; `cycles` the mean cycles per hop at each; `noise_floor` the least
// point-to-point noise to assume (cycles; the plateaus' own noise is measured). The window must
// hold the level's transition and its plateaus and no other level's rise.
structure_fit fit_structure(const std::vector<double> &hops, const std::vector<double> &cycles,
                            double noise_floor, const structure_options &opt = {});

// An interval on each number of a resolved fit, or none. entries and the full
// miss: the fitted ends +- their two standard errors (a step: bracketed by its measured points,
// no miss at E hops and every hop missing at E + 1); sets = F - E and ways = E / sets over those
// ends; the penalty: after - before +- 2 x the curve's point-to-point noise (each plateau is a
// mean of several points, so this is wide).
struct fit_intervals {
  bool stated = false;
  double entries_lo = 0, entries_hi = 0, sets_lo = 0, sets_hi = 0, ways_lo = 0, ways_hi = 0;
  double penalty_lo = 0, penalty_hi = 0;
  std::string how;
};
fit_intervals intervals_of(const structure_fit &f);

// The same model as a curve: mean cycles per hop of a cyclic chase of `hops` pages over a level
// of `sets` x `ways` (LRU, an even spread of consecutive pages over the sets). For tests and
// for the sweep's planning.
double structure_cycles(double hops, double sets, double ways, double before, double penalty);

} // namespace gpuprobe::probes
