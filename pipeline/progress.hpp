#pragma once
// What `gpuprobe run` shows of a stage while it runs: the stage's output goes whole to run.log,
// and the terminal gets one line per stage, kept up to date: the step the stage is at ("[2/7+]
// tlb_real", "[3/16] getpage_write/free:1%"), its sweep's progress ("stride 4 MiB (3/8)") and the
// time left where the output tells it. Host-only: run_stage_in feeds it the child's output.
#include <cstddef>
#include <cstdio>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::pipeline {

class stage_watch {
public:
  // `log`: every byte of the stage's output is appended there (nullptr: none).
  explicit stage_watch(std::FILE *log = nullptr) : log_(log) {}

  // A chunk of the stage's output, as it comes (lines may be split across chunks); `now_s` is
  // the stage's time so far.
  void feed(const std::string &chunk, double now_s);

  // The terminal's line for `stage` at `now_s` seconds, at most `width` characters, e.g.
  // "[run] characterize   37 s  [1/7+] tlb  stride 32 MiB (5/8), ~1 s left".
  std::string status(const std::string &stage, double now_s, std::size_t width = 100) const;

  // The last lines seen (at most 30), to show when the stage fails.
  const std::deque<std::string> &tail() const { return tail_; }
  // The last line that starts with "gpuprobe <command>" and carries a result, e.g.
  // "gpuprobe characterize: 3 TLB level(s), ...": the stage's own summary.
  const std::string &summary() const { return summary_; }
  // Lines the person at the terminal must see though the rest goes to the log: other processes
  // on the GPU, findings marked DISTURBED (at most 5, each once).
  const std::vector<std::string> &notes() const { return notes_; }

private:
  void line(const std::string &l, double now_s);
  void enter_step(const std::string &text, int k, int n, double now_s); // n 0: not final
  std::FILE *log_;
  std::string partial_;
  std::deque<std::string> tail_;
  std::string step_, sweep_, summary_;
  std::vector<std::string> notes_;
  double step_at_ = 0;          // when the step began (stage seconds)
  int step_k_ = 0, step_n_ = 0; // "[k/n]" of the step (n 0: the count is not final)
  std::optional<double> sweep_left_;
};

} // namespace gpuprobe::pipeline
