#!/usr/bin/env python3
"""Writes a text file as a C string constant: embed.py NAME IN OUT."""
import sys

name, src, dst = sys.argv[1:4]
with open(src, encoding="ascii") as f:
    lines = f.read().splitlines()
with open(dst, "w", encoding="ascii") as out:
    out.write("/* Generated from %s by embed.py. */\n" % src.split("/")[-1])
    out.write("static const char %s[] =\n" % name)
    for line in lines:
        out.write('    "%s\\n"\n' % line.replace("\\", "\\\\").replace('"', '\\"'))
    out.write("    ;\n")
