#include "probes/tlb/sweep.hpp"

#include "common/error.hpp"
#include "common/stats.hpp"
#include "common/stopwatch.hpp"
#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace gpuprobe::probes {

std::uint64_t stride_max_bytes(const sweep_plan &plan, std::uint64_t stride) {
  return plan.short_bytes && stride < plan.short_below ? std::min(plan.max_bytes, plan.short_bytes)
                                                       : plan.max_bytes;
}

std::uint64_t stride_max_hops(const sweep_plan &plan, std::uint64_t stride) {
  const std::uint64_t by_bytes = stride_max_bytes(plan, stride) / stride;
  return plan.max_hops ? std::min(plan.max_hops, by_bytes) : by_bytes;
}

std::vector<alias_walk> sweep_walks(sweep_plan plan, std::uint64_t chunk_bytes) {
  if (chunk_bytes)
    plan.max_hops = plan.max_bytes / chunk_bytes;
  std::vector<alias_walk> w;
  for (auto s : plan.strides)
    w.push_back({s, stride_max_hops(plan, s) * s});
  return w;
}

std::vector<std::uint64_t> coarse_hops(const sweep_plan &plan, std::uint64_t stride) {
  std::vector<std::uint64_t> out;
  const std::uint64_t max_hops = stride_max_hops(plan, stride);
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

namespace {

// Bisects [lo, hi] (hop counts) on `past(point)` (false at lo, true at hi) while `more(lo, hi,
// steps so far)`: measures the middle (refined), keeps the half that holds the change.
int bisect(std::map<std::uint64_t, sweep_point> &pts, std::uint64_t lo, std::uint64_t hi,
           const std::function<bool(std::uint64_t, std::uint64_t, int)> &more, std::uint64_t stride,
           const measure_fn &measure, const std::function<bool(const sweep_point &)> &past) {
  int n = 0;
  while (more(lo, hi, n)) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    auto p = pts.count(mid) ? pts[mid] : measure(stride, mid);
    p.refined = true;
    pts[mid] = p;
    ++n;
    (past(p) ? hi : lo) = mid;
  }
  return n;
}

} // namespace

int refine_ramp_ends(const sweep_plan &plan, std::map<std::uint64_t, sweep_point> &pts,
                     std::uint64_t stride, const measure_fn &measure) {
  std::vector<double> x, med, avg;
  std::vector<std::uint64_t> hops;
  for (auto &[h, p] : pts) {
    x.push_back(double(p.footprint_bytes));
    med.push_back(p.median);
    avg.push_back(p.mean);
    hops.push_back(h);
  }
  const auto steps = detect_steps(x, med, plan.steps);
  int n = 0;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const std::size_t i0 = steps[k].index;
    const std::size_t prev = k > 0 ? steps[k - 1].index : 0;
    const std::size_t next = k + 1 < steps.size() ? steps[k + 1].index : hops.size();
    // The plateaus in the mean (a miss's cost is skewed: the median's plateau is not the mean's).
    const double before = median(avg, prev + (i0 - prev) / 2, i0);
    const double after = median(avg, i0 + (next - i0) / 2, next);
    const double tol = plan.end_share * (after - before) + plan.steps.min_noise;
    if (!(after - before > 2 * tol))
      continue;
    // Down to max(end_hops, end_resolution x hops).
    const auto more = [&](std::uint64_t lo, std::uint64_t hi, int) {
      return hi - lo > std::max<std::uint64_t>(plan.end_hops,
                                               std::uint64_t(double(lo) * plan.end_resolution));
    };
    // Where misses begin: the last point at the level before, below the step's first high one.
    std::size_t j = i0;
    while (j > prev + 1 && avg[j - 1] > before + tol)
      --j;
    if (j > 0 && j > prev)
      n += bisect(pts, hops[j - 1], hops[j], more, stride, measure,
                  [&](const sweep_point &p) { return p.mean > before + tol; });
    // Where every hop misses: the first point at the level after.
    j = i0;
    while (j + 1 < next && avg[j] < after - tol)
      ++j;
    if (j > 0 && j < next && avg[j] >= after - tol && avg[j - 1] < after - tol)
      n += bisect(pts, hops[j - 1], hops[j], more, stride, measure,
                  [&](const sweep_point &p) { return p.mean >= after - tol; });
  }
  return n;
}

