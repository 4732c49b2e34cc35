#include "cli/common.hpp"

#include "common/error.hpp"
#include "common/paths.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

namespace gpuprobe::cli {

void add_device_option(CLI::App &app, common_options &o) {
  app.add_option("--device", o.device, "CUDA device ordinal")->capture_default_str();
}
void add_devices_option(CLI::App &app, common_options &o, const std::string &what) {
  auto *opt = app.add_option("--devices", o.devices,
                             "all | 0,2,...: every GPU listed at once, one process each; " + what)
                  ->check(CLI::Validator(
                      [](std::string &v) -> std::string {
                        return v.empty() ? "names no GPU: give all, or ordinals such as 0,2" : "";
                      },
                      "all|LIST"));
  if (auto *d = app.get_option_no_throw("--device"))
    opt->excludes(d);
}
void add_out_option(CLI::App &app, common_options &o, const std::string &what) {
  app.add_option("--out", o.out, what)->required();
}
void add_input_option(CLI::App &app, common_options &o, const std::string &what) {
  app.add_option("--input", o.inputs, what)->required()->take_all();
}
void add_seed_option(CLI::App &app, common_options &o) {
  app.add_option("--seed", o.seed, "random seed (shuffles, patterns)")->capture_default_str();
}

void add_busy_wait_option(CLI::App &app, double &seconds) {
  app.add_option("--busy-wait", seconds,
                 "seconds to wait for an idle GPU before each measuring stage")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
}
std::vector<std::string> map_late_options::every_second() const {
  if (not_late)
    return {};
  return {"--map-late"};
}

void add_map_late_flags(CLI::App &app, map_late_options &o) {
  auto *late = app.add_flag(
      "--map-late", o.late,
      "run atomics, which maps no alias range, first (tlb_real keeps its place after the aliased "
      "sweep), and in a full run the TAS/WAS grid before characterize, so that a GPU beside "
      "another maps its range and pools some seconds later; with --devices every second GPU "
      "does so unless --no-map-late (docs/fleet.md)");
  app.add_flag("--no-map-late", o.not_late,
               "with --devices: every GPU in the usual order (by default every second one maps "
               "late)")
      ->excludes(late);
}

std::string busy_wait_text(double seconds) {
  std::ostringstream o;
  o << seconds;
  return o.str();
}

void check_output_path(const std::string &path) {
  namespace fs = std::filesystem;
  if (path.empty())
    throw error("--out '' is empty: give a file name");
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir))
    throw error("output folder '" + dir.string() + "' does not exist");
  if (fs::is_directory(p))
    throw error("--out '" + path + "' is a folder; give a file name");
}

void check_one_gpu_files(const std::string &command, const std::string &input_flag,
                         const std::string &input, const std::string &out) {
  if (input.empty() || out.empty())
    throw error(command + ": give " + input_flag + " and --out (or --devices)");
  check_output_path(out);
  refuse_output_over_inputs(command, out, {input});
}

int &exit_status() {
  static int status = 0;
  return status;
}

CLI::Validator finite_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string &v) -> std::string {
        try {
          std::size_t used = 0;
          const double x = std::stod(v, &used);
          if (used == v.size() && std::isfinite(x) && x >= lo && x <= hi)
            return "";
        } catch (const std::exception &) {
        }
        char b[96];
        std::snprintf(b, sizeof b, "'%s' is not a number in [%g, %g]", v.c_str(), lo, hi);
        return b;
      },
      "FLOAT in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]");
}

} // namespace gpuprobe::cli
