#!/usr/bin/env bash
# Static check of the OpenCL kernels for real GPUs, without a GPU.
#
# Compiles every variant of kernels/curl_pow.cl the engine can choose with the vendors' real code
# generators: NVIDIA sm_80, sm_89, sm_90 (clang's nvptx64 target with libclc, then ptxas; SASS
# from nvdisasm for an op mix) and AMD gfx90a, gfx942, gfx1100 (clang's amdgcn target with
# libclc). Prints one JSON object a line per variant and architecture: build options, registers,
# stack/scratch bytes, spill bytes, shared/LDS bytes, resident groups and occupancy from the
# architecture's documented limits, and a modelled nonces/s bound with each of its terms (see
# docs/gpu-kernels.md, "The model").
#
# Usage: scripts/gpu-static.sh [--arch sm_90,gfx90a] [--variant u32:coop64,u64] [--table]
#   --table   a human-readable table instead of JSON lines
# Environment:
#   CURLPOW   the curlpow binary: its `tune --list --json` gives the variants (a built-in list
#             mirroring it otherwise)
#   CLANG     clang with the nvptx64 and amdgcn targets (default: clang-19, then clang)
#   LIBCLC    libclc's directory (default /usr/lib/clc)
#   PTXAS, NVDISASM   (default: on PATH, then /opt/gpu-tools's PyPI wheels)
# Exit status: 0 done; 2 a tool is missing (the reason on stderr, nothing on stdout); 1 a
# compile failed.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
export GPU_STATIC_ROOT="$HERE"
exec python3 - "$@" <<'PY'
import json, math, os, re, shutil, subprocess, sys, tempfile

ROOT = os.environ["GPU_STATIC_ROOT"]
KERNEL = os.path.join(ROOT, "kernels", "curl_pow.cl")

def die_missing(what):
    print(f"gpu-static: SKIP: {what}", file=sys.stderr)
    sys.exit(2)

def find_tool(env, names, extra_globs=()):
    v = os.environ.get(env)
    if v:
        return v if shutil.which(v) or os.path.exists(v) else None
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    import glob
    for g in extra_globs:
        hits = sorted(glob.glob(g))
        if hits:
            return hits[-1]
    return None

CLANG = find_tool("CLANG", ["clang-19", "clang-20", "clang-18", "clang"])
LIBCLC = os.environ.get("LIBCLC", "/usr/lib/clc")
PTXAS = find_tool("PTXAS", ["ptxas"], ["/opt/gpu-tools/lib/python3*/site-packages/nvidia/cuda_nvcc/bin/ptxas"])
NVDISASM = find_tool("NVDISASM", ["nvdisasm"], [
    "/opt/gpu-tools/lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm",
    "/opt/gpu-tools/lib/python3*/site-packages/nvidia/cuda_nvdisasm/bin/nvdisasm"])
if not CLANG:
    die_missing("no clang (apt-get install clang-19 libclc-19)")
for f in ("nvptx64--nvidiacl.bc", "amdgcn--amdhsa.bc"):
    if not os.path.exists(os.path.join(LIBCLC, f)):
        die_missing(f"no {LIBCLC}/{f} (apt-get install libclc-19)")
if not PTXAS:
    die_missing("no ptxas (pip install nvidia-cuda-nvcc-cu12)")
if not NVDISASM:
    die_missing("no nvdisasm (pip install nvidia-cuda-nvdisasm)")

args = sys.argv[1:]
want_arch, want_var, table = None, None, False
i = 0
while i < len(args):
    a = args[i]
    if a == "--arch" and i + 1 < len(args):
        want_arch = args[i + 1].split(","); i += 2
    elif a == "--variant" and i + 1 < len(args):
        want_var = args[i + 1].split(","); i += 2
    elif a == "--table":
        table = True; i += 1
    else:
        print(f"gpu-static: unknown argument {a!r}", file=sys.stderr)
        sys.exit(64)

