#!/usr/bin/env bash
# Builds the consumer against an installed libtimerlog found by pkg-config
# (PKG_CONFIG_PATH points at the installation), then runs it.
set -eu
cd "$(dirname "$0")"
out=${1:?usage: build.sh OUTDIR}
cc -std=c11 -Wall -Wextra -Werror consumer.c -o "$out/consumer-pkgconfig" \
    $(pkg-config --cflags --libs timerlog) \
    -Wl,-rpath,"$(pkg-config --variable=libdir timerlog)"
"$out/consumer-pkgconfig"
