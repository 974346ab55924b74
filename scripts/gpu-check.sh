#!/usr/bin/env bash
# GPU check for curlpow on a host with real GPUs (written for NVIDIA, e.g. an H200). The GPU host
# needs neither a Rust toolchain nor internet access: build on another x86-64 Linux machine, copy
# the repository with the prepared `target-carry/` folder to the GPU host, run this script from
# the repository root there, and bring back the folder it writes.
#
# What it does, in well under 8 minutes:
#   1. makes the carried OpenCL ICD loader and Vulkan loader (and libglvnd, which NVIDIA's
#      Vulkan driver library links) usable: unpacked into a temporary folder, never into /;
#      finds NVIDIA's OpenCL library and Vulkan ICD json in the driver's folders (searched, not
#      assumed), writes an OpenCL vendor .icd file and sets OCL_ICD_VENDORS / VK_ICD_FILENAMES;
#   2. `curlpow devices --json`;
#   3. for every GPU device (OpenCL and wgpu): a PoW at MWM 14 on the example transaction, piped
#      into `curlpow verify --mwm 14`, and `curlpow bench --json --seconds 5`;
#   4. for the OpenCL GPUs, the bench of each kernel variant (CURLPOW_OPENCL_KERNEL), to choose
#      the GPU default;
#   and writes every output under $OUT (or ./gpu-check-out when OUT is unset): summary.txt,
#   gpu-check.log, system.txt, devices.json, pow.txt, bench.jsonl (six small files), with the
#   summary table printed last.
#
# Prepare, on the build machine, from the repository root (x86-64 Linux):
#
#   cargo build --release --features opencl,wgpu
#   mkdir -p target-carry
#   cp "${CARGO_TARGET_DIR:-target}/release/curlpow" target-carry/
#   grep -qx '/target-carry/' .git/info/exclude || echo /target-carry/ >> .git/info/exclude
#   (cd target-carry && apt-get download ocl-icd-libopencl1 libvulkan1 libglvnd0)
#
# (If the build machine is not amd64, download with
#  `-oAPT::Architecture=amd64 -oAPT::Architectures=amd64` after an `apt-get update` with the
#  same options, and build the binary for x86_64-unknown-linux-gnu.)
#
# Run, on the GPU host, from the repository root: `OUT=/some/folder bash scripts/gpu-check.sh`.
#
# Without a GPU, `GPU_CHECK_SOFTWARE=1 bash scripts/gpu-check.sh` runs the same steps on the
# software drivers (PoCL, lavapipe) with the system loaders, to check the script itself.
#
# Environment: CURLPOW_BIN (default target-carry/curlpow), CARRY_DIR (default target-carry),
# GPU_CHECK_SOFTWARE=1 (also test CPU/software devices), GPU_CHECK_MWM (default 14),
# GPU_CHECK_BENCH_SECONDS (default 5).
set -u -o pipefail

START=$(date +%s)
ROOT=$(pwd)
CARRY_DIR=${CARRY_DIR:-$ROOT/target-carry}
BIN=${CURLPOW_BIN:-$CARRY_DIR/curlpow}
OUT=${OUT:-$ROOT/gpu-check-out}
MWM=${GPU_CHECK_MWM:-14}
SECS=${GPU_CHECK_BENCH_SECONDS:-5}
SOFTWARE=${GPU_CHECK_SOFTWARE:-0}
WORK=$(mktemp -d /tmp/curlpow-gpu-check.XXXXXX)
mkdir -p "$OUT"
LOG=$OUT/gpu-check.log
SUMMARY=$OUT/summary.txt
: >"$LOG"
: >"$SUMMARY"

log() { echo "[$(($(date +%s) - START))s] $*" | tee -a "$LOG" >&2; }
row() { echo "$*" >>"$SUMMARY"; }

# Overall budget: every step gets its own timeout and the script stops starting new steps
# past this many seconds.
BUDGET=${GPU_CHECK_BUDGET:-450}
left() { echo $((BUDGET - ($(date +%s) - START))); }

if [ ! -f "$BIN" ]; then
    log "no curlpow binary at $BIN (see the top of this script for how to prepare it)"
    exit 2
fi
if [ ! -x "$BIN" ]; then
    cp "$BIN" "$WORK/curlpow" && chmod +x "$WORK/curlpow" && BIN=$WORK/curlpow
