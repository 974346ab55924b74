#!/usr/bin/env bash
# curlpow on your GPUs: does every GPU device give valid PoW, how fast is it, which kernel
# variant and launch shape suit it, and how long does one PoW take. Written for NVIDIA (an H100
# or H200, say) and usable on any OpenCL or Vulkan GPU. It only reads the system: drivers and
# loaders are found where they are, nothing is installed into /.
#
# Usage
#   On a build machine (x86-64 Linux with Rust and apt), from the repository root:
#       bash scripts/gpu-check.sh prepare
#   builds `curlpow` and the GPU test binaries (`--features opencl,wgpu`, release profile;
#   GPU_CHECK_PROFILE=test builds the faster-to-build test profile, the kernels run on the device
#   either way), stripped, into target-carry/, with the OpenCL ICD loader, Vulkan loader and
#   libglvnd packages (`apt-get download ocl-icd-libopencl1 libvulkan1 libglvnd0`) and the static
#   model of the kernels (scripts/gpu-static.sh, when its compilers are installed). The GPU host
#   then needs no Rust toolchain and no network. On a build machine that is not amd64, download
#   with `-oAPT::Architecture=amd64 -oAPT::Architectures=amd64` and build for
#   x86_64-unknown-linux-gnu.
#
#   On the GPU host, from the repository root (with target-carry/ copied along):
#       OUT=/some/folder bash scripts/gpu-check.sh
#   It takes a few minutes and stops itself at GPU_CHECK_BUDGET seconds (default 450), so a hung
#   driver cannot keep it running; a step that would start too late is reported as skipped.
#
#   Without a GPU, GPU_CHECK_SOFTWARE=1 runs the same steps, shorter, on PoCL and lavapipe: a
#   check of the script, not of any GPU.
#
# What it runs, in order
#   1. the loaders: the carried OpenCL and Vulkan loaders unpacked into a temporary folder;
#      NVIDIA's OpenCL library and Vulkan ICD file are searched for in the driver's folders, and
#      OCL_ICD_VENDORS / VK_ICD_FILENAMES point at them (system.txt has what was found);
#      then `curlpow tune` (GPU_CHECK_TUNE_SECONDS per device, default 10): every kernel variant
#      timed and verified, the fastest recorded in the tuner's cache, which every later step
#      starts from;
#   2. `curlpow devices --json`: every device found, with its kernel and launch estimate;
#   3. `curlpow devices --json --prepare` twice, with fresh driver caches (POCL_CACHE_DIR,
#      CUDA_CACHE_PATH, MESA_SHADER_CACHE_DIR, __GL_SHADER_DISK_CACHE_PATH) and then warm: cold
#      and cached kernel build times; NVIDIA builds with -cl-nv-verbose, so build-logs.txt has
#      registers and spills;
#   4. per GPU device: a PoW at MWM 14 (GPU_CHECK_MWM) piped into `curlpow verify`, and
#      `curlpow bench --json` with the launch size and length the sizer settled on;
#   5. a sweep of launch sizes (multiples of the device's wave estimate,
#      CURLPOW_GPU_LAUNCH_ITEMS) by lengths (transforms per state, CURLPOW_GPU_LAUNCH_ITERS);
#   6. a sweep of kernel variants at saturation (OpenCL: CURLPOW_OPENCL_KERNEL; wgpu:
#      CURLPOW_WGPU_TUNING fuse and CURLPOW_WGPU_LANES);
#   7. 50 warm PoWs at MWM 14 per device (`curlpow bench --latency-pows 50 --mwm 14`);
#   8. the carried GPU test binaries with CURLPOW_REQUIRE_BACKENDS=opencl,wgpu.
#
# What it prints, and how to read it
#   The summary (printed last, kept as summary.txt) has one block per step:
#   - tune vs model: each variant's measured M nonces/s beside the static model's bound for the
#     card's architecture (docs/gpu-kernels.md); a measured rate far below the bound means the
#     model misses a limit, one above it means a cache held what the model counts as DRAM;
#   - builds: cold and cached build times, the first launch, registers, spills, private and local
#     memory per work-item, and the wave estimate. Spills or a large private size mean the state
#     lives in device memory;
#   - PoW and default bench: "ok" with the PoW's time and "ok" from verify on every device, then
#     the rate and the launch the sizer chose. Anything but ok/ok is a failure to report;
#   - launch sweep: M nonces/s per size x length. The rate should flatten once the grid fills a
#     wave; the adapted launch of step 4 should sit on that plateau;
#   - variants: M nonces/s, the estimated bytes of memory traffic per nonce, and the bandwidth the
#     two imply. An implied bandwidth near the card's memory bandwidth means that variant is
#     memory-bound; the fastest variant is the one to keep (the tuner's choice);
#   - latency: median / p90 (mean) in ms of a whole PoW, split into the host's mid-state, the
#     device search, the device's launch time up to the hit, read-back and host turnarounds, the
#     drain of the launch queued behind the hit, and the host check;
#   - tests: each GPU test binary's exit status and result line.
#   Files under $OUT (default ./gpu-check-out): summary.txt, gpu-check.log (every step, timed),
#   system.txt, tune.jsonl, tune-vs-model.txt, devices.json, build_cold.json, build_cached.json,
#   build-logs.txt, pow.txt, bench.jsonl, sweep.jsonl, variants.jsonl, latency.jsonl, tests.txt.
#
# Environment: CURLPOW_BIN (default target-carry/curlpow), CARRY_DIR (default target-carry),
# GPU_CHECK_SOFTWARE=1 (the software drivers too), GPU_CHECK_MWM (default 14),
# GPU_CHECK_BENCH_SECONDS (default 5; 2 with GPU_CHECK_SOFTWARE), GPU_CHECK_SWEEP_SECONDS
# (default 2; 1), GPU_CHECK_LATENCY_POWS (default 50; 10), GPU_CHECK_LATENCY_MWM (default 14;
# 8), GPU_CHECK_TUNE_SECONDS (default 10), GPU_CHECK_BUDGET (seconds, default 450),
# GPU_CHECK_TESTS=0 (skip step 8).
set -u -o pipefail

