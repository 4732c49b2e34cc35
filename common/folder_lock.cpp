#include "common/folder_lock.hpp"

#include "common/error.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

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

bool held_by_ancestor(const std::string &canon) {
  const char *v = std::getenv(folder_lock::env_name);
  return v && canon == v;
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
  const std::string line = "PID " + std::to_string(::getpid()) + " (gpuprobe " + command +
                           ") since " + when + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, line.data(), line.size(), 0) < 0) {
    // the lock holds without the note; the message then says "another process"
  }
  const char *old = std::getenv(env_name);
  had_env_ = old != nullptr;
  if (old)
    previous_env_ = old;
  ::setenv(env_name, canon.c_str(), 1); // this command's child stages write under this lock
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
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() == 1) // the parent ended before the line above
    ::raise(SIGTERM);
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
