// gpuprobe tune: profile.json -> tuning.json (gpuprobe.tuning/1). Regions follow from the
// profile; the bitmap word size, CRW's cluster placement and the TLB scope (among the profile's
// levels and candidates) are measured here, on this GPU. Each decision records its reason and the
// numbers behind it.
#include "allocators/load_tuning.hpp"
#include "analysis/models.hpp"
#include "tune/decisions.hpp"
#include "cli/common.hpp"
#include "cli/devices.hpp"
#include "common/device_info.hpp"
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/results_folder.hpp"
#include "common/stats.hpp"
#include "common/units.hpp"
#include "tune/measure.hpp"

#include <chrono>
#include <cstdio>
#include <memory>

namespace gpuprobe::cli {

namespace {

struct tune_options {
  common_options common;
  std::string profile;
  std::string results = "results"; // --devices: the parent of the unit folders
  int reps = 12;
  bool quick = false;
};

// "one pass" or "64.53 GiB": a TLB scope in words.
std::string scope_text(std::uint64_t bytes) {
  return bytes ? format_gib(double(bytes)) : "one pass";
}

// The profile, checked for what the decisions need (one-line errors).
json read_profile(const std::string &path) {
  json p = read_json_file(path);
  require_schema(p, schema::profile, path);
  if (!p.contains("tlb") || !p["tlb"].is_object())
    throw error(path + ": no \"tlb\" block (not written by gpuprobe characterize?)");
  if (!p.contains("device") || !p["device"].is_object())
    throw error(path + ": no \"device\" block");
  return p;
}

void run_tune(const tune_options &o) {
  const auto t0 = std::chrono::steady_clock::now();
  check_output_path(o.common.out);
  if (o.reps < 3)
    throw error("tune: --reps must be at least 3");
  const json profile = read_profile(o.profile);
  (void)tune::region_options(profile, 0, 0, 0); // a malformed level fails here, before the GPU
  (void)tune::scope_options(profile);           // likewise
  const auto dev = query_device(o.common.device);
  const std::string measured_on = profile["device"].value("uuid", "");
  const bool same_gpu = measured_on == dev.uuid;
  std::printf("gpuprobe tune: %s (%s), profile %s\n", dev.name.c_str(), dev.uuid.c_str(),
              o.profile.c_str());
  if (!same_gpu)
    std::printf("  note: the profile was measured on %s (%s): its SM groups may not hold here\n",
                profile["device"].value("name", "?").c_str(), measured_on.c_str());
  const std::uint64_t footprint = tune::default_tlb_footprint(o.quick, o.common.device);
  const auto scope_opts = tune::scope_options(profile, footprint);
  tune::validate_options vo; // the workloads validate runs, on the pools it uses
  vo.tlb_footprint = footprint;
  vo.quick = o.quick;
  vo.device = o.common.device;
  vo.seed = o.common.seed;
  auto workload = [&](const alloc::tuning &t, const std::string &prefix,
                      const std::string &suffix) {
    for (auto &w : tune::validation_workloads(t, vo))
      if (w.pool == "cudamalloc" && w.name.rfind(prefix, 0) == 0 &&
          w.name.size() >= suffix.size() &&
          w.name.compare(w.name.size() - suffix.size(), suffix.size(), suffix) == 0)
        return w;
    throw error("tune: no workload " + prefix + "..." + suffix);
  };

  // Regions per level: each level's SM -> region map tried on get_page + write at 50 % free, on
  // a pool larger than its reach, against one region (32-bit words both).
  auto options =
      tune::region_options(profile, dev.sm_count, double(vo.pool_bytes), double(footprint));
  std::vector<tune::region_measurement> region_ms;
  for (auto &opt : options) {
    if (!opt.skip.empty()) {
      std::printf("[regions] %-3s %s: not applicable (%s)\n", opt.level.c_str(), opt.scope.c_str(),
                  opt.skip.c_str());
      continue;
    }
    alloc::tuning t;
    t.regions = unsigned(opt.regions.regions);
    t.max_region_bytes = std::uint64_t(opt.regions.max_region_bytes);
    t.region_align_bytes = std::uint64_t(opt.regions.page_bytes);
    t.sm_region.assign(opt.regions.sm_region.begin(), opt.regions.sm_region.end());
    const bool small = opt.pool_bytes == double(vo.pool_bytes); // else the footprint's pool
    const auto w = workload(t, small ? "getpage_write/free:" : "getpage_write/pool:", "free:50%");
    if (!w.differs) {
      std::printf("[regions] %-3s %s: the %s pool is too small for %d aligned regions\n",
                  opt.level.c_str(), opt.scope.c_str(),
                  scope_text(std::uint64_t(opt.pool_bytes)).c_str(), opt.regions.regions);
      opt.skip = "the pool is too small for its aligned regions";
      continue;
    }
    const auto ab = tune::measure_ab(w, std::max(o.reps, 5), "tune");
    region_ms.push_back({opt.level, median(ab.default_ms), median(ab.tuned_ms)});
    std::printf("[regions] %-3s %s: %d regions on %s: %.4f -> %.4f ms (x%.3f)\n", opt.level.c_str(),
                opt.scope.c_str(), opt.regions.regions,
                scope_text(std::uint64_t(opt.pool_bytes)).c_str(), region_ms.back().ms_one,
                region_ms.back().ms_scoped, region_ms.back().ms_scoped / region_ms.back().ms_one);
    std::fflush(stdout);
  }
  const auto regions = tune::decide_regions_measured(options, region_ms);
  std::printf("[regions] %s\n", regions.reason.c_str());

  // Bitmap word size: RW-BM and CoRW, 32 vs 64 bits, from an empty pool to a nearly full one,
  // and on the hash join (an empty pool filling up), one region both.
  const std::vector<double> fractions = o.quick ? std::vector<double>{1.0, 0.5, 0.01}
                                                : std::vector<double>{1.0, 0.5, 0.1, 0.01, 0.005};
  const unsigned threads = 1u << 16;
  std::vector<tune::word_point> points;
  for (const char *a : {"rw_bm", "corw"})
    for (double f : fractions) {
      const auto s = tune::measure_word_size(a, f, threads, o.reps, o.common.seed);
      tune::word_point p;
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
  std::vector<tune::word_workload> word_workloads;
  {
    alloc::tuning t64;
    t64.word_bits = 64;
    const auto ab =
        tune::measure_ab(workload(t64, "hash_join/4M", ""), std::max(o.reps, 5), "tune");
    word_workloads.push_back({"hash_join/4M", median(ab.default_ms), median(ab.tuned_ms)});
    std::printf("[word]    hash_join/4M: 32-bit %.4f ms, 64-bit %.4f ms\n", word_workloads[0].ms32,
                word_workloads[0].ms64);
  }
  const auto word = tune::decide_word_size(points, 0.03, word_workloads);
  std::printf("[word]    %s\n", word.reason.c_str());

  // CRW cluster placement.
  std::vector<tune::crw_point> crw_points;
  json crw_samples = json::array();
  for (double f : {0.5, 0.1}) {
    for (const auto &s : tune::measure_crw_placements(f, threads, 8, o.reps, o.common.seed)) {
      crw_points.push_back({alloc::to_string(s.start), f, median(s.ms)});
      std::printf("[crw]     %-7s free %4.0f%%: %.4f ms for 8 launches\n",
                  alloc::to_string(s.start), f * 100, crw_points.back().ms);
    }
    std::fflush(stdout);
  }
  const auto crw = tune::decide_crw_placement(crw_points);
  std::printf("[crw]     %s\n", crw.reason.c_str());

  // The scope of TLB-scoped kernels: each level's / candidate's reach vs one pass, measured.
  std::vector<std::uint64_t> scopes = {0};
  for (const auto &s : scope_opts)
    if (s.bytes < footprint)
      scopes.push_back(s.bytes);
  std::vector<tune::scope_point> scope_points;
  if (scopes.size() > 1)
    for (const auto &s : tune::measure_tlb_scopes(scopes, footprint, std::min(o.reps, 5),
                                                  o.common.device, o.common.seed)) {
      scope_points.push_back({s.scope_bytes, s.pool, median(s.ms)});
      std::printf("[scope]   %-10s %s sampled, scope %-10s %.3f ms\n", s.pool.c_str(),
                  scope_text(footprint).c_str(), scope_text(s.scope_bytes).c_str(),
                  scope_points.back().ms);
      std::fflush(stdout);
    }
  const auto scope = tune::decide_tlb_scope_measured(scope_opts, scope_points, footprint);
  std::printf("[scope]   %s\n", scope.reason.c_str());

  json doc = document_head(schema::tuning, to_json(dev), o.common.seed);
  doc.update(json{{"profile",
                   {{"path", o.profile},
                    {"device_name", profile["device"].value("name", "")},
                    {"device_uuid", measured_on},
                    {"same_gpu", same_gpu}}},
                  {"decisions",
                   {{"word_size", word.to_json(points)},
                    {"regions", regions.to_json()},
                    {"crw_placement", crw.to_json(crw_points)},
                    {"tlb_scope", scope.to_json()}}},
                  {"allocator", alloc::allocator_block_json(
                                     tune::allocator_tuning(word, regions, crw, scope))}});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  doc["wall_seconds"] = wall;
  write_json_atomic(o.common.out, doc);
  std::printf(
      "gpuprobe tune: %d-bit words, %d region(s), CRW start %s, TLB scope %s, %.0f s -> %s\n",
      word.word_bits, regions.regions, crw.start.c_str(), scope_text(scope.bytes).c_str(), wall,
      o.common.out.c_str());
}

} // namespace

void setup_tune(CLI::App &parent) {
  auto opt = std::make_shared<tune_options>();
  auto *app = parent.add_subcommand("tune", "profile.json -> tuning.json: word size, CRW placement "
                                            "and TLB scope measured, TLB-scoped regions");
  app->footer("Example: gpuprobe tune --profile results/first/profile.json --out "
              "results/first/tuning.json (~40 s on an H100, ~50 s on an H200)");
  app->add_option("--profile", opt->profile,
                  "profile.json of gpuprobe characterize (required without --devices)");
  app->add_option("--out", opt->common.out, "tuning.json to write (required without --devices)");
  add_device_option(*app, opt->common);
  add_devices_option(*app, opt->common,
                     "each reads FOLDER/profile.json, writes FOLDER/tuning.json");
  app->add_option("--results", opt->results, "with --devices: the parent of the GPUs' folders")
      ->capture_default_str();
  add_seed_option(*app, opt->common);
  app->add_option("--reps", opt->reps, "repetitions of each measurement (interleaved)")
      ->capture_default_str();
  app->add_flag("--quick", opt->quick,
                "three free fractions for the word size (100, 50, 1 %), a quarter of the footprint "
                "for the TLB scope");
  app->callback([opt] {
    const auto &o = *opt;
    if (o.common.devices.empty()) {
      if (o.profile.empty() || o.common.out.empty())
        throw error("tune: give --profile and --out (or --devices)");
      return run_tune(o);
    }
    unit_command c{"tune",
                   "--profile",
                   results_folder::profile_file,
                   results_folder::tuning_file,
                   {"--reps", std::to_string(o.reps), "--seed", std::to_string(o.common.seed)},
                   "run gpuprobe characterize --devices first"};
    if (o.quick)
      c.extra.push_back("--quick");
    run_per_device("tune", o.common.devices, o.results, plan_for(c));
  });
}

} // namespace gpuprobe::cli
