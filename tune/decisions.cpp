#include "tune/decisions.hpp"

#include "probes/tlb/levels.hpp"

#include "common/error.hpp"
#include "common/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace gpuprobe::tune {

using model::for_each_level;
using model::level_label;

using nlohmann::json;

model::tuning_decision region_decision::decision() const {
  return {reason,
          {{"regions", regions},
           {"max_region_bytes", max_region_bytes},
           {"coverage_bytes", coverage_bytes},
           {"sm_region", sm_region},
           {"level", level.empty() ? json(nullptr) : json(level)},
           {"per_level", per_level}}};
}

namespace {

// One region per SM group of level L (its sharing groups), each at most L's reach in whole pages.
region_decision group_regions(const model::tlb_level &L, const std::string &where) {
  region_decision d;
  const double reach = L.reach_bytes, page = L.coverage_bytes;
  if (!(reach > 0) || !(page > 0))
    throw error("tune: " + where + " lacks reach_bytes or coverage_bytes");
  const auto &groups = *L.sharing->groups;
  d.regions = int(groups.size());
  d.coverage_bytes = page;
  d.max_region_bytes = std::floor(reach / page) * page; // whole pages of the level
  d.level = where;
  int max_sm = 0;
  for (const auto &g : groups)
    for (const int sm : g)
      max_sm = std::max(max_sm, sm);
  d.sm_region.assign(std::size_t(max_sm) + 1, -1);
  for (std::size_t r = 0; r < groups.size(); ++r)
    for (const int sm : groups[r])
      d.sm_region[std::size_t(sm)] = int(r);
  int spare = 0; // SMs in no group share the regions round-robin
  for (auto &r : d.sm_region)
    if (r < 0)
      r = spare++ % d.regions;
  return d;
}

} // namespace

std::vector<region_option> region_options(const model::tlb_hierarchy &tlb, int sm_count,
                                          double small_pool_bytes, double largest_pool_bytes) {
  std::vector<region_option> out;
  double top_level = 0;
  for (const auto &L : tlb.levels)
    top_level = std::max(top_level, L.reach_bytes);
  for_each_level(tlb, [&](const model::tlb_level &L, bool candidate, const std::string &label) {
    region_option o;
    o.level = label;
    o.tested = L;
    if (candidate && o.reach_bytes() > 0 && o.reach_bytes() <= top_level)
      return; // a candidate inside the levels adds nothing to try
    const std::string scope = o.scope();
    o.pool_bytes = o.reach_bytes() < small_pool_bytes ? small_pool_bytes : largest_pool_bytes;
    if (L.sharing && L.sharing->has_groups()) {
      o.regions = group_regions(L, o.level);
    } else if (scope == "private" && sm_count > 1) {
      const double page = L.coverage_bytes;
      o.regions.regions = sm_count;
      o.regions.coverage_bytes = page;
      o.regions.max_region_bytes = page > 0 ? std::floor(o.reach_bytes() / page) * page : 0;
      o.regions.level = o.level;
      for (int s = 0; s < sm_count; ++s)
        o.regions.sm_region.push_back(s);
    } else if (scope == "global") {
      o.skip = "one structure shared by every SM: regions cannot give SMs separate entries";
    } else {
      o.skip = "its sharing is " + scope + ": no SM -> region map to cut";
    }
    if (o.skip.empty() && !(o.reach_bytes() < largest_pool_bytes))
      o.skip = "its reach (" + format_gib(o.reach_bytes()) + ") is not below the largest pool (" +
               format_gib(largest_pool_bytes) + "): every pool fits it as it is";
    out.push_back(std::move(o));
  });
  return out;
}

