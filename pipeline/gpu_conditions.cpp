#include "pipeline/gpu_conditions.hpp"

#include "common/process.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace gpuprobe::pipeline {

namespace {

// The first line nvidia-smi prints for `args` ("" when it is absent or fails); `ok`: it answered.
std::string smi_line(const std::vector<std::string> &args, std::string *all = nullptr,
                     bool *ok = nullptr) {
  std::vector<std::string> argv = {"nvidia-smi"};
  argv.insert(argv.end(), args.begin(), args.end());
  child_result r;
  try {
    child_options o;
    o.capture = true;
    o.quiet_stderr = true;
    r = run_child(argv, o);
  } catch (const std::exception &) {
    return "";
  }
  if (!r.ok())
    return "";
  if (ok)
    *ok = true;
  if (all)
    *all = r.output;
  std::string line = r.output.substr(0, r.output.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
    line.pop_back();
  return line;
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r");
  const auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

} // namespace

std::string gpu_activity::describe() const {
  std::string s =
      std::to_string(others.size()) + " other process" + (others.size() == 1 ? "" : "es") + " (";
  for (std::size_t i = 0; i < others.size(); ++i)
    s += (i ? ", " : "") + std::string("PID ") + std::to_string(others[i].pid) +
         (others[i].name.empty() ? "" : " " + others[i].name);
  return s + ")";
}

std::vector<gpu_process> parse_compute_apps(const std::string &csv, const std::vector<long> &mine) {
  std::vector<gpu_process> out;
  std::istringstream in(csv);
  std::string line;
  while (std::getline(in, line)) {
    const auto comma = line.find(',');
    const std::string pid_text = trim(line.substr(0, comma));
    if (pid_text.empty() || !std::all_of(pid_text.begin(), pid_text.end(), ::isdigit))
      continue; // a header, a blank line or "No running processes found"
    gpu_process p;
    p.pid = std::stol(pid_text);
    if (comma != std::string::npos)
      p.name = trim(line.substr(comma + 1));
    if (const auto slash = p.name.rfind('/'); slash != std::string::npos)
      p.name = p.name.substr(slash + 1);
    if (std::find(mine.begin(), mine.end(), p.pid) == mine.end())
      out.push_back(p);
  }
  return out;
}

namespace {
// The parent of `pid` from /proc (0 when gone or unreadable).
long parent_of(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  const auto close = text.rfind(')'); // the name may hold spaces and parentheses
  if (close == std::string::npos)
    return 0;
  std::istringstream rest(text.substr(close + 1));
  std::string state;
  long ppid = 0;
  rest >> state >> ppid;
  return ppid;
}
} // namespace

std::vector<long> own_process_chain() {
  std::vector<long> chain;
  long pid = ::getpid();
  while (pid > 1 && chain.size() < 64) {
    chain.push_back(pid);
    pid = parent_of(pid);
  }
  return chain;
}

std::vector<long> own_descendants() {
  std::map<long, std::vector<long>> children;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string n = e.path().filename().string();
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const long pid = std::stol(n);
    children[parent_of(pid)].push_back(pid);
  }
  std::vector<long> out, todo = {long(::getpid())};
  while (!todo.empty() && out.size() < 4096) {
    const long p = todo.back();
    todo.pop_back();
    for (const long c : children[p])
      out.push_back(c), todo.push_back(c);
  }
  return out;
}

gpu_activity query_gpu_activity(const std::string &uuid) {
  gpu_activity a;
  std::string csv;
  const std::vector<std::string> args = {"-i", uuid, "--query-compute-apps=pid,process_name",
                                         "--format=csv,noheader"};
  smi_line(args, &csv, &a.known); // an idle GPU prints nothing, and exits 0
  if (a.known) {
    // This process, its ancestors (a `run` parent) and its descendants (the stage it is running
    // now, watched during the stage) are this measurement, not a neighbour.
    auto mine = own_process_chain();
    const auto below = own_descendants();
    mine.insert(mine.end(), below.begin(), below.end());
    a.others = parse_compute_apps(csv, mine);
  }
  return a;
}

nlohmann::json conditions_before(const std::string &uuid, const gpu_activity &activity) {
  nlohmann::json c = {{"nvidia_smi", activity.known}};
  if (!activity.known)
    return c;
  const auto q = [&](const char *field) {
    return smi_line({"-i", uuid, std::string("--query-gpu=") + field, "--format=csv,noheader"});
  };
  c["mig_mode"] = q("mig.mode.current");
  c["other_processes"] = std::to_string(activity.others.size());
  if (!activity.others.empty())
    c["other_process_list"] = activity.describe();
  c["clocks_throttle_reasons_active"] = q("clocks_throttle_reasons.active");
  const std::string max_sm = q("clocks.max.sm"); // "1980 MHz"
  try {
    c["sm_clock_mhz_max"] = std::stod(max_sm);
  } catch (const std::exception &) {
  }
  return c;
}

} // namespace gpuprobe::pipeline
