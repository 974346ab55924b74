#!/usr/bin/env bash
# The test suite with every backend this machine can build: wgpu always (it links nothing),
# OpenCL when libOpenCL's development files are installed (apt-get install ocl-icd-opencl-dev),
# and the fault-injection test hook (CURLPOW_INJECT_FAULT) for the CLI's fault tests.
# GPU tests skip with a message when no driver answers, unless CURLPOW_REQUIRE_BACKENDS names
# the backend (CI sets CURLPOW_REQUIRE_BACKENDS=opencl,wgpu); every skip is listed at the end.
# The workspace's default members include the C library (ffi/dcurl, ffi/ccurl), whose tests
# compile and run C, Python and Java programs against the built libdcurl.so / libccurl.so
# (docs/c-api.md).
set -euo pipefail
cd "$(dirname "$0")/.."
# Mesa's Vulkan driver prints "XDG_RUNTIME_DIR is invalid" on every instance on a headless box;
# a private runtime folder keeps the test log readable (nothing is ever displayed).
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
    XDG_RUNTIME_DIR=$(mktemp -d)
    chmod 700 "$XDG_RUNTIME_DIR"
    export XDG_RUNTIME_DIR
fi
features="wgpu,curlpow/fault-injection"
if pkg-config --exists OpenCL 2>/dev/null || compgen -G "/usr/lib/*/libOpenCL.so" >/dev/null; then
    features="wgpu,opencl,curlpow/fault-injection"
else
    echo "note: libOpenCL.so not found: building without the opencl backend (apt-get install ocl-icd-opencl-dev)" >&2
fi
# libtest captures what a passing test prints, so each skip (testkit/src/skip.rs) is also
# appended to this file, and listed, with its reason, after cargo test's own summary.
skips=$(mktemp)
trap 'rm -f "$skips"' EXIT
export CURLPOW_SKIP_LOG="$skips"
status=0
cargo test --features "$features" "$@" || status=$?
echo
if [ -s "$skips" ]; then
    echo "skipped ($(sort -u "$skips" | wc -l)), each reported as ok above:"
    sort -u "$skips"
else
    echo "skipped: none"
fi
exit "$status"
