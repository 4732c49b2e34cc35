#pragma once
// The node's turn at the driver's heavy mapping work (issue 48; an experiment, off unless
// GPUPROBE_MAP_TURNS=1). Two processes of a node that map or unmap a large range, or make or free
// a TLB-sized pool, at the same time go through the driver one call at a time, interleaved: both
// phases end late (tune's scope pool 3.6-5.1 s alone, 6.2-8.9 s beside another unit on H200s,
// docs/fleet.md). Under a turn they take turns instead: one ends at its own pace and goes on
// measuring while the other maps. Whether that shortens a node's run is what the experiment is to
// measure; by default nothing here waits.
//
// A turn is an exclusive flock(2) on DIR/gpuprobe-map-turn, held from construction to
// destruction; turns nest within a process (one lock, a depth) and are taken one thread at a time.
// Nothing that waits on another process (the node's range budget, a retry's sleep) may run while
// a turn is held. The kernel drops a dead holder's lock (SIGKILL included). Host-only, POSIX.
#include <string>

namespace gpuprobe {

class map_turn {
public:
  // Takes the node's turn when `wanted` and turns are on (GPUPROBE_MAP_TURNS=1, or on() below);
  // `what` names the work in the line printed when the wait was longer than half a second.
  explicit map_turn(bool wanted, const char *what = "mapping");
  ~map_turn();
  map_turn(const map_turn &) = delete;
  map_turn &operator=(const map_turn &) = delete;

  // GPUPROBE_MAP_TURNS=1 (read once), unless set by on().
  static bool enabled();
  // Turns on or off and their folder (tests); the file is DIR/gpuprobe-map-turn.
  static void on(bool enable, const std::string &dir = "/tmp");
  // Seconds this process has waited for turns so far.
  static double waited_seconds();

private:
  bool held_ = false;
};

} // namespace gpuprobe