region_decision decide_regions_measured(const std::vector<region_option> &options,
                                        const std::vector<region_measurement> &measured,
                                        double tie) {
  region_decision d;
  const region_option *best = nullptr;
  double best_ratio = 1 - tie;
  std::string lines;
  for (const auto &o : options) {
    json row = {{"level", o.level}, {"scope", o.scope()}, {"reach_bytes", o.reach_bytes()}};
    std::string line =
        o.level + " (" + o.scope() + ", reach " + format_gib(o.reach_bytes()) + "): ";
    if (!o.skip.empty()) {
      row["decision"] = "not applicable";
      row["reason"] = o.skip;
      line += "not applicable: " + o.skip;
    } else {
      const auto m = std::find_if(measured.begin(), measured.end(),
                                  [&](const region_measurement &r) { return r.level == o.level; });
      if (m == measured.end() || !(m->ms_one > 0) || !(m->ms_scoped > 0))
        throw error("tune: no region measurement for " + o.level);
      const double ratio = m->ms_scoped / m->ms_one;
      char b[256];
      std::snprintf(b, sizeof b,
                    "%d regions on a %s pool, get_page + write at 50 %% free: %.4f -> %.4f ms "
                    "(x%.3f)",
                    o.regions.regions, format_gib(o.pool_bytes).c_str(), m->ms_one, m->ms_scoped,
                    ratio);
      const bool gain = ratio <= 1 - tie;
      row.update({{"regions", o.regions.regions},
                  {"pool_bytes", o.pool_bytes},
                  {"ms_one_region", m->ms_one},
                  {"ms_regions", m->ms_scoped},
                  {"ratio", ratio},
                  {"decision", gain ? "gain" : "no gain"}});
      line += std::string(b) + (gain ? ": a gain" : ": no gain");
      if (gain && ratio < best_ratio)
        best = &o, best_ratio = ratio;
    }
    d.per_level.push_back(row);
    lines += (lines.empty() ? "" : "; ") + line;
  }
  if (best) {
    const json per_level = d.per_level;
    d = best->regions;
    d.per_level = per_level;
    d.reason = best->level + "'s regions chosen (the largest gain). " + lines;
  } else {
    d.reason =
        (options.empty() ? std::string("no TLB level in the profile") : "no level's regions pay") +
        ": one region (the whole pool). " + lines;
  }
  return d;
}

model::tuning_decision word_decision::decision(const std::vector<word_point> &points) const {
  json p = json::array();
  for (const auto &w : points)
    p.push_back({{"allocator", w.allocator},
                 {"free_fraction", w.free_fraction},
                 {"pages", w.pages},
                 {"free_pages", w.free_pages},
                 {"threads", w.threads},
                 {"ms32", w.ms32},
                 {"ms64", w.ms64},
                 {"tas32_eq5", w.tas32},
                 {"tas64_eq5", w.tas64},
                 {"was32_eq6", w.was32},
                 {"was64_eq6", w.was64}});
  json w = json::array();
  for (const auto &x : workloads)
    w.push_back({{"workload", x.name}, {"ms32", x.ms32}, {"ms64", x.ms64}});
  // The word size itself is the allocator block's (tuning.json's "allocator".word_bits), once.
  return {reason,
          {{"geomean_ratio_64_over_32", geomean_ratio},
           {"tradeoffs", tradeoffs},
           {"measurements", p},
           {"workloads", w}}};
}

