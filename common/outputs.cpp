#include "common/outputs.hpp"

#include "common/error.hpp"
#include "common/json_io.hpp"
#include "common/paths.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <set>
#include <thread>

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {

// What an existing path is, in words ("" when it is absent).
std::string kind_of(const std::string &path) {
  std::error_code ec;
  const auto st = fs::symlink_status(path, ec);
  if (ec || !fs::exists(st))
    return "";
  return fs::is_symlink(st)          ? "a symbolic link"
         : fs::is_directory(st)      ? "a folder"
         : fs::is_regular_file(st)   ? "a file"
         : fs::is_character_file(st) ? "a character device"
         : fs::is_block_file(st)     ? "a block device"
         : fs::is_fifo(st)           ? "a FIFO"
         : fs::is_socket(st)         ? "a socket"
                                     : "not a regular file";
}

} // namespace

void refuse_non_regular_target(const std::string &path) {
  const std::string kind = kind_of(path);
  if (!kind.empty() && kind != "a file")
    throw error("'" + terminal_text(path) + "' is " + kind +
                ", not a file gpuprobe writes: give the path of a new or a regular file");
}

int create_exclusive(const std::string &path, int mode) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
}

void check_outputs(const std::string &command, const std::vector<output_path> &outputs,
                   const std::vector<std::string> &inputs, inside_rule inside_ok) {
  const auto refuse = [&](const output_path &o, const std::string &why) {
    throw error(command + ": " + o.flag + " '" + terminal_text(o.path) + "' " + why);
  };
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto &o = outputs[i];
    if (o.path.empty())
      refuse(o, "is empty: give a path");
    const std::string kind = kind_of(o.path);
    if (!kind.empty() && kind != (o.folder ? "a folder" : "a file"))
      refuse(o, "is " + kind + ", not " + (o.folder ? "a folder" : "a file") +
                    " gpuprobe writes: give a new " + (o.folder ? "folder" : "file") +
                    (o.folder ? " or one this command wrote" : " or a regular file"));
    for (std::size_t j = 0; j < i; ++j)
      if (same_or_inside(outputs[j].path, o.path) && same_or_inside(o.path, outputs[j].path))
        refuse(o, "is also " + outputs[j].flag + ": two outputs of one command are two paths");
    for (const auto &in : inputs) {
      if (in.empty())
        continue;
      const bool out_inside = same_or_inside(o.path, in), in_inside = same_or_inside(in, o.path);
      if (out_inside && in_inside)
        refuse(o, "is its input '" + terminal_text(in) +
                      "': give another path (an input is never overwritten)");
      if (in_inside)
        refuse(o, "holds its input '" + terminal_text(in) +
                      "': give another path (an input is never overwritten)");
      std::error_code ec;
      if (out_inside && fs::is_directory(in, ec) && !(inside_ok && inside_ok(o.path, in)))
        refuse(o, "lies inside its input folder '" + terminal_text(in) +
                      "': give a path outside the inputs (an input is never overwritten)");
    }
  }
}

std::string terminal_text(const std::string &s) {
  std::string out;
  for (const unsigned char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == 0x1b)
      out += "\\e";
    else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else
      out += char(c);
  }
  return out;
}

file_stamp stamp_of(const std::string &path) {
  file_stamp st;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return st;
  struct stat sb {};
  if (::fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    ::close(fd);
    return st;
  }
  std::uint64_t h = 1469598103934665603ull; // FNV-1a 64
  char buf[1 << 16];
  ssize_t n;
  std::uintmax_t size = 0;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) {
    size += std::uintmax_t(n);
    for (ssize_t i = 0; i < n; ++i)
      h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
  }
  ::close(fd);
  if (n < 0)
    return st;
  st.ok = true;
  st.size = size;
  st.hash = h;
  return st;
}

bool process_gone(long pid) { return pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH; }

