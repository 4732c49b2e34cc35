#!/usr/bin/env python3
"""Runs a command and writes its merged stdout and stderr to FILE, each line prefixed by the
seconds since the command started (where a stage spends its time, between its own lines).
Usage: stamp_lines.py FILE -- COMMAND [ARG ...]   (the command's exit status is returned)"""
import subprocess
import sys
import time

if len(sys.argv) < 4 or sys.argv[2] != "--":
    sys.exit(__doc__)
out = open(sys.argv[1], "w")
t0 = time.monotonic()
cmd = ["stdbuf", "-oL", "-eL"] + sys.argv[3:]
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
for line in p.stdout:
    out.write("%7.2f %s" % (time.monotonic() - t0, line))
rc = p.wait()
out.write("%7.2f exit %d\n" % (time.monotonic() - t0, rc))
sys.exit(rc)
