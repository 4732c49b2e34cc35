#include "pipeline/busy_guard.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/process.hpp"
#include "common/results_folder.hpp"
#include "common/stopwatch.hpp"
#include "model/file_head.hpp"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

namespace gpuprobe::pipeline {

namespace fs = std::filesystem;
using nlohmann::json;

gpu_activity wait_for_idle(const std::string &uuid, double seconds, const std::string &stage) {
  auto a = query_gpu_activity(uuid);
  const stopwatch t0;
  bool said = false;
  while (!a.others.empty() && t0.seconds() < seconds) {
    if (!said)
      std::printf("  waiting up to %.0f s for the GPU to be idle before %s: %s\n", seconds,
                  stage.c_str(), a.describe().c_str());
    said = true;
    std::fflush(stdout);
    ::sleep(2);
    check_interrupted("characterize (waiting for an idle GPU)");
    a = query_gpu_activity(uuid);
  }
  return a;
}

namespace {

// Watches the GPU while a stage measures (nvidia-smi once a second on a thread of its own): a
// process that starts and ends within the stage is seen too, not only one still there after it.
class gpu_activity_watch {
public:
  explicit gpu_activity_watch(std::string uuid) : uuid_(std::move(uuid)) {
    thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(m_);
      while (!stop_) {
        lock.unlock();
        const auto a = query_gpu_activity(uuid_);
        lock.lock();
        if (!a.others.empty() && seen_.others.empty())
          seen_ = a; // the first sighting names the processes
        cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; });
      }
    });
  }
  // Stops watching; what was seen during the stage (no others: none was).
  gpu_activity finish() {
    {
      const std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable())
      thread_.join();
    return seen_;
  }
  ~gpu_activity_watch() { finish(); }

private:
  std::string uuid_;
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
  gpu_activity seen_;
  std::thread thread_;
};

// What was seen during a stage and right after it: the first non-empty.
gpu_activity during_or_after(gpu_activity_watch &watch, const std::string &uuid) {
  const auto during = watch.finish();
  const auto after = query_gpu_activity(uuid);
  return !after.others.empty() ? after : during;
}

} // namespace

void busy_guard::run(const stage &s, const std::function<void()> &execute) {
  const bool measures = !s.args.empty() && s.args[0] != "analyze";
  if (!measures)
    return execute();
  if (allow) {
    std::vector<std::string> marks;
    if (const auto a = query_gpu_activity(uuid); !a.others.empty())
      marks.push_back(s.name + " (before): " + a.describe());
    gpu_activity_watch watch(uuid);
    execute();
    if (const auto a = during_or_after(watch, uuid); !a.others.empty())
      marks.push_back(s.name + " (during or after): " + a.describe());
    for (const auto &m : marks)
      mark_output_disturbed(s, m);
    seen.insert(seen.end(), marks.begin(), marks.end());
    return;
  }
  for (int attempt = 0;; ++attempt) {
    if (!idle_just_seen) { // the check after the last stage is this one's check before
      const auto before = wait_for_idle(uuid, wait, "stage " + s.name);
      if (!before.others.empty())
        throw error(refusal("before stage " + s.name, before));
    }
    idle_just_seen = false;
    gpu_activity_watch watch(uuid);
    execute();
    const auto after = during_or_after(watch, uuid);
    idle_just_seen = after.others.empty();
    if (after.others.empty())
      return;
    if (attempt == 1) {
      remove_output(s); // a refused measurement is never kept for a resume to find
      throw error(refusal("again during stage " + s.name, after));
    }
    std::printf("  note: %s appeared during stage %s: its measurement may be disturbed; "
                "measuring it again once the GPU is idle\n",
                after.describe().c_str(), s.name.c_str());
    remove_output(s);
  }
}
std::string busy_guard::refusal(const std::string &when, const gpu_activity &a) {
  return "characterize: the GPU is busy" + (when.empty() ? "" : " " + when) + ": " +
         a.describe() +
         " would change the measurements; run on an idle GPU (finished stages are kept), or "
         "pass --allow-busy to measure anyway with every finding marked disturbed";
}
void busy_guard::remove_output(const stage &s) const {
  std::error_code ec;
  fs::remove(fs::path(dir) / s.output, ec);
}
// The stage's result file carries what disturbed it ("disturbed": [...]), read back by
// kept_disturbances on every later run that keeps the stage.
void busy_guard::mark_output_disturbed(const stage &s, const std::string &why) const {
  const fs::path f = fs::path(dir) / s.output;
  if (f.extension() != ".json" || !fs::exists(f))
    return;
  json doc = read_json_file(f.string());
  if (!doc.is_object())
    return;
  doc["disturbed"].push_back(why);
  write_json_atomic(f.string(), doc);
}

std::vector<std::string> kept_disturbances(const results_folder &folder) {
  std::vector<std::string> marks;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(folder.raw(), ec)) {
    if (e.path().extension() != ".json")
      continue;
    try {
      const auto head = model::read_file_head(e.path().string());
      marks.insert(marks.end(), head.disturbed.begin(), head.disturbed.end());
    } catch (const std::exception &) {
      // an unreadable file is the analysis's to refuse
    }
  }
  return marks;
}

} // namespace gpuprobe::pipeline
