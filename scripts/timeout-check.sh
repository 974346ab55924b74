#!/usr/bin/env bash
# How far past --timeout a batch runs: `curlpow pow --timeout T --mwm 20` (a search that cannot
# finish in time) on batches of 1, 500 and 5,000 distinct transactions; prints the time the
# searches ran as curlpow reports it ("timed out after ...", counted from the first search),
# and the whole process's wall time. Goal: within T + 20 ms for every batch size.
#   cargo build --release && bash scripts/timeout-check.sh [T=0.05] [BIN]
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-0.05}
bin=${2:-${CURLPOW_BIN:-target/release/curlpow}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "--timeout $t, MWM 20, $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load $(cut -d' ' -f1-3 /proc/loadavg)"
for n in 1 500 5000; do
    python3 - "$n" >"$tmp/txs" <<'PY'
import sys
base = open("examples/transaction.trytes").read().strip()
alpha = "9ABCDEFGHIJKLMNOPQRSTUVWXYZ"
for i in range(int(sys.argv[1])):
    tag = "".join(alpha[(i // 27 ** k) % 27] for k in range(3)) + "9" * 24
    print(base[:2592] + tag + base[2619:])
PY
    t0=$(date +%s%N)
    set +e
    "$bin" pow --quiet --backend cpu --mwm 20 --timeout "$t" "$tmp/txs" >/dev/null 2>"$tmp/err"
    rc=$?
    set -e
    t1=$(date +%s%N)
    said=$(grep -o 'timed out after [^:]*' "$tmp/err" | head -n 1)
    printf '%5d transactions: exit %d, %s; whole process %d ms\n' "$n" "$rc" "${said:-no timeout message}" $(((t1 - t0) / 1000000))
done
