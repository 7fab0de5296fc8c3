#!/usr/bin/env python3
"""Runs examples/sim_frames (or opencl_frames or vulkan_frames, which print
the same rows) and checks that it prints every frame of its loop, each with
each device row exactly once, and (but with --real-device) no percentage
past the bound. A program that exits 77 (no device) is skipped.

On a real device a sync scope may find the work it waits for already done
(lavapipe may even run a submission before vkQueueSubmit returns): a wait of
microseconds then shows rows of milliseconds under it, which the dump prints
as past its bound."""
import re
import subprocess
import sys

DEVICE_ROWS = ["Filter 1: GPU Parallel Operation 1", "Filter 1: GPU Parallel Operation 2",
               "Upload to device", "Draw"]
FRAMES = 3
real_device = "--real-device" in sys.argv[2:]

real_device = "--real-device" in sys.argv[2:]
run = subprocess.run([sys.argv[1]], capture_output=True, text=True)
if run.returncode == 77:
    print(run.stdout, end="")
    sys.exit(77)
if run.returncode != 0:
    print(run.stdout + run.stderr)
    sys.exit(f"{sys.argv[1]} exited with {run.returncode}")
out = run.stdout
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
        if ">9999.99%" in row and not real_device:
            errors.append(f"frame {number}: bound printed: {row}")
if errors:
    print(out)
    print("\n".join(errors))
    sys.exit(1)
print(f"{len(frames)} frames, each device row once in each")