word_decision decide_word_size(const std::vector<word_point> &points, double tie,
                               const std::vector<word_workload> &workloads) {
  if (points.empty())
    throw error("tune: no word-size measurements");
  double log_sum = 0;
  for (const auto &p : points) {
    if (!(p.ms32 > 0) || !(p.ms64 > 0))
      throw error("tune: a word-size measurement is not positive");
    log_sum += std::log(p.ms64 / p.ms32);
  }
  word_decision d;
  d.geomean_ratio = std::exp(log_sum / double(points.size()));
  char buf[256];
  if (std::fabs(d.geomean_ratio - 1) <= tie) {
    d.word_bits = 32;
    std::snprintf(buf, sizeof buf,
                  "64-bit words take %.3fx the time of 32-bit ones (geometric mean over %zu "
                  "measurements): within %.0f%%, 32 kept",
                  d.geomean_ratio, points.size(), tie * 100);
  } else {
    d.word_bits = d.geomean_ratio < 1 ? 64 : 32;
    std::snprintf(buf, sizeof buf,
                  "64-bit words take %.3fx the time of 32-bit ones (geometric mean over %zu "
                  "measurements): %d chosen",
                  d.geomean_ratio, points.size(), d.word_bits);
  }
  d.reason = buf;
  d.workloads = workloads;
  // Where the chosen size loses: written into the decision with its numbers.
  auto lose = [&](const std::string &what, double ms32, double ms64) {
    const double mine = d.word_bits == 64 ? ms64 : ms32, other = d.word_bits == 64 ? ms32 : ms64;
    if (mine > (1 + tie) * other) {
      char b[256];
      std::snprintf(b, sizeof b, "%s: %d-bit %.3fx the time of %d-bit (%.4f vs %.4f ms)",
                    what.c_str(), d.word_bits, mine / other, d.word_bits == 64 ? 32 : 64, mine,
                    other);
      d.tradeoffs.push_back(b);
    }
  };
  for (const auto &p : points) {
    char what[96];
    std::snprintf(what, sizeof what, "%s get_page at %g %% free%s", p.allocator.c_str(),
                  p.free_fraction * 100, p.free_fraction >= 1 ? " (an empty pool)" : "");
    lose(what, p.ms32, p.ms64);
  }
  for (const auto &w : workloads) {
    if (!(w.ms32 > 0) || !(w.ms64 > 0))
      throw error("tune: a word-size workload measurement is not positive");
    lose(w.name, w.ms32, w.ms64);
  }
  if (!d.tradeoffs.empty()) {
    d.reason += "; trade-off: slower in ";
    for (std::size_t i = 0; i < d.tradeoffs.size(); ++i)
      d.reason += (i ? "; " : "") + d.tradeoffs[i];
  }
  return d;
}

model::tuning_decision scope_decision::decision() const {
  return {reason,
          {{"bytes", bytes},
           {"level", level.empty() ? json(nullptr) : json(level)},
           {"midpoint_bytes", midpoint_bytes},
           {"measurements", measurements}}};
}

namespace {
// A level's whole pages (2 MiB where its page is not known).
double page_unit(const model::tlb_level &L) {
  return L.coverage_bytes > 0 ? L.coverage_bytes : double(2u << 20);
}
} // namespace

std::uint64_t scope_option::bytes() const {
  const double unit = page_unit(tested);
  return std::uint64_t(std::floor(fraction * tested.reach_bytes / unit) * unit);
}

std::string scope_option::name() const {
  char name[32];
  if (fraction < 1)
    std::snprintf(name, sizeof name, "%s x%g", label.c_str(), fraction);
  else
    std::snprintf(name, sizeof name, "%s", label.c_str());
  return name;
}

std::uint64_t scope_option::midpoint_bytes() const {
  const double unit = page_unit(tested);
  const double mid = tested.structure ? tested.structure->midpoint_reach_bytes.value_or(0.0) : 0.0;
  return mid > tested.reach_bytes ? std::uint64_t(std::floor(mid / unit) * unit) : 0;
}

std::vector<scope_option> scope_options(const model::tlb_hierarchy &tlb, std::uint64_t footprint) {
  std::vector<scope_option> o;
  for_each_level(tlb, [&](const model::tlb_level &L, bool candidate, const std::string &label) {
    if (!(L.reach_bytes > 0))
      return;
    const bool curve = !candidate && L.reach_bytes * 8 >= double(footprint);
    for (double f : {1.0, 0.9375, 0.875, 0.8125, 0.75, 0.625, 0.5}) {
      if (f < 1 && !curve)
        break;
      const scope_option opt{label, L, f};
      const auto bytes = opt.bytes();
      if (bytes == 0)
        continue;
      if (std::none_of(o.begin(), o.end(),
                       [&](const scope_option &x) { return x.bytes() == bytes; }))
        o.push_back(opt);
    }
  });
  std::sort(o.begin(), o.end(),
            [](const scope_option &a, const scope_option &b) { return a.bytes() > b.bytes(); });
  return o;
}

