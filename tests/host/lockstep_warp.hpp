#pragma once
// A warp of 32 host threads in lockstep at each collective call, for the host tests of code
// written lane by lane over a `Warp` (ballot, shfl), as the device runs it on a full warp
// (allocators/runs.hpp: sweep_lanes). Each collective is a meeting of all 32 lanes: each puts its
// value, all wait, each reads what it asked, all wait again. A lane that makes a collective call
// the others do not make (divergent control flow, a bug on the device too) leaves the others
// waiting: after `patience` they throw, and run() reports it.
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gpuprobe::test {

class lockstep_warp {
public:
  explicit lockstep_warp(std::chrono::milliseconds patience = std::chrono::seconds(10))
      : patience_(patience) {}

  // One lane's view: what a kernel's lane calls.
  struct lane {
    lockstep_warp *w;
    unsigned id;
    unsigned ballot(bool p) const {
      return unsigned(w->meet(id, p ? 1u : 0u, [](const auto &v, unsigned) {
        unsigned m = 0;
        for (unsigned i = 0; i < 32; ++i)
          m |= unsigned(v[i] != 0) << i;
        return std::uint64_t(m);
      }));
    }
    std::uint64_t shfl(std::uint64_t x, unsigned src) const {
      return w->meet(id, x, [src](const auto &v, unsigned) { return v[src & 31u]; });
    }
  };

  // Runs f(lane) on 32 threads, lane 0-31; rethrows the first lane's exception.
  template <class F> void run(F f) {
    arrived_ = 0, abandoned_ = false;
    std::vector<std::thread> t;
    std::array<std::exception_ptr, 32> err{};
    for (unsigned i = 0; i < 32; ++i)
      t.emplace_back([&, i] {
        try {
          f(lane{this, i});
        } catch (...) {
          err[i] = std::current_exception();
          abandon();
        }
      });
    for (auto &x : t)
      x.join();
    for (auto &e : err)
      if (e)
        std::rethrow_exception(e);
  }

private:
  // Every lane puts x; once all 32 have, each reads read(values, its id); then all wait until
  // every lane has read before the values may be overwritten.
  template <class Read> std::uint64_t meet(unsigned id, std::uint64_t x, Read read) {
    std::unique_lock<std::mutex> g(m_);
    values_[id] = x;
    wait_all(g, id);
    const std::uint64_t out = read(values_, id);
    wait_all(g, id);
    return out;
  }
  void wait_all(std::unique_lock<std::mutex> &g, unsigned id) {
    const unsigned gen = generation_;
    if (++arrived_ == 32) {
      arrived_ = 0, ++generation_;
      cv_.notify_all();
      return;
    }
    if (!cv_.wait_for(g, patience_, [&] { return generation_ != gen || abandoned_; }) || abandoned_)
      throw std::runtime_error("lockstep_warp: lane " + std::to_string(id) +
                               " waited at a collective the other lanes did not reach");
  }
  void abandon() {
    std::lock_guard<std::mutex> g(m_);
    abandoned_ = true;
    cv_.notify_all();
  }
  std::chrono::milliseconds patience_;
  std::mutex m_;
  std::condition_variable cv_;
  std::array<std::uint64_t, 32> values_{};
  unsigned arrived_ = 0, generation_ = 0;
  bool abandoned_ = false;
};

} // namespace gpuprobe::test