ROOT=$(pwd)
CARRY_DIR=${CARRY_DIR:-$ROOT/target-carry}

if [ "${1:-}" = prepare ]; then
    set -e
    profile=${GPU_CHECK_PROFILE:-release}
    build=(--release)
    test=(--release)
    if [ "$profile" = test ]; then build=(--profile test); test=(); fi
    mkdir -p "$CARRY_DIR/tests"
    cargo build "${build[@]}" --features opencl,wgpu
    dir=${CARGO_TARGET_DIR:-target}/$([ "$profile" = test ] && echo debug || echo release)
    cp "$dir/curlpow" "$CARRY_DIR/"
    # The static model's figures for the tuner's table (skipped without the GPU compilers).
    CURLPOW="$CARRY_DIR/curlpow" bash scripts/gpu-static.sh >"$CARRY_DIR/gpu-static.jsonl" ||
        echo "gpu-static.sh did not run (see above); the tuner's table will have no model column"
    cargo test "${test[@]}" --no-run --features opencl,wgpu --test gpu \
        --message-format=json 2>/dev/null | python3 -c '
import json, shutil, sys
dest = sys.argv[1]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    exe = m.get("executable")
    if m.get("reason") == "compiler-artifact" and exe and m["target"]["kind"] == ["test"]:
        shutil.copy(exe, dest + "/" + m["target"]["name"])
        print("carried", m["target"]["name"], exe)
