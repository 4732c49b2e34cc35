#pragma once
// One writer per results folder. characterize, run, tune and validate hold an exclusive lock
// on DIR/.gpuprobe.lock while they write DIR; report reads a folder only when no writer holds
// it. The lock is flock(2): the kernel drops it when its holder ends in any way (SIGKILL and
// power loss included), so a dead writer never blocks the next run; the file only says who held
// it last. A child stage started by the holder (run -> characterize -> report) inherits the
// lock's descriptor, named in GPUPROBE_FOLDER_LOCK ("FD:FOLDER"), and takes no second one; the
// variable is believed only when that descriptor is open in the stage, is the folder's lock
// file and holds its lock, so setting it by hand bypasses nothing. Host-only, POSIX.
#include "common/non_copyable.hpp"
#include <filesystem>
#include <string>
#include <vector>

namespace gpuprobe {

class folder_lock : private non_copyable {
public:
  enum class mode { write, read };
  // Locks `dir` (created if missing for `write`) for `command` ("characterize", ...); throws
  // gpuprobe::error in one line naming the holder's PID and command when another process holds
  // it. A folder whose lock this process's ancestor holds (GPUPROBE_FOLDER_LOCK) is not locked
  // again.
  folder_lock(const std::string &dir, const std::string &command, mode m = mode::write);
  ~folder_lock();

  bool inherited() const { return fd_ < 0; }
  static constexpr const char *file_name = ".gpuprobe.lock";
  static constexpr const char *env_name = "GPUPROBE_FOLDER_LOCK";

private:
  void remove_made();
  int fd_ = -1;
  int unwinding_ = 0;     // uncaught exceptions when made: a later one is a refusal
  std::string lock_file_; // the lock file, where this command made it
  std::vector<std::filesystem::path> made_; // the folders this command made, outermost first
  std::string previous_env_;
  bool had_env_ = false, set_env_ = false;
};

// In a stage started by a lock holder (GPUPROBE_FOLDER_LOCK names a lock this process holds
// through its inherited descriptor): end with SIGTERM when the parent ends, so a killed
// `characterize` or `run` leaves no stage measuring on, saying so in one line (main, once). A
// variable that names no lock held here is dropped, and nothing ends.
void end_with_lock_holder();

// Who holds `dir`'s lock now: "PID N (gpuprobe COMMAND)", or "" when nobody does.
std::string folder_lock_holder(const std::string &dir);

} // namespace gpuprobe