namespace {

// Each option's time relative to one pass, the geometric mean over the pools (largest scope
// first); the same as text for the reason, and the pools timed in one pass.
std::vector<std::pair<const scope_option *, double>>
scope_ratios(const std::vector<scope_option> &options, const std::vector<scope_point> &points,
             std::string &detail, std::size_t &pools) {
  std::map<std::string, double> base; // pool -> one-pass ms
  for (const auto &p : points) {
    if (!(p.ms > 0))
      throw error("tune: a TLB-scope measurement is not positive");
    if (p.scope_bytes == 0)
      base[p.pool] = p.ms;
  }
  pools = base.size();
  std::vector<std::pair<const scope_option *, double>> ratios;
  for (const auto &opt : options) {
    double log_sum = 0;
    int n = 0;
    for (const auto &p : points)
      if (p.scope_bytes == opt.bytes()) {
        if (!base.count(p.pool))
          throw error("tune: a TLB scope measured on a pool without its one-pass time");
        log_sum += std::log(p.ms / base[p.pool]), ++n;
      }
    if (!n)
      continue;
    const double r = std::exp(log_sum / n);
    char one[128];
    std::snprintf(one, sizeof one, "%s%s %.4g GiB %.3fx", detail.empty() ? "" : ", ",
                  opt.name().c_str(), double(opt.bytes()) / double(1ull << 30), r);
    detail += one;
    ratios.emplace_back(&opt, r);
  }
  return ratios;
}

} // namespace

scope_decision decide_tlb_scope_measured(const std::vector<scope_option> &options,
                                         const std::vector<scope_point> &points,
                                         std::uint64_t footprint, double tie) {
  scope_decision d;
  const double gib = double(1ull << 30);
  char buf[768];
  for (const auto &p : points) {
    json m = {{"scope_bytes", p.scope_bytes}, {"pool", p.pool}, {"ms", p.ms}};
    for (const auto &opt : options)
      if (opt.bytes() == p.scope_bytes)
        m["level"] = opt.name(), m["fraction_of_reach"] = opt.fraction;
    d.measurements.push_back(m);
  }
  if (points.empty()) {
    std::snprintf(buf, sizeof buf, "%s: TLB-scoped kernels run in one pass",
                  options.empty()
                      ? "no TLB level or candidate in the profile"
                      : "every level and candidate reaches at least the footprint measured");
    d.reason = buf;
    return d;
  }
  std::string detail;
  std::size_t pools = 0;
  const auto ratios = scope_ratios(options, points, detail, pools);
  // The largest scope within `tie` of the fastest: on a flat bottom (an H100's L2 at 5/8 to 7/8
  // of its reach, all within 0.5 %) the fastest moves from run to run with the noise; the largest
  // near it does not, and takes the fewest passes.
  double fastest = 1;
  for (const auto &[opt, r] : ratios)
    fastest = std::min(fastest, r);
  std::uint64_t best = 0;
  std::string fastest_note;
  for (const auto &[opt, r] : ratios)
    if (r <= fastest * (1 + tie) && r < 1 - tie) {
      best = opt->bytes(), d.level = opt->name(), d.midpoint_bytes = opt->midpoint_bytes();
      if (r > fastest) {
        char buf2[160];
        std::snprintf(buf2, sizeof buf2,
                      " (the largest scope within %.0f%% of the fastest, %.3fx: fewer passes)",
                      tie * 100, fastest);
        fastest_note = buf2;
      }
      break;
    }
  d.bytes = best;
  // The smallest fraction searched: the curve may fall further below it.
  const bool at_end =
      best && std::any_of(options.begin(), options.end(), [&](const scope_option &o) {
        return o.bytes() == best && o.fraction == 0.5;
      });
  std::snprintf(
      buf, sizeof buf,
      "sampling over %.4g GiB, time relative to one pass (geometric mean over %zu pools): %s; %s%s",
      double(footprint) / gib, pools, detail.c_str(),
      best ? (d.level + " chosen" + fastest_note).c_str() : "one pass kept",
      at_end ? " (the smallest fraction searched: the curve may fall further)" : "");
  d.reason = buf;
  return d;
}

