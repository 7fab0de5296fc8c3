#!/usr/bin/env python3
"""Runs examples/frame_loop with only TIMERLOG_REPORT set and checks the
statistics report it writes when it exits: to stderr as text, to a file as
JSON (`%` becoming the process id) or CSV, with hitches over a budget; a bad
value said and ignored; nothing at all when the variable is unset."""
import glob
import json
import os
import subprocess
import sys
import tempfile

example = sys.argv[1]
errors = []


def run(value):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIMERLOG_")}
    if value is not None:
        env["TIMERLOG_REPORT"] = value
    p = subprocess.run([example], env=env, capture_output=True, text=True, check=True)
    return p.stdout, p.stderr


def expect(cond, what, text=""):
    if not cond:
        errors.append(what + ("\n" + text if text else ""))


plain_out, plain_err = run(None)
expect(plain_err == "", "unset: something on stderr", plain_err)
expect(plain_out.count("--- frame") == 3, "unset: not 3 frames printed", plain_out)

out, err = run("stats")
expect(out.count("--- frame") == 3, "stats: the program's own output changed", out)
lines = err.splitlines()
expect(lines[:2] == ["# timerlog statistics report",
                     '# thread "Main", root "Frame": 3 frames; time: mean per frame, '
                     "quantiles within 0.79%"], "stats: no report header", err)
for row in ["> 100.00% ", "| (C) Simulation/Analysis\n", "| (C) Filter [x2]\n",
            "| (E) Worker Thread 3 [x2]\n", "| (C) Render\n"]:
    expect(row in err, f"stats: no '{row.strip()}' row", err)
expect("hitch" not in err, "stats: hitches without a budget", err)

out, err = run("stats:hitch=0.001")
expect("# hitches: 3 seen, the last 3 kept" in err, "hitch=0.001: not every frame a hitch", err)

with tempfile.TemporaryDirectory() as d:
    out, err = run(f"stats:format=json:file={d}/report-%.json")
    expect(err == "", "file: something on stderr", err)
    files = glob.glob(f"{d}/report-*.json")
    expect(len(files) == 1 and files[0].split("-")[-1][:-5].isdigit(),
           f"file: {files} is not one report named by its process id")
    if files:
        report = json.load(open(files[0]))
        expect(report["frames"] == 3, "json: not 3 frames", str(report)[:500])
        tree = report["groups"][0]["tree"]
        expect(tree["name"] == "Frame" and tree["frames"] == 3, "json: no Frame root")
        expect(tree["total_ns"]["min"] <= tree["total_ns"]["median"] <= tree["total_ns"]["max"],
               "json: median outside min and max", str(tree["total_ns"]))
    out, err = run(f"stats:format=csv:file={d}/report.csv")
    text = open(f"{d}/report.csv").read()
    expect(text.startswith("thread,root,path,kind,device,frames,total_mean,"), "csv: header", text)
    expect("\nMain,Frame,Frame / Render,C,,3," in text, "csv: no Render row", text)

out, err = run("statistics")
expect(err.startswith("timerlog: TIMERLOG_REPORT=statistics is not stats[:format=text|csv|json]"),
       "bad value: not said", err)
expect("# timerlog statistics report" not in err, "bad value: a report anyway", err)

if errors:
    print("\n".join(errors))
    sys.exit(1)
print("report at exit: text, JSON and CSV, hitches, bad value, unset")
