#!/usr/bin/env python3
"""Checks that a source file fails to compile where it should, and why.

The file holds cases selected by TLOG_CASE: case 0 must compile (so that a
failure of the others is not from a missing header or a bad flag), and
every other case must fail with a message that contains EXPECT.

Usage: compile_fail.py SOURCE EXPECT -- COMPILER [ARGS...]
"""
import os
import re
import subprocess
import sys
import tempfile


def compile_case(cmd, source, case, obj):
    run = subprocess.run(cmd + [f"-DTLOG_CASE={case}", "-c", source, "-o", obj],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True)
    return run.returncode, run.stdout


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        print(__doc__)
        return 2
    source, expect, cmd = sys.argv[1], sys.argv[2], sys.argv[4:]
    text = open(source, encoding="utf-8").read()
    cases = sorted({int(n) for n in re.findall(r"TLOG_CASE == (\d+)", text)})
    if not cases or cases[0] != 0 or len(cases) < 2:
        print(f"{source}: needs case 0 and at least one other case")
        return 2
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        obj = os.path.join(tmp, "case.o")
        for case in cases:
            rc, out = compile_case(cmd, source, case, obj)
            if case == 0 and rc != 0:
                print(f"case 0 must compile and did not:\n{out}")
                failed += 1
            elif case != 0 and rc == 0:
                print(f"case {case} compiled; it must not")
                failed += 1
            elif case != 0 and expect not in out:
                print(f"case {case} failed without saying {expect!r}:\n{out}")
                failed += 1
            else:
                print(f"case {case}: {'compiles' if case == 0 else 'fails, naming ' + expect}")
    return 1 if failed else 0


sys.exit(main())