int remove_stale_temporaries(const std::string &dir, const std::string &prefix) {
  int removed = 0;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir.empty() ? "." : dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.size() <= prefix.size() || n.compare(0, prefix.size(), prefix) != 0)
      continue;
    std::string tail = n.substr(prefix.size());
    if (const auto dot = tail.find('.'); dot != std::string::npos) { // <pid>.<n>
      if (tail.find_first_not_of("0123456789", dot + 1) != std::string::npos || dot + 1 == tail.size())
        continue;
      tail.resize(dot);
    }
    if (tail.empty() || tail.find_first_not_of("0123456789") != std::string::npos ||
        tail.size() > 9)
      continue;
    if (process_gone(std::stol(tail))) {
      std::error_code rm;
      removed += fs::remove_all(e.path(), rm) > 0; // a link is removed, never followed
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

namespace {

std::string hex64(std::uint64_t h) {
  char b[20];
  std::snprintf(b, sizeof b, "%016llx", (unsigned long long)h);
  return b;
}

json marker_of(const std::string &dir, const std::vector<std::string> &paths,
               const std::string &command) {
  json list = json::array();
  for (const auto &p : paths) {
    const std::string full = (fs::path(dir) / p).string();
    std::error_code ec;
    if (fs::is_directory(fs::symlink_status(full, ec))) {
      list.push_back({{"path", p}, {"kind", "folder"}});
      continue;
    }
    const file_stamp st = stamp_of(full);
    if (!st.ok)
      continue; // not a regular file: never vouched for
    list.push_back({{"path", p}, {"kind", "file"}, {"bytes", st.size}, {"fnv1a64", hex64(st.hash)}});
  }
  char when[32] = {};
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return json{{"schema", "gpuprobe.owned/2"},
              {"written_by", "gpuprobe " + command},
              {"pid", long(::getpid())},
              {"written_utc", when},
              {"paths", list}};
}

} // namespace

void mark_folder_owned(const std::string &dir, const std::string &command) {
  auto paths = paths_under(dir);
  paths.erase(std::remove(paths.begin(), paths.end(), k_owned_marker), paths.end());
  write_json_atomic((fs::path(dir) / k_owned_marker).string(), marker_of(dir, paths, command));
}

void mark_files_owned(const std::string &dir, const std::vector<std::string> &names,
                      const std::string &command) {
  write_json_atomic((fs::path(dir) / k_owned_marker).string(), marker_of(dir, names, command));
}

std::vector<std::string> owned_paths(const std::string &dir, std::string *why, bool *legacy_ok) {
  if (legacy_ok)
    *legacy_ok = false;
  const auto say = [&](const std::string &w, bool legacy = false) {
    if (why)
      *why = w;
    if (legacy_ok)
      *legacy_ok = legacy;
    return std::vector<std::string>{};
  };
  const fs::path marker = fs::path(dir) / k_owned_marker;
  const std::string kind = kind_of(marker.string());
  if (kind.empty())
    return say("no mark that gpuprobe wrote it", true);
  if (kind != "a file")
    return say(std::string("its mark ") + k_owned_marker + " is " + kind + ", not gpuprobe's");
  json m;
  try {
    m = read_json_file(marker.string());
  } catch (const std::exception &e) {
    return say(std::string("its mark ") + k_owned_marker + " is unreadable (" + e.what() + ")");
  }
  if (!m.is_object() || m.value("schema", "") != "gpuprobe.owned/2" || !m.contains("paths") ||
      !m["paths"].is_array())
    return say(std::string("its mark ") + k_owned_marker +
                   " names no sizes and hashes (written by hand, or by an older gpuprobe)",
               true);
  std::vector<std::string> out;
  for (const auto &e : m["paths"]) {
    if (!e.is_object() || !e.contains("path") || !e["path"].is_string())
      return say(std::string("its mark ") + k_owned_marker + " has an entry that names no path");
    const std::string p = e["path"].get<std::string>();
    const std::string full = (fs::path(dir) / p).string();
    if (e.value("kind", "") == "folder") {
      if (kind_of(full) == "a folder")
        out.push_back(p);
      continue; // a listed folder that is gone or is no folder now: not vouched for
    }
    const file_stamp st = stamp_of(full);
    if (!st.ok)
      continue; // gone: nothing to vouch for
    if (!e.contains("bytes") || !e["bytes"].is_number_unsigned() || !e.contains("fnv1a64") ||
        !e["fnv1a64"].is_string() || e["bytes"].get<std::uintmax_t>() != st.size ||
        e["fnv1a64"].get<std::string>() != hex64(st.hash))
      return say("'" + p + "' is not as gpuprobe wrote it (its size or hash differs from the mark)");
    out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// Throws naming the first of `paths` (but the mark) that `dir`'s mark does not vouch for (where
// the mark allows it, `legacy` may accept them all instead).
void refuse_unowned(const std::string &dir, const std::vector<std::string> &paths,
                    const std::string &command, legacy_rule legacy) {
  std::string why;
  bool legacy_ok = false;
  const auto owned = owned_paths(dir, &why, &legacy_ok);
  if (legacy_ok && legacy && legacy(dir, paths))
    return;
  for (const auto &p : paths)
    if (p != k_owned_marker && !std::binary_search(owned.begin(), owned.end(), p))
      throw error(command + ": --out '" + terminal_text(dir) + "' holds '" + terminal_text(p) +
                  "', which gpuprobe " + command + " did not write" +
                  (why.empty() ? "" : " (" + why + ")") +
                  ": give a new folder, or move it out first");
}

} // namespace

void check_folder_replaceable(const std::string &dir, const std::string &command,
                              legacy_rule legacy) {
  const std::string kind = kind_of(dir);
  if (kind.empty())
    return;
  if (kind != "a folder")
    throw error(command + ": --out '" + terminal_text(dir) + "' is " + kind +
                ", not a folder: give a new folder or one this command wrote");
  const auto paths = paths_under(dir);
  if (paths.empty())
    return;
  refuse_unowned(dir, paths, command, legacy);
}

void check_files_replaceable(const std::string &dir, const std::vector<std::string> &names,
                             const std::string &command, legacy_rule legacy) {
  std::vector<std::string> present;
  for (const auto &n : names)
    if (!kind_of((fs::path(dir) / n).string()).empty())
      present.push_back(n);
  if (present.empty())
    return;
  refuse_unowned(dir, present, command, legacy);
}

folder_swap::folder_swap(const std::string &out, const std::string &command, legacy_rule legacy)
    : out_(out), command_(command), legacy_(legacy) {
  check_folder_replaceable(out, command, legacy);
  struct stat sb {};
  if (::lstat(out.c_str(), &sb) == 0) {
    existed_ = true;
    dev_ = sb.st_dev;
    ino_ = sb.st_ino;
  }
}

void folder_swap::replace(const std::string &done) {
  std::error_code ec;
  const fs::path o(out_);
  const fs::path aside = (o.has_parent_path() ? o.parent_path() : fs::path(".")) /
                         ("." + o.filename().string() + ".old." + std::to_string(::getpid()));
  fs::remove_all(aside, ec);
  struct stat sb {};
  const bool there = ::lstat(out_.c_str(), &sb) == 0;
  if (there) {
    if (::rename(out_.c_str(), aside.c_str()) != 0) {
      fs::remove_all(done, ec);
      throw error(command_ + ": cannot move '" + terminal_text(out_) + "' aside: " +
                  std::strerror(errno));
    }
    struct stat moved {};
    bool ours = ::lstat(aside.c_str(), &moved) == 0 && existed_ && moved.st_dev == dev_ &&
                moved.st_ino == ino_;
    std::string why = ours ? "" : "it is not the folder checked when this command started";
    if (ours) {
      try {
        check_folder_replaceable(aside.string(), command_, legacy_);
      } catch (const std::exception &e) {
        ours = false;
        why = std::string("it changed while this command ran: ") + e.what();
      }
    }
    if (!ours) {
      if (::rename(aside.c_str(), out_.c_str()) != 0)
        std::fprintf(stderr, "gpuprobe: %s: '%s' left at '%s'\n", command_.c_str(),
                     terminal_text(out_).c_str(), terminal_text(aside.string()).c_str());
      fs::remove_all(done, ec);
      throw error(command_ + ": --out '" + terminal_text(out_) + "' was left as it is: " + why);
    }
  }
  if (::rename(done.c_str(), out_.c_str()) != 0) {
    const std::string e = std::strerror(errno);
    if (there)
      ::rename(aside.c_str(), out_.c_str());
    fs::remove_all(done, ec);
    throw error(command_ + ": cannot put the new '" + terminal_text(out_) + "' in place: " + e);
  }
  if (there)
    fs::remove_all(aside, ec); // the checked folder, every path of it vouched for
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
