// The GPU half of the sharing probe: one pool, one victim launch per SM, the matrices.
#include "probes/sharing/driver.hpp"
#include "common/device_memory.hpp"
#include "common/envelope.hpp"
#include "common/stopwatch.hpp"
#include "common/units.hpp"
#include "probes/sharing/kernel.hpp"

#include <algorithm>
#include <cstdio>

namespace gpuprobe::probes {

namespace {

// Every SM in `ids` as victim, against every other as disruptor: the matrices of `r`.
void measure_matrix(sharing_probe &probe, const std::vector<int> &ids, std::uint64_t seed,
                    sharing_result &r) {
  r.sm_ids = ids;
  const std::size_t n = r.sm_ids.size();
  r.mean_cycles.assign(n, std::vector<double>(n));
  r.median_cycles.assign(n, std::vector<double>(n));
  r.baseline_mean_cycles.assign(n, 0), r.baseline_median_cycles.assign(n, 0),
      r.baseline_drift_cycles.assign(n, 0);
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < n; ++i) {
    const auto rounds = victim_rounds(i, r.sm_ids, rng, order);
    const stopwatch t0;
    const auto res = probe.run_victim(r.sm_ids[i], rounds);
    const auto &b0 = res[1];
    const auto &b1 = res.back();
    r.baseline_mean_cycles[i] = std::min(b0.mean_cycles, b1.mean_cycles);
    r.baseline_median_cycles[i] = std::min(b0.median_cycles, b1.median_cycles);
    r.baseline_drift_cycles[i] = b1.mean_cycles - b0.mean_cycles;
    for (std::size_t k = 0; k < order.size(); ++k) {
      r.mean_cycles[i][order[k]] = res[k + 2].mean_cycles;
      r.median_cycles[i][order[k]] = res[k + 2].median_cycles;
    }
    std::fprintf(stderr,
                 "[tlb-sharing] victim %zu/%zu (SM %d): baseline %.0f, self %.0f cycles/hop, "
                 "%.2f s\n",
                 i + 1, n, r.sm_ids[i], r.baseline_mean_cycles[i], r.mean_cycles[i][i],
                 t0.seconds());
  }
}

// The first victim's launch, run once and discarded: every SM of `ids` walks the disruptor pages
// once. The first such walk by an SM of two of the L2 level's groups ({16,17,124,125,130,131} and
// {32,33,126,127} in the maps of two H100s and two H200s) evicts x 0.31 and 0.58 of what the
// diagonal does from the global L3; once any SM of the group walked them, 1.00
// (docs/tlb-sharing.md). In an 8-SM sample those are 2 pairs of 28, under the 95 % "global" needs.
void warm_up(sharing_probe &probe, const std::vector<int> &ids, std::uint64_t seed) {
  if (ids.empty())
    return;
  std::mt19937_64 rng(seed); // the matrix's own order for its first victim
  std::vector<std::size_t> order;
  probe.run_victim(ids.front(), victim_rounds(0, ids, rng, order));
}

// The SMs to measure (all, or the first --max-sms): with --sample-sms, a spread sample first,
// and every SM only where the sample does not answer for them. Returns the sample's record (null
// without one).
nlohmann::json measure_sms(sharing_probe &probe, const sharing_options &o, sharing_result &r) {
  std::vector<int> all = probe.sm_ids();
  if (o.max_sms > 0 && o.max_sms < int(all.size()))
    all.resize(std::size_t(o.max_sms));
  const bool sampled =
      o.sample_sms > 0 && std::size_t(o.sample_sms) < all.size() && bool(o.sample_verdict);
  std::vector<int> spread;
  if (sampled)
    for (const std::size_t k : spread_sm_indices(all.size(), std::size_t(o.sample_sms)))
      spread.push_back(all[k]);
  warm_up(probe, sampled ? spread : all, o.seed);
  if (!sampled) {
    measure_matrix(probe, all, o.seed, r);
    return nullptr;
  }
  std::fprintf(stderr, "[tlb-sharing] first %zu of %zu SMs, spread over the GPU\n", spread.size(),
               all.size());
  measure_matrix(probe, spread, o.seed, r);
  const std::string why_not = o.sample_verdict(r);
  const bool enough = why_not.empty();
  nlohmann::json sample = {
      {"sms", spread.size()},
      {"of", all.size()},
      {"finding", enough ? "every pair of the spread SMs shares: global, the rest not measured"
                         : "not global: every SM measured (" + why_not + ")"}};
  std::fprintf(stderr, "[tlb-sharing] the sample: %s\n",
               sample["finding"].get<std::string>().c_str());
  if (enough)
    return sample;
  // Its matrix, kept beside the whole one: why a sample was not global can be read again later.
  sample["matrix"] = {{"sm_ids", r.sm_ids},
                      {"mean_cycles", r.mean_cycles},
                      {"baseline_mean_cycles", r.baseline_mean_cycles}};
  warm_up(probe, all, o.seed); // the SMs the sample left out walk too (their groups' first walk)
  measure_matrix(probe, all, o.seed, r);
  return sample;
}

} // namespace

