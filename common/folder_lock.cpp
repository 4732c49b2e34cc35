#include "common/folder_lock.hpp"

#include "common/error.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {

std::string canonical_dir(const std::string &dir) {
  std::error_code ec;
  const auto p = fs::weakly_canonical(fs::absolute(dir.empty() ? "." : dir), ec);
  return ec ? dir : p.string();
}

// The holder's line as it wrote it ("PID N (gpuprobe COMMAND) since TIME"), or "".
std::string read_holder(int fd) {
  char buf[256] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s = n > 0 ? std::string(buf, std::size_t(n)) : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0'))
    s.pop_back();
  return s.empty() ? "another process" : s;
}

// GPUPROBE_FOLDER_LOCK is "FD:FOLDER": the holder's locked descriptor, which its stages inherit
// (it is not close-on-exec). The variable alone proves nothing (anyone can set it): the lock is
// inherited only when FD is open here, is FOLDER's lock file, and holds its exclusive lock.
struct inherited_env {
  int fd = -1;
  std::string folder;
};

std::optional<inherited_env> parse_env() {
  const char *v = std::getenv(folder_lock::env_name);
  if (!v)
    return std::nullopt;
  const std::string s = v;
  const auto colon = s.find(':');
  if (colon == std::string::npos || colon == 0 || colon > 6 ||
      s.find_first_not_of("0123456789") != colon)
    return std::nullopt;
  return inherited_env{std::stoi(s.substr(0, colon)), s.substr(colon + 1)};
}

bool holds_lock_of(int fd, const std::string &canon) {
  struct stat mine {
  }, file{};
  if (fd < 0 || ::fcntl(fd, F_GETFD) < 0 || ::fstat(fd, &mine) != 0 ||
      ::stat((fs::path(canon) / folder_lock::file_name).c_str(), &file) != 0)
    return false;
  if (mine.st_dev != file.st_dev || mine.st_ino != file.st_ino)
    return false;
  // The holder's own open file: taking its exclusive lock again changes nothing. Another
  // process's descriptor of the same file would be refused here while the holder lives.
  return ::flock(fd, LOCK_EX | LOCK_NB) == 0;
}

bool held_by_ancestor(const std::string &canon) {
  const auto e = parse_env();
  return e && e->folder == canon && holds_lock_of(e->fd, canon);
}

} // namespace

folder_lock::folder_lock(const std::string &dir, const std::string &command, mode m) {
  if (m == mode::write)
    fs::create_directories(dir.empty() ? "." : dir);
  const std::string canon = canonical_dir(dir);
  if (held_by_ancestor(canon))
    return; // the stage of a command that holds this folder: it writes under that lock
  const fs::path file = fs::path(canon) / file_name;
  if (m == mode::read) {
    fd_ = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0)
      return; // never written by a gpuprobe that locks (or read-only): nobody to wait for
    if (::flock(fd_, LOCK_SH | LOCK_NB) != 0) {
      const std::string who = read_holder(fd_);
      ::close(fd_);
      fd_ = -1;
      throw error(dir + " is being written by " + who + ": " + command +
                  " reads it when that ends (one writer per results folder)");
    }
    return;
  }
  // Not close-on-exec: the stages this command starts hold the lock with it, so a stage that
  // outlives a killed parent still keeps a second writer out.
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT, 0644);
  if (fd_ < 0)
    throw error("cannot lock " + dir + " (" + file.string() + ": " + std::strerror(errno) + ")");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const std::string who = read_holder(fd_);
    ::close(fd_);
    fd_ = -1;
    throw error(dir + " is being written by " + who +
                " (or a stage it started): one writer per results folder; wait for it to end, " +
                "or give another --out");
  }
  char when[32] = {};
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", std::localtime(&now));
  const std::string line =
      "PID " + std::to_string(::getpid()) + " (gpuprobe " + command + ") since " + when + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, line.data(), line.size(), 0) < 0) {
    // the lock holds without the note; the message then says "another process"
  }
  const char *old = std::getenv(env_name);
  had_env_ = old != nullptr;
  if (old)
    previous_env_ = old;
  // this command's child stages write under this lock: they inherit fd_ and verify it
  ::setenv(env_name, (std::to_string(fd_) + ":" + canon).c_str(), 1);
  set_env_ = true;
}

folder_lock::~folder_lock() {
  if (set_env_) {
    if (had_env_)
      ::setenv(env_name, previous_env_.c_str(), 1);
    else
      ::unsetenv(env_name);
  }
  if (fd_ >= 0)
    ::close(fd_); // closing the last descriptor releases the flock
}

void end_with_lock_holder() {
  if (!std::getenv(folder_lock::env_name))
    return;
  const auto e = parse_env();
  if (!e || !holds_lock_of(e->fd, e->folder)) {
    ::unsetenv(folder_lock::env_name); // set by hand, or stale: no lock here, nothing inherited
    return;
  }
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() == 1) { // the holder ended before the line above: said, then the same end
    std::fprintf(stderr,
                 "gpuprobe: the command that holds %s and started this stage has ended: this "
                 "stage ends too (exit 143)\n",
                 e->folder.c_str());
    ::raise(SIGTERM);
  }
}

std::string folder_lock_holder(const std::string &dir) {
  const fs::path file = fs::path(dir.empty() ? "." : dir) / folder_lock::file_name;
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return "";
  std::string who;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0)
    who = read_holder(fd);
  ::close(fd);
  return who;
}

} // namespace gpuprobe
