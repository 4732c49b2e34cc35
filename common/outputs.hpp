#pragma once
// Outputs never replace what is not gpuprobe's (issues 44, 76). One rule for every command that
// writes: an output is refused before anything is written when it is an input, holds one or lies
// inside an input folder (where the command's own layout does not put it), when two outputs of
// one command are one path, or when it exists and is not a regular file (a device such as
// /dev/null, a FIFO, a socket or a link) nor a folder this command wrote. Every file is created
// exclusively and without following a link (a link, FIFO or device planted at a temporary name
// is never written through); a folder --out is replaced only when its marker names every path
// under it with the size and hash the writer left, and only the folder that was checked (one
// moved into its place meanwhile is left as it is); a temporary left by a process that died is
// removed by the next writer; two writers of one folder take turns. Host-only, POSIX.
#include "common/non_copyable.hpp"
#include <cstdint>
#include <string>
#include <vector>

namespace gpuprobe {

// Throws gpuprobe::error in one line when `path` exists and is not a regular file (followed links
// are refused too: the link is the user's); absent or a regular file: returns.
void refuse_non_regular_target(const std::string &path);

// Creates `path` for writing: O_CREAT | O_EXCL | O_NOFOLLOW (never through a link, never over
// anything); its descriptor, or -1 with errno (EEXIST: something is there already).
int create_exclusive(const std::string &path, int mode = 0644);

// One output of a command: the option that names it ("--out") and its path.
struct output_path {
  std::string flag, path;
  bool folder = false; // a folder the command fills (else a file)
};
// The one output rule, checked before anything is written: throws gpuprobe::error in one line,
// "COMMAND: FLAG 'PATH' ... : the rule", when an output is empty, is an input or holds one, lies
// inside one of `inputs` (a file output anywhere in an input folder; a folder output too, unless
// `inside_ok` is given and accepts it: report's DIR/report), when two outputs are one path, or
// when an existing output is not a regular file (a file output) or not a folder (a folder one).
using inside_rule = bool (*)(const std::string &out, const std::string &input);
void check_outputs(const std::string &command, const std::vector<output_path> &outputs,
                   const std::vector<std::string> &inputs, inside_rule inside_ok = nullptr);

// Text from data made safe for a terminal line: control characters (a newline, an escape) shown
// as \n, \e, \xNN; everything else as it is.
std::string terminal_text(const std::string &s);

// A file's size and 64-bit FNV-1a hash of its bytes (links not followed: a link is not a file).
struct file_stamp {
  bool ok = false; // a regular file that could be read
  std::uintmax_t size = 0;
  std::uint64_t hash = 0;
};
file_stamp stamp_of(const std::string &path);

// True when process `pid` is gone (kill(pid, 0) says ESRCH).
bool process_gone(long pid);

// Removes `dir`/<prefix><pid>[.<n>] (file, folder or a link, never followed) for each such entry
// whose <pid> has ended: the temporaries of killed writers. Returns how many were removed.
int remove_stale_temporaries(const std::string &dir, const std::string &prefix);

// The marker a command leaves in a folder it wrote: every path it wrote, relative, each file with
// its size and hash (gpuprobe.owned/2). It is trusted only when it is a regular file (not a
// link) and every file it lists is still there with that size and hash: a hand-written list, a
// marker linked from another report, or a file changed since are not the command's.
inline constexpr const char *k_owned_marker = ".gpuprobe-owned.json";
// Writes the marker into `dir`, listing every path now under it (all of them, or only `names`).
void mark_folder_owned(const std::string &dir, const std::string &command);
void mark_files_owned(const std::string &dir, const std::vector<std::string> &names,
                      const std::string &command);
// The paths `dir`'s marker vouches for (every listed file matches; folders listed), or empty
// when it has none, it is not trusted, or it is unreadable; `why` says which. `legacy_ok` is set
// where a rule for folders written before this marker may still judge (no marker, or one of the
// old format that names no hashes); a marker that is a link, unreadable, or whose hashes no
// longer match is never passed over so.
std::vector<std::string> owned_paths(const std::string &dir, std::string *why = nullptr,
                                     bool *legacy_ok = nullptr);
// May `command` replace `dir`? Yes when absent or empty, or when its trusted marker lists every
// path under it (`legacy`, when given, may accept a folder without a trusted marker, path by
// path). Else throws gpuprobe::error naming the first path that is not the command's.
using legacy_rule = bool (*)(const std::string &dir, const std::vector<std::string> &paths);
void check_folder_replaceable(const std::string &dir, const std::string &command,
                              legacy_rule legacy = nullptr);
// May `command` write `names` into the folder `dir` (which may hold other things)? Each one that
// exists must be listed by the folder's trusted marker (`legacy` may accept it otherwise).
void check_files_replaceable(const std::string &dir, const std::vector<std::string> &names,
                             const std::string &command, legacy_rule legacy = nullptr);

// A folder --out replaced by a finished one, only if it is still the folder that was checked:
// construct before the work (it notes the folder's identity, device and inode, where it exists),
// then replace(done) swaps `done` in. The old folder is first moved aside; if what was moved is
// not the one checked (a user's folder moved into place meanwhile) or now holds a path its marker
// does not vouch for, it is moved back, `done` removed, and an error thrown: nothing of the
// user's is deleted.
class folder_swap {
public:
  folder_swap(const std::string &out, const std::string &command, legacy_rule legacy = nullptr);
  void replace(const std::string &done);

private:
  std::string out_, command_;
  legacy_rule legacy_;
  bool existed_ = false;
  unsigned long long dev_ = 0, ino_ = 0;
};
// Every path under `dir`, relative, generic form, links not followed (sorted).
std::vector<std::string> paths_under(const std::string &dir);

// An exclusive lock on the folder `dir` itself (flock on its descriptor: no file is left), held
// while the object lives; waits up to `wait_s` for another holder, then throws in one line.
class dir_lock : private non_copyable {
public:
  dir_lock(const std::string &dir, const std::string &what, double wait_s = 120);
  ~dir_lock();

private:
  int fd_ = -1;
};

} // namespace gpuprobe
