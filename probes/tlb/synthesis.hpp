#pragma once
// Analysis by synthesis: a TLB hierarchy is a model of the whole sweep. The rise detectors
// (levels.hpp) propose levels; each proposal becomes a translation level of the forward model
// (forward.hpp: entries as ways x sets, what one entry covers, a set index, a replacement
// policy, a penalty), every stride's curve is predicted from all the levels together, and the
// structure of each level, and which proposals are levels at all, are chosen by how well the
// prediction explains every point under the curve's own noise (a robust loss). A proposal the
// rest of the model explains as well without it (an earlier level's set conflicts seen at large
// strides) is no level; a level's penalty is the model's, ramps included. The model also asks
// whether each level's entries fill whole or in two halves, and adds the level that best explains
// a misfit the proposals leave. Host-only.
#include "probes/tlb/data.hpp"
#include "probes/tlb/forward.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe::probes {

struct synthesis_options {
  double huber = 2.5;       // residuals beyond this many noise sigmas count linearly
  double level_cost = 40;   // a level must lower the loss by this much to be kept
  double sector_cost = 20;  // ...and an entry filled in halves, by this much (one more choice)
  double interval_loss = 2; // structures within this loss of the best are its interval
  int max_ways = 64;        // larger: fully associative at the sweep's resolution
  int coverage_octaves = 3; // octaves above a lower or unknown bound (either side of no bound)
  double min_added_penalty_sigmas = 2; // a level no rise proposed costs at least this many
                                       // typical noise sigmas
};

// A level the rise detectors propose: its entries (may be fractional), what one entry covers,
// and the ways x sets its ramp fit resolved (0 where it resolved none).
struct level_proposal {
  double entries = 0, coverage_bytes = 0;
  double ways = 0, sets = 0;
  // What the strides say of the page: it lies in [min_coverage_bytes, max_coverage_bytes] (an exact
  // page: within an octave of it either way).
  double min_coverage_bytes = 0, max_coverage_bytes = 0;
};

// A kept level: its structure and penalty as the model fits them.
struct fitted_level {
  std::size_t proposal = 0;       // index into the proposals (>= their count: the model added it)
  tlb::cache_level level;         // sets, ways, coverage, index, replacement, penalty
  double gain = 0;                // the loss without this level minus the loss with it
  double entries_lo = 0, entries_hi = 0; // over the structures within interval_loss
  double sets_lo = 0, sets_hi = 0, ways_lo = 0, ways_hi = 0;
  double coverage_lo = 0, coverage_hi = 0; // what one entry covers, over the same structures
  // The sweep tells nothing between structures of other pages that predict every point the same
  // (a level whose strides all put its tags in one set): the level is stated as the largest
  // such page, which is then an upper bound.
  bool page_is_upper_bound = false;
  double penalty_lo = 0, penalty_hi = 0; // +- 2 standard errors of the fitted penalty
  bool alternatives_differ = false;      // another index or replacement fits within the interval
  double noise_cycles = 0;               // the sweep's typical noise (a curve's robust sigma)
  bool added = false;                    // no rise detector proposed it
  // The probability that the level is a level and read right, from its gain, its penalty over
  // the noise and whether the model added it: a logistic calibrated on the simulated family
  // (model_confidence; SimulatedGpus.TheModelsConfidenceIsCalibrated... checks it on other seeds).
  double confidence = 0;
};

// The calibrated confidence of a level the model keeps (see fitted_level::confidence).
double model_confidence(double gain, double penalty_over_noise, bool added);

struct synthesis_fit {
  bool fitted = false; // false: too few points
  std::vector<fitted_level> levels; // kept, in the proposals' order
  std::vector<std::size_t> dropped; // proposals the model explains without
  double loss = 0;                  // the kept model's robust loss (0.5 chi^2 where Gaussian)
  double loss_without_levels = 0;   // the loss of a model of no level
  int points = 0;
};

// Fits the hierarchy of `proposals` to every point of `data` (each curve's means where it has
// them, else its values; one baseline per curve).
synthesis_fit fit_hierarchy(const tlb_dataset &data, const std::vector<level_proposal> &proposals,
                            const synthesis_options &opt = {});

// A given hierarchy's fit (structures held, penalties fitted): its robust loss, and each level
// with its penalty (gain and intervals not searched). For testing what one entry holds.
synthesis_fit fit_fixed(const tlb_dataset &data, const std::vector<tlb::cache_level> &levels,
                        const synthesis_options &opt = {});

// "8 ways x 256 sets, xor index, lru" of a model level.
std::string model_words(const tlb::cache_level &L);

} // namespace gpuprobe::probes