fi

# --- 1. loaders ------------------------------------------------------------------------------
{
    echo "== uname"; uname -a
    echo "== nvidia-smi"; nvidia-smi 2>&1 || true
    echo "== ldconfig OpenCL/Vulkan"; ldconfig -p 2>/dev/null | grep -Ei 'libOpenCL|libvulkan|nvidia-opencl' || true
} >"$OUT/system.txt" 2>&1

LIBDIRS=()
shopt -s nullglob
debs=("$CARRY_DIR"/*.deb)
if [ ${#debs[@]} -gt 0 ]; then
    for deb in "${debs[@]}"; do
        dpkg-deb -x "$deb" "$WORK/root" && log "unpacked $(basename "$deb")"
    done
    for d in "$WORK"/root/usr/lib/x86_64-linux-gnu "$WORK"/root/usr/lib64 "$WORK"/root/usr/lib; do
        [ -d "$d" ] && LIBDIRS+=("$d")
    done
fi

# Driver folders to search (read-only mounts are fine: we only read).
SEARCH_DIRS=(/usr/local/nvidia /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib
    /usr/share/vulkan /etc/vulkan /usr/local/share/vulkan /etc/OpenCL /opt)
existing_dirs() { for d in "${SEARCH_DIRS[@]}"; do [ -d "$d" ] && echo "$d"; done; }

NV_OCL=$(find $(existing_dirs) -maxdepth 6 \( -name 'libnvidia-opencl.so.1' -o -name 'libnvidia-opencl.so.*' \) \
    2>/dev/null | sort | head -n 1)
NV_VK=$(find $(existing_dirs) -maxdepth 6 -name 'nvidia_icd*.json' 2>/dev/null | sort | head -n 1)
log "NVIDIA OpenCL library: ${NV_OCL:-none found}"
log "NVIDIA Vulkan ICD: ${NV_VK:-none found}"

if [ -n "$NV_OCL" ]; then
    mkdir -p "$WORK/vendors"
    echo "$NV_OCL" >"$WORK/vendors/nvidia.icd"
    # Keep any system vendors too (PoCL when testing locally).
    for f in /etc/OpenCL/vendors/*.icd; do cp "$f" "$WORK/vendors/" 2>/dev/null; done
    export OCL_ICD_VENDORS=$WORK/vendors
    LIBDIRS+=("$(dirname "$NV_OCL")")
fi
if [ -n "$NV_VK" ]; then
    export VK_ICD_FILENAMES=$NV_VK
    export VK_DRIVER_FILES=$NV_VK
    # The json may name the library without a path: make the driver's folder findable.
    NV_GLX=$(find $(existing_dirs) -maxdepth 6 -name 'libGLX_nvidia.so.0' 2>/dev/null | head -n 1)
    [ -n "$NV_GLX" ] && LIBDIRS+=("$(dirname "$NV_GLX")")
fi
if [ ${#LIBDIRS[@]} -gt 0 ]; then
    export LD_LIBRARY_PATH=$(IFS=:; echo "${LIBDIRS[*]}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
{
    echo "OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-}"
    echo "VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-}"
    echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
    [ -n "${OCL_ICD_VENDORS:-}" ] && cat "$OCL_ICD_VENDORS"/*.icd
} >>"$OUT/system.txt"

SW_FLAG=()
[ "$SOFTWARE" = 1 ] && SW_FLAG=(--software)

# --- 2. devices ------------------------------------------------------------------------------
log "curlpow devices --json"
if ! timeout 60 "$BIN" devices --json "${SW_FLAG[@]}" >"$OUT/devices.json" 2>"$WORK/devices.err"; then
    log "curlpow devices failed (exit $?)"
    # A binary that cannot start (exit 127: libOpenCL.so.1 missing) says so here.
    tee -a "$LOG" <"$WORK/devices.err" >&2
    ldd "$BIN" >>"$LOG" 2>&1
    exit 1
fi
cat "$WORK/devices.err" >>"$LOG"

# "backend id kind" per line, GPUs (and, with GPU_CHECK_SOFTWARE=1, CPU drivers of GPU APIs).
python3 - "$OUT/devices.json" "$SOFTWARE" >"$WORK/targets.txt" <<'EOF'
import json, sys
devs = json.load(open(sys.argv[1]))
if isinstance(devs, dict):
    devs = devs.get("devices", [])
soft = sys.argv[2] == "1"
for d in devs:
    d = d.get("info", d)
    b, kind, sw = d.get("backend"), d.get("kind"), d.get("software", False)
    if b in ("opencl", "wgpu") and ((not sw and kind in ("gpu", "accelerator")) or (soft and sw)):
        print(b, d["id"], kind, d.get("name", "").replace(" ", "_"))
EOF
log "targets: $(wc -l <"$WORK/targets.txt")"
cat "$WORK/targets.txt" | tee -a "$LOG" >&2

# The example transaction.
TX=$WORK/tx.trytes
if [ -f "$ROOT/examples/transaction.trytes" ]; then
    head -n 1 "$ROOT/examples/transaction.trytes" >"$TX"
else
    python3 -c 'import json;print(json.load(open("tests/vectors/pow_input_transactions.json"))["vectors"][0]["trytes"])' >"$TX"
fi

row "$(printf '%-8s %-12s %-14s %-8s %-8s %s' backend device kernel pow verify 'M nonces/s')"
safe() { echo "$1" | tr -c 'A-Za-z0-9._\n-' '_'; }

# --- 3. per device: PoW + verify, bench ------------------------------------------------------
while read -r backend id kind name; do
    [ "$(left)" -gt 30 ] || { log "budget spent; skipping $id"; continue; }
    tag=$(safe "$id")
    log "$id ($name, $kind): pow --mwm $MWM"
    t0=$(date +%s%N)
    timeout 120 "$BIN" pow --backend "$backend" --device "$id" "${SW_FLAG[@]}" --mwm "$MWM" --quiet --stats \
        <"$TX" >"$WORK/pow_$tag.trytes" 2>"$WORK/pow_$tag.err"
    prc=$?
    t1=$(date +%s%N)
    cat "$WORK/pow_$tag.err" >>"$LOG"
    timeout 30 "$BIN" verify --mwm "$MWM" <"$WORK/pow_$tag.trytes" >>"$LOG" 2>&1
    vrc=$?
    { echo "# $id pow exit $prc verify exit $vrc"; cat "$WORK/pow_$tag.trytes"; } >>"$OUT/pow.txt"
    pow=$([ $prc = 0 ] && echo "ok$(((t1 - t0) / 1000000))ms" || echo "exit$prc")
    ver=$([ $vrc = 0 ] && echo ok || echo "exit$vrc")
    log "$id: pow $pow, verify $ver"

    kernels=(default)
    [ "$backend" = opencl ] && kernels=(default u32 u64 u32-f5 u64-f5 u32-f1 u32:local u64x2)
    for k in "${kernels[@]}"; do
        [ "$(left)" -gt 20 ] || { log "budget spent; no more benches"; break; }
        ktag=$(safe "$k")
        if [ "$k" = default ]; then unset CURLPOW_OPENCL_KERNEL; else export CURLPOW_OPENCL_KERNEL=$k; fi
        tmo=$((SECS + 60)); [ "$tmo" -lt "$(left)" ] || tmo=$(left)
        timeout "$tmo" "$BIN" bench --backend "$backend" --device "$id" "${SW_FLAG[@]}" --json \
            --seconds "$SECS" >"$WORK/bench.json" 2>>"$LOG"
        brc=$?
        unset CURLPOW_OPENCL_KERNEL
        cat "$WORK/bench.json" >>"$OUT/bench.jsonl"
        rate=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    l=l.strip()
    if l: print("%.3f" % (json.loads(l)["nonces_per_second"]/1e6))' "$WORK/bench.json" 2>/dev/null | head -n 1)
        [ $brc = 0 ] || rate="exit$brc"
        log "$id kernel $k: ${rate:-?} M nonces/s"
        if [ "$k" = default ]; then
            row "$(printf '%-8s %-12s %-14s %-8s %-8s %s' "$backend" "$id" "$k" "$pow" "$ver" "${rate:-?}")"
        else
            row "$(printf '%-8s %-12s %-14s %-8s %-8s %s' "$backend" "$id" "$k" - - "${rate:-?}")"
        fi
    done
done <"$WORK/targets.txt"

log "done in $(($(date +%s) - START)) s"
echo
echo "== curlpow GPU check summary ($(date -u +%Y-%m-%dT%H:%MZ))"
cat "$SUMMARY"
