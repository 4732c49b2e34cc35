#pragma once
// A node's units at the driver's large mapping and allocation bursts (issue 81; an experiment, off
// unless GPUPROBE_DRIVER_TURNS=1). Two processes' mapping and allocation calls wait for each other
// in the driver (docs/fleet.md), so a burst beside the neighbour's runs late. With turns on, the
// unit that maps late (--map-late, every second GPU of --devices) starts each burst when its
// neighbours end theirs; a leading unit never waits. A burst is mapping or unmapping an alias
// range, or making or freeing a pool, of 1 GiB or more: never inside a timed measurement.
//
// One file, DIR/gpuprobe-driver-turn: a leading unit holds a shared flock(2) on it while inside a
// burst (bursts of a process nest, and its threads share the one hold); a late unit, before its
// burst, takes and at once drops an exclusive lock (polled, so the wait is bounded: at most
// `max_wait_s`, then it goes on). Nothing that waits on another process (the node's range budget,
// a retry's sleep) runs inside a burst. The kernel drops a dead holder's lock (SIGKILL included).
// Host-only, POSIX.
#include <cstddef>
#include <string>

namespace gpuprobe {

enum class turn_role {
  off,     // nothing is taken and nothing waits (the default)
  leading, // holds the turn while inside a burst; never waits
  late,    // waits, before a burst, until no leading unit is inside one
};

class driver_burst {
public:
  // A burst of `bytes` of mapping or allocation work (a turn only from 1 GiB); `what` names it in
  // the line printed when a late unit waited more than half a second.
  driver_burst(std::size_t bytes, const char *what);
  ~driver_burst();
  driver_burst(const driver_burst &) = delete;
  driver_burst &operator=(const driver_burst &) = delete;

  static constexpr std::size_t min_bytes = std::size_t(1) << 30;
  // This process's role from GPUPROBE_DRIVER_TURNS=1 (else off) and whether it maps late.
  static void configure(bool map_late);
  // Tests: the role and the turn file's folder (default /tmp), and the longest wait.
  static void set_role(turn_role r, const std::string &dir = "/tmp", double max_wait_s = 30.0);
  static turn_role role();
  // Seconds this process waited for its neighbours so far.
  static double waited_seconds();

private:
  bool held_ = false;
};

} // namespace gpuprobe
