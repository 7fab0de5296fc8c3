#!/usr/bin/env python3
"""Checks libtimerlog's exports with real parsers.

    check_export.py chrome FILE [NAME=DURATION_US ...] [--ranks N]
    check_export.py json FILE
    check_export.py csv FILE

chrome: the Trace Event format's rules: required fields and their types,
microsecond units (NAME=DURATION_US names an event whose duration is
known), one process_name per process and one thread_name per track used,
flow events in start/finish pairs, and complete events on one track nested
without partial overlap. Exits non-zero with a message on the first
violation.
"""
import csv
import json
import sys

EPS = 0.0005  # half a nanosecond, in microseconds


def fail(msg):
    print("check_export: " + msg, file=sys.stderr)
    sys.exit(1)


def check_chrome(path, args):
    with open(path) as f:
        doc = json.load(f)
    events = doc.get("traceEvents")
    if not isinstance(events, list) or not events:
        fail("no traceEvents list")
    known, ranks = {}, None
    for a in args:
        if a.startswith("--ranks="):
            ranks = int(a.split("=", 1)[1])
        else:
            name, dur = a.split("=")
            known[name] = float(dur)
    procs, tracks, used, flows = {}, {}, set(), {}
    slices = {}
    for e in events:
        for field, kind in (("name", str), ("ph", str), ("pid", int), ("tid", int)):
            if not isinstance(e.get(field), kind):
                fail("event without a valid %r: %r" % (field, e))
        ph = e["ph"]
        key = (e["pid"], e["tid"])
        if ph == "M":
            name = e.get("args", {}).get("name")
            if not isinstance(name, str):
                fail("metadata without args.name: %r" % e)
            if e["name"] == "process_name":
                if e["pid"] in procs:
                    fail("two process_name events for pid %d" % e["pid"])
                procs[e["pid"]] = name
            elif e["name"] == "thread_name":
                if key in tracks:
                    fail("two thread_name events for track %r" % (key,))
                tracks[key] = name
            else:
                fail("unknown metadata %r" % e["name"])
        elif ph == "X":
            for field in ("ts", "dur"):
                if not isinstance(e.get(field), (int, float)):
                    fail("complete event without numeric %s: %r" % (field, e))
            if e["dur"] < 0:
                fail("negative duration: %r" % e)
            if not isinstance(e.get("cat"), str):
                fail("complete event without cat: %r" % e)
            used.add(key)
            slices.setdefault(key, []).append((e["ts"], e["ts"] + e["dur"], e["name"]))
            if e["name"] in known and abs(e["dur"] - known[e["name"]]) > EPS:
                fail("%s lasts %r us, expected %r us" % (e["name"], e["dur"], known[e["name"]]))
        elif ph in ("s", "f"):
            if "id" not in e or not isinstance(e.get("ts"), (int, float)):
                fail("flow event without id or ts: %r" % e)
            if ph == "f" and e.get("bp") != "e":
                fail("flow end without bp=e: %r" % e)
            flows.setdefault(e["id"], []).append(ph)
        else:
            fail("unexpected phase %r" % ph)
    for key in used:
        if key not in tracks:
            fail("track %r has events but no thread_name" % (key,))
        if key[0] not in procs:
            fail("pid %d has events but no process_name" % key[0])
    for fid, phases in flows.items():
        if sorted(phases) != ["f", "s"]:
            fail("flow %r is not one start and one finish: %r" % (fid, phases))
    for name in known:
        if not any(n == name for s in slices.values() for (_, _, n) in s):
            fail("no event named %r" % name)
    if ranks is not None and len(procs) != ranks:
        fail("%d processes, expected %d" % (len(procs), ranks))
    for key, spans in slices.items():
        spans.sort(key=lambda s: (s[0], -(s[1] - s[0])))
        stack = []
        for start, end, name in spans:
            while stack and stack[-1][1] <= start + EPS:
                stack.pop()
            if stack and end > stack[-1][1] + EPS:
                fail("on track %r, %r [%r, %r] overlaps %r [%r, %r] partially"
                     % (key, name, start, end, stack[-1][2], stack[-1][0], stack[-1][1]))
            stack.append((start, end, name))
    print("chrome: %d events, %d tracks, %d flows: ok" % (len(events), len(tracks), len(flows)))


NODE_FIELDS = {"index", "name", "kind", "thread", "thread_name", "depth", "start_ns",
               "total_ns", "self_ns", "percent_of_parent", "count", "min_ns", "max_ns",
               "file", "line", "site_id", "flags", "launcher", "launch_site", "device",
               "queue", "children"}
# Rows of a reduced frame (tlog_frame_reduce) have these too, all of them.
RANK_FIELDS = {"ranks", "rank_min_ns", "rank_max_ns", "rank_mean_ns", "imbalance"}


def check_json(path):
    with open(path) as f:
        doc = json.load(f)
    frames = doc.get("frames")
    if not isinstance(frames, list) or not frames:
        fail("no frames")
    rows = 0
    for fr in frames:
        for field in ("serial", "rank", "thread", "thread_name", "start_ns", "duration_ns",
                      "root"):
            if field not in fr:
                fail("frame without %r" % field)
        stack = [(fr["root"], 0)]
        while stack:
            node, depth = stack.pop()
            rows += 1
            missing = NODE_FIELDS - set(node)
            if missing:
                fail("row %r lacks %r" % (node.get("name"), sorted(missing)))
            spread = RANK_FIELDS & set(node)
            if spread and spread != RANK_FIELDS:
                fail("row %r has only %r of the rank fields" % (node["name"], sorted(spread)))
            if spread and not node["rank_min_ns"] <= node["rank_mean_ns"] <= node["rank_max_ns"]:
                fail("row %r: rank mean outside [min, max]" % node["name"])
            if node["depth"] != depth:
                fail("row %r at depth %r, nested at %r" % (node["name"], node["depth"], depth))
            stack.extend((c, depth + 1) for c in node["children"])
        if "reduced_ranks" in fr and fr["root"].get("ranks") is None:
            fail("a reduced frame whose rows lack the rank fields")
    print("json: %d frames, %d rows: ok" % (len(frames), rows))


def check_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = ["rank", "frame", "path", "kind", "thread", "count", "total_ns", "min_ns",
              "max_ns", "percent_of_parent"]
    if rows[0] != header:
        fail("csv header %r" % rows[0])
    for r in rows[1:]:
        if len(r) != len(header):
            fail("csv row with %d fields: %r" % (len(r), r))
        int(r[5]), int(r[6]), float(r[9])
        if r[3] not in ("C", "E"):
            fail("csv kind %r" % r[3])
    print("csv: %d rows: ok" % (len(rows) - 1))


def main():
    if len(sys.argv) < 3:
        fail(__doc__)
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "chrome":
        check_chrome(path, sys.argv[3:])
    elif kind == "json":
        check_json(path)
    elif kind == "csv":
        check_csv(path)
    else:
        fail("unknown kind %r" % kind)


if __name__ == "__main__":
    main()
