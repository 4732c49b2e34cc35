#include "common/jobs.hpp"

#include "common/error.hpp"
#include "common/process.hpp"
#include "common/stopwatch.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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
  stopwatch start; // from the spawn
};

// One line of a job's output: to `progress` after the job's label, to its log, and into the last
// five lines kept for its result.
void emit(const job &j, running &r, std::FILE *progress, const std::string &line) {
  if (progress)
    std::fprintf(progress, "%s %s\n", j.label.c_str(), line.c_str());
  if (r.log)
    std::fprintf(r.log, "%s\n", line.c_str());
  r.last.push_back(line);
  if (r.last.size() > 5)
    r.last.pop_front();
}

// A job's log, appended to (a run resumed keeps what the earlier one logged) after a header:
// "==== <its command line> at <local time>". Null when it cannot be opened.
std::FILE *open_job_log(const job &j) {
  std::FILE *f = std::fopen(j.log.c_str(), "a");
  if (!f)
    return nullptr;
  std::string command;
  for (std::size_t k = 0; k < j.argv.size(); ++k)
    command += (k ? " " : "") + (k ? j.argv[k] : j.argv[k].substr(j.argv[k].rfind('/') + 1));
  std::fputs(log_header(command).c_str(), f);
  return f;
}

// Every job started with its log open; a job that cannot start is an exit 127 with why.
std::vector<running> start_jobs(const std::vector<job> &jobs, std::vector<job_result> &out) {
  std::vector<running> r(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    r[i].start = stopwatch();
    if (!jobs[i].log.empty())
      r[i].log = open_job_log(jobs[i]);
    try {
      r[i].child = spawn_child(jobs[i].argv, "", jobs[i].env);
    } catch (const error &e) {
      out[i].exit_code = 127;
      out[i].tail = e.what();
    }
  }
  return r;
}

// What a job wrote on `fd`, emitted line by line; false when its output has ended.
bool read_output(const job &j, running &r, std::FILE *progress, int fd) {
  char buf[4096];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0 && errno == EINTR)
    return true; // a signal, passed on to the children: read what they still write
  if (n <= 0)
    return false;
  r.partial.append(buf, std::size_t(n));
  std::size_t nl;
  while ((nl = r.partial.find('\n')) != std::string::npos) {
    emit(j, r, progress, r.partial.substr(0, nl));
    r.partial.erase(0, nl + 1);
  }
  if (progress)
    std::fflush(progress);
  return true;
}

// A job whose output ended: its unfinished last line, its exit status, its time and last lines;
// its log closed.
void finish_job(const job &j, running &r, std::FILE *progress, job_result &out) {
  if (!r.partial.empty())
    emit(j, r, progress, r.partial);
  out.exit_code = wait_child(r.child);
  out.seconds = r.start.seconds();
  for (const auto &l : r.last)
    out.tail += (out.tail.empty() ? "" : "\n") + l;
  if (r.log)
    std::fclose(r.log), r.log = nullptr;
}
} // namespace

std::vector<job_result> run_jobs(const std::vector<job> &jobs, std::FILE *progress) {
  std::vector<job_result> out(jobs.size());
  std::vector<running> r = start_jobs(jobs, out);
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
    for (std::size_t k = 0; k < fds.size(); ++k)
      if ((fds[k].revents & (POLLIN | POLLHUP | POLLERR)) &&
          !read_output(jobs[who[k]], r[who[k]], progress, fds[k].fd))
        finish_job(jobs[who[k]], r[who[k]], progress, out[who[k]]);
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