sharing_result run_sharing(const sharing_options &o, const device_info &dev) {
  const stopwatch t_start;
  const level_spec &L = o.level;
  const double budget = double(dev.memory_free_bytes_at_start) * o.free_fraction;
  const std::size_t gran = device_pool::vmm_granularity(dev.ordinal);
  const auto choice = choose_sharing_pool(o, budget, gran);
  auto layout = plan_sharing(L.coverage_bytes(), L.entries(), choice.overfill);
  const std::string what = describe(L);
  std::fprintf(
      stderr,
      "[tlb-sharing] %s, %d SMs; level %s from %s; victim %llu + disruptor %llu pages, %s pool\n",
      dev.name.c_str(), dev.sm_count, what.c_str(), L.origin.c_str(),
      (unsigned long long)layout.victim_pages, (unsigned long long)layout.disruptor_pages,
      choice.alloc.c_str());

  const auto kind = parse_alloc_kind(choice.alloc);
  const std::uint64_t pages = layout.victim_pages + layout.disruptor_pages;
  // alias: page j at j x page + a line offset inside the chunk (sharing_probe): those slots only.
  std::vector<alias_walk> walks;
  if (kind == alloc_kind::alias)
    walks.push_back({layout.coverage_bytes, pages * layout.coverage_bytes});
  device_pool pool(kind, std::size_t(pages * layout.coverage_bytes), dev.ordinal, o.seed,
                   kind == alloc_kind::vmm_sparse ? layout.coverage_bytes
                   : kind == alloc_kind::alias    ? gran
                                                  : 0,
                   walks);
  if (kind == alloc_kind::vmm_sparse || kind == alloc_kind::alias)
    layout.line_span = pool.mapped_per_slot(); // the chunk: every page's lines live in it
  if (pool.reused())
    std::fprintf(stderr, "[tlb-sharing] %s alias range kept from an earlier stage\n",
                 format_bytes(double(pool.bytes())).c_str());
  layout.random_order = o.random_order;
  layout.spread_lines = o.spread_lines;
  // Watchdog: a launch is V+V+D hops per round (a few hundred ns each at worst), x the rounds.
  const double est_launch_s =
      double(dev.sm_count + 4) * double(2 * layout.victim_pages + layout.disruptor_pages) * 2e-6;
  const double timeout = o.timeout_s > 0 ? o.timeout_s : std::max(10.0, 10 * est_launch_s);
  sharing_probe probe(pool, layout, o.seed, timeout);

  sharing_result r;
  const nlohmann::json sample = measure_sms(probe, o, r);
  r.wall_seconds = t_start.seconds();
  static_cast<result_envelope &>(r) = make_envelope(dev, o.seed);
  r.params = {{"level_origin", L.origin},
              {"level", L.level},
              {"coverage_bytes", L.coverage_bytes()},
              {"entries", L.entries()},
              {"victim_pages", layout.victim_pages},
              {"disruptor_pages", layout.disruptor_pages},
              {"overfill", choice.overfill},
              {"alloc", choice.alloc},
              {"mapped_bytes_per_page", layout.line_span},
              {"page_order", o.random_order ? "random" : "sequential"},
              {"line_offsets", o.spread_lines ? "spread" : "zero"},
              {"load", "ld.global.cg (L1 bypassed)"},
              {"placement",
               "cooperative launch, 1 block per SM (shared memory past half an SM), %smid checked"},
              {"round_order",
               "the first victim's launch once, discarded (before a sample and again before "
               "the whole matrix); per victim: warm-up (discarded), "
               "baseline, self, the other SMs "
               "shuffled, baseline again; one pair at a time; the victim fills the level "
               "once per launch (each timed walk refills it for the next round)"}};
  if (!sample.is_null())
    r.params["sample"] = sample;
  return r;
}

} // namespace gpuprobe::probes
