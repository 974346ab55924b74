#!/usr/bin/env bash
# The test suite with every backend this machine can build: wgpu always (it links nothing),
# OpenCL when libOpenCL's development files are installed (apt-get install ocl-icd-opencl-dev),
# and the fault-injection test hook (CURLPOW_INJECT_FAULT) for the CLI's fault tests.
# GPU tests skip with a message when no driver answers, unless CURLPOW_REQUIRE_BACKENDS names
# the backend (CI sets CURLPOW_REQUIRE_BACKENDS=opencl,wgpu). The workspace's default members
# include the C library (ffi/dcurl, ffi/ccurl), whose tests compile and run C, Python and Java
# programs against the built libdcurl.so / libccurl.so (docs/c-api.md).
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
exec cargo test --features "$features" "$@"
