#include "common/outputs.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

namespace gpuprobe {

namespace fs = std::filesystem;

void refuse_non_regular_target(const std::string &path) {
  std::error_code ec;
  const auto st = fs::symlink_status(path, ec);
  if (ec || !fs::exists(st) || fs::is_regular_file(st))
    return;
  const char *what = fs::is_symlink(st)          ? "a symbolic link"
                     : fs::is_directory(st)      ? "a folder"
                     : fs::is_character_file(st) ? "a character device"
                     : fs::is_block_file(st)     ? "a block device"
                     : fs::is_fifo(st)           ? "a FIFO"
                     : fs::is_socket(st)         ? "a socket"
                                                 : "not a regular file";
  throw error("'" + path + "' is " + what +
              ", not a file gpuprobe writes: give the path of a new or a regular file");
}

bool process_gone(long pid) { return pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH; }

int remove_stale_temporaries(const std::string &dir, const std::string &prefix) {
  int removed = 0;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir.empty() ? "." : dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.size() <= prefix.size() || n.compare(0, prefix.size(), prefix) != 0)
      continue;
    const std::string tail = n.substr(prefix.size());
    if (tail.find_first_not_of("0123456789") != std::string::npos || tail.size() > 9)
      continue;
    if (process_gone(std::stol(tail))) {
      std::error_code rm;
      removed += fs::remove_all(e.path(), rm) > 0;
    }
  }
  return removed;
}

std::vector<std::string> paths_under(const std::string &dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec))
    out.push_back(it->path().lexically_relative(dir).generic_string());
  if (ec)
    throw error("cannot read '" + dir + "': " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

void mark_folder_owned(const std::string &dir, const std::string &command) {
  auto paths = paths_under(dir);
  paths.erase(std::remove(paths.begin(), paths.end(), k_owned_marker), paths.end());
  write_json_atomic((fs::path(dir) / k_owned_marker).string(),
                    json{{"schema", "gpuprobe.owned/1"},
                         {"written_by", "gpuprobe " + command},
                         {"paths", paths}});
}

void check_folder_replaceable(const std::string &dir, const std::string &command,
                              legacy_rule legacy) {
  std::error_code ec;
  const auto st = fs::symlink_status(dir, ec);
  if (ec || !fs::exists(st))
    return;
  if (!fs::is_directory(st))
    throw error(command + ": --out '" + dir + "' is " +
                (fs::is_symlink(st) ? "a symbolic link" : "a file, not a folder") +
                ": give a new folder or one this command wrote");
  const auto paths = paths_under(dir);
  if (paths.empty())
    return;
  const fs::path marker = fs::path(dir) / k_owned_marker;
  if (!fs::exists(fs::symlink_status(marker, ec))) {
    if (legacy && legacy(dir, paths))
      return;
    throw error(command + ": --out '" + dir + "' holds '" + paths.front() +
                "' and no mark that gpuprobe " + command +
                " wrote it: give a new folder, or one this command wrote");
  }
  std::set<std::string> owned;
  try {
    const json m = read_json_file(marker.string());
    for (const auto &p : m.at("paths"))
      owned.insert(p.get<std::string>());
  } catch (const std::exception &e) {
    throw error(command + ": --out '" + dir + "': its mark " + k_owned_marker + " is unreadable (" +
                e.what() + "): give a new folder");
  }
  for (const auto &p : paths)
    if (p != k_owned_marker && !owned.count(p))
      throw error(command + ": --out '" + dir + "' holds '" + p + "', which gpuprobe " + command +
                  " did not write: give a new folder, or move it out first");
}

dir_lock::dir_lock(const std::string &dir, const std::string &what, double wait_s) {
  fd_ = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0)
    throw error("cannot open folder '" + dir + "': " + std::strerror(errno));
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK || std::chrono::steady_clock::now() >= until) {
      ::close(fd_);
      fd_ = -1;
      throw error(what + ": another gpuprobe has written into '" + dir + "' for " +
                  std::to_string(int(wait_s)) + " s: try again when it ends");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

dir_lock::~dir_lock() {
  if (fd_ >= 0)
    ::close(fd_);
}

} // namespace gpuprobe
