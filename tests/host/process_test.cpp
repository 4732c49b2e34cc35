// Helpers of common/process.hpp that need no child.
#include "common/process.hpp"

#include <gtest/gtest.h>

using gpuprobe::last_line;

// A child's error is its last line: trailing newlines dropped, one line or none left as it is.
TEST(Process, LastLineOfAChildsOutput) {
  EXPECT_EQ(last_line("a\nb\nerror: x\n\n"), "error: x");
  EXPECT_EQ(last_line("error: x"), "error: x");
  EXPECT_EQ(last_line("a\nb"), "b");
  EXPECT_EQ(last_line("\n\n"), "");
  EXPECT_EQ(last_line(""), "");
}
