#!/usr/bin/env python3
"""Runs examples/sim_frames and checks that it prints every frame of its loop,
each with each device row exactly once, and no percentage past the bound."""
import re
import subprocess
import sys

DEVICE_ROWS = ["Filter 1: GPU Parallel Operation 1", "Filter 1: GPU Parallel Operation 2",
               "Upload to device", "Draw"]
FRAMES = 3

out = subprocess.run([sys.argv[1]], check=True, capture_output=True, text=True).stdout
frames = re.split(r"^# frame \d+\n", out, flags=re.M)[1:]
errors = []
if len(frames) != FRAMES:
    errors.append(f"{len(frames)} frames printed, not {FRAMES}")
for number, text in enumerate(frames, 1):
    rows = text.splitlines()
    if not rows or not re.match(r"^> 100\.00% \d+\.\d{6}s \| \(C\) Frame$", rows[0]):
        errors.append(f"frame {number}: no frame row first")
    for name in DEVICE_ROWS:
        found = [r for r in rows if r.endswith(f"| (E) {name}")]
        if len(found) != 1:
            errors.append(f"frame {number}: {len(found)} rows '(E) {name}', not 1")
    for row in rows:
        if ">9999.99%" in row:
            errors.append(f"frame {number}: bound printed: {row}")
if errors:
    print(out)
    print("\n".join(errors))
    sys.exit(1)
print(f"{len(frames)} frames, each device row once in each")
