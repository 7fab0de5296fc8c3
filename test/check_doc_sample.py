#!/usr/bin/env python3
"""Checks that the first dump sample after a heading of a Markdown file is an
excerpt of the golden frame: each of its rows is a row of the golden file, in
the same order.

Usage: check_doc_sample.py DOC.md "## Heading" GOLDEN.txt
"""
import sys


def sample_after(doc, heading):
    lines = open(doc, encoding="utf-8").read().splitlines()
    start = lines.index(heading)
    first = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    end = next(i for i in range(first + 1, len(lines)) if lines[i].startswith("```"))
    return lines[first + 1:end]


def main():
    doc, heading, golden = sys.argv[1:4]
    rows = open(golden, encoding="utf-8").read().splitlines()
    at = 0
    for row in sample_after(doc, heading):
        try:
            at = rows.index(row, at) + 1
        except ValueError:
            print(f"{doc}: not a row of {golden} (in this order): {row}")
            return 1
    return 0


sys.exit(main())
