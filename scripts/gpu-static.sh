#!/usr/bin/env bash
# Static check of the OpenCL kernels for real GPUs, without a GPU. scripts/gpu_static.py does the
# work (`scripts/gpu-static.sh --help`; docs/gpu-kernels.md explains its model and holds its
# budgets); this name stays for CI, scripts/gpu-check.sh and the docs.
set -euo pipefail
exec python3 "$(dirname "$0")/gpu_static.py" "$@"
