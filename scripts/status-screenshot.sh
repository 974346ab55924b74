#!/usr/bin/env bash
# The screenshot of the status page in docs/server.md: `curlpow serve` on loopback (CPU pool, 2
# threads) under a load that changes every third of the run (3 clients at MWM 9, then 6 at MWM
# 11, then 2 at MWM 13, each client a curl loop of one-transaction attaches), then headless
# Chromium's --screenshot of GET /status.
#
#   bash scripts/status-screenshot.sh [SECONDS] [OUT.png]    (default 180, docs/status-page.png)
#
# Needs curl, python3 and chromium (apt-get install chromium). CURLPOW=path picks the binary
# (default: target/release/curlpow, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-180}
out=${2:-docs/status-page.png}
bin=${CURLPOW:-target/release/curlpow}
browser=${CHROMIUM:-chromium}
command -v "$browser" >/dev/null || { echo "status-screenshot: needs chromium (apt-get install chromium)" >&2; exit 2; }
if [ ! -x "$bin" ]; then
    cargo build --release --no-default-features --features cli
fi
tmp=$(mktemp -d)
server=
cleanup() {
    touch "$tmp/stop"     # the curl loops end after their current request
    wait $(jobs -p | grep -vx "${server:-none}") 2>/dev/null || true
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    wait || true
    rm -rf "$tmp"
}
trap cleanup EXIT

"$bin" serve --listen 127.0.0.1:0 --backend cpu --threads 2 --log warn 2> "$tmp/serve.err" &
server=$!
addr=
for _ in $(seq 100); do
    addr=$(grep -o 'listening on http://[0-9.:]*' "$tmp/serve.err" | sed 's#.*http://##' || true)
    [ -n "$addr" ] && break
    sleep 0.1
done
[ -n "$addr" ] || { cat "$tmp/serve.err" >&2; exit 1; }

for mwm in 9 11 13; do
    python3 - "$mwm" > "$tmp/body-$mwm.json" <<'PY'
import json, random, sys
random.seed(int(sys.argv[1]))
tx = "".join(random.choice("9ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(2673))
print(json.dumps({"command": "attachToTangle", "trunkTransaction": "A" * 81,
                  "branchTransaction": "B" * 81, "minWeightMagnitude": int(sys.argv[1]),
                  "trytes": [tx]}))
PY
done

# CLIENTS MWM SECONDS: that many curl loops for that long.
load() {
    local until=$(( $(date +%s) + $3 )) loops=()
    for _ in $(seq "$1"); do
        (while [ "$(date +%s)" -lt "$until" ] && [ ! -e "$tmp/stop" ]; do
            curl -s -o /dev/null -H 'X-IOTA-API-Version: 1' -H 'Content-Type: application/json' \
                --data-binary @"$tmp/body-$2.json" "http://$addr/" || sleep 0.2
        done) &
        loops+=($!)
    done
    wait "${loops[@]}"
}
third=$(( secs / 3 ))
load 3 9 "$third"
load 6 11 "$third"
load 2 13 "$(( secs - 2 * third ))" &
sleep 10   # the last phase running, so the page shows a busy device and a queue

profile="$tmp/chromium-profile"
mkdir -p "$profile"
"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --hide-scrollbars --window-size=1280,1060 \
    --virtual-time-budget=3000 --screenshot="$PWD/$out" "http://$addr/status" 2> "$tmp/chromium.err" \
    || { cat "$tmp/chromium.err" >&2; exit 1; }
echo "status-screenshot: $out ($(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
