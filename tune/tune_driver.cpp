// gpuprobe tune's sequence on the GPU (cli/tune_cmd.cpp maps its flags here): the profile read
// and checked, then the regions, the bitmap word size, CRW's cluster placement and the TLB scope
// measured in turn, each decided (tune/decisions.hpp) and printed, and tuning.json written.
#include "tune/tune_driver.hpp"

#include "allocators/load_tuning.hpp"
#include "analysis/models.hpp"
#include "common/device_info.hpp"
#include "common/device_memory.hpp"
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/folder_lock.hpp"
#include "common/json_io.hpp"
#include "common/stats.hpp"
#include "common/stopwatch.hpp"
#include "common/units.hpp"
#include "model/tuning.hpp"
#include "tune/decisions.hpp"
#include "tune/measure.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace gpuprobe::tune {

using nlohmann::json;

namespace {

// "one pass" or "64.53 GiB": a TLB scope in words.
std::string scope_text(std::uint64_t bytes) {
  return bytes ? format_gib(double(bytes)) : "one pass";
}

// The profile, checked for what the decisions need (one-line errors).
model::profile read_checked_profile(const std::string &path) {
  const json doc = read_json_file(path);
  require_schema(doc, schema::profile, path);
  if (!doc.contains("tlb") || !doc["tlb"].is_object())
    throw error(path + ": no \"tlb\" block (not written by gpuprobe characterize?)");
  if (!doc.contains("device") || !doc["device"].is_object())
    throw error(path + ": no \"device\" block");
  return model::profile_from_json(doc, path);
}

// What every measurement of one tune shares: the options, the profile, the GPU, the footprint of
// the TLB-scoped kernels, and the workloads validate runs (on the pools it uses).
struct tune_context {
  const tune_run_options &o;
  model::profile profile;
  std::string measured_on; // the profile's GPU (UUID)
  device_info dev;
  std::uint64_t footprint = 0;
  validate_options vo;
};

// The cudaMalloc-pool workload of validate named prefix...suffix, for tuning `t`.
workload find_workload(const tune_context &c, const alloc::tuning &t, const std::string &prefix,
                       const std::string &suffix) {
  for (auto &w : validation_workloads(t, c.vo))
    if (w.pool == "cudamalloc" && w.name.rfind(prefix, 0) == 0 && w.name.size() >= suffix.size() &&
        w.name.compare(w.name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return w;
  throw error("tune: no workload " + prefix + "..." + suffix);
}

// Regions per level: each level's SM -> region map tried on get_page + write at 50 % free, on a
// pool larger than its reach, against one region (32-bit words both).
region_decision tune_regions(const tune_context &c) {
  auto options =
      region_options(c.profile.tlb, c.dev.sm_count, double(c.vo.pool_bytes), double(c.footprint));
  std::vector<region_measurement> region_ms;
  for (auto &opt : options) {
    if (!opt.skip.empty()) {
      std::printf("[regions] %-3s %s: not applicable (%s)\n", opt.level.c_str(),
                  opt.scope().c_str(), opt.skip.c_str());
      continue;
    }
    const alloc::tuning t = region_tuning(opt.regions);
    const bool small = opt.pool_bytes == double(c.vo.pool_bytes); // else the footprint's pool
    const auto w =
        find_workload(c, t, small ? "getpage_write/free:" : "getpage_write/pool:", "free:50%");
    if (!w.differs()) {
      std::printf("[regions] %-3s %s: the %s pool is too small for %d aligned regions\n",
                  opt.level.c_str(), opt.scope().c_str(),
                  scope_text(std::uint64_t(opt.pool_bytes)).c_str(), opt.regions.regions);
      opt.skip = "the pool is too small for its aligned regions";
      continue;
    }
    const auto ab = measure_ab(w, std::max(c.o.reps, 5), "tune");
    region_ms.push_back({opt.level, median(ab.default_ms), median(ab.tuned_ms)});
    std::printf("[regions] %-3s %s: %d regions on %s: %.4f -> %.4f ms (x%.3f)\n", opt.level.c_str(),
                opt.scope().c_str(), opt.regions.regions,
                scope_text(std::uint64_t(opt.pool_bytes)).c_str(), region_ms.back().ms_one,
                region_ms.back().ms_scoped, region_ms.back().ms_scoped / region_ms.back().ms_one);
    std::fflush(stdout);
  }
  auto regions = decide_regions_measured(options, region_ms);
  std::printf("[regions] %s\n", regions.reason.c_str());
  return regions;
}

// Bitmap word size: RW-BM and CoRW, 32 vs 64 bits, from an empty pool to a nearly full one (the
// points, with TAS theory beside them), then on the hash join (an empty pool filling up).
std::vector<word_point> word_points(const tune_context &c, unsigned threads) {
  const std::vector<double> fractions = c.o.quick ? std::vector<double>{1.0, 0.5, 0.01}
                                                  : std::vector<double>{1.0, 0.5, 0.1, 0.01, 0.005};
  std::vector<word_point> points;
  for (const char *a : {"rw_bm", "corw"})
    for (double f : fractions) {
      const auto s = measure_word_size(a, f, threads, c.o.reps, c.o.seed);
      word_point p;
      p.allocator = a;
      p.free_fraction = f;
      p.pages = double(s.pages), p.free_pages = double(s.free_pages), p.threads = double(s.threads);
      p.ms32 = median(s.ms32), p.ms64 = median(s.ms64);
      p.tas32 = analysis::rw_bm_tas(p.pages, p.free_pages, p.threads, 32),
      p.tas64 = analysis::rw_bm_tas(p.pages, p.free_pages, p.threads, 64);
      p.was32 = analysis::rw_bm_was_bound(p.pages, p.free_pages, p.threads, 32);
      p.was64 = analysis::rw_bm_was_bound(p.pages, p.free_pages, p.threads, 64);
      std::printf(
          "[word]    %-5s free %5.1f%%: 32-bit %.4f ms, 64-bit %.4f ms (TAS theory %.3f / %.3f)\n",
          a, f * 100, p.ms32, p.ms64, p.tas32, p.tas64);
      std::fflush(stdout);
      points.push_back(p);
    }
  return points;
}

word_decision tune_word_size(const tune_context &c, std::vector<word_point> &points,
                             unsigned threads) {
  points = word_points(c, threads);
  std::vector<word_workload> word_workloads;
  alloc::tuning t64;
  t64.word_bits = 64;
  const auto ab =
      measure_ab(find_workload(c, t64, "hash_join/4M", ""), std::max(c.o.reps, 5), "tune");
  word_workloads.push_back({"hash_join/4M", median(ab.default_ms), median(ab.tuned_ms)});
  std::printf("[word]    hash_join/4M: 32-bit %.4f ms, 64-bit %.4f ms\n", word_workloads[0].ms32,
              word_workloads[0].ms64);
  auto word = decide_word_size(points, 0.03, word_workloads);
  std::printf("[word]    %s\n", word.reason.c_str());
  return word;
}

// CRW cluster placement.
crw_decision tune_crw(const tune_context &c, std::vector<crw_point> &crw_points, unsigned threads) {
  for (double f : {0.5, 0.1}) {
    for (const auto &s : measure_crw_placements(f, threads, 8, c.o.reps, c.o.seed)) {
      crw_points.push_back({alloc::to_string(s.start), f, median(s.ms)});
      std::printf("[crw]     %-7s free %4.0f%%: %.4f ms for 8 launches\n",
                  alloc::to_string(s.start), f * 100, crw_points.back().ms);
    }
    std::fflush(stdout);
  }
  auto crw = decide_crw_placement(crw_points);
  std::printf("[crw]     %s\n", crw.reason.c_str());
  return crw;
}

// The scope of TLB-scoped kernels: each level's / candidate's reach vs one pass, measured.
scope_decision tune_scope(const tune_context &c) {
  const auto scope_opts = scope_options(c.profile.tlb, c.footprint);
  std::vector<std::uint64_t> scopes = {0};
  for (const auto &s : scope_opts)
    if (s.bytes() < c.footprint)
      scopes.push_back(s.bytes());
  std::vector<scope_point> scope_points;
  if (scopes.size() > 1)
    for (const auto &s :
         measure_tlb_scopes(scopes, c.footprint, std::min(c.o.reps, 5), c.o.device, c.o.seed)) {
      scope_points.push_back({s.scope_bytes, s.pool, median(s.ms)});
      std::printf("[scope]   %-10s %s sampled, scope %-10s %.3f ms\n", s.pool.c_str(),
                  scope_text(c.footprint).c_str(), scope_text(s.scope_bytes).c_str(),
                  scope_points.back().ms);
      std::fflush(stdout);
    }
  auto scope = decide_tlb_scope_measured(scope_opts, scope_points, c.footprint);
  std::printf("[scope]   %s\n", scope.reason.c_str());
  return scope;
}

// The profile read and checked (before the GPU), the GPU queried, the note where they differ.
tune_context open_tune(const tune_run_options &o) {
  tune_context c{o, read_checked_profile(o.profile), "", {}, 0, {}};
  (void)region_options(c.profile.tlb, 0, 0, 0); // a malformed level fails here, before the GPU
  c.dev = query_device(o.device);
  c.measured_on = c.profile.gpu_uuid();
  std::printf("gpuprobe tune: %s (%s), profile %s\n", c.dev.name.c_str(), c.dev.uuid.c_str(),
              o.profile.c_str());
  if (const std::string name = c.profile.gpu_name(); c.measured_on != c.dev.uuid)
    std::printf("  note: the profile was measured on %s (%s): its SM groups may not hold here\n",
                name.empty() ? "?" : name.c_str(), c.measured_on.c_str());
  c.footprint = default_tlb_footprint(o.quick, o.device);
  c.vo.tlb_footprint = c.footprint;
  c.vo.quick = o.quick;
  c.vo.device = o.device;
  c.vo.seed = o.seed;
  c.vo.pools = shared_pools(c.vo); // the regions' TLB-sized pool is the scope's (pool_keeper)
  return c;
}

} // namespace

void run_tune(const tune_run_options &o) {
  const stopwatch t0;
  const folder_lock lock(std::filesystem::path(o.out).parent_path().string(), "tune");
  // The TLB-sized pools are kept from one decision to the next, and under gpuprobe run to
  // validate (its keeper, outside this one): the regions' cudaMalloc pool is the scope's, and the
  // scope's VMM pool, its last, validate's first.
  const pool_keeper keep;
  const tune_context c = open_tune(o);
  // Each decision's time, for the line before the summary: where tune spends it.
  stopwatch since;
  // The decisions on small pools first (word size, CRW placement: their own allocations), then
  // those on TLB-sized pools, which keep them: regions (cudaMalloc), then the scope (cudaMalloc,
  // then VMM). They are independent: the order changes no decision.
  const unsigned threads = 1u << 16;
  std::vector<word_point> points;
  const auto word = tune_word_size(c, points, threads);
  const double word_s = since.lap();
  std::vector<crw_point> crw_points;
  const auto crw = tune_crw(c, crw_points, threads);
  const double crw_s = since.lap();
  const auto regions = tune_regions(c);
  const double regions_s = since.lap();
  release_pools(c.vo.pools); // the regions' pool to the keeper: the scope's cudaMalloc pool
  const auto scope = tune_scope(c);
  const double scope_s = since.lap();
  std::printf("  decision times: regions %.1f s, word size %.1f s, CRW placement %.1f s, TLB scope "
              "%.1f s\n",
              regions_s, word_s, crw_s, scope_s);

  const json head = document_head(schema::tuning, to_json(c.dev), o.seed);
  model::tuning_file t;
  t.schema = head["schema"];
  t.device = head["device"];
  t.meta = head["meta"];
  t.profile = {o.profile, c.profile.gpu_name(), c.measured_on, c.measured_on == c.dev.uuid};
  t.allocator = allocator_tuning(word, regions, crw, scope);
  t.word_size = word.decision(points);
  t.regions = regions.decision();
  t.crw_placement = crw.decision(crw_points);
  t.tlb_scope = scope.decision();
  const double wall = t0.seconds();
  t.wall_seconds = wall;
  write_json_atomic(o.out, model::to_json(t));
  std::printf(
      "gpuprobe tune: %d-bit words, %d region(s), CRW start %s, TLB scope %s, %.0f s -> %s\n",
      word.word_bits, regions.regions, crw.start.c_str(), scope_text(scope.bytes).c_str(), wall,
      o.out.c_str());
}

} // namespace gpuprobe::tune
