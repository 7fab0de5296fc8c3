#!/usr/bin/env python3
"""Checks the library's layers by its #include lines (doc/internals.md).

    base      lib/internal.h, lock.h, alloc.h, util.h, map.h, bytes.h, line.h,
              lib/os/, lib/arch/
    core      the other files directly in lib/
    layers    lib/device/, lib/stream/, lib/forward/: each may include the
              core and itself, never another layer
    backends  devices/<b>/ (outside test/): the public headers, their own
              files and the backend interface lib/device/device.h only
    tools     tools/: the public headers, their own files and the base

The core reaches the layers built on it through upcalls.h, never through
their headers, and the backend interface includes nothing from lib/. An
include cycle among the library's headers is an error too.

Usage: check_layers.py SOURCE_ROOT      check the tree, exit 1 on a breach
       check_layers.py --self-test      plant each breach in a scratch tree
                                        and check that it is found
"""
import os
import re
import sys
import tempfile

BASE = {'internal.h', 'lock.h', 'alloc.h', 'util.h', 'map.h', 'bytes.h', 'line.h'}
LAYERS = ('device', 'stream', 'forward')
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def layer_of(rel):
    """The layer of a file, by its path from the source root, or None."""
    parts = rel.split('/')
    if parts[0] == 'lib':
        if len(parts) == 2:
            return 'base' if parts[1] in BASE else 'core'
        if parts[1] in ('os', 'arch'):
            return 'base'
        if parts[1] in LAYERS:
            return parts[1]
        return None
    if parts[0] == 'devices' and 'test' not in parts[2:-1] and len(parts) >= 3:
        return 'backend'
    if parts[0] == 'tools':
        return 'tool'
    if parts[0] == 'include':
        return 'public'
    return None


def search_path(root, rel):
    """Where a quoted include of `rel` is looked for, after its own folder."""
    arch = [os.path.join('lib', 'arch', a) for a in sorted(os.listdir(os.path.join(root, 'lib', 'arch')))] \
        if os.path.isdir(os.path.join(root, 'lib', 'arch')) else []
    top = rel.split('/')[0]
    if top == 'lib':
        return ['lib', 'lib/os'] + arch + ['include']
    if top == 'devices':
        # lib/ itself is not on a backend's path; looking there too finds a
        # core header reached by some other route (a path, an extra -I).
        return ['lib/device', 'include', 'lib', 'lib/os']
    if top == 'tools':
        return ['lib', 'include']
    return ['include']


def resolve(root, rel, name):
    for d in [os.path.dirname(rel)] + search_path(root, rel):
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None   # generated (kernels_ptx.h, spin_spv.h) or a system header


def allowed(src, dst, src_rel, dst_rel):
    if dst == 'public' or dst is None:
        return True
    if src == 'base':
        return dst == 'base'
    if src == 'core':
        return dst in ('base', 'core')
    if src in LAYERS:
        return dst in ('base', 'core', src)
    if src == 'backend':
        own = '/'.join(src_rel.split('/')[:2])
        return dst_rel == 'lib/device/device.h' or dst_rel.startswith(own + '/')
    if src == 'tool':
        return dst in ('base', 'tool')
    return True


def sources(root):
    for top in ('lib', 'devices', 'tools'):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(('.c', '.h', '.cpp')):
                    yield os.path.relpath(os.path.join(d, f), root).replace(os.sep, '/')


def check(root):
    breaches = []
    graph = {}
    for rel in sources(root):
        with open(os.path.join(root, rel), encoding='utf-8', errors='replace') as fh:
            text = fh.read()
        src = layer_of(rel)
        for name in INCLUDE.findall(text):
            dst_rel = resolve(root, rel, name)
            if dst_rel is None:
                continue
            dst = layer_of(dst_rel)
            if rel == 'lib/device/device.h' and dst_rel.startswith('lib/'):
                breaches.append(f'{rel}: the backend interface includes "{name}" ({dst_rel})')
            elif not allowed(src, dst, rel, dst_rel):
                breaches.append(f'{rel} ({src}) includes "{name}" ({dst_rel}, {dst})')
            if rel.startswith('lib/') and rel.endswith('.h') and dst_rel.startswith('lib/'):
                graph.setdefault(rel, []).append(dst_rel)
    breaches += cycles(graph)
    return breaches


def cycles(graph):
    found, state = [], {}

    def visit(node, path):
        state[node] = 1
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                found.append('include cycle: ' + ' -> '.join(path[path.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def self_test():
    """Each planted breach is reported; the clean tree reports nothing."""
    files = {
        'include/timerlog/timerlog.h': '',
        'lib/internal.h': '#include "timerlog/timerlog.h"\n',
        'lib/log.h': '#include "internal.h"\n',
        'lib/log.c': '#include "log.h"\n',
        'lib/upcalls.h': '#include "internal.h"\n',
        'lib/arch/x86_64/clock_now.h': '',
        'lib/device/device.h': '#include "timerlog/timerlog.h"\n',
        'lib/device/device.c': '#include "device.h"\n#include "log.h"\n',
        'lib/stream/format.h': '#include "internal.h"\n',
        'lib/stream/writer.c': '#include "format.h"\n#include "log.h"\n',
        'devices/cuda/cuda.c': '#include "device.h"\n#include "timerlog/timerlog.h"\n',
        'tools/cli.c': '#include "timerlog/timerlog.h"\n#include "util.h"\n',
        'lib/util.h': '#include "internal.h"\n',
    }
    plants = {
        'core includes a stream header': ('lib/log.c', '#include "stream/format.h"\n'),
        'core includes a device header': ('lib/log.c', '#include "device/device.h"\n'),
        'a backend includes a core header': ('devices/cuda/cuda.c', '#include "log.h"\n'),
        'a layer includes another layer': ('lib/stream/writer.c', '#include "../device/device.h"\n'),
        'the backend interface includes lib/': ('lib/device/device.h', '#include "internal.h"\n'),
        'a tool includes the core': ('tools/cli.c', '#include "log.h"\n'),
        'a header cycle': ('lib/internal.h', '#include "log.h"\n'),
    }
    failures = 0
    for what, (path, line) in [(None, (None, None))] + list(plants.items()):
        with tempfile.TemporaryDirectory() as root:
            for rel, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
                with open(os.path.join(root, rel), 'w') as fh:
                    fh.write(text + (line if rel == path else ''))
            found = check(root)
            if (what is None) == bool(found):
                failures += 1
                print(f'self-test: {what or "clean tree"}: reported {found}')
    print(f'self-test: {len(plants) + 1 - failures} of {len(plants) + 1} cases as expected')
    return 1 if failures else 0


def main():
    if len(sys.argv) == 2 and sys.argv[1] == '--self-test':
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    breaches = check(sys.argv[1])
    for b in breaches:
        print(b)
    print(f'{len(breaches)} breach(es) of the layers')
    return 1 if breaches else 0


if __name__ == '__main__':
    sys.exit(main())
