#!/usr/bin/env bash
# The C library's C tests (ffi/tests/{dcurl_c,native_c,ccurl_c,exports}.rs, modules of the
# c_api test binaries) with every C program run under valgrind's memcheck: invalid reads and
# writes, uses of freed memory and definite leaks fail the test (valgrind exits 99).
# docs/c-api.md records a run. Valgrind hides AVX-512 from the program, so the CPU search takes
# the AVX2 kernel. Slow: a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
features="wgpu"
if pkg-config --exists OpenCL 2>/dev/null || compgen -G "/usr/lib/*/libOpenCL.so" >/dev/null; then
    features="wgpu,opencl"
fi
export CURLPOW_C_TEST_WRAPPER="valgrind --error-exitcode=99 --leak-check=full \
--errors-for-leak-kinds=definite --show-leak-kinds=definite \
--suppressions=$PWD/ffi/tests/valgrind.supp"
exec cargo test --features "$features" --test c_api "$@" -- --test-threads=1 --nocapture \
    dcurl_c:: native_c:: ccurl_c:: exports::
