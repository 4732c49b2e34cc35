// The host half of the TLB probe: planning, the control's verdict, the result's JSON.
#include "common/envelope.hpp"
#include "common/error.hpp"
#include "common/steps.hpp"
#include "model/fields.hpp"
#include "probes/tlb/driver.hpp"

#include <algorithm>

namespace gpuprobe::probes {

using nlohmann::json;

sweep_plan plan_tlb(const tlb_options &o, std::uint64_t free_b) {
  sweep_plan plan;
  plan.min_bytes = o.min_bytes;
  if (o.alloc == alloc_kind::alias) {
    // An alias pool takes one chunk of memory whatever its virtual size: the footprint is bounded
    // by the address space and the node's mapped-range budget, not by the memory. 384 GiB is 4/3
    // of the largest full miss measured (the third level's, 288 GiB, on H100 and H200 alike):
    // three sweep points past it, the same levels, ramps and penalties (within 0.2 cycles) as
    // 512 GiB on the committed runs, and two ranges fit a node's budget at once.
    plan.max_bytes = o.max_bytes ? o.max_bytes : k_alias_default_bytes;
  } else if (o.max_bytes == 0) {
    plan.max_bytes = static_cast<std::uint64_t>(double(free_b) * o.free_fraction) >> 30 << 30;
  } else {
    plan.max_bytes = o.max_bytes;
    if (plan.max_bytes > free_b)
      throw error("--max-bytes " + format_bytes(double(plan.max_bytes)) +
                  " is beyond the device's free memory (" + format_bytes(double(free_b)) + ")");
  }
  if (plan.max_bytes < plan.min_bytes)
    throw error("--max-bytes is smaller than --min-bytes");
  plan.points_per_octave = o.points_per_octave;
  plan.short_below = o.short_below;
  plan.short_bytes = o.short_bytes;
  if (!o.strides.empty()) {
    plan.strides = o.strides;
  } else {
    for (std::uint64_t s = o.min_stride; s <= o.max_stride; s *= 2)
      plan.strides.push_back(s);
  }
  for (auto s : plan.strides)
    if (s % 8 != 0 || s < 8)
      throw error("stride " + std::to_string(s) + " is not a multiple of 8 bytes");
  return plan;
}

// The control asks one question, is there a rise near the L2's size: the coarse grid to twice the
// L2 answers it (the committed H100 and H200 controls so cut still pass); the bisection of its
// rises and the laps from 2x to 4x the L2 were two thirds of its hops, ~9.5 s of every tlb_real.
sweep_plan plan_control(std::uint64_t max_bytes, std::uint64_t l2_bytes, int points_per_octave) {
  sweep_plan cp;
  cp.strides = {128};
  cp.min_bytes = k_mib;
  cp.max_bytes = std::min<std::uint64_t>(max_bytes, l2_bytes * 2);
  cp.points_per_octave = std::clamp(points_per_octave, 2, 8);
  cp.refine = false;
  return cp;
}

tlb_control judge_control(std::vector<sweep_point> points, std::uint64_t l2_bytes) {
  tlb_control c;
  c.expected_bytes = l2_bytes;
  std::vector<double> x, y;
  for (const auto &p : points)
    x.push_back(double(p.footprint_bytes)), y.push_back(p.median);
  for (const auto &s : detect_steps(x, y)) {
    c.steps.push_back({s.x_lo, s.jump, s.snr});
    if (s.x_lo >= double(l2_bytes) / 8 && s.x_lo <= double(l2_bytes) * 4)
      c.passed = true;
  }
  c.points = std::move(points);
  return c;
}

// A point's keys, once, for its reader and its writer (model/fields.hpp).
template <class F> void fields(sweep_point &p, F &f) {
  f.required("stride_bytes", p.stride_bytes);
  f.required("footprint_bytes", p.footprint_bytes);
  f.required("hops", p.hops);
  f.required("median_cycles", p.median);
  f.required("p10_cycles", p.p10);
  f.required("p90_cycles", p.p90);
  f.required("mean_cycles", p.mean);
  f.required("samples", p.samples);
  f.required("smid", p.smid);
  f.required("refined", p.refined);
  f.if_set("disturbed", p.disturbed); // results of an undisturbed sweep read as before
}

json to_json(const sweep_point &p) { return model::write_record(p); }
sweep_point sweep_point_from_json(const json &j) { return model::read_record<sweep_point>(j); }

namespace {
std::vector<sweep_point> points_from(const json &a) {
  std::vector<sweep_point> v;
  for (const auto &p : a)
    v.push_back(sweep_point_from_json(p));
  return v;
}
} // namespace

json to_json(const tlb_result &r) {
  json control = nullptr;
  if (r.control) {
    json found = json::array();
    for (const auto &s : r.control->steps)
      found.push_back(
          {{"boundary_bytes", s.boundary_bytes}, {"step_cycles", s.step_cycles}, {"snr", s.snr}});
    control = {{"kind", "l2_capacity"},
               {"stride_bytes", r.control->stride_bytes},
               {"expected_bytes", r.control->expected_bytes},
               {"steps", found},
               {"passed", r.control->passed},
               {"points", model::list_json(r.control->points)}};
    if (r.control->warm_threads > 1) // written only where a block read the laps
      control["warm_threads"] = r.control->warm_threads;
  }
  json body{
      {"alloc", r.alloc},
      {"granularity_bytes", r.granularity_bytes ? json(r.granularity_bytes) : json("unknown")},
      {"min_bytes", r.min_bytes},
      {"max_bytes", r.max_bytes},
      {"strides", r.strides},
      {"points_per_octave", r.points_per_octave},
      {"samples_per_point", r.samples_per_point},
      {"load", r.load},
      {"sm_clock_mhz_before", r.sm_clock_mhz_before},
      {"sm_clock_mhz_after", r.sm_clock_mhz_after},
      {"control", control},
      {"points", model::list_json(r.points)},
      {"wall_seconds", r.wall_seconds}};
  if (r.max_hops)
    body["max_hops"] = r.max_hops;
  if (r.short_bytes) { // written only where the small strides stop early
    body["short_below_bytes"] = r.short_below;
    body["short_max_bytes"] = r.short_bytes;
  }
  if (r.alias_bytes) { // alias pools only: one physical chunk at every slot
    body["alias_bytes"] = r.alias_bytes;
    if (r.va_base) // 0: not recorded (results of builds before it read and write back as they were)
      body["va_base"] = r.va_base;
    body["load"] =
        r.load + ", every hop an alias of one physical chunk (delta chain, modulo the footprint)";
  }
  return result_document("tlb", r, "tlb", std::move(body));
}

tlb_result tlb_result_from_json(const json &doc) {
  try {
    tlb_result r;
    const json &t = result_body(doc, "tlb", "tlb", r);
    r.alloc = t.at("alloc").get<std::string>();
    r.granularity_bytes =
        t.at("granularity_bytes").is_number() ? t["granularity_bytes"].get<std::uint64_t>() : 0;
    r.min_bytes = t.at("min_bytes").get<std::uint64_t>();
    r.max_bytes = t.at("max_bytes").get<std::uint64_t>();
    r.strides = t.at("strides").get<std::vector<std::uint64_t>>();
    r.points_per_octave = t.at("points_per_octave").get<int>();
    r.samples_per_point = t.at("samples_per_point").get<std::size_t>();
    r.load = t.at("load").get<std::string>();
    r.alias_bytes = t.value("alias_bytes", std::uint64_t(0));
    r.max_hops = t.value("max_hops", std::uint64_t(0)); // absent in older results
    r.short_below = t.value("short_below_bytes", std::uint64_t(0));
    r.short_bytes = t.value("short_max_bytes", std::uint64_t(0));
    r.va_base = t.value("va_base", std::uint64_t(0));
    if (r.alias_bytes && r.load.find(", every hop") != std::string::npos)
      r.load = r.load.substr(0, r.load.find(", every hop"));
    r.sm_clock_mhz_before = t.at("sm_clock_mhz_before").get<double>();
    r.sm_clock_mhz_after = t.at("sm_clock_mhz_after").get<double>();
    if (!t.at("control").is_null()) {
      const json &c = t["control"];
      tlb_control k;
      k.stride_bytes = c.at("stride_bytes").get<std::uint64_t>();
      k.expected_bytes = c.at("expected_bytes").get<std::uint64_t>();
      for (const auto &s : c.at("steps"))
        k.steps.push_back({s.at("boundary_bytes").get<double>(), s.at("step_cycles").get<double>(),
                           s.at("snr").get<double>()});
      k.passed = c.at("passed").get<bool>();
      k.warm_threads = c.value("warm_threads", 1u);
      k.points = points_from(c.at("points"));
      r.control = std::move(k);
    }
    r.points = points_from(t.at("points"));
    r.wall_seconds = t.at("wall_seconds").get<double>();
    return r;
  } catch (const json::exception &e) {
    throw error(std::string("tlb result: ") + e.what());
  }
}

} // namespace gpuprobe::probes
