// The probe kit's few definitions (probes/kit.hpp): declaring a flag, the stage over the TLB
// profile, and what the report's parts share.
#include "probes/kit.hpp"

#include "common/device_info.hpp"
#include "common/escape.hpp"
#include "common/results_folder.hpp"

#include <cmath>
#include <cstdio>

namespace gpuprobe::probes::kit {

using nlohmann::json;

flag &command::option(std::string names, flag_target target, std::string help) {
  flag &f = flags.emplace_back();
  f.names = std::move(names);
  f.help = std::move(help);
  f.target = std::move(target);
  return f;
}

stage profile_stage(const plan_request &r, const std::string &name, const std::string &command,
                    const std::vector<std::string> &quick_args) {
  using F = results_folder::raw_file;
  const std::string out = results_folder::raw_rel(F::of_stage(name));
  std::vector<std::string> a = {command, "--device", std::to_string(r.device), "--profile",
                                results_folder::raw_rel(F::tlb_profile)};
  if (r.quick)
    a.insert(a.end(), quick_args.begin(), quick_args.end());
  a.insert(a.end(), {"--seed", std::to_string(r.seed), "--out", out});
  return {name, out, a, {F::stage_of(F::tlb_profile)}};
}

json report_figure::manifest() const {
  json v = json::array(), b = json::array();
  for (const auto &[x, label] : vlines)
    v.push_back({{"x", x}, {"label", label}});
  for (const auto &[lo, hi] : boxes)
    b.push_back({lo, hi});
  return {{"id", id},         {"title", title},    {"kind", kind}, {"xlabel", xlabel},
          {"ylabel", ylabel}, {"logx", logx},      {"logy", logy}, {"vlines", v},
          {"boxes", b},       {"csv", id + ".csv"}};
}

void report_content::keep_figures_if(const std::function<bool(const report_figure &)> &keep) {
  std::vector<report_figure> kept;
  std::vector<std::size_t> new_index(figures.size() + 1); // old index -> kept before it
  for (std::size_t i = 0; i < figures.size(); ++i) {
    new_index[i] = kept.size();
    if (keep(figures[i]))
      kept.push_back(std::move(figures[i]));
  }
  new_index[figures.size()] = kept.size();
  for (auto &p : parts)
    p.figures_begin = new_index[p.figures_begin], p.figures_end = new_index[p.figures_end];
  figures = std::move(kept);
}

const std::vector<raw_input> &report_inputs::of(const std::string &id) const {
  static const std::vector<raw_input> none;
  const auto it = raw.find(id);
  return it == raw.end() ? none : it->second;
}

std::vector<std::string> report_inputs::paths_of(const std::string &id) const {
  std::vector<std::string> p;
  for (const auto &r : of(id))
    p.push_back(r.path);
  return p;
}

std::string num(double x, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*g", digits, x);
  return b;
}

void row(std::ostringstream &o, const std::string &series, const std::string &style, double x,
         double y) {
  if (std::isfinite(x) && std::isfinite(y))
    o << csv_field(series) << ',' << style << ',' << num(x, 10) << ',' << num(y, 10) << '\n';
}

std::string device_line(const json &d) {
  const auto text = [&](const char *k) {
    return d.contains(k) ? (d[k].is_string() ? d[k].get<std::string>() : d[k].dump()) : "?";
  };
  std::string line = text("name") + ", " + text("sm_count") + " SMs, UUID " + text("uuid") + ", " +
                     describe_driver(d);
  const double mhz = d.contains("sm_clock_mhz_seen") && d["sm_clock_mhz_seen"].is_number()
                         ? d["sm_clock_mhz_seen"].get<double>()
                         : 0.0;
  if (mhz > 0)
    line += ", SM clock seen " + std::to_string(static_cast<long>(std::lround(mhz))) + " MHz";
  return line;
}

std::optional<double> clock_mhz(const report_inputs &in) {
  return in.profile ? in.profile->sm_clock_mhz_seen() : std::nullopt;
}

std::string cycles_ns(double cycles, std::optional<double> mhz, int digits) {
  if (!mhz)
    return num(cycles, digits);
  return num(cycles, digits) + " (" + num(cycles * 1000.0 / *mhz, digits) + " ns)";
}

} // namespace gpuprobe::probes::kit
