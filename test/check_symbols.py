#!/usr/bin/env python3
"""Checks what libtimerlog.so exports against its headers and version script.

    check_symbols.py READELF LIBRARY PUBLIC_HEADER_DIR

Every defined dynamic symbol must carry a version (the version script was
applied) and be one of:
  - public, in TIMERLOG_0, and declared TLOG_API in a header of
    include/timerlog/;
  - private, in TIMERLOG_PRIVATE, and declared in no public header.
Every TLOG_API declaration of timerlog.h must be exported, in TIMERLOG_0.
Exits non-zero with every mismatch listed.
"""
import pathlib
import re
import subprocess
import sys

PUBLIC = "TIMERLOG_0"
PRIVATE = "TIMERLOG_PRIVATE"
# A declaration the library exports: TLOG_API, then the type, then the name.
DECL = re.compile(r"\bTLOG_API\b[^;(]*?\b(tlog_\w+)\s*[(;]")


def declared(path):
    text = path.read_text()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return set(DECL.findall(text))


def exports(readelf, lib):
    out = subprocess.run([readelf, "--dyn-syms", "--wide", lib], check=True,
                         capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) < 8 or not f[0].endswith(":") or f[6] == "UND":
            continue
        if f[4] not in ("GLOBAL", "WEAK") or f[3] not in ("FUNC", "OBJECT", "TLS", "IFUNC"):
            continue
        name, _, version = f[7].partition("@")
        version = version.lstrip("@")
        if f[6] == "ABS" and name in (PUBLIC, PRIVATE, version):
            continue  # a version node's own symbol
        found[name] = version
    return found


def main():
    readelf, lib, incdir = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    core = declared(incdir / "timerlog.h")
    public = set()
    for h in incdir.glob("*.h"):
        public |= declared(h)
    found = exports(readelf, lib)
    errors = []
    for name, version in sorted(found.items()):
        if version == PUBLIC and name not in public:
            errors.append("%s is in %s but declared in no public header" % (name, PUBLIC))
        elif version == PRIVATE and name in public:
            errors.append("%s is declared in a public header but in %s" % (name, PRIVATE))
        elif version not in (PUBLIC, PRIVATE):
            errors.append("%s is exported with version '%s', neither %s nor %s"
                          % (name, version or "(none)", PUBLIC, PRIVATE))
    for name in sorted(core):
        if found.get(name) != PUBLIC:
            errors.append("%s is declared in timerlog.h but not exported in %s" % (name, PUBLIC))
    if not core or not found:
        errors.append("nothing read: %d declarations, %d exports" % (len(core), len(found)))
    for e in errors:
        print("check_symbols: " + e, file=sys.stderr)
    print("%d public, %d private, %d other exports; %d declared in timerlog.h"
          % (sum(v == PUBLIC for v in found.values()),
             sum(v == PRIVATE for v in found.values()),
             sum(v not in (PUBLIC, PRIVATE) for v in found.values()), len(core)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
