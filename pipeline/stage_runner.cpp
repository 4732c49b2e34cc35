#include "pipeline/stage_runner.hpp"
#include "common/stopwatch.hpp"

#include <algorithm>
#include <filesystem>

namespace gpuprobe::pipeline {

namespace fs = std::filesystem;
using nlohmann::json;

stage_check resume_rule(const std::string &dir, const stage &s, const std::string &uuid,
                        bool upstream_ran) {
  auto check = check_stage((fs::path(dir) / s.output).string(), s, uuid);
  if (check.keep && upstream_ran)
    check = {false, "a stage it reads from ran again"};
  return check;
}

bool stage_runner::run(const stage &s, std::size_t k, std::size_t n) {
  char pos[32];
  std::snprintf(pos, sizeof pos, "[%zu/%zu%s]", k, n, sharing_known ? "" : "+");
  const bool upstream_ran = std::any_of(s.reads.begin(), s.reads.end(),
                                        [&](const std::string &r) { return ran.count(r) > 0; });
  const fs::path file = fs::path(dir) / s.output;
  const double since = seconds_so_far();
  const bool analysis_only = !s.args.empty() && s.args.front() == "analyze";
  if (reanalyze && !analysis_only) { // a measurement: kept as it is, or missing
    if (!stage_done(file.string())) {
      std::fprintf(out, "%s %-16s not measured (%s): run characterize on the GPU for it\n", pos,
                   s.name.c_str(), s.output.c_str());
      return false;
    }
    std::fprintf(out, "%s %-16s measured earlier (%s), kept\n", pos, s.name.c_str(),
                 s.output.c_str());
    json rec = {{"name", s.name}, {"file", s.output}, {"status", "kept"}};
    for (const auto &p : previous_stages)
      if (p.name == s.name && p.seconds)
        rec["seconds"] = *p.seconds;
    stages_run.push_back(rec);
    return false;
  }
  if (reanalyze) { // an analysis whose measurement is missing: nothing to analyze
    const auto in = std::find(s.args.begin(), s.args.end(), "--input");
    if (in != s.args.end() && in + 1 != s.args.end() && !fs::exists(fs::path(dir) / in[1])) {
      std::fprintf(out, "%s %-16s not analyzed: %s was not measured\n", pos, s.name.c_str(),
                   in[1].c_str());
      return false;
    }
  }
  auto check = stage_check{false, "reanalyzed"};
  if (!(reanalyze && analysis_only))
    check = resume_rule(dir, s, uuid, upstream_ran);
  if (check.keep) {
    std::fprintf(out, "%s %-16s done earlier (%s), kept\n", pos, s.name.c_str(), s.output.c_str());
    stages_run.push_back({{"name", s.name}, {"file", s.output}, {"status", "kept"}});
    return false;
  }
  if (check.reason == "not run yet" || check.reason == "reanalyzed")
    std::fprintf(out, "%s %-16s running (%.0f s so far)\n", pos, s.name.c_str(), since);
  else
    std::fprintf(out, "%s %-16s running again: %s was %s (%.0f s so far)\n", pos, s.name.c_str(),
                 s.output.c_str(), check.reason.c_str(), since);
  std::fflush(out);
  const stopwatch s0;
  execute(s);
  const double secs = s0.seconds();
  json rec = {{"name", s.name}, {"file", s.output}, {"status", "ran"}, {"seconds", secs}};
  if (check.reason != "not run yet")
    rec["rerun_because"] = check.reason;
  if (reanalyze)
    rec["status"] = "reanalyzed";
  stages_run.push_back(rec);
  ran.insert(s.name);
  return true;
}

} // namespace gpuprobe::pipeline
