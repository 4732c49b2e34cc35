#include "common/jobs.hpp"

#include "common/error.hpp"
#include "common/process.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <deque>
#include <set>
#include <sstream>

namespace gpuprobe {

namespace {
struct running {
  spawned_child child;
  std::FILE *log = nullptr;
  std::string partial;
  std::deque<std::string> last;
  std::chrono::steady_clock::time_point start;
};
} // namespace

std::vector<job_result> run_jobs(const std::vector<job> &jobs, std::FILE *progress) {
  std::vector<running> r(jobs.size());
  std::vector<job_result> out(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    r[i].start = std::chrono::steady_clock::now();
    if (!jobs[i].log.empty())
      r[i].log = std::fopen(jobs[i].log.c_str(), "w");
    try {
      r[i].child = spawn_child(jobs[i].argv, "", jobs[i].env);
    } catch (const error &e) {
      out[i].exit_code = 127;
      out[i].tail = e.what();
    }
  }
  auto emit = [&](std::size_t i, const std::string &line) {
    if (progress)
      std::fprintf(progress, "%s %s\n", jobs[i].label.c_str(), line.c_str());
    if (r[i].log)
      std::fprintf(r[i].log, "%s\n", line.c_str());
    r[i].last.push_back(line);
    if (r[i].last.size() > 5)
      r[i].last.pop_front();
  };
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::size_t> who;
    for (std::size_t i = 0; i < r.size(); ++i)
      if (r[i].child.out_fd >= 0) {
        fds.push_back({r[i].child.out_fd, POLLIN, 0});
        who.push_back(i);
      }
    if (fds.empty())
      break;
    if (::poll(fds.data(), fds.size(), 1000) < 0)
      continue; // interrupted: poll again
    for (std::size_t k = 0; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      const std::size_t i = who[k];
      char buf[4096];
      const ssize_t n = ::read(fds[k].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue; // a signal, passed on to the children: read what they still write
      if (n > 0) {
        r[i].partial.append(buf, std::size_t(n));
        std::size_t nl;
        while ((nl = r[i].partial.find('\n')) != std::string::npos) {
          emit(i, r[i].partial.substr(0, nl));
          r[i].partial.erase(0, nl + 1);
        }
        if (progress)
          std::fflush(progress);
        continue;
      }
      if (!r[i].partial.empty())
        emit(i, r[i].partial);
      out[i].exit_code = wait_child(r[i].child);
      out[i].seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - r[i].start).count();
      for (const auto &l : r[i].last)
        out[i].tail += (out[i].tail.empty() ? "" : "\n") + l;
      if (r[i].log)
        std::fclose(r[i].log), r[i].log = nullptr;
    }
  }
  return out;
}

std::vector<int> parse_device_list(const std::string &text, int count) {
  if (count <= 0)
    throw error("--devices: this machine has no CUDA device");
  std::vector<int> ids;
  if (text == "all") {
    for (int i = 0; i < count; ++i)
      ids.push_back(i);
    return ids;
  }
  std::stringstream ss(text);
  std::string item;
  std::set<int> seen;
  while (std::getline(ss, item, ',')) {
    std::size_t used = 0;
    int id = -1;
    try {
      id = std::stoi(item, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (item.empty() || used != item.size() || id < 0)
      throw error("--devices: '" + text + "' is not 'all' or a list of device ids such as 0,2");
    if (id >= count)
      throw error("--devices: device " + std::to_string(id) + " does not exist (this machine has " +
                  std::to_string(count) + ", ids 0.." + std::to_string(count - 1) + ")");
    if (!seen.insert(id).second)
      throw error("--devices: device " + std::to_string(id) + " is listed twice");
    ids.push_back(id);
  }
  if (ids.empty())
    throw error("--devices: '" + text + "' is not 'all' or a list of device ids such as 0,2");
  return ids;
}

} // namespace gpuprobe
