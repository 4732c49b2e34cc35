#pragma once
// Outputs never replace what is not gpuprobe's (issue 44): a file --out that exists must be a
// regular file (not a device such as /dev/null, a FIFO, a socket or a link); a folder --out is
// replaced only when every path under it is one the command wrote (its marker lists them); a
// temporary left by a process that died is removed by the next writer; two writers of one
// folder take turns. Host-only, POSIX.
#include <string>
#include <vector>

namespace gpuprobe {

// Throws gpuprobe::error in one line when `path` exists and is not a regular file (followed links
// are refused too: the link is the user's); absent or a regular file: returns.
void refuse_non_regular_target(const std::string &path);

// True when process `pid` is gone (kill(pid, 0) says ESRCH).
bool process_gone(long pid);

// Removes `dir`/<prefix><pid> (file or folder) for each such entry whose <pid> has ended: the
// temporaries of killed writers. Returns how many were removed.
int remove_stale_temporaries(const std::string &dir, const std::string &prefix);

// The marker a command leaves in a folder it wrote wholly: the paths it wrote, relative.
inline constexpr const char *k_owned_marker = ".gpuprobe-owned.json";
// Writes the marker into `dir`, listing every path now under it.
void mark_folder_owned(const std::string &dir, const std::string &command);
// May `command` replace `dir`? Yes when absent or empty, or when its marker lists every path
// under it (`legacy`, when given, may accept a folder without a marker, path by path). Else
// throws gpuprobe::error naming the first path that is not the command's.
using legacy_rule = bool (*)(const std::string &dir, const std::vector<std::string> &paths);
void check_folder_replaceable(const std::string &dir, const std::string &command,
                              legacy_rule legacy = nullptr);
// Every path under `dir`, relative, generic form, links not followed (sorted).
std::vector<std::string> paths_under(const std::string &dir);

// An exclusive lock on the folder `dir` itself (flock on its descriptor: no file is left), held
// while the object lives; waits up to `wait_s` for another holder, then throws in one line.
class dir_lock {
public:
  dir_lock(const std::string &dir, const std::string &what, double wait_s = 120);
  ~dir_lock();
  dir_lock(const dir_lock &) = delete;
  dir_lock &operator=(const dir_lock &) = delete;

private:
  int fd_ = -1;
};

} // namespace gpuprobe
