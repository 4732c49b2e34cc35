#!/usr/bin/env python3
"""Each C++ file of a unity build compiles alone.

A unity build compiles 16 files as one unit, so a file may compile only because a file before it
in its unit included a header or opened a namespace (`using namespace`) for it. The presets of
CMakePresets.json build file by file, and there such a file fails. This test reads the build's
compile_commands.json, takes each unity unit's files from its #include lines and parses each one
alone (-fsyntax-only) with its unit's command.

First it checks itself on a unit it writes: a file that uses std::vector and a namespace that the
file before it brought in must be named, and the file before it must not.

usage: compile_alone_test.py BUILD_DIR   (exit 77: no compile_commands.json or no unity units)
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
CXX_UNIT = re.compile(r"unity_\d+_cxx\.cxx$")


def command_of(entry):
    """A compile_commands.json entry's command line, from either of its two spellings."""
    return entry.get("command") or " ".join(shlex.quote(a) for a in entry["arguments"])


def unit_files(unity_path):
    with open(unity_path) as f:
        return INCLUDE.findall(f.read())


def alone_command(command, unity_path, source):
    """The unit's command for one of its files: parsed only, no output, no optimisation."""
    args = shlex.split(command)
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a == "-c" or a == unity_path or re.fullmatch(r"-O[0-9sgz]?", a):
            continue
        out.append(a)
    return out + ["-fsyntax-only", source]


def check(entries, workers):
    """(files, [(source, error text)]): each file of the C++ unity units `entries` that does not
    compile alone."""
    jobs = []
    for e in entries:
        unity = e["file"]
        for source in unit_files(unity):
            jobs.append((source, alone_command(command_of(e), unity, source), e["directory"]))
    failed = []

    def run(job):
        source, cmd, cwd = job
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        return source, r.returncode, r.stderr

    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        for source, rc, err in pool.map(run, jobs):
            if rc != 0:
                failed.append((source, err))
    return len(jobs), failed


def self_check(compiler):
    """A unit of two files where the second leans on the first: the check must name the second."""
    with tempfile.TemporaryDirectory() as d:
        first, second = os.path.join(d, "first.cpp"), os.path.join(d, "second.cpp")
        with open(first, "w") as f:
            f.write("#include <vector>\nnamespace a::b { int one() { return 1; } }\n"
                    "using namespace a;\n")
        with open(second, "w") as f:
            f.write("int two() { std::vector<int> v{b::one(), 1}; return int(v.size()); }\n")
        unity = os.path.join(d, "unity_0_cxx.cxx")
        with open(unity, "w") as f:
            f.write('#include "%s"\n#include "%s"\n' % (first, second))
        command = "%s -std=gnu++17 -O2 -o %s -c %s" % (compiler, os.path.join(d, "u.o"), unity)
        both = subprocess.run(shlex.split(command), cwd=d, capture_output=True, text=True)
        if both.returncode != 0:
            sys.exit("self-check: the unit itself does not compile:\n" + both.stderr)
        n, failed = check([{"file": unity, "command": command, "directory": d}], 2)
        named = [s for s, _ in failed]
        if n != 2 or named != [second]:
            sys.exit("self-check: expected only %s named, of 2 files; got %s of %d"
                     % (second, named, n))


def main():
    build = sys.argv[1]
    path = os.path.join(build, "compile_commands.json")
    if not os.path.exists(path):
        print("no %s (configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON)" % path)
        return 77
    with open(path) as f:
        entries = json.load(f)
    cxx = [e for e in entries if CXX_UNIT.search(e["file"])]
    if not cxx:
        print("no C++ unity units in %s: the build compiles each file alone already" % path)
        return 77
    compiler = shlex.split(command_of(cxx[0]))[0]
    self_check(compiler)
    n, failed = check(cxx, os.cpu_count() or 2)
    for source, err in failed:
        print("does not compile alone: %s\n%s" % (source, "\n".join(err.splitlines()[:12])))
    print("%d of %d files of %d unity units compile alone" % (n - len(failed), n, len(cxx)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
