// compare --reanalyze's copies (cli/reanalyzed_copy.hpp).
#include "cli/reanalyzed_copy.hpp"
#include "common/error.hpp"
#include "common/outputs.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace gpuprobe::cli {

scratch_folder::scratch_folder() {
  const fs::path tmp = fs::temp_directory_path();
  const std::string prefix = "gpuprobe-compare-";
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(tmp, ec)) { // of compares that were killed
    const std::string n = e.path().filename().string();
    struct stat st {};
    if (n.rfind(prefix, 0) != 0 || ::lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != ::getuid())
      continue;
    const std::string pid = n.substr(prefix.size(), n.find('-', prefix.size()) - prefix.size());
    if (!pid.empty() && pid.size() < 10 &&
        pid.find_first_not_of("0123456789") == std::string::npos && process_gone(std::stol(pid)))
      fs::remove_all(e.path(), ec);
  }
  std::string name = (tmp / (prefix + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (!::mkdtemp(name.data()))
    throw error("compare --reanalyze: no temporary folder in " + tmp.string());
  path_ = name;
}

scratch_folder::~scratch_folder() {
  std::error_code ec;
  fs::remove_all(path_, ec); // only the folder mkdtemp made: nothing of the user's
}

namespace {

// `from` copied to the new file `to`: a reflink where the file system shares blocks, else only
// its data (holes are skipped, not read: a sparse 20 GiB file costs what it holds).
void copy_data(const fs::path &from, const fs::path &to) {
  const int in = ::open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0)
    throw error("compare --reanalyze: cannot read '" + terminal_text(from.string()) +
                "': " + std::strerror(errno));
  const int out = create_exclusive(to.string(), 0600);
  if (out < 0) {
    ::close(in);
    throw error("compare --reanalyze: cannot write '" + to.string() + "': " + std::strerror(errno));
  }
  struct stat st {};
  bool ok = ::fstat(in, &st) == 0;
  if (ok && ::ioctl(out, FICLONE, in) != 0) { // no shared blocks here: copy the data
    off_t pos = 0;
    while (ok && pos < st.st_size) {
      off_t data = ::lseek(in, pos, SEEK_DATA);
      if (data < 0)
        break; // only a hole is left
      const off_t hole = ::lseek(in, data, SEEK_HOLE);
      for (off_t at = data; ok && at < hole;) {
        off_t src = at, dst = at;
        ssize_t n = ::copy_file_range(in, &src, out, &dst, std::size_t(hole - at), 0);
        if (n < 0 &&
            (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
          char buf[1 << 16]; // no in-kernel copy between these file systems: read and write
          n = ::pread(in, buf, std::size_t(std::min<off_t>(hole - at, sizeof buf)), at);
          n = n > 0 && ::pwrite(out, buf, std::size_t(n), at) == n ? n : -1;
        }
        ok = n > 0;
        at += n > 0 ? n : 0;
      }
      pos = hole;
    }
    ok = ok && ::ftruncate(out, st.st_size) == 0;
  }
  ::close(in);
  if (::close(out) != 0 || !ok)
    throw error("compare --reanalyze: cannot copy '" + terminal_text(from.string()) + "'");
}

} // namespace

model::run_folder reanalyzed(const std::string &dir, const fs::path &to) {
  fs::create_directories(to);
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
       ++it) {
    check_interrupted("compare --reanalyze (copying '" + dir + "')");
    const fs::path rel = fs::relative(it->path(), dir);
    if (it->is_symlink() || rel == "report" || rel.filename() == ".gpuprobe.lock") {
      if (!it->is_symlink() && it->is_directory())
        it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory())
      fs::create_directories(to / rel);
    else if (it->is_regular_file())
      copy_data(it->path(), to / rel);
  }
  child_options o;
  o.capture = true;
  o.merge_stderr = true;
  const auto r = run_child({self_path(), "characterize", "--reanalyze", "--out", to.string()}, o);
  check_interrupted("compare --reanalyze");
  if (r.exit_code != 0)
    throw error("compare --reanalyze: `gpuprobe characterize --reanalyze` of a copy of '" + dir +
                "' failed (exit " + std::to_string(r.exit_code) + "): " + last_line(r.output));
  model::run_folder f = model::read_run_folder(to.string());
  f.dir = dir;
  return f;
}

} // namespace gpuprobe::cli