std::vector<std::uint64_t> disagreeing(const sweep_plan &plan,
                                       const std::map<std::uint64_t, sweep_point> &pts,
                                       const std::vector<sweep_point> &again) {
  std::vector<std::uint64_t> out;
  for (const auto &p : again) {
    const auto it = pts.find(p.hops);
    if (it == pts.end())
      continue;
    const double was = it->second.mean;
    if (std::fabs(p.mean - was) > std::max(plan.repeat_cycles, plan.repeat_share * was))
      out.push_back(p.hops);
  }
  return out;
}

namespace {

// One stride: the coarse grid, bisection around every rise, both ends of every ramp.
std::map<std::uint64_t, sweep_point> sweep_stride(const sweep_plan &plan, std::uint64_t stride,
                                                  const std::vector<std::uint64_t> &grid,
                                                  const measure_fn &measure, int &refined) {
  std::map<std::uint64_t, sweep_point> pts; // by hops
  for (auto h : grid)
    pts[h] = measure(stride, h);
  if (!plan.refine)
    return pts;
  // Bisection around every rise: measure the middle hop count, keep the half that holds
  // the change, until the boundary is resolved.
  for (int round = 0; round < 2; ++round) {
    std::vector<double> x, y;
    std::vector<std::uint64_t> hops;
    for (auto &[h, p] : pts) {
      x.push_back(double(p.footprint_bytes));
      y.push_back(p.median);
      hops.push_back(h);
    }
    for (const auto &st : detect_steps(x, y, plan.steps)) {
      const double mid_level = 0.5 * (st.before + st.after);
      refined += bisect(
          pts, hops[st.index - 1], hops[st.index],
          [&](std::uint64_t lo, std::uint64_t hi, int b) {
            return b < plan.max_bisections && hi - lo > 1 &&
                   double(hi - lo) / double(lo) > plan.resolution;
          },
          stride, measure, [&](const sweep_point &p) { return p.median >= mid_level; });
    }
  }
  refined += refine_ramp_ends(plan, pts, stride, measure);
  return pts;
}

} // namespace

std::vector<sweep_point> run_sweep(const sweep_plan &plan,
                                   const std::function<void(std::uint64_t)> &prepare,
                                   const measure_fn &measure, const progress_fn &progress) {
  const stopwatch t0;
  std::vector<sweep_point> all;
  std::size_t done = 0;
  for (const std::uint64_t stride : plan.strides) {
    ++done;
    const auto grid = coarse_hops(plan, stride);
    if (grid.empty())
      continue;
    prepare(stride);
    int refined = 0, attempt = 0;
    auto pts = sweep_stride(plan, stride, grid, measure, refined);
    // The repeat: the first, middle and last points of the grid once more.
    std::vector<std::uint64_t> moved;
    for (;; ++attempt) {
      std::vector<sweep_point> again;
      for (auto h : {grid.front(), grid[grid.size() / 2], grid.back()})
        again.push_back(measure(stride, h));
      moved = disagreeing(plan, pts, again);
      if (moved.empty() || attempt >= plan.repeat_attempts)
        break;
      progress("stride " + format_bytes(double(stride)) + ": " + std::to_string(moved.size()) +
               " of 3 points moved beyond the noise when measured again: measuring the stride "
               "again");
      refined = 0;
      pts = sweep_stride(plan, stride, grid, measure, refined);
    }
    for (auto &[h, p] : pts) {
      p.disturbed = !moved.empty();
      all.push_back(p);
    }
    char line[240];
    std::snprintf(
        line, sizeof line, "stride %s (%zu/%zu): %zu points (%d refined), %.1f s elapsed%s",
        format_bytes(double(stride)).c_str(), done, plan.strides.size(), pts.size(), refined,
        t0.seconds(), moved.empty() ? "" : "; DISTURBED: its repeat still disagrees");
    progress(line);
  }
  return all;
}

} // namespace gpuprobe::probes
