// The GPU half of the TLB probe: the control and the sweep over one pool.
#include "probes/tlb/driver.hpp"
#include "common/envelope.hpp"
#include "common/stopwatch.hpp"
#include "probes/instruments/sm_clock.hpp"
#include "probes/tlb/chase.hpp"

#include <cstdio>
#include <memory>

namespace gpuprobe::probes {

namespace {
constexpr unsigned k_control_warm_threads = 512;

sweep_point measure_point(pointer_chase &chase, std::uint64_t stride, std::uint64_t hops,
                          unsigned warm_threads = 1) {
  const auto c = chase.measure(hops, warm_threads);
  return {stride, c.footprint_bytes, hops, c.median, c.p10, c.p90, c.mean, c.samples, c.smid};
}
// Positive control: a 128-byte stride walks one L2 line per hop, so the L2 capacity shows as a
// large, well-known rise. A flat TLB sweep is credible only beside a control that rose. An alias
// pool repeats one chunk, which the L2 holds: its control runs on real memory.
tlb_control run_control(const tlb_options &o, const device_info &dev, const sweep_plan &plan,
                        pointer_chase &chase) {
  const auto cp =
      plan_control(o.alloc == alloc_kind::alias ? std::uint64_t(dev.l2_bytes) * 4 : plan.max_bytes,
                   std::uint64_t(dev.l2_bytes), o.points_per_octave);
  std::unique_ptr<device_pool> real;
  std::unique_ptr<pointer_chase> real_chase;
  if (o.alloc == alloc_kind::alias) {
    real = std::make_unique<device_pool>(alloc_kind::cudamalloc, cp.max_bytes, dev.ordinal, o.seed);
    real_chase = std::make_unique<pointer_chase>(*real, o.samples);
  }
  pointer_chase &cc = real_chase ? *real_chase : chase;
  // The lap before each point's samples is read by 512 threads of the chasing block: a serial
  // lap of a 128-byte stride to twice the L2 was 1.9 s of quick's 2.1-s tlb_real.
  auto measure_control = [&](std::uint64_t stride, std::uint64_t hops) {
    return measure_point(cc, stride, hops, k_control_warm_threads);
  };
  auto pts = run_sweep(
      cp, [&](std::uint64_t s) { cc.prepare_stride(s, cp.max_bytes); }, measure_control,
      [](const std::string &s) { std::fprintf(stderr, "[tlb] control: %s\n", s.c_str()); });
  tlb_control c = judge_control(std::move(pts), std::uint64_t(dev.l2_bytes));
  c.warm_threads = k_control_warm_threads;
  std::fprintf(stderr, "[tlb] control (L2 capacity, %s): %s\n",
               format_bytes(double(dev.l2_bytes)).c_str(),
               c.passed ? "rise found" : "NO rise found: the probe cannot be trusted on this GPU");
  return c;
}

// The sweep's parameters, as the result records them.
void record_plan(tlb_result &r, const tlb_options &o, const device_pool &pool,
                 const sweep_plan &plan, const pointer_chase &chase) {
  r.alloc = to_string(o.alloc);
  r.granularity_bytes = pool.granularity();
  r.alias_bytes = pool.alias_bytes();
  r.va_base = r.alias_bytes ? reinterpret_cast<std::uint64_t>(pool.data()) : 0;
  r.min_bytes = plan.min_bytes;
  r.max_bytes = plan.max_bytes;
  r.max_hops = plan.max_hops;
  r.short_below = plan.short_below;
  r.short_bytes = plan.short_bytes;
  r.strides = plan.strides;
  r.points_per_octave = plan.points_per_octave;
  r.samples_per_point = chase.last_samples().size();
}

} // namespace

tlb_result run_tlb(const tlb_options &o, device_info dev) {
  const stopwatch t_start;
  std::fprintf(
      stderr, "[tlb] %s (%s), %d SMs, L2 %s, memory %s free of %s, driver %s, runtime %s\n",
      dev.name.c_str(), dev.uuid.c_str(), dev.sm_count, format_bytes(double(dev.l2_bytes)).c_str(),
      format_bytes(double(dev.memory_free_bytes_at_start)).c_str(),
      format_bytes(double(dev.memory_bytes)).c_str(),
      cuda_version_string(dev.driver_version).c_str(),
      cuda_version_string(dev.runtime_version).c_str());
  sweep_plan plan = plan_tlb(o, static_cast<std::uint64_t>(dev.memory_free_bytes_at_start));

  tlb_result r;
  r.sm_clock_mhz_before = measure_sm_clock_mhz();
  std::fprintf(stderr, "[tlb] allocating %s (%s)\n", format_bytes(double(plan.max_bytes)).c_str(),
               to_string(o.alloc));
  const stopwatch t_map;
  device_pool pool(o.alloc, plan.max_bytes, dev.ordinal, o.seed, o.alias_bytes,
                   o.alloc == alloc_kind::alias
                       ? sweep_walks(plan, device_pool::vmm_granularity(dev.ordinal))
                       : std::vector<alias_walk>{});
  if (o.alloc == alloc_kind::alias)
    std::fprintf(stderr,
                 "[tlb] %s of virtual range, every slot one %s physical chunk, %zu of %zu slots "
                 "(those the sweep touches): %s in %.1f s\n",
                 format_bytes(double(pool.bytes())).c_str(),
                 format_bytes(double(pool.alias_bytes())).c_str(), pool.mapped_slots(),
                 pool.alias_slots(),
                 pool.reused() ? (pool.newly_mapped_slots() ? "kept from an earlier stage, the rest"
                                                            : "kept from an earlier stage")
                               : "mapped",
                 t_map.seconds());
  plan.max_bytes = std::min<std::uint64_t>(plan.max_bytes, pool.bytes());
  if (pool.granularity()) // strides below the mapping's chunk: no more hops than the chunk stride
    plan.max_hops = plan.max_bytes / pool.granularity();
  pointer_chase chase(pool, o.samples);
  if (o.control)
    r.control = run_control(o, dev, plan, chase);
  r.points = run_sweep(
      plan, [&](std::uint64_t s) { chase.prepare_stride(s); },
      [&](std::uint64_t stride, std::uint64_t hops) { return measure_point(chase, stride, hops); },
      [](const std::string &s) { std::fprintf(stderr, "[tlb] %s\n", s.c_str()); });
  r.sm_clock_mhz_after = measure_sm_clock_mhz();
  dev.sm_clock_mhz_seen = 0.5 * (r.sm_clock_mhz_before + r.sm_clock_mhz_after);
  r.wall_seconds = t_start.seconds();
  static_cast<result_envelope &>(r) = make_envelope(dev, o.seed);
  record_plan(r, o, pool, plan, chase);
  return r;
}

} // namespace gpuprobe::probes