# ---- The variants -----------------------------------------------------------------------------
# `curlpow tune --list --json` when the binary is given; this list mirrors it otherwise.
BUILTIN = [
    ("u32:coop", "-DLANE_BITS=32 -DVEC=1 -DSTATE_LOCAL=0 -DLOCAL_SIZE=128 -DFUSE=3 -DPREFETCH=0 -DCOOP=1 -DCOOP_P=32 -DCOOP_S=4", ["gpu:nvidia"]),
    ("u32:coop64", "-DLANE_BITS=32 -DVEC=1 -DSTATE_LOCAL=0 -DLOCAL_SIZE=64 -DFUSE=3 -DPREFETCH=0 -DCOOP=1 -DCOOP_P=64 -DCOOP_S=1", ["gpu"]),
    ("u32", "-DLANE_BITS=32 -DVEC=1 -DSTATE_LOCAL=0 -DLOCAL_SIZE=64 -DFUSE=3 -DPREFETCH=0", []),
    ("u64", "-DLANE_BITS=64 -DVEC=1 -DSTATE_LOCAL=0 -DLOCAL_SIZE=64 -DFUSE=3 -DPREFETCH=0", []),
    ("u64-f5", "-DLANE_BITS=64 -DVEC=1 -DSTATE_LOCAL=0 -DLOCAL_SIZE=64 -DFUSE=5 -DPREFETCH=0", []),
    ("u64-p", "-DLANE_BITS=64 -DVEC=1 -DSTATE_LOCAL=0 -DLOCAL_SIZE=64 -DFUSE=3 -DPREFETCH=2", []),
    ("u32:local", "-DLANE_BITS=32 -DVEC=1 -DSTATE_LOCAL=1 -DLOCAL_SIZE=8 -DFUSE=3 -DPREFETCH=0", []),
    ("u64x8", "-DLANE_BITS=64 -DVEC=8 -DSTATE_LOCAL=0 -DLOCAL_SIZE=1 -DFUSE=3 -DPREFETCH=0", ["cpu"]),
]
variants = []
binary = os.environ.get("CURLPOW")
if binary:
    out = subprocess.run([binary, "tune", "--list", "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        print(f"gpu-static: {binary} tune --list --json failed: {out.stderr.strip()}", file=sys.stderr)
        sys.exit(1)
    for line in out.stdout.splitlines():
        o = json.loads(line)
        if o.get("backend") == "opencl":
            variants.append((o["variant"], o["build_options"], o.get("default_for", [])))
else:
    variants = BUILTIN
if want_var:
    variants = [v for v in variants if v[0] in want_var]

def defines(opts):
    d = {}
    for m in re.finditer(r"-D(\w+)=(\d+)", opts):
        d[m.group(1)] = int(m.group(2))
    return d

# ---- Documented limits and rates of each architecture ----------------------------------------
# Sources in docs/gpu-kernels.md ("Constants").
ARCHS = {
    "sm_80": dict(vendor="nvidia", card="A100 SXM", units=108, clock_ghz=1.41, dram_gbs=2039,
                  threads=2048, warps=64, groups=32, regs=65536, smem=167936, smem_group=166912,
                  logic_per_clk=64, issue_per_clk=4, shared_bytes_clk=128),
    "sm_89": dict(vendor="nvidia", card="L40S", units=142, clock_ghz=2.52, dram_gbs=864,
                  threads=1536, warps=48, groups=24, regs=65536, smem=102400, smem_group=101376,
                  logic_per_clk=64, issue_per_clk=4, shared_bytes_clk=128),
    "sm_90": dict(vendor="nvidia", card="H200 SXM", units=132, clock_ghz=1.98, dram_gbs=4800,
                  threads=2048, warps=64, groups=32, regs=65536, smem=233472, smem_group=232448,
                  logic_per_clk=64, issue_per_clk=4, shared_bytes_clk=128),
    "gfx90a": dict(vendor="amd", card="MI250X (one GCD)", units=110, clock_ghz=1.70, dram_gbs=1638,
                   simds=4, waves_per_simd=8, vgprs=512, vgpr_granule=8, lds=65536, wave=64,
                   logic_per_clk=64, shared_bytes_clk=128),
    "gfx942": dict(vendor="amd", card="MI300X", units=304, clock_ghz=2.10, dram_gbs=5300,
                   simds=4, waves_per_simd=8, vgprs=512, vgpr_granule=8, lds=65536, wave=64,
                   logic_per_clk=64, shared_bytes_clk=128),
    "gfx1100": dict(vendor="amd", card="RX 7900 XTX", units=96, clock_ghz=2.50, dram_gbs=960,
                    simds=2, waves_per_simd=16, vgprs=1536, vgpr_granule=24, lds=65536, wave=32,
                    logic_per_clk=64, shared_bytes_clk=128),
}
if want_arch:
    unknown = [a for a in want_arch if a not in ARCHS]
    if unknown:
        print(f"gpu-static: unknown architecture(s) {unknown}; known: {list(ARCHS)}", file=sys.stderr)
        sys.exit(64)
    ARCHS = {k: v for k, v in ARCHS.items() if k in want_arch}

# A scheduler (NVIDIA) or SIMD (AMD) is assumed to issue every cycle from this fraction of its
# resident-wave slots on (the unrolled code has independent S-box chains): below it throughput
# scales with occupancy.
OCCUPANCY_FULL = 0.25
# VALU logic instructions per S-box per 32-bit word on AMD (no arbitrary 3-input logic op before
# gfx950: bfi/xor/and), against NVIDIA's 2 LOP3.
AMD_LOGIC_PER_SBOX = 4

STATE_LEN = 729

# ---- What the kernel does per nonce (from its design; see kernels/curl_pow.cl) ----------------
def work(d):
    """S-box evaluations (word ops) per state-transform, bytes of state traffic per nonce, where
    that traffic goes, the lanes, 32-bit words per word, and the shared-memory conflict factor."""
    lanes = d["LANE_BITS"] * d.get("VEC", 1)
    w32 = lanes // 32
    wb = lanes // 8
    if d.get("COOP", 0):
        p = d["COOP_P"]
        c = -(-STATE_LEN // p)
        sbox_pass = coop_sboxes_per_pass(p, c)
        shared = 27 * coop_shared_bytes_per_pass(p, c, wb) / lanes
        return dict(lanes=lanes, w32=w32, sboxes=27 * sbox_pass, bytes=shared, where="shared",
                    conflict=coop_conflict(p, c))
    f = d.get("FUSE", 3)
    side = {1: 0, 3: 5, 5: 21}[f]
    per_pass = lambda s: (4 * STATE_LEN + 4 * s) * wb
    if f == 1:
        sboxes, traffic = 81 * STATE_LEN, 81 * per_pass(0)
    elif f == 3:
        sboxes, traffic = 27 * 3 * (STATE_LEN + 7), 27 * per_pass(5)
    else:
        sboxes = 15 * 5 * (STATE_LEN + 31) + 2 * 3 * (STATE_LEN + 7)
        traffic = 15 * per_pass(21) + 2 * per_pass(5)
    where = "shared" if d.get("STATE_LOCAL", 0) else "private"
    return dict(lanes=lanes, w32=w32, sboxes=sboxes, bytes=traffic / lanes, where=where,
                conflict=1.0)

# The cooperative kernel, as written in kernels/curl_pow.cl (COOP section): each of the P
# work-items of a state computes C = ceil(729 / P) trits of three rounds on from a window of
# C + 7 trits read from shared memory (a low and a high 32-bit word each), the S-boxes of the
# window's fill skipped, and writes its C trits.
def coop_sboxes_per_pass(p, c):
    return p * (3 * c + 4)

def coop_shared_bytes_per_pass(p, c, wb):
    return (p * (c + 7) + STATE_LEN) * 2 * wb

def coop_conflict(p, c):
    """Mean shared-memory wavefronts per 32-bit access of a warp over one pass, over the
    minimum of one: 32 banks of 4 bytes (NVIDIA; AMD's LDS also has 32 banks of 4 bytes), word w
    in bank w mod 32; the kernel's element u at word u + u / C when C is even."""
    pad = c % 2 == 0
    phys = lambda u: u + (u // c if pad else 0)
    def wavefronts(words):
        banks = {}
        for w in words:
            if w is not None:
                banks.setdefault(w % 32, set()).add(w)
        return max(1, max((len(v) for v in banks.values()), default=1))
    total = n = 0
    for warp0 in range(0, p, 32):
        lanes = range(warp0, min(p, warp0 + 32))
        for k in range(c + 7):  # reads: element p C + k
            total += wavefronts([phys(l * c + k) for l in lanes]); n += 1
        for j in range(c):  # writes: trit z = p C + j to read-order slot -8 z mod 729
            total += wavefronts([phys((-8 * (l * c + j)) % STATE_LEN + 2) if l * c + j < STATE_LEN else None
                                 for l in lanes]); n += 1
    return total / n

def hot_mix(streams, is_logic):
    """The op mix of the hot code: the innermost loop (a backward branch's body) or non-inlined
    callee holding the most logic instructions (at least 12: two S-box steps); the kernel's
    whole code when there is none. `streams`: (instructions, labels, is_callee) of the kernel and
    of each callee."""
    regions = []
    for n, (insts, labels, callee) in enumerate(streams):
        if callee:
            logic = sum(1 for o, _ in insts if is_logic(o))
            if logic >= 12:
                regions.append((n, 0, len(insts) - 1, logic))
        for i, (op, target) in enumerate(insts):
            if target in labels and labels[target] <= i:
                logic = sum(1 for o, _ in insts[labels[target]:i + 1] if is_logic(o))
                if logic >= 12:
                    regions.append((n, labels[target], i, logic))
    inner = [r for r in regions
             if not any(o != r and o[0] == r[0] and r[1] <= o[1] and o[2] <= r[2] for o in regions)]
    def count(seq):
        mix = {}
        for o, _ in seq:
            mix[o] = mix.get(o, 0) + 1
        return mix
    if not inner:
        return count([i for st in streams for i in st[0]]), None
    n, a, b, _ = max(inner, key=lambda r: r[3])
    return count(streams[n][0][a:b + 1]), dict(callee=streams[n][2], instructions=b - a + 1)

# ---- Compiling -------------------------------------------------------------------------------
tmp = tempfile.mkdtemp(prefix="gpu-static.")

def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}:\n{r.stderr[-3000:]}")
    return r.stdout + r.stderr

CLANG_COMMON = ["-x", "cl", "-cl-std=CL1.2", "-O3", "-S", "-Wno-everything"]

def nvidia(name, opts, arch):
    base = os.path.join(tmp, re.sub(r"\W", "_", name) + "." + arch)
    run([CLANG, *CLANG_COMMON, "-target", "nvptx64-nvidia-nvcl", "-Xclang", "-mlink-builtin-bitcode",
         "-Xclang", os.path.join(LIBCLC, "nvptx64--nvidiacl.bc"), *opts.split(), KERNEL, "-o", base + ".ptx"])
    ptx = open(base + ".ptx").read()
    ptx = re.sub(r"^\.version .*$", ".version 7.8", ptx, flags=re.M)
    ptx = re.sub(r"^\.target .*$", f".target {arch}", ptx, flags=re.M)
    open(base + ".ptx", "w").write(ptx)
    log = run([PTXAS, f"-arch={arch}", "-v", base + ".ptx", "-o", base + ".cubin"])
    # Per function: properties then "Used N registers".
    funcs, cur = {}, None
    for line in log.splitlines():
        m = re.search(r"(?:Function properties for|Compiling entry function) '?(\w+)'?", line)
        if m:
            cur = funcs.setdefault(m.group(1), {})
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and cur is not None:
            cur.update(stack=int(m.group(1)), spill_st=int(m.group(2)), spill_ld=int(m.group(3)))
        m = re.search(r"Used (\d+) registers.*?(?:(\d+) bytes smem)?", line)
        if m and cur is not None:
            cur["regs"] = int(m.group(1))
            sm = re.search(r"(\d+) bytes smem", line)
            cur["smem"] = int(sm.group(1)) if sm else 0
    k = funcs.get("curl_search", {})
    callees = [f for n, f in funcs.items() if n not in ("curl_search", "curl_transform") and "regs" not in f]
    stack = k.get("stack", 0) + max((f.get("stack", 0) for f in callees), default=0)
    spill = k.get("spill_st", 0) + k.get("spill_ld", 0) + sum(f.get("spill_st", 0) + f.get("spill_ld", 0) for f in callees)
    sass = run([NVDISASM, "-c", base + ".cubin"])
    insts, labels, section, streams = [], {}, None, []
    for line in sass.splitlines():
        m = re.match(r"^\.text\.(\w+):", line.strip())
        if m:
            section = m.group(1)
            continue
        if section != "curl_search":
            continue
        m = re.match(r"^\s*\$curl_search\$(\w+):", line)
        if m:  # a non-inlined callee starts
            streams.append((insts, labels, bool(streams)))
            insts, labels = [], {}
            continue
        m = re.match(r"^\s*(\.L_x_\d+):", line)
        if m:
            labels[m.group(1)] = len(insts)
            continue
        m = re.match(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
        if m:
            t = re.search(r"`\((\.L_x_\d+)\)", line) if m.group(1) == "BRA" else None
            insts.append((m.group(1), t.group(1) if t else None))
    streams.append((insts, labels, bool(streams)))
    mix, hot = hot_mix(streams, lambda op: op == "LOP3")
    return dict(registers=k.get("regs"), stack_bytes=stack, spill_bytes=spill,
                shared_bytes=k.get("smem", 0), op_mix=mix, hot_loop=hot)

AMD_LOGIC = re.compile(r"^v_(and|or|xor|not|bfi|xor3|and_or|or3|bitop3)_")

def amd(name, opts, arch):
    base = os.path.join(tmp, re.sub(r"\W", "_", name) + "." + arch)
    run([CLANG, *CLANG_COMMON, "-target", "amdgcn-amd-amdhsa", f"-mcpu={arch}", "-nogpulib",
         "-Xclang", "-mlink-builtin-bitcode", "-Xclang", os.path.join(LIBCLC, "amdgcn--amdhsa.bc"),
         *opts.split(), KERNEL, "-o", base + ".s"])
    s = open(base + ".s").read()
    # The kernel's metadata (amdhsa.kernels).
    meta = {}
    for block in re.split(r"\n\s+- \.", s.split("amdhsa.kernels:", 1)[-1]):
        if re.search(r"\.name:\s+curl_search\b", block):
            for key in ("vgpr_count", "agpr_count", "sgpr_count", "vgpr_spill_count", "sgpr_spill_count",
                        "group_segment_fixed_size", "private_segment_fixed_size", "wavefront_size"):
                m = re.search(r"\.?" + key + r":\s+(\d+)", block)
                if m:
                    meta[key] = int(m.group(1))
    info = s.split("\ncurl_search:", 1)[-1]
    occ = re.search(r"; Occupancy: (\d+)", info)
    arch_v = re.search(r"; NumVgprs: (\d+)", info)
    streams = []
    for fm in re.finditer(r"\n(\w+):[^\n]*\n(.*?)\.Lfunc_end", s, re.S):
        if fm.group(1) == "curl_transform":
            continue
        insts, labels = [], {}
        for line in fm.group(2).splitlines():
            m = re.match(r"^(\.LBB\w+):", line)
            if m:
                labels[m.group(1)] = len(insts)
                continue
            m = re.match(r"^\s+([sv]_\w+|ds_\w+|global_\w+|buffer_\w+|scratch_\w+|flat_\w+)\s*(\S*)", line)
            if m:
                op = m.group(1)
                t = m.group(2) if op.startswith(("s_cbranch", "s_branch")) else None
                insts.append((op, t))
        if fm.group(1) == "curl_search":
            streams.insert(0, (insts, labels, False))
        else:
            streams.append((insts, labels, True))
    mix, hot = hot_mix(streams, lambda op: AMD_LOGIC.match(op) is not None)
    return dict(registers=meta.get("vgpr_count"), arch_vgprs=int(arch_v.group(1)) if arch_v else None,
                agprs=meta.get("agpr_count", 0), sgprs=meta.get("sgpr_count"),
                stack_bytes=meta.get("private_segment_fixed_size", 0),
                spill_bytes=4 * (meta.get("vgpr_spill_count", 0)),
                spill_vgprs=meta.get("vgpr_spill_count", 0), spill_sgprs=meta.get("sgpr_spill_count", 0),
                shared_bytes=meta.get("group_segment_fixed_size", 0),
                wave=meta.get("wavefront_size", 64),
                compiler_occupancy=int(occ.group(1)) if occ else None, op_mix=mix, hot_loop=hot)

# ---- The model -------------------------------------------------------------------------------
def model(name, opts, default_for, arch, a, c):
    d = defines(opts)
    wk = work(d)
    group = d.get("LOCAL_SIZE", 64)
    clk = a["clock_ghz"] * 1e9
    units = a["units"]
    out = dict(variant=name, arch=arch, card=a["card"], build_options=opts, default_for=default_for,
               registers=c["registers"], stack_bytes=c["stack_bytes"], spill_bytes=c["spill_bytes"],
               shared_bytes=c["shared_bytes"], group=group)
    # Residency.
    if a["vendor"] == "nvidia":
        warps_g = -(-group // 32)
        regs = max(c["registers"] or 255, 1)
        per_warp = -(-(regs * 32) // 256) * 256
        lim = {
            "threads": a["threads"] // (warps_g * 32),
            "groups": a["groups"],
            "registers": a["regs"] // (per_warp * warps_g),
        }
        if c["shared_bytes"]:
            lim["shared"] = a["smem"] // (c["shared_bytes"] + 1024)  # 1 KB reserved per block
        groups = max(0, min(lim.values()))
        limit = min(lim, key=lim.get)
        occupancy = groups * warps_g / a["warps"]
        out.update(resident_groups=groups, resident_limit=limit, occupancy=round(occupancy, 4))
    else:
        wave = c["wave"]
        waves_g = -(-group // wave)
        g = a["vgpr_granule"]
        total_v = (c["registers"] or a["vgprs"])
        by_vgpr = min(a["waves_per_simd"], a["vgprs"] // (-(-total_v // g) * g))
        lds_pool = a["lds"] * (2 if arch == "gfx1100" else 1)  # gfx11 WGP mode: 2 CUs' LDS
        simds_pool = a["simds"] * (2 if arch == "gfx1100" else 1)
        lim = {"vgprs": by_vgpr, "waves": a["waves_per_simd"]}
        if c["shared_bytes"]:
            gr = lds_pool // c["shared_bytes"]
            lim["lds"] = round(gr * waves_g / simds_pool, 3)  # the mean over the SIMDs
        waves = max(0, min(lim.values()))
        limit = min(lim, key=lim.get)
        occupancy = waves / a["waves_per_simd"]
        out.update(waves_per_simd=waves, resident_limit=limit, occupancy=round(occupancy, 4),
                   compiler_occupancy=c["compiler_occupancy"], agprs=c["agprs"], sgprs=c["sgprs"])
    # Terms (nonces/s).
    sbox_lane_ops = wk["sboxes"] * wk["w32"] / wk["lanes"]  # S-box x 32-bit words, per nonce
    mix = c["op_mix"]
    terms = {}
    if a["vendor"] == "nvidia":
        logic = 2 * sbox_lane_ops  # one LOP3 per S-box half
        static_lop3 = mix.get("LOP3", 0)
        control = {"NOP", "BRA", "EXIT", "BSSY", "BSYNC", "RET", "CALL", "WARPSYNC"}
        static_all = sum(n for op, n in mix.items() if op not in control)
        ratio = static_all / static_lop3 if static_lop3 else float("nan")
        issue = logic * ratio / 32  # warp instructions per nonce
        terms["logic"] = units * a["logic_per_clk"] * clk / logic
        terms["issue"] = units * a["issue_per_clk"] * clk / issue if issue == issue else None
        out["op_mix_top"] = dict(sorted(mix.items(), key=lambda kv: -kv[1])[:8])
        out["hot_loop"] = c["hot_loop"]
        out["instructions_per_lop3"] = round(ratio, 3)
    else:
        logic = AMD_LOGIC_PER_SBOX * sbox_lane_ops
        static_logic = sum(n for op, n in mix.items() if AMD_LOGIC.match(op))
        static_valu = sum(n for op, n in mix.items() if op.startswith("v_"))
        ratio = static_valu / static_logic if static_logic else float("nan")
        terms["logic"] = units * a["logic_per_clk"] * clk / (logic * ratio) if ratio == ratio else None
        out["op_mix_top"] = dict(sorted(mix.items(), key=lambda kv: -kv[1])[:8])
        out["hot_loop"] = c["hot_loop"]
        out["valu_per_logic"] = round(ratio, 3)
    on_chip = c["stack_bytes"] <= 64 and c["spill_bytes"] == 0
    shared_b = wk["bytes"] * wk["conflict"] if wk["where"] == "shared" else 0.0
    device_b = STATE_LEN / wk["lanes"] + (wk["bytes"] if wk["where"] == "private" and not on_chip else 0.0)
    if shared_b:
        terms["shared"] = units * a["shared_bytes_clk"] * clk / shared_b
    terms["device_memory"] = a["dram_gbs"] * 1e9 / device_b
    occ_factor = min(1.0, occupancy / OCCUPANCY_FULL)
    terms["occupancy_factor"] = occ_factor
    rates = [v for k, v in terms.items() if k != "occupancy_factor" and v]
    bound = min(rates) * occ_factor
    limiter = min((k for k in terms if k != "occupancy_factor" and terms[k]), key=lambda k: terms[k])
    out.update(state_where=wk["where"] if wk["where"] != "private" or on_chip else "device",
               shared_bytes_per_nonce=round(shared_b, 1), device_bytes_per_nonce=round(device_b, 1),
               bank_conflict_factor=round(wk["conflict"], 3),
               terms={k: (round(v, 4) if k == "occupancy_factor" else (round(v) if v else None)) for k, v in terms.items()},
               limiter=limiter if occ_factor >= 1 else f"{limiter}+occupancy",
               bound_nonces_per_s=round(bound))
    return out

rows, failed = [], False
for name, opts, default_for in variants:
    for arch, a in ARCHS.items():
        try:
            c = nvidia(name, opts, arch) if a["vendor"] == "nvidia" else amd(name, opts, arch)
            row = model(name, opts, default_for, arch, a, c)
        except Exception as e:  # a compile failure is reported and fails the run
            row = dict(variant=name, arch=arch, build_options=opts, error=str(e)[-2000:])
            failed = True
        rows.append(row)
        if not table:
            print(json.dumps(row), flush=True)
if table:
    print(f"{'variant':<12} {'arch':<8} {'regs':>5} {'stack':>6} {'spill':>6} {'shared':>7} {'occ':>6} {'limit':<10} {'bound G/s':>9}  limiter")
    for r in rows:
        if "error" in r:
            print(f"{r['variant']:<12} {r['arch']:<8} ERROR {r['error'][:60]}")
            continue
        print(f"{r['variant']:<12} {r['arch']:<8} {r['registers'] or '-':>5} {r['stack_bytes']:>6} {r['spill_bytes']:>6} "
              f"{r['shared_bytes']:>7} {r['occupancy']:>6.3f} {r['resident_limit']:<10} {r['bound_nonces_per_s']/1e9:>9.2f}  {r['limiter']}")
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failed else 0)
PY
