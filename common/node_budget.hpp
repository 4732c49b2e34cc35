#pragma once
// The node's mapped-range budget. The driver grants a node just under 1 TiB of mapped,
// accessible virtual range in all, over processes and GPUs (docs/fleet.md: one process alone is
// refused at 960 GiB of 1,024; a second process's 512 GiB while a first holds 512). A process that
// maps a large range (an alias pool, a slot pool) first reserves its bytes from this budget and
// holds them until it unmaps, so processes on the node's GPUs map at once while their ranges fit
// together, and wait, rather than fail, while they do not.
//
// The budget is a row of token files (DIR/gpuprobe-range-budget.K, K < total / token), each worth
// `token_bytes`; a reservation holds an exclusive flock(2) on as many as its bytes need, taken
// under a gate file's lock so that two reservations never each hold part of what both need. The
// kernel drops a dead holder's locks (SIGKILL included), so a crash never leaks budget. Host-only,
// POSIX.
#include "common/non_copyable.hpp"
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe {

struct budget_config {
  std::string dir = "/tmp";
  std::uint64_t total_bytes = 896ull << 30; // of the ~1,023 GiB the driver grants a node
  std::uint64_t token_bytes = 32ull << 30;
  // GPUPROBE_NODE_RANGE_GIB=N: a budget of N GiB (0: none, map without one).
  static budget_config from_env();
  std::uint64_t tokens() const { return token_bytes ? total_bytes / token_bytes : 0; }
  std::uint64_t tokens_for(std::uint64_t bytes) const {
    return (bytes + token_bytes - 1) / token_bytes;
  }
};

class node_budget : private non_copyable {
public:
  // Reserves `bytes` now or not at all: nullopt when the tokens free now are too few. Throws
  // gpuprobe::error when `bytes` exceeds the whole budget.
  static std::optional<node_budget> try_reserve(std::uint64_t bytes, const budget_config &c);
  // Reserves `bytes`, waiting while other holders leave too little (polled every `poll_ms`);
  // `on_wait` is called once, when the first try fails, with the bytes held then. Only a process
  // that holds none of the budget waits (no hold-and-wait, so no deadlock): one that already holds
  // some and finds too little left gets an empty reservation at once, and `beside` is set (its
  // range then maps in the driver's slack past the budget, or meets the driver's refusal, which is
  // retried). A budget of 0 bytes (GPUPROBE_NODE_RANGE_GIB=0) or an unusable DIR reserves nothing
  // and returns at once.
  static node_budget reserve(std::uint64_t bytes, const budget_config &c,
                             const std::function<void(std::uint64_t held)> &on_wait = {},
                             unsigned poll_ms = 200, bool *beside = nullptr);
  // The budget this process holds now (every reservation alive in it).
  static std::uint64_t held_here();
  // Bytes held by other reservations now (counted without taking anything).
  static std::uint64_t held_now(const budget_config &c);

  node_budget() = default;
  node_budget(node_budget &&o) noexcept : fds_(std::move(o.fds_)), token_bytes_(o.token_bytes_) {
    o.fds_.clear();
  }
  node_budget &operator=(node_budget &&o) noexcept;
  ~node_budget() { release(); }

  void release() noexcept; // the tokens back to the node (closing releases each lock)
  std::uint64_t held_bytes() const { return fds_.size() * token_bytes_; }

private:
  std::vector<int> fds_; // one locked token file each
  std::uint64_t token_bytes_ = 0;
};

} // namespace gpuprobe
