#!/usr/bin/env bash
# Measures the device-selection layer with the CLI: a batch of transactions on one device versus
# spread over several, and latency mode versus one device. Usage:
#   cargo build --release --all-features && bash scripts/selection-bench.sh [N] [MWM]
# Devices here are whatever `curlpow devices` lists with --software (CPU pool, PoCL, lavapipe).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${CURLPOW_BIN:-target/release/curlpow}
n=${1:-24}
mwm=${2:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# N distinct transactions: the example with a different tag (trits 7776..7857) each.
python3 - "$n" > "$tmp/txs" <<'PY'
import sys
base = open("examples/transaction.trytes").read().strip()
alpha = "9ABCDEFGHIJKLMNOPQRSTUVWXYZ"
for i in range(int(sys.argv[1])):
    tag = "".join(alpha[(i // 27 ** k) % 27] for k in range(3)) + "9" * 24
    print(base[:2592] + tag + base[2619:])
PY
run() {
    local label=$1; shift
    local t0 t1
    t0=$(date +%s.%N)
    "$bin" pow --quiet --mwm "$mwm" "$@" "$tmp/txs" > "$tmp/out"
    t1=$(date +%s.%N)
    "$bin" verify --mwm "$mwm" "$tmp/out" > /dev/null
    printf '%-44s %6.2f s  %5.1f tx/s\n' "$label" "$(echo "$t1 - $t0" | bc)" "$(echo "$n / ($t1 - $t0)" | bc -l)"
}
echo "batch of $n transactions at MWM $mwm ($(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2))"
"$bin" devices --software | sed 's/^/  device: /'
run "CPU pool only" --backend cpu
run "PoCL only" --device opencl:0:0 --software || true
run "lavapipe only" --device wgpu:0 --software || true
run "all devices (CPU + PoCL + lavapipe)" --software
run "all devices, latency mode" --software --latency
run "CPU pool, latency mode (one device)" --backend cpu --latency
