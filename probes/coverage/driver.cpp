// The GPU half of tlb-coverage: the slot pools (one every-slot range kept for all levels, one
// other layout at a time), the pattern walks, the conflict probe's list walk for comparison.
#include "probes/coverage/driver.hpp"
#include "common/error.hpp"
#include "common/stopwatch.hpp"
#include "common/units.hpp"
#include "probes/instruments/list_chase.hpp"

#include <cstdio>
#include <memory>
#include <utility>

namespace gpuprobe::probes {

coverage_result run_coverage(const coverage_options &o, const model::tlb_hierarchy &tlb,
                             const std::string &profile_path, const device_info &dev) {
  const stopwatch t0;
  auto r = level_result<coverage_result>(dev, o.seed, profile_path);
  std::unique_ptr<slot_pool> all, other;
  std::string other_key;
  const slot_pool *current = nullptr;
  pattern_walk walker;
  coverage_env env;
  env.map = [&](const std::string &key, const slot_layout &l) {
    if (key == "all") {
      if (!all || all->bytes() < l.chunk_of.size() * l.slot_bytes) {
        all.reset(); // the old range goes before the larger one is mapped
        all = std::make_unique<slot_pool>(l, dev.ordinal);
        std::fprintf(stderr, "[tlb-coverage] every slot of %s %s in %.1f s\n",
                     format_bytes(double(all->bytes())).c_str(),
                     all->reused() ? "kept from an earlier stage" : "mapped", all->map_seconds());
      }
      current = all.get();
      return;
    }
    if (key != other_key) {
      other.reset();
      other = std::make_unique<slot_pool>(l, dev.ordinal);
      other_key = key;
      std::fprintf(stderr, "[tlb-coverage] %s: %zu of %zu slots mapped (%d chunks) in %.1f s\n",
                   key.c_str(), l.mapped_slots(), l.chunk_of.size(), l.chunks,
                   other->map_seconds());
    }
    current = other.get();
  };
  env.walk = [&](const walk_pattern &p, std::uint32_t groups, std::uint32_t laps, double thr,
                 bool foreign) {
    if ((p.first_slot + std::uint64_t(groups) * p.period) * o.slot_bytes > current->bytes())
      throw error("tlb-coverage: a walk of " + std::to_string(groups) +
                  " groups runs past the mapped range");
    return walker.measure(current->data(), o.slot_bytes, p, groups, laps, thr, foreign);
  };
  std::unique_ptr<list_chase> list; // the conflict probe's kernel, over the range walked now
  std::pair<const char *, std::uint64_t> list_range{nullptr, 0}; // the range it was made for
  env.list_walk = [&](std::uint32_t start, std::uint32_t pages, std::uint64_t window_bytes,
                      double thr) {
    if (!list ||
        list_range != std::pair<const char *, std::uint64_t>(current->data(), current->bytes())) {
      list = std::make_unique<list_chase>(current->data(), current->bytes());
      list_range = {current->data(), current->bytes()};
    }
    std::vector<std::uint32_t> idx(pages);
    for (std::uint32_t i = 0; i < pages; ++i)
      idx[i] = start + i;
    double n = 0;
    for (double c : list->measure(idx, window_bytes))
      n += c > thr; // each position's mean over its laps: a position that missed every lap counts
    return n;
  };
  for (const auto &t : plan_coverage(tlb, o)) {
    const stopwatch tl;
    if (!t.skipped.empty()) {
      coverage_level_result l;
      l.target = t;
      std::fprintf(stderr, "[tlb-coverage] %s: skipped (%s)\n", t.level.c_str(), t.skipped.c_str());
      r.levels.push_back(l);
      continue;
    }
    auto l = measure_coverage(env, t, o);
    l.seconds = tl.seconds();
    std::fprintf(stderr, "[tlb-coverage] %s: %s (%.1f s)\n", t.level.c_str(), l.finding().c_str(),
                 l.seconds);
    r.levels.push_back(l);
  }
  r.wall_seconds = t0.seconds();
  return r;
}

} // namespace gpuprobe::probes
