// Helpers of common/process.hpp: the last line of an output, and a child left running.
#include "common/process.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <fcntl.h>
#include <unistd.h>

using gpuprobe::last_line;

// A child's error is its last line: trailing newlines dropped, one line or none left as it is.
TEST(Process, LastLineOfAChildsOutput) {
  EXPECT_EQ(last_line("a\nb\nerror: x\n\n"), "error: x");
  EXPECT_EQ(last_line("error: x"), "error: x");
  EXPECT_EQ(last_line("a\nb"), "b");
  EXPECT_EQ(last_line("\n\n"), "");
  EXPECT_EQ(last_line(""), "");
}

// Issue 48: characterize hands run its result and stays on, holding the alias range, until its
// stdin ends. run_child returns once a child whose last line starts with the marker has closed
// its output, and wait_detached then gets its exit code; without the marker as the last line it
// is waited for as before.
TEST(Process, AChildThatSaysItStaysRunsOnUntilItsStdinEnds) {
  using namespace gpuprobe;
  int in[2];
  ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
  child_options o;
  o.capture = true;
  o.merge_stderr = true;
  o.stdin_fd = in[0];
  o.detach_marker = "[hold]";
  const auto r = run_child(
      {"/bin/sh", "-c", "echo work; echo '[hold] the range'; exec >/dev/null 2>&1; cat; exit 7"},
      o);
  ::close(in[0]);
  ASSERT_GT(r.detached_pid, 0);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "work\n[hold] the range\n");
  EXPECT_EQ(::kill(r.detached_pid, 0), 0) << "still running: its stdin is open";
  ::close(in[1]);
  EXPECT_EQ(wait_detached(r.detached_pid), 7);

  for (const char *script : {"echo '[hold] early'; echo done; exit 5", "echo '[hold]x'; exit 5"}) {
    ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
    o.stdin_fd = in[0];
    ::close(in[1]); // no stdin to wait on: a child that exits is waited for either way
    const auto w = run_child({"/bin/sh", "-c", script}, o);
    ::close(in[0]);
    if (std::string(script).find("done") != std::string::npos) {
      EXPECT_EQ(w.detached_pid, -1) << "the marker was not the last line";
      EXPECT_EQ(w.exit_code, 5);
    } else { // the marker last, and the child gone by then: detached, and its code still read
      ASSERT_GT(w.detached_pid, 0);
      EXPECT_EQ(wait_detached(w.detached_pid), 5);
    }
  }
}
