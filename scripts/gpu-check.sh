#!/usr/bin/env bash
# Everything libtimerlog checks on a machine with an NVIDIA GPU, in one run:
# builds with the CUDA backend required, then runs
#  - the CUDA backend's tests (accuracy against the kernels' own clock, sync
#    scopes and the forced sync, graph capture left intact, a 10,000-frame
#    loop with a flat memory profile),
#  - the device behaviour suite on the GPU (the rules every backend keeps,
#    test/device_suite.c),
#  - bench_cuda (host cost of a device scope against two bare
#    cudaEventRecord calls, medians of 21 runs),
#  - the CUDA example, and the rest of the test suite where cmocka is present,
#  - the NVTX forwarder under Nsight Systems: the CUDA example captured with
#    TIMERLOG_NVTX=1, and its scopes looked for among the NVTX ranges (domain
#    "timerlog") in the report, where nsys is installed.
# Output goes to stdout and, when $OUT is set, to $OUT/gpu-check.log.
set -u
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-gpu}
log=${OUT:+$OUT/gpu-check.log}
exec > >(tee ${log:-/dev/null}) 2>&1

export PATH=$PATH:/usr/local/cuda/bin
echo "=== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
nvcc --version | tail -1
meson --version

echo "=== build"
rm -rf "$build"
meson setup "$build" -Dcuda=enabled -Dbuildtype=release >/dev/null || exit 1
ninja -C "$build" >/dev/null || exit 1

status=0
echo "=== CUDA backend tests"
"$build/devices/cuda/test_cuda" || status=1
echo "=== device behaviour suite on CUDA"
"$build/devices/cuda/suite_cuda" || status=1
echo "=== bench_cuda"
"$build/bench/bench_cuda" 21 || status=1
echo "=== bench_device (library share of a device scope)"
"$build/bench/bench_device" 21 || status=1
echo "=== examples/cuda_frames"
"$build/examples/cuda_frames" || status=1
echo "=== NVTX forwarding under Nsight Systems"
if command -v nsys >/dev/null; then
    rep=$(mktemp -d)/timerlog
    TIMERLOG_NVTX=1 nsys profile --trace=cuda,nvtx --force-overwrite=true -o "$rep" \
        "$build/examples/cuda_frames" >/dev/null || status=1
    nsys stats --report nvtx_sum --format csv "$rep.nsys-rep" >"$rep.csv" || status=1
    grep -E 'timerlog' "$rep.csv" | head -12
    # The example's scopes, as ranges of the timerlog domain.
    for scope in Frame Simulation Rendering; do
        grep -q "$scope" "$rep.csv" || { echo "no NVTX range for $scope"; status=1; }
    done
else
    echo "nsys not found: skipped"
fi
echo "=== meson test"
meson test -C "$build" --num-processes 8 --print-errorlogs | tail -12 || status=1
echo "=== gpu-check: $([ $status -eq 0 ] && echo passed || echo FAILED)"
exit $status
