#!/usr/bin/env bash
# curlpow serve under a real load generator (wrk): attachToTangle requests per second and p50/p99
# latency at MWM 1 (server overhead) and MWM 9 and 14 (PoW-bound), with 1 and 32 concurrent
# clients, one transaction per request, the server's default limits; plus each device's busy
# share from /metrics. The figures in docs/server.md come from this script.
#
#   bash scripts/server-bench.sh [SECONDS_PER_RUN]      (default 20)
#
# Needs wrk (apt-get install wrk) and python3. CURLPOW=path picks the binary (default: a release
# build, made if missing); SERVE_ARGS adds options to `curlpow serve` (e.g. "--per-client 2").
# Compare with the library alone: cargo bench --bench attach.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
bin=${CURLPOW:-target/release/curlpow}
command -v wrk >/dev/null || { echo "server-bench: needs wrk (apt-get install wrk)" >&2; exit 2; }
if [ ! -x "$bin" ]; then
    cargo build --release --no-default-features --features cli
fi
tmp=$(mktemp -d)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

busy_seconds() {
    curl -s "http://$addr/metrics" | awk '/^curlpow_device_busy_seconds_total/ {s += $2} END {printf "%.6f", s}'
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $($bin --version)"
printf "%-4s %-7s %10s %10s %10s %8s %8s %s\n" mwm clients "req/s" p50 p99 non2xx busy% note
for mwm in ${MWMS:-1 9 14}; do
    python3 - "$mwm" > "$tmp/body.json" <<'PY'
import json, sys
tx = open("examples/transaction.trytes").read().strip()
print(json.dumps({"command": "attachToTangle", "trunkTransaction": "A" * 81,
                  "branchTransaction": "B" * 81, "minWeightMagnitude": int(sys.argv[1]),
                  "trytes": [tx]}))
PY
    for clients in ${CLIENTS:-1 32}; do
        # shellcheck disable=SC2086
        "$bin" serve --listen 127.0.0.1:0 --backend cpu --log warn ${SERVE_ARGS:-} 2> "$tmp/serve.err" &
        server_pid=$!
        addr=
        for _ in $(seq 100); do
            addr=$(grep -o 'listening on http://[0-9.:]*' "$tmp/serve.err" | sed 's#.*http://##' || true)
            [ -n "$addr" ] && break
            sleep 0.1
        done
        [ -n "$addr" ] || { cat "$tmp/serve.err" >&2; exit 1; }
        b0=$(busy_seconds)
        t0=$(date +%s.%N)
        CURLPOW_BENCH_BODY="$tmp/body.json" wrk -t "$(( clients < 2 ? 1 : 2 ))" -c "$clients" \
            -d "${secs}s" --timeout 300s --latency -s scripts/server-bench.lua "http://$addr/" > "$tmp/wrk.txt"
        t1=$(date +%s.%N)
        b1=$(busy_seconds)
        kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=
        rps=$(awk '/^Requests\/sec/ {print $2}' "$tmp/wrk.txt")
        p50=$(awk '$1 == "50%" {print $2}' "$tmp/wrk.txt")
        p99=$(awk '$1 == "99%" {print $2}' "$tmp/wrk.txt")
        bad=$(awk '/Non-2xx/ {print $NF}' "$tmp/wrk.txt"); bad=${bad:-0}
        busy=$(python3 -c "print(f'{100*($b1-$b0)/($t1-$t0):.1f}')")
        printf "%-4s %-7s %10s %10s %10s %8s %8s\n" "$mwm" "$clients" "$rps" "$p50" "$p99" "$bad" "$busy"
    done
done
