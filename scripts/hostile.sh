#!/usr/bin/env bash
# The generated bad-input campaign through the real `curlpow` binary (tests/cli/cli_hostile.rs):
# 12,000 generated inputs and option values, each with the exit code an independent oracle
# expects, then 50 MB inputs; it fails on any panic or crash, wrong exit code, output despite an
# error, bad PoW output, or a run over 100 MB of peak RSS, and prints the figures that
# docs/hardening.md records. The regular test run has 300 of these cases.
#
# Usage: scripts/hostile.sh [CASES]   (binary features: CURLPOW_HOSTILE_FEATURES, default: the
# default build, i.e. what `cargo install` ships)
set -euo pipefail
cd "$(dirname "$0")/.."
export CURLPOW_HOSTILE_CASES="${1:-12000}"
features=()
if [ -n "${CURLPOW_HOSTILE_FEATURES:-}" ]; then
    features=(--features "$CURLPOW_HOSTILE_FEATURES")
fi
exec cargo test "${features[@]}" --test cli -- --ignored --nocapture --test-threads 1 cli_hostile::