' "$CARRY_DIR/tests"
    # Debug info is most of the size (130 MB a binary); the carried folder should stay small.
    if command -v strip >/dev/null; then
        strip --strip-debug "$CARRY_DIR/curlpow" "$CARRY_DIR"/tests/* || true
    fi
    exclude=$(git rev-parse --git-path info/exclude)
    mkdir -p "$(dirname "$exclude")"
    grep -qx '/target-carry/' "$exclude" 2>/dev/null || echo /target-carry/ >>"$exclude"
    (cd "$CARRY_DIR" && apt-get download ocl-icd-libopencl1 libvulkan1 libglvnd0) ||
        echo "note: apt-get download failed; the GPU host must have the loaders installed" >&2
    ls -la "$CARRY_DIR" "$CARRY_DIR/tests"
    exit 0
fi

START=$(date +%s)
BIN=${CURLPOW_BIN:-$CARRY_DIR/curlpow}
OUT=${OUT:-$ROOT/gpu-check-out}
SOFTWARE=${GPU_CHECK_SOFTWARE:-0}
if [ "$SOFTWARE" = 1 ]; then d_secs=2 d_sweep=1 d_pows=10 d_lmwm=8; else d_secs=5 d_sweep=2 d_pows=50 d_lmwm=14; fi
MWM=${GPU_CHECK_MWM:-14}
SECS=${GPU_CHECK_BENCH_SECONDS:-$d_secs}
SWEEP_SECS=${GPU_CHECK_SWEEP_SECONDS:-$d_sweep}
POWS=${GPU_CHECK_LATENCY_POWS:-$d_pows}
LMWM=${GPU_CHECK_LATENCY_MWM:-$d_lmwm}
BUDGET=${GPU_CHECK_BUDGET:-450}
WORK=$(mktemp -d /tmp/curlpow-gpu-check.XXXXXX)
mkdir -p "$OUT"
LOG=$OUT/gpu-check.log
SUMMARY=$OUT/summary.txt
: >"$LOG"
: >"$SUMMARY"
for f in pow.txt bench.jsonl sweep.jsonl variants.jsonl latency.jsonl tests.txt build-logs.txt; do
    : >"$OUT/$f"
done

log() { echo "[$(($(date +%s) - START))s] $*" | tee -a "$LOG" >&2; }
row() { echo "$*" >>"$SUMMARY"; }
# Seconds left before GPU_CHECK_BUDGET; every step checks it and gets its own timeout.
left() { echo $((BUDGET - ($(date +%s) - START))); }
tmo() { local t=$1 l; l=$(left); [ "$t" -lt "$l" ] && echo "$t" || echo $((l > 1 ? l : 1)); }
safe() { echo "$1" | tr -c 'A-Za-z0-9._\n-' '_'; }
# A field of a one-line JSON file (python expression on `j`), or "?".
jget() { python3 -c 'import json,sys
try:
    j=json.loads(open(sys.argv[1]).readline()); print(eval(sys.argv[2]))
except Exception: print("?")' "$1" "$2" 2>/dev/null; }

if [ ! -f "$BIN" ]; then
    log "no curlpow binary at $BIN (run 'bash scripts/gpu-check.sh prepare' on the build machine)"
    exit 2
fi
if [ ! -x "$BIN" ]; then
    cp "$BIN" "$WORK/curlpow" && chmod +x "$WORK/curlpow" && BIN=$WORK/curlpow
fi
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$WORK/xdg}
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

# --- 1. loaders ------------------------------------------------------------------------------
{
    echo "== uname"; uname -a
    echo "== nvidia-smi"; nvidia-smi 2>&1 || true
    echo "== ldconfig OpenCL/Vulkan"; ldconfig -p 2>/dev/null | grep -Ei 'libOpenCL|libvulkan|nvidia-opencl' || true
    echo "== load"; uptime
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

# --- 1b. the tuner, beside the static model ---------------------------------------------------
# `curlpow tune` first (it records each device's fastest verified variant in the tuner's cache,
# which every later step starts from), then its table with the static model's bound
# (scripts/gpu-static.sh, run on the build machine by `prepare` or here when the compilers are
# installed) for the architecture the device's name implies.
TUNE_SECONDS=${GPU_CHECK_TUNE_SECONDS:-10}
log "curlpow tune --json --seconds $TUNE_SECONDS"
timeout "$(tmo $((TUNE_SECONDS * 4 + 60)))" "$BIN" tune --json --seconds "$TUNE_SECONDS" "${SW_FLAG[@]}" \
    >"$OUT/tune.jsonl" 2>>"$LOG" || log "curlpow tune failed (exit $?)"
STATIC=$CARRY_DIR/gpu-static.jsonl
if [ ! -s "$STATIC" ]; then
    STATIC=$WORK/gpu-static.jsonl
    CURLPOW="$BIN" timeout "$(tmo 300)" bash "$ROOT/scripts/gpu-static.sh" >"$STATIC" 2>>"$LOG" || true
fi
python3 - "$OUT/tune.jsonl" "$STATIC" <<'EOF' | tee "$OUT/tune-vs-model.txt" | tee -a "$SUMMARY" >&2
import json, sys
trials = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
try:
    model = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
except OSError:
    model = []
def arch(name):
    n = name.upper()
    for key, a in (("H100", "sm_90"), ("H200", "sm_90"), ("GH200", "sm_90"), ("A100", "sm_80"),
                   ("A30", "sm_80"), ("L40", "sm_89"), ("L4", "sm_89"), ("RTX 40", "sm_89"),
                   ("MI300", "gfx942"), ("MI2", "gfx90a"), ("7900", "gfx1100")):
        if key in n:
            return a
    return None
bound = {(m["variant"], m["arch"]): m for m in model if "bound_nonces_per_s" in m}
print(f"{'device':<12} {'variant':<12} {'measured M/s':>13} {'model M/s':>10} {'arch':<8} limiter")
for t in trials:
    a = arch(t.get("device", ""))
    m = bound.get((t["variant"], a)) if t.get("device_id", "").startswith("opencl") else None
    mb = f"{m['bound_nonces_per_s'] / 1e6:10.0f}" if m else f"{'-':>10}"
    print(f"{t['device_id']:<12} {t['variant']:<12} {t['nonces_per_second'] / 1e6:13.3f} {mb} "
          f"{a or '-':<8} {m['limiter'] if m else ''}{'  chosen' if t.get('chosen') else ''}"
          f"{'  (' + t['error'] + ')' if t.get('error') else ''}")
EOF

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

# "backend id kind name wave" per line: GPUs (and, with GPU_CHECK_SOFTWARE=1, CPU drivers of
# GPU APIs); wave = the device's wave estimate (details.launch.wave_items).
targets() {
    python3 - "$1" "$SOFTWARE" <<'EOF'
import json, sys
devs = json.load(open(sys.argv[1]))
if isinstance(devs, dict):
    devs = devs.get("devices", [])
soft = sys.argv[2] == "1"
for d in devs:
    d = d.get("info", d)
    b, kind, sw = d.get("backend"), d.get("kind"), d.get("software", False)
    if b in ("opencl", "wgpu") and ((not sw and kind in ("gpu", "accelerator")) or (soft and sw)):
        wave = (d.get("details", {}).get("launch") or {}).get("wave_items") or 0
        print(b, d["id"], kind, d.get("name", "").replace(" ", "_"), wave)
EOF
}
targets "$OUT/devices.json" >"$WORK/targets.txt"
log "targets: $(wc -l <"$WORK/targets.txt")"
tee -a "$LOG" <"$WORK/targets.txt" >&2

# The example transaction.
TX=$WORK/tx.trytes
if [ -f "$ROOT/examples/transaction.trytes" ]; then
    head -n 1 "$ROOT/examples/transaction.trytes" >"$TX"
else
    python3 -c 'import json;print(json.load(open("tests/vectors/pow_input_transactions.json"))["vectors"][0]["trytes"])' >"$TX"
fi

# --- 3. cold and cached builds ---------------------------------------------------------------
CACHE=$WORK/driver-cache
mkdir -p "$CACHE/pocl" "$CACHE/cuda" "$CACHE/mesa" "$CACHE/gl"
for pass in cold cached; do
    log "curlpow devices --json --prepare ($pass driver caches)"
    POCL_CACHE_DIR=$CACHE/pocl CUDA_CACHE_PATH=$CACHE/cuda MESA_SHADER_CACHE_DIR=$CACHE/mesa \
        __GL_SHADER_DISK_CACHE_PATH=$CACHE/gl \
        timeout "$(tmo 240)" "$BIN" devices --json --prepare "${SW_FLAG[@]}" \
        >"$OUT/build_$pass.json" 2>>"$LOG" || log "devices --prepare ($pass) failed (exit $?)"
done
python3 - "$OUT/build_cold.json" "$OUT/build_cached.json" "$WORK/targets.txt" \
    "$OUT/build-logs.txt" >"$WORK/builds.txt" <<'EOF'
import json, sys
def load(p):
    try:
        return {d["id"]: d for d in json.load(open(p))}
    except Exception:
        return {}
cold, cached = load(sys.argv[1]), load(sys.argv[2])
ids = [l.split()[1] for l in open(sys.argv[3]) if l.strip()]
logs = open(sys.argv[4], "w")
def f(x):
    return "-" if x is None else "%.0f" % x
for i in ids:
    lc = (cold.get(i, {}).get("details", {}) or {}).get("launch") or {}
    lw = (cached.get(i, {}).get("details", {}) or {}).get("launch") or {}
    c = lc.get("compiler") or {}
    bound = " (%s-bound)" % c["occupancy_limit"] if c.get("occupancy_limit") else ""
    print("%-12s %-10s build cold %6s / cached %6s ms; first launch cold %5s / cached %5s ms; registers %s, spill st/ld %s/%s B, stack %s B, private %s B, local %s B; wave %s items%s" % (
        i, cold.get(i, {}).get("kernel", "?"), f(lc.get("build_ms")), f(lw.get("build_ms")),
        f(lc.get("first_launch_ms")), f(lw.get("first_launch_ms")), c.get("registers", "-"),
        c.get("spill_store_bytes", "-"), c.get("spill_load_bytes", "-"), c.get("stack_frame_bytes", "-"),
        c.get("private_mem_bytes", "-"), c.get("local_mem_bytes", "-"), lw.get("wave_items", "-"), bound))
    logs.write("== %s (%s) build options: %s\n%s\n\n" % (i, cold.get(i, {}).get("kernel", "?"),
        c.get("build_options", "-"), c.get("build_log", "") or "(empty log)"))
EOF
row "== builds (cold: empty driver caches; cached: the second build)"
cat "$WORK/builds.txt" >>"$SUMMARY"
row ""

# --- 4. per device: PoW + verify, default bench ----------------------------------------------
row "== PoW at MWM $MWM and default bench (${SECS} s)"
row "$(printf '%-8s %-12s %-10s %-10s %-7s %9s  %s' backend device kernel pow verify 'M nonces/s' 'adapted launch')"
while read -r backend id kind name wave; do
    [ "$(left)" -gt 30 ] || { log "time limit (GPU_CHECK_BUDGET) reached: skipping $id"; continue; }
    tag=$(safe "$id")
    log "$id ($name, $kind): pow --mwm $MWM"
    t0=$(date +%s%N)
    timeout "$(tmo 120)" "$BIN" pow --backend "$backend" --device "$id" "${SW_FLAG[@]}" --mwm "$MWM" --quiet --stats \
        <"$TX" >"$WORK/pow_$tag.trytes" 2>"$WORK/pow_$tag.err"
    prc=$?
    t1=$(date +%s%N)
    cat "$WORK/pow_$tag.err" >>"$LOG"
    timeout 30 "$BIN" verify --mwm "$MWM" <"$WORK/pow_$tag.trytes" >>"$LOG" 2>&1
    vrc=$?
    { echo "# $id pow exit $prc verify exit $vrc"; cat "$WORK/pow_$tag.trytes"; } >>"$OUT/pow.txt"
    pow=$([ $prc = 0 ] && echo "ok$(((t1 - t0) / 1000000))ms" || echo "exit$prc")
    ver=$([ $vrc = 0 ] && echo ok || echo "exit$vrc")
    timeout "$(tmo $((SECS + 60)))" "$BIN" bench --backend "$backend" --device "$id" "${SW_FLAG[@]}" --json \
        --seconds "$SECS" >"$WORK/bench.json" 2>>"$LOG"
    brc=$?
    cat "$WORK/bench.json" >>"$OUT/bench.jsonl"
    rate=$(jget "$WORK/bench.json" '"%.3f" % (j["nonces_per_second"]/1e6)')
    shape=$(jget "$WORK/bench.json" '"%d items x %d transforms (%s, wave %d, best %.3f M/s)" % (j["launch"]["items"], j["launch"]["transforms_per_item"], j["launch"]["sizing"], j["launch"]["wave_items"], (j["launch"]["best_nonces_per_second"] or 0)/1e6)')
    kern=$(jget "$WORK/bench.json" 'j["kernel"]')
    [ $brc = 0 ] || rate="exit$brc"
    log "$id: pow $pow, verify $ver, bench $rate M/s, $shape"
    row "$(printf '%-8s %-12s %-10s %-10s %-7s %9s  %s' "$backend" "$id" "$kern" "$pow" "$ver" "$rate" "$shape")"
done <"$WORK/targets.txt"
row ""

# --- 5. launch size x length sweep -----------------------------------------------------------
if [ "$SOFTWARE" = 1 ]; then mults=(1 4); iters=(1 4); else mults=(0.5 1 2 4); iters=(1 2 4 8); fi
row "== launch sweep: M nonces/s (${SWEEP_SECS} s each; items = wave x multiple, forced by CURLPOW_GPU_LAUNCH_ITEMS/ITERS)"
while read -r backend id kind name wave; do
    [ "$wave" -gt 0 ] 2>/dev/null || wave=1024
    header="$(printf '%-12s %-16s' "$id" 'items \ iters')"
    for it in "${iters[@]}"; do header+="$(printf ' %9s' "$it")"; done
    row "$header"
    for mu in "${mults[@]}"; do
        items=$(python3 -c "print(max(1, int($wave * $mu)))")
        line="$(printf '%-12s %-16s' "" "$items (x$mu)")"
        for it in "${iters[@]}"; do
            if [ "$(left)" -le 20 ]; then line+="$(printf ' %9s' skip)"; continue; fi
            CURLPOW_GPU_LAUNCH_ITEMS=$items CURLPOW_GPU_LAUNCH_ITERS=$it \
                timeout "$(tmo $((SWEEP_SECS + 30)))" "$BIN" bench --backend "$backend" --device "$id" \
                "${SW_FLAG[@]}" --json --seconds "$SWEEP_SECS" >"$WORK/sweep.json" 2>>"$LOG"
            src=$?
            cat "$WORK/sweep.json" >>"$OUT/sweep.jsonl"
            r=$(jget "$WORK/sweep.json" '"%.3f" % (j["nonces_per_second"]/1e6)')
            [ $src = 0 ] || r="exit$src"
            line+="$(printf ' %9s' "$r")"
        done
        row "$line"
        log "sweep $id: $line"
    done
done <"$WORK/targets.txt"
row ""

# --- 6. variant sweep at saturation ----------------------------------------------------------
row "== kernel variants at saturation (${SECS} s each): M nonces/s, estimated bytes/nonce, implied GB/s"
row "$(printf '%-12s %-22s %10s %12s %9s  %s' device variant 'M/s' 'bytes/nonce' 'GB/s' 'launch')"
while read -r backend id kind name wave; do
    if [ "$backend" = opencl ]; then
        # The hardware defaults first (NVIDIA, then AMD and others), so a short budget still
        # measures them.
        variants=(u32-f4:coop u32:coop64 u32:coop u64 u32 u64-f5 u32-f5 u64-p u64-f5-p u32-f5-p4 u32:local u64x2 u64-f1)
        [ "$SOFTWARE" = 1 ] && variants=(u64x8 u64x8-p u64 u32:coop u32-f4:coop)
    else
        # coop=32 / coop=64: the workgroup-memory kernel (the default on discrete GPUs).
        variants=(coop=32 coop=64 fuse=5 fuse=3 fuse=1 fuse=5/32 fuse=3/32 fuse=5,workgroup=128)
        [ "$SOFTWARE" = 1 ] && variants=(fuse=3 fuse=5 fuse=3/32)
    fi
    for v in "${variants[@]}"; do
        [ "$(left)" -gt 20 ] || { log "time limit (GPU_CHECK_BUDGET) reached: no more variants"; break; }
        envs=()
        if [ "$backend" = opencl ]; then
            envs=(CURLPOW_OPENCL_KERNEL="$v")
        else
            envs=(CURLPOW_WGPU_TUNING="${v%/32}")
            [ "${v%/32}" != "$v" ] && envs+=(CURLPOW_WGPU_LANES=32)
        fi
        env "${envs[@]}" timeout "$(tmo $((SECS + 90)))" "$BIN" bench --backend "$backend" --device "$id" \
            "${SW_FLAG[@]}" --json --seconds "$SECS" >"$WORK/variant.json" 2>>"$LOG"
        vrc=$?
        cat "$WORK/variant.json" >>"$OUT/variants.jsonl"
        r=$(jget "$WORK/variant.json" '"%.3f %12.0f %9.1f" % (j["nonces_per_second"]/1e6, j["launch"]["bytes_per_nonce"], j["nonces_per_second"]*j["launch"]["bytes_per_nonce"]/1e9)')
        shape=$(jget "$WORK/variant.json" '"%s: %d x %d, %s" % (j["kernel"], j["launch"]["items"], j["launch"]["transforms_per_item"], j["launch"]["traffic"])')
        [ $vrc = 0 ] || { r="exit$vrc"; shape=""; }
        row "$(printf '%-12s %-22s %s  %s' "$id" "$v" "$r" "$shape")"
        log "variant $id $v: $r $shape"
    done
done <"$WORK/targets.txt"
row ""

# --- 7. latency of warm PoWs -----------------------------------------------------------------
row "== $POWS warm PoWs at MWM $LMWM per device: ms, median / p90 (mean)"
row "$(printf '%-12s %-18s %-18s %-18s %-18s %-18s %-18s %-18s' device total mid-state search 'launches(dev)' 'read-back+host' drain verify)"
while read -r backend id kind name wave; do
    [ "$(left)" -gt 20 ] || { log "time limit (GPU_CHECK_BUDGET) reached: no latency for $id"; continue; }
    log "$id: $POWS PoWs at MWM $LMWM"
    timeout "$(tmo 180)" "$BIN" bench --backend "$backend" --device "$id" "${SW_FLAG[@]}" \
        --latency-pows "$POWS" --mwm "$LMWM" >"$WORK/latency.json" 2>>"$LOG"
    lrc=$?
    cat "$WORK/latency.json" >>"$OUT/latency.jsonl"
    r=$(jget "$WORK/latency.json" '" ".join("%-18s" % ("-" if j.get(k) is None else "%.2f/%.2f (%.2f)" % (j[k]["median"], j[k]["p90"], j[k]["mean"])) for k in ("total","mid_state","search","launches","read_back","drain","verify"))')
    [ $lrc = 0 ] || r="exit$lrc"
    row "$(printf '%-12s %s' "$id" "$r")"
    log "latency $id: $r"
done <"$WORK/targets.txt"
row ""

# --- 8. the GPU tests ------------------------------------------------------------------------
row "== GPU test binaries (CURLPOW_REQUIRE_BACKENDS=opencl,wgpu)"
tests=("$CARRY_DIR"/tests/*)
if [ "${GPU_CHECK_TESTS:-1}" = 0 ]; then
    row "skipped (GPU_CHECK_TESTS=0)"
elif [ ${#tests[@]} -eq 0 ]; then
    row "no test binaries in $CARRY_DIR/tests (build them with 'bash scripts/gpu-check.sh prepare')"
else
    for t in "${tests[@]}"; do
        [ "$(left)" -gt 20 ] || { row "$(basename "$t"): skipped, time limit (GPU_CHECK_BUDGET) reached"; continue; }
        [ -x "$t" ] || { cp "$t" "$WORK/$(basename "$t")" && chmod +x "$WORK/$(basename "$t")" && t=$WORK/$(basename "$t"); }
        log "test binary $(basename "$t")"
        CURLPOW_REQUIRE_BACKENDS=opencl,wgpu CURLPOW_TEST_ROOT=$ROOT \
            timeout "$(tmo 480)" "$t" --test-threads=2 >"$WORK/test.out" 2>&1
        trc=$?
        { echo "== $(basename "$t") exit $trc"; cat "$WORK/test.out"; } >>"$OUT/tests.txt"
        res=$(grep -E '^test result:' "$WORK/test.out" | tail -n 1)
        row "$(printf '%-10s exit %-3s %s' "$(basename "$t")" "$trc" "${res:-no result line}")"
        grep -E '^test .* FAILED|^failures:' "$WORK/test.out" | head -n 10 >>"$SUMMARY"
    done
fi

log "done in $(($(date +%s) - START)) s"
row ""
row "done in $(($(date +%s) - START)) s; load: $(uptime | sed 's/.*load average/load average/')"
echo
echo "== curlpow GPU check summary ($(date -u +%Y-%m-%dT%H:%MZ))"
cat "$SUMMARY"
