#include "common/folder_lock.hpp"

#include "common/error.hpp"
#include "common/stopwatch.hpp"

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
#include <exception>
#include <filesystem>
#include <optional>
#include <vector>

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

namespace {

// Opens the lock file without following a link and without waiting on a FIFO; throws in one line
// when what is there is not a regular file (a link, a FIFO or a device planted at the name).
int open_lock_file(const fs::path &file, int flags, const std::string &dir) {
  const int fd = ::open(file.c_str(), flags | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0 && errno == ELOOP)
    throw error("cannot lock " + dir + ": " + file.string() +
                " is a symbolic link, not gpuprobe's lock file (remove it)");
  if (fd < 0)
    return fd;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw error("cannot lock " + dir + ": " + file.string() +
                " is not a regular file (a FIFO, a device or a socket), not gpuprobe's lock file "
                "(remove it)");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// The folders create_directories would make for `dir`, outermost first.
std::vector<fs::path> missing_folders(const fs::path &dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::path p = fs::absolute(dir).lexically_normal(); !p.empty() && !fs::exists(fs::symlink_status(p, ec));
       p = p.parent_path()) {
    out.insert(out.begin(), p);
    if (p == p.parent_path())
      break;
  }
  return out;
}

} // namespace

folder_lock::folder_lock(const std::string &dir, const std::string &command, mode m)
    : unwinding_(std::uncaught_exceptions()) {
  if (m == mode::write) {
    made_ = missing_folders(dir.empty() ? "." : dir);
    fs::create_directories(dir.empty() ? "." : dir);
  }
  const std::string canon = canonical_dir(dir);
  if (held_by_ancestor(canon))
    return; // the stage of a command that holds this folder: it writes under that lock
  const fs::path file = fs::path(canon) / file_name;
  if (m == mode::read) {
    fd_ = open_lock_file(file, O_RDONLY | O_CLOEXEC, dir);
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
  fd_ = open_lock_file(file, O_RDWR | O_CREAT | O_EXCL, dir);
  if (fd_ >= 0)
    lock_file_ = file.string(); // this command made it: a refusal removes it again
  else if (errno == EEXIST)
    fd_ = open_lock_file(file, O_RDWR, dir);
  if (fd_ < 0) {
    const std::string why = std::strerror(errno);
    remove_made();
    throw error("cannot lock " + dir + " (" + file.string() + ": " + why + ")");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const std::string who = read_holder(fd_);
    ::close(fd_);
    fd_ = -1;
    lock_file_.clear();
    made_.clear();
    throw error(dir + " is being written by " + who +
                " (or a stage it started): one writer per results folder; wait for it to end, " +
                "or give another --out");
  }
  const std::string line = "PID " + std::to_string(::getpid()) + " (gpuprobe " + command +
                           ") since " + local_time_text() + "\n";
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

void folder_lock::remove_made() {
  std::error_code ec;
  if (!lock_file_.empty())
    fs::remove(lock_file_, ec);
  for (auto it = made_.rbegin(); it != made_.rend(); ++it)
    fs::remove(*it, ec); // only an empty folder goes: whatever else was written stays
  lock_file_.clear();
  made_.clear();
}

folder_lock::~folder_lock() {
  // A command that ends in an error leaves no lock file it made, nor the empty folders it made
  // on the way (a refusal leaves nothing behind).
  if (fd_ >= 0 && std::uncaught_exceptions() > unwinding_)
    remove_made();
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
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0)
    return "";
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return "";
  }
  std::string who;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0)
    who = read_holder(fd);
  ::close(fd);
  return who;
}

} // namespace gpuprobe
