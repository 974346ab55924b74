#!/usr/bin/env bash
# Compare the CPU search rate of two curlpow binaries on a noisy host: many short
# `curlpow bench` runs, A and B alternating, one thread each; prints each binary's best,
# 90th-percentile and median rate in M nonces/s. On a shared machine single runs of one binary
# can differ by 2x, and interference only ever slows a run down, so compare the best and p90
# figures, never one run against another.
#
#   scripts/bench-ab.sh OLD_BINARY NEW_BINARY [RUNS] [SECONDS] [-- extra bench flags]
#   scripts/bench-ab.sh /tmp/curlpow-old target/release/curlpow 30 0.5 -- --kernel avx2
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
a=$1
b=$2
shift 2
runs=30
seconds=0.5
if [ $# -gt 0 ] && [ "$1" != "--" ]; then runs=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" != "--" ]; then seconds=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" = "--" ]; then shift; fi
for bin in "$a" "$b"; do
    [ -x "$bin" ] || { echo "not an executable: $bin" >&2; exit 2; }
done
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for _ in $(seq "$runs"); do
    for bin in "$a" "$b"; do
        rate=$("$bin" bench --backend cpu --threads 1 --seconds "$seconds" --json "$@" |
            python3 -c 'import json, sys
for line in sys.stdin:
    if line.startswith("{"):
        print(json.loads(line)["nonces_per_second"] / 1e6)')
        [ -n "$rate" ] || { echo "$bin bench printed no rate" >&2; exit 1; }
        echo "$bin $rate" >>"$results"
    done
done
python3 - "$results" "$a" "$b" <<'EOF'
import sys
path, names = sys.argv[1], sys.argv[2:]
rates = {n: [] for n in names}
for line in open(path):
    name, rate = line.rsplit(" ", 1)
    rates[name].append(float(rate))
for name in names:
    v = sorted(rates[name])
    print(f"{name}: best {v[-1]:.3f}  p90 {v[max(0, int(len(v) * 0.9) - 1)]:.3f}  "
          f"median {v[len(v) // 2]:.3f}  M nonces/s ({len(v)} runs)")
EOF