model::tuning_decision crw_decision::decision(const std::vector<crw_point> &points) const {
  json p = json::array();
  for (const auto &c : points)
    p.push_back({{"start", c.start}, {"free_fraction", c.free_fraction}, {"ms", c.ms}});
  return {reason,
          {{"start", start}, {"geomean_ratio_to_thread", geomean_ratio}, {"measurements", p}}};
}

crw_decision decide_crw_placement(const std::vector<crw_point> &points, double tie) {
  std::map<std::string, std::map<double, double>> by; // start -> fraction -> ms
  for (const auto &p : points) {
    if (!(p.ms > 0))
      throw error("tune: a CRW placement measurement is not positive");
    by[p.start][p.free_fraction] = p.ms;
  }
  if (!by.count("thread"))
    throw error("tune: no CRW measurement of the default start (thread)");
  const auto &base = by["thread"];
  crw_decision d;
  std::string best = "thread";
  double best_ratio = 1;
  std::string detail;
  for (const auto &[start, ms] : by) {
    if (ms.size() != base.size())
      throw error("tune: CRW start '" + start + "' lacks some free fractions");
    double log_sum = 0;
    for (const auto &[f, t] : ms) {
      if (!base.count(f))
        throw error("tune: CRW start '" + start +
                    "' measured at a free fraction the default was not");
      log_sum += std::log(t / base.at(f));
    }
    const double ratio = std::exp(log_sum / double(ms.size()));
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.3fx", detail.empty() ? "" : ", ", start.c_str(), ratio);
    detail += buf;
    if (ratio < best_ratio)
      best_ratio = ratio, best = start;
  }
  char buf[512];
  if (best != "thread" && best_ratio >= 1 - tie) {
    std::snprintf(buf, sizeof buf,
                  "times relative to the per-thread start (geometric mean over %zu free "
                  "fractions): %s; the best is within %.0f%%, thread kept",
                  base.size(), detail.c_str(), tie * 100);
    best = "thread", best_ratio = 1;
  } else {
    std::snprintf(buf, sizeof buf,
                  "times relative to the per-thread start (geometric mean over %zu free "
                  "fractions): %s; %s chosen",
                  base.size(), detail.c_str(), best.c_str());
  }
  d.start = best;
  d.geomean_ratio = best_ratio;
  d.reason = buf;
  return d;
}

alloc::tuning region_tuning(const region_decision &r) {
  alloc::tuning t;
  t.regions = unsigned(r.regions);
  t.max_region_bytes = std::uint64_t(r.max_region_bytes);
  t.region_align_bytes = std::uint64_t(r.coverage_bytes);
  t.sm_region.assign(r.sm_region.begin(), r.sm_region.end());
  return t;
}

alloc::tuning allocator_tuning(const word_decision &w, const region_decision &r,
                               const crw_decision &c, const scope_decision &s) {
  alloc::tuning t = region_tuning(r);
  t.word_bits = w.word_bits;
  t.crw = alloc::parse_crw_start(c.start);
  t.vm_page_bytes = 2u << 20;
  t.tlb_scope_bytes = s.bytes;
  t.tlb_scope_midpoint_bytes = s.midpoint_bytes;
  return t;
}

std::uint64_t tlb_footprint_for(std::uint64_t free_bytes, bool quick) {
  constexpr std::uint64_t gib = 1ull << 30;
  const std::uint64_t full = free_bytes > 7 * gib ? (free_bytes - 6 * gib) / gib * gib : gib;
  return quick ? std::max<std::uint64_t>(gib, full / 4 / gib * gib) : full;
}

std::vector<model::decision_change> words_regions_changes(int bits, unsigned regions) {
  std::vector<model::decision_change> c;
  if (bits != 32)
    c.push_back({model::decision::word_size, "32-bit", std::to_string(bits) + "-bit"});
  if (regions > 1)
    c.push_back({model::decision::regions, "one", std::to_string(regions)});
  return c;
}

} // namespace gpuprobe::tune
