#!/usr/bin/env bash
# Builds one program against an installed libtimerlog found by pkg-config
# (PKG_CONFIG_PATH points at the installation), then runs it: consumer.c
# with `pkg-config --cflags --libs timerlog`, or a part's program
# (../parts/PART.c, which also calls the part's runtime itself) with
# timerlog-PART alone, as the guide shows. Each -L directory goes into the
# program's RPATH, so that it runs without LD_LIBRARY_PATH.
# Usage: build.sh OUTDIR [PART]
#   (PART: sim, cuda, hip, level_zero, opencl, vulkan, mpi)
set -eu
cd "$(dirname "$0")"
out=${1:?usage: build.sh OUTDIR [PART]}
part=${2:-}
if [ -z "$part" ]; then
    src=consumer.c module=timerlog exe="$out/consumer-pkgconfig"
else
    src=../parts/$part.c module=timerlog-${part//_/-} exe="$out/consumer-pkgconfig-$part"
fi
rpath=()
for dir in $(pkg-config --libs-only-L "$module"); do
    rpath+=("-Wl,-rpath,${dir#-L}")
done
cc -std=c11 -Wall -Wextra -Werror "$src" -o "$exe" \
    $(pkg-config --cflags --libs "$module") "${rpath[@]}"
"$exe"
