#include "probes/tlb_sweep.hpp"

#include "common/error.hpp"
#include "common/units.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

namespace gpuprobe::probes {

std::vector<std::uint64_t> coarse_hops(const sweep_plan &plan, std::uint64_t stride) {
  std::vector<std::uint64_t> out;
  const std::uint64_t max_hops = plan.max_bytes / stride;
  if (max_hops < 1)
    return out;
  const std::uint64_t min_hops = std::max<std::uint64_t>(1, (plan.min_bytes + stride - 1) / stride);
  const double ratio = std::pow(2.0, 1.0 / std::max(1, plan.points_per_octave));
  for (double h = double(std::min(min_hops, max_hops)); h <= double(max_hops) * (1 + 1e-12);
       h *= ratio) {
    const auto k = static_cast<std::uint64_t>(std::llround(h));
    if (out.empty() || out.back() != k)
      out.push_back(k);
  }
  if (out.back() != max_hops)
    out.push_back(max_hops);
  return out;
}

std::vector<sweep_point> run_sweep(const sweep_plan &plan,
                                   const std::function<void(std::uint64_t)> &prepare,
                                   const measure_fn &measure, const progress_fn &progress) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  std::vector<sweep_point> all;
  std::size_t done = 0;
  for (const std::uint64_t stride : plan.strides) {
    ++done;
    const auto grid = coarse_hops(plan, stride);
    if (grid.empty())
      continue;
    prepare(stride);
    std::map<std::uint64_t, sweep_point> pts; // by hops
    for (auto h : grid)
      pts[h] = measure(stride, h);
    // Bisection around every rise: measure the middle hop count, keep the half that holds
    // the change, until the boundary is resolved.
    int refined = 0;
    for (int round = 0; round < 2; ++round) {
      std::vector<double> x, y;
      std::vector<std::uint64_t> hops;
      for (auto &[h, p] : pts) {
        x.push_back(double(p.footprint_bytes));
        y.push_back(p.median);
        hops.push_back(h);
      }
      for (const auto &st : detect_steps(x, y, plan.steps)) {
        std::uint64_t lo = hops[st.index - 1], hi = hops[st.index];
        const double mid_level = 0.5 * (st.before + st.after);
        for (int b = 0; b < plan.max_bisections && hi - lo > 1 &&
                        double(hi - lo) / double(lo) > plan.resolution;
             ++b) {
          const std::uint64_t mid = lo + (hi - lo) / 2;
          auto p = pts.count(mid) ? pts[mid] : measure(stride, mid);
          p.refined = true;
          pts[mid] = p;
          ++refined;
          (p.median >= mid_level ? hi : lo) = mid;
        }
      }
    }
    for (auto &[h, p] : pts)
      all.push_back(p);
    char line[200];
    std::snprintf(line, sizeof line, "stride %s (%zu/%zu): %zu points (%d refined), %.1f s elapsed",
                  format_bytes(double(stride)).c_str(), done, plan.strides.size(), pts.size(),
                  refined, elapsed());
    progress(line);
  }
  return all;
}

} // namespace gpuprobe::probes
