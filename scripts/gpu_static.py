#!/usr/bin/env python3
"""Static check of the OpenCL kernels for real GPUs, without a GPU.

Takes the kernel variants from `curlpow tune --list --json` (both proofs of work: each row names
its `pow`, its `kernel` file under kernels/, its `entry` point and its `build_options`), compiles
each with the vendors' real code generators (NVIDIA sm_80, sm_89, sm_90: clang's nvptx64 target
with libclc, ptxas, nvdisasm; AMD gfx90a, gfx942, gfx1100: clang's amdgcn target with libclc),
and prints for each the op mix of its hot loop (the SASS or the .s), its registers, stack, spills,
local memory, residency, and a modelled nonces/s bound (docs/gpu-kernels.md, "The model").

The GPU defaults are then checked against the budgets of docs/gpu-kernels.md (the table between
the `gpu-static budgets` markers): stack, spills, local-memory instructions, modelled bound.

Output: one JSON object a line per variant and architecture (`--table`: a table).
Exit status: 0 done and within budget; 1 a compile failed or a GPU default is past its budget
(each named on stderr); 2 a tool is missing (the reason on stderr, nothing on stdout);
64 a bad argument.

Environment: CURLPOW (the curlpow binary; default target/release/curlpow or target/debug/curlpow,
whichever is newer), CLANG (default clang-19, then clang-20, clang-18, clang), LIBCLC (default
/usr/lib/clc), PTXAS and NVDISASM (default: on PATH, then the PyPI wheels in /opt/gpu-tools),
GPU_STATIC_KNOWN_FAILING (as --known-failing).
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(ROOT, "kernels")
DOC = os.path.join(ROOT, "docs", "gpu-kernels.md")

EXIT_BUDGET = 1
EXIT_MISSING = 2
EXIT_USAGE = 64

# ---- Documented limits and rates of each architecture (docs/gpu-kernels.md, "Constants") ------
# NVIDIA, per SM and clock: 2 warp-wide LOP3 (64 lanes of 32-bit logic), 4 warp instructions
# issued (4 schedulers), 32 shared-memory words (32 banks of 4 bytes).
# AMD, per CU and clock: 64 lanes of VALU (4 SIMD16, or 2 SIMD32 on gfx11), 32 LDS words.
ARCHS = {
    "sm_80": dict(vendor="nvidia", card="A100 SXM", units=108, clock_ghz=1.41, dram_gbs=2039,
                  threads=2048, warps=64, groups=32, regs=65536, smem=167936),
    "sm_89": dict(vendor="nvidia", card="L40S", units=142, clock_ghz=2.52, dram_gbs=864,
                  threads=1536, warps=48, groups=24, regs=65536, smem=102400),
    "sm_90": dict(vendor="nvidia", card="H200 SXM", units=132, clock_ghz=1.98, dram_gbs=4800,
                  threads=2048, warps=64, groups=32, regs=65536, smem=233472),
    "gfx90a": dict(vendor="amd", card="MI250X (one GCD)", units=110, clock_ghz=1.70,
                   dram_gbs=1638, simds=4, waves_per_simd=8, vgprs=512, vgpr_granule=8,
                   lds=65536, wgp=False),
    "gfx942": dict(vendor="amd", card="MI300X", units=304, clock_ghz=2.10, dram_gbs=5300,
                   simds=4, waves_per_simd=8, vgprs=512, vgpr_granule=8, lds=65536, wgp=False),
    "gfx1100": dict(vendor="amd", card="RX 7900 XTX", units=96, clock_ghz=2.50, dram_gbs=960,
                    simds=2, waves_per_simd=16, vgprs=1536, vgpr_granule=24, lds=65536,
                    wgp=True),
}
NV_LOP3_PER_CLK = 2  # warp instructions
NV_ISSUE_PER_CLK = 4  # warp instructions
SHARED_WORDS_PER_CLK = 32  # 32-bit words, NVIDIA SM and AMD CU alike
AMD_LANES_PER_CLK = 64
AMD_IDEAL_LOGIC_PER_SBOX = 4  # v_and/v_xor/v_not or v_bfi/v_xor3: 4 per S-box per word

# A scheduler (NVIDIA) or SIMD (AMD) is taken to issue every cycle from this fraction of its
# resident-wave slots on; below it throughput scales with occupancy.
OCCUPANCY_FULL = 0.25

# Curl-P-81: 81 rounds of 729 S-boxes per transform; one S-box per 32-bit word serves 32 nonces.
STATE_LEN = 729
SBOX_WORDS_PER_NONCE = 81 * STATE_LEN / 32  # S-box evaluations on 32-bit words, per nonce
LOP3_PER_SBOX = 2  # NVIDIA: one LOP3 per half of the S-box
LOP3_PER_NONCE = LOP3_PER_SBOX * SBOX_WORDS_PER_NONCE  # thread LOP3 per nonce at the floor

NV_PADDING = {"NOP"}  # alignment padding, never issued in the loop
AMD_LOGIC = re.compile(r"^v_(and|or|xor|not|bfi|xor3|and_or|or3|bitop3)_")
AMD_DIVISION = re.compile(r"^v_(mul_hi_|rcp_|cvt_f32_u32|cvt_u32_f32|div_)")


class Missing(Exception):
    """A tool the check needs is not installed."""


# ---- Tools -------------------------------------------------------------------------------------
def find_tool(env, names, globs=()):
    """The tool named by `env`, else the first of `names` on PATH, else the newest glob hit."""
    given = os.environ.get(env)
    if given:
        return given if shutil.which(given) or os.path.exists(given) else None
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    for g in globs:
        hits = sorted(glob.glob(g))
        if hits:
            return hits[-1]
    return None


def find_tools(need_nvidia, need_amd):
    """clang, libclc, ptxas and nvdisasm, as a dict; raises Missing naming what is absent."""
    tools = dict(
        clang=find_tool("CLANG", ["clang-19", "clang-20", "clang-18", "clang"]),
        libclc=os.environ.get("LIBCLC", "/usr/lib/clc"),
        ptxas=find_tool("PTXAS", ["ptxas"],
                        ["/opt/gpu-tools/lib/python3*/site-packages/nvidia/cuda_nvcc/bin/ptxas"]),
        nvdisasm=find_tool("NVDISASM", ["nvdisasm"], [
            "/opt/gpu-tools/lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm",
            "/opt/gpu-tools/lib/python3*/site-packages/nvidia/cuda_nvdisasm/bin/nvdisasm"]),
    )
    if not tools["clang"]:
        raise Missing("no clang (apt-get install clang-19 libclc-19)")
    libs = (["nvptx64--nvidiacl.bc"] if need_nvidia else []) + (
        ["amdgcn--amdhsa.bc"] if need_amd else [])
    for f in libs:
        if not os.path.exists(os.path.join(tools["libclc"], f)):
            raise Missing(f"no {tools['libclc']}/{f} (apt-get install libclc-19)")
    if need_nvidia and not tools["ptxas"]:
        raise Missing("no ptxas (pip install nvidia-cuda-nvcc-cu12)")
    if need_nvidia and not tools["nvdisasm"]:
        raise Missing("no nvdisasm (pip install nvidia-cuda-nvdisasm)")
    return tools


def find_curlpow():
    """The curlpow binary: $CURLPOW, else the newer of target/{release,debug}/curlpow."""
    given = os.environ.get("CURLPOW")
    if given:
        return given
    built = [p for p in (os.path.join(ROOT, "target", d, "curlpow") for d in ("release", "debug"))
             if os.path.exists(p)]
    if not built:
        raise Missing("no curlpow binary to list the variants (cargo build --features opencl, "
                      "or set CURLPOW)")
    return max(built, key=os.path.getmtime)


def run(cmd):
    """Run `cmd`; its stdout and stderr, or RuntimeError with the tail of stderr."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}:\n{r.stderr[-3000:]}")
    return r.stdout + r.stderr


# ---- The variants ------------------------------------------------------------------------------
def load_variants(binary):
    """The OpenCL rows of `curlpow tune --list --json`."""
    try:
        r = subprocess.run([binary, "tune", "--list", "--json"], capture_output=True, text=True)
    except OSError as e:
        raise RuntimeError(f"cannot run the curlpow binary {binary}: {e.strerror}") from None
    if r.returncode != 0:
        raise RuntimeError(f"{binary} tune --list --json failed: {r.stderr.strip()}")
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    rows = [v for v in rows if v.get("backend") == "opencl"]
    for v in rows:
        for key in ("pow", "variant", "kernel", "entry", "build_options"):
            if key not in v:
                raise RuntimeError(f"{binary} tune --list --json: a row has no {key!r}: {v}")
    return rows


def defines(opts):
    """The -DNAME=N pairs of build options."""
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"-D(\w+)=(\d+)", opts)}


def design_sboxes_per_pass(opts):
    """S-boxes per 32-bit word in one pass of one work-item, from the kernel's design, when the
    variant's layout says it: the cooperative kernel's work-item computes C = ceil(729 / P)
    trits three rounds on, from a window of C + 7 (3C + 4 S-boxes), or four rounds on
    (FUSE = 4) from a window of C + 15 (4C + 11 S-boxes)."""
    d = defines(opts)
    if d.get("COOP"):
        c = -(-STATE_LEN // d["COOP_P"])
        # Four fused rounds: C + 15 reads, 4C + 11 S-boxes (the transform's 18 passes of four;
        # its 3 passes of three are 3C + 4).
        return 4 * c + 11 if d.get("FUSE") == 4 else 3 * c + 4
    return None


# ---- Hot loop ----------------------------------------------------------------------------------
def hot_loop(streams, is_logic, least=12):
    """The hot code: the innermost loop (a backward branch's body) or non-inlined callee holding
    the most logic instructions (at least `least`); the whole code when there is none. `streams`:
    (instructions, labels, is_callee) of the kernel and of each callee; an instruction is
    (op, full mnemonic, branch target). Returns (instructions, region description)."""
    regions = []
    for n, (insts, labels, callee) in enumerate(streams):
        if callee:
            logic = sum(1 for i in insts if is_logic(i[0]))
            if logic >= least:
                regions.append((n, 0, len(insts) - 1, logic))
        for i, inst in enumerate(insts):
            target = inst[2]
            if target in labels and labels[target] <= i:
                logic = sum(1 for x in insts[labels[target]:i + 1] if is_logic(x[0]))
                if logic >= least:
                    regions.append((n, labels[target], i, logic))
    inner = [r for r in regions
             if not any(o != r and o[0] == r[0] and r[1] <= o[1] and o[2] <= r[2]
                        for o in regions)]
    if not inner:
        return [i for st in streams for i in st[0]], dict(region="whole kernel")
    n, a, b, _ = max(inner, key=lambda r: r[3])
    return streams[n][0][a:b + 1], dict(region="callee" if streams[n][2] else "loop")


def count(insts):
    mix = {}
    for op, _, _ in insts:
        mix[op] = mix.get(op, 0) + 1
    return dict(sorted(mix.items(), key=lambda kv: -kv[1]))


# ---- NVIDIA --------------------------------------------------------------------------------------
def parse_ptxas(log, entry):
    """Registers, stack, spills and shared memory of `entry` (stack and spills of the callees
    it keeps added) from `ptxas -v`."""
    funcs, cur = {}, None
    for line in log.splitlines():
        m = re.search(r"(?:Function properties for|Compiling entry function) '?(\w+)'?", line)
        if m:
            cur = funcs.setdefault(m.group(1), {})
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                      line)
        if m and cur is not None:
            cur.update(stack=int(m.group(1)), spill=int(m.group(2)) + int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m and cur is not None:
            cur["regs"] = int(m.group(1))
            sm = re.search(r"(\d+) bytes smem", line)
            cur["smem"] = int(sm.group(1)) if sm else 0
    k = funcs.get(entry, {})
    callees = [f for f in funcs.values() if "regs" not in f]
    return dict(registers=k.get("regs"),
                stack_bytes=k.get("stack", 0) + max((f.get("stack", 0) for f in callees), default=0),
                spill_bytes=k.get("spill", 0) + sum(f.get("spill", 0) for f in callees),
                shared_bytes=k.get("smem", 0))


def parse_sass(sass, entry):
    """The instruction streams of `entry`'s section: the kernel, then each non-inlined callee."""
    insts, labels, section, streams = [], {}, None, []
    for line in sass.splitlines():
        m = re.match(r"^\.text\.(\w+):", line.strip())
        if m:
            section = m.group(1)
            continue
        if section != entry:
            continue
        if re.match(r"^\s*\$" + re.escape(entry) + r"\$(\w+):", line):
            streams.append((insts, labels, bool(streams)))
            insts, labels = [], {}
            continue
        m = re.match(r"^\s*(\.L_x_\d+):", line)
        if m:
            labels[m.group(1)] = len(insts)
            continue
        m = re.match(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_]+)*)",
                     line)
        if m:
            op = m.group(1)
            t = re.search(r"`\((\.L_x_\d+)\)", line) if op == "BRA" else None
            insts.append((op, op + m.group(2), t.group(1) if t else None))
    streams.append((insts, labels, bool(streams)))
    return streams


def access_words(mnemonic):
    """32-bit words one lane moves with a load or store: .64 two, .128 four, else one."""
    for suffix, words in ((".128", 4), (".64", 2)):
        if suffix in mnemonic:
            return words
    return 1


def sass_mix(insts, sboxes=None):
    """The op mix of SASS instructions: all but padding, LOP3, shared words, local memory. The
    ratios are per S-box LOP3 (2 per S-box of the design, when the layout says how many S-boxes
    a pass has; else every LOP3 counted), so LOP3 used for addresses do not flatter them."""
    body = [i for i in insts if i[0] not in NV_PADDING]
    lop3 = sum(1 for i in body if i[0] == "LOP3")
    floor = LOP3_PER_SBOX * sboxes if sboxes else lop3
    shared = sum(access_words(i[1]) for i in body if i[0] in ("LDS", "STS", "LDSM", "ATOMS"))
    local = [i for i in body if i[0] in ("LDL", "STL")]
    return dict(instructions=len(body), lop3=lop3, sbox_lop3=floor,
                instructions_per_lop3=round(len(body) / floor, 3) if floor else None,
                shared_words=shared,
                shared_words_per_lop3=round(shared / floor, 3) if floor else None,
                ldl=sum(1 for i in local if i[0] == "LDL"),
                stl=sum(1 for i in local if i[0] == "STL"),
                local_bytes=4 * sum(access_words(i[1]) for i in local))


def compile_nvidia(tools, v, arch, tmp):
    base = os.path.join(tmp, re.sub(r"\W", "_", f"{v['pow']}_{v['variant']}") + "." + arch)
    run([tools["clang"], "-x", "cl", "-cl-std=CL1.2", "-O3", "-S", "-Wno-everything",
         "-target", "nvptx64-nvidia-nvcl", "-Xclang", "-mlink-builtin-bitcode",
         "-Xclang", os.path.join(tools["libclc"], "nvptx64--nvidiacl.bc"), "-I", KERNELS,
         *v["build_options"].split(), os.path.join(KERNELS, v["kernel"]), "-o", base + ".ptx"])
    with open(base + ".ptx") as f:
        ptx = f.read()
    ptx = re.sub(r"^\.version .*$", ".version 7.8", ptx, flags=re.M)
    ptx = re.sub(r"^\.target .*$", f".target {arch}", ptx, flags=re.M)
    with open(base + ".ptx", "w") as f:
        f.write(ptx)
    # NVIDIA's driver gets `nvidia_options` too: its register cap is ptxas's --maxrregcount.
    cap = re.search(r"-cl-nv-maxrregcount=(\d+)", v.get("nvidia_options", ""))
    cap_args = ["--maxrregcount", cap.group(1)] if cap else []
    log = run([tools["ptxas"], f"-arch={arch}", "-v", *cap_args, base + ".ptx", "-o",
               base + ".cubin"])
    facts = parse_ptxas(log, v["entry"])
    streams = parse_sass(run([tools["nvdisasm"], "-c", base + ".cubin"]), v["entry"])
    hot, where = hot_loop(streams, lambda op: op == "LOP3")
    whole = sass_mix([i for st in streams for i in st[0]])
    sboxes = design_sboxes_per_pass(v["build_options"]) if where["region"] != "whole kernel" else None
    facts.update(hot_loop=dict(where, **sass_mix(hot, sboxes)), op_mix_top=dict(list(count(hot).items())[:10]),
                 kernel_ldl=whole["ldl"], kernel_stl=whole["stl"])
    return facts


def occupancy_nvidia(a, regs, shared, group):
    warps_g = -(-group // 32)
    per_warp = -(-(max(regs or 255, 1) * 32) // 256) * 256
    lim = {"threads": a["threads"] // (warps_g * 32), "groups": a["groups"],
           "registers": a["regs"] // (per_warp * warps_g)}
    if shared:
        lim["shared"] = a["smem"] // (shared + 1024)  # 1 KB reserved per block
    groups = max(0, min(lim.values()))
    return dict(resident_groups=groups, resident_limit=min(lim, key=lim.get),
                occupancy=round(groups * warps_g / a["warps"], 4))


def model_nvidia(a, c):
    """Nonces/s terms from the hot loop's SASS, costed per nonce at the LOP3 floor: the loop's
    instructions, shared words and local bytes per LOP3 times the LOP3 a nonce needs."""
    h = c["hot_loop"]
    clk = a["clock_ghz"] * 1e9
    sms = a["units"]
    warp_lop3 = LOP3_PER_NONCE / 32
    terms = {"logic": sms * NV_LOP3_PER_CLK * clk / warp_lop3}
    if h["sbox_lop3"]:
        per = LOP3_PER_NONCE / h["sbox_lop3"]  # hot-loop runs per nonce, in thread terms
        terms["issue"] = sms * NV_ISSUE_PER_CLK * clk / (warp_lop3 * h["instructions_per_lop3"])
        if h["shared_words"]:
            terms["shared"] = sms * SHARED_WORDS_PER_CLK * clk / (per * h["shared_words"])
        if h["local_bytes"]:
            terms["local_memory"] = a["dram_gbs"] * 1e9 / (per * h["local_bytes"])
    return terms


# ---- AMD -----------------------------------------------------------------------------------------
def parse_amd_meta(s, entry):
    meta = {}
    for block in re.split(r"\n\s+- \.", s.split("amdhsa.kernels:", 1)[-1]):
        if re.search(r"\.name:\s+" + re.escape(entry) + r"\b", block):
            for key in ("vgpr_count", "agpr_count", "sgpr_count", "vgpr_spill_count",
                        "sgpr_spill_count", "group_segment_fixed_size",
                        "private_segment_fixed_size", "wavefront_size"):
                m = re.search(r"\.?" + key + r":\s+(\d+)", block)
                if m:
                    meta[key] = int(m.group(1))
    return meta


def parse_amd_function(s, name):
    """One function's instructions (op, op, branch target), labels, the functions it calls, and
    its loops: the compiler's block comments name each block's innermost loop (`in Loop:
    Header=BBx`, a header's `This Loop Header`), so a loop is every block of it wherever the
    block is placed (blocks after the latch included); the innermost loops, {header:
    [instruction index, ...]}."""
    m = re.search(r"\n" + re.escape(name) + r":[^\n]*\n(.*?)\.Lfunc_end", s, re.S)
    insts, labels, calls, loops, parents = [], {}, [], {}, set()
    loop, last_block = None, None
    for line in (m.group(1) if m else "").splitlines():
        cm = re.match(r"^\s*;\s*Parent Loop (BB\w+)", line)
        if cm:
            parents.add(cm.group(1))  # an enclosing loop of a nested loop's header
            continue
        if re.match(r"^\s*;\s*=>\s*This (Inner )?Loop Header", line) and last_block:
            loop = last_block  # the header line of a nested loop's header block
            continue
        bm = re.match(r"^(?:\.L(BB\w+):|; %bb\.\d+:)(.*)$", line)
        if bm:
            last_block = bm.group(1)
            note = bm.group(2)
            pm = re.search(r"Parent Loop (BB\w+)", note)
            if pm and bm.group(1):
                parents.add(pm.group(1))  # enclosing a nested loop: not innermost
            hm = re.search(r"in Loop: Header=(BB\w+)", note)
            if re.search(r"=>\s*This (Inner )?Loop Header", note):
                loop = bm.group(1)
            elif hm:
                loop = hm.group(1)
            else:
                loop = None
            if bm.group(1):
                labels[".L" + bm.group(1)] = len(insts)
            continue
        cm = re.search(r"(\w+)@rel32@lo", line)
        if cm and cm.group(1) not in calls:
            calls.append(cm.group(1))
        im = re.match(r"^\s+([sv]_\w+|ds_\w+|global_\w+|buffer_\w+|scratch_\w+|flat_\w+)\s*(\S*)",
                      line)
        if im:
            op = im.group(1)
            t = im.group(2) if op.startswith(("s_cbranch", "s_branch")) else None
            if loop:
                loops.setdefault(loop, []).append(len(insts))
            insts.append((op, op, t))
    return insts, labels, calls, {h: idx for h, idx in loops.items() if h not in parents}


def parse_amd_code(s, entry):
    """The instruction streams of `entry` and of every function it calls, transitively."""
    streams, seen, todo = [], set(), [entry]
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        insts, labels, calls, loops = parse_amd_function(s, name)
        streams.append((insts, labels, name != entry, loops))
        todo.extend(calls)
    return streams


def amd_hot_loop(streams, is_logic, least=12):
    """The hot code of AMD's .s: the innermost loop (its blocks, by the compiler's loop comments)
    or non-inlined callee holding the most logic instructions (at least `least`); the whole code
    when there is none. Returns (instructions, region description)."""
    regions = []
    for insts, _, callee, loops in streams:
        if callee:
            regions.append((sum(1 for i in insts if is_logic(i[0])), insts, "callee"))
        for idx in loops.values():
            body = [insts[i] for i in idx]
            regions.append((sum(1 for i in body if is_logic(i[0])), body, "loop"))
    regions = [r for r in regions if r[0] >= least]
    if not regions:
        return [i for st in streams for i in st[0]], dict(region="whole kernel")
    _, body, kind = max(regions, key=lambda r: r[0])
    return body, dict(region=kind)


def scratch_bytes(op):
    """Bytes one lane moves with a scratch_/buffer_ load or store (dword 4, dwordx2 8, b64 8, …)."""
    m = re.search(r"dwordx(\d)|_b(\d+)$", op)
    if m:
        return 4 * int(m.group(1)) if m.group(1) else int(m.group(2)) // 8
    if "short" in op:
        return 2
    if "byte" in op:
        return 1
    return 4


def lds_words(op):
    """32-bit words one lane moves with a ds_ read or write."""
    m = re.match(r"ds_(?:read|write|load|store)(2)?(?:st64)?_b(\d+)", op)
    if not m:
        return 0
    return (2 if m.group(1) else 1) * int(m.group(2)) // 32


def amd_mix(insts, sboxes):
    valu = [i[0] for i in insts if i[0].startswith("v_")]
    logic = sum(1 for op in valu if AMD_LOGIC.match(op))
    ds = [i[0] for i in insts if i[0].startswith("ds_")]
    scratch = [i[0] for i in insts if i[0].startswith(("scratch_", "buffer_"))]
    mix = dict(valu=len(valu), logic_valu=logic, lds_instructions=len(ds),
               lds_words=sum(lds_words(op) for op in ds),
               divisions=sum(1 for op in valu if AMD_DIVISION.match(op)),
               scratch_instructions=len(scratch),
               scratch_bytes=sum(scratch_bytes(op) for op in scratch), sboxes=sboxes)
    if sboxes:
        mix.update(valu_per_sbox=round(len(valu) / sboxes, 3),
                   logic_valu_per_sbox=round(logic / sboxes, 3),
                   lds_words_per_sbox=round(mix["lds_words"] / sboxes, 3))
    return mix


def compile_amd(tools, v, arch, tmp):
    base = os.path.join(tmp, re.sub(r"\W", "_", f"{v['pow']}_{v['variant']}") + "." + arch)
    run([tools["clang"], "-x", "cl", "-cl-std=CL1.2", "-O3", "-S", "-Wno-everything",
         "-target", "amdgcn-amd-amdhsa", f"-mcpu={arch}", "-nogpulib",
         "-Xclang", "-mlink-builtin-bitcode",
         "-Xclang", os.path.join(tools["libclc"], "amdgcn--amdhsa.bc"), "-I", KERNELS,
         *v["build_options"].split(), os.path.join(KERNELS, v["kernel"]), "-o", base + ".s"])
    with open(base + ".s") as f:
        s = f.read()
    meta = parse_amd_meta(s, v["entry"])
    streams = parse_amd_code(s, v["entry"])
    hot, where = amd_hot_loop(streams, lambda op: AMD_LOGIC.match(op) is not None)
    # S-boxes in one pass: from the design where the layout says it, else half the XORs (each
    # S-box has two per word).
    sboxes = design_sboxes_per_pass(v["build_options"])
    if sboxes is None:
        xors = sum(1 for i in hot if i[0].startswith("v_xor"))
        sboxes = xors // 2 or None
    whole = [i for st in streams for i in st[0]]
    return dict(registers=meta.get("vgpr_count"), agprs=meta.get("agpr_count", 0),
                sgprs=meta.get("sgpr_count"),
                stack_bytes=meta.get("private_segment_fixed_size", 0),
                spill_bytes=4 * meta.get("vgpr_spill_count", 0),
                shared_bytes=meta.get("group_segment_fixed_size", 0),
                wave=meta.get("wavefront_size", 64),
                hot_loop=dict(where, instructions=len(hot), **amd_mix(hot, sboxes)),
                op_mix_top=dict(list(count(hot).items())[:10]),
                kernel_scratch=sum(1 for i in whole if i[0].startswith(("scratch_", "buffer_"))))


def occupancy_amd(a, c, group):
    waves_g = -(-group // c["wave"])
    g = a["vgpr_granule"]
    by_vgpr = min(a["waves_per_simd"], a["vgprs"] // (-(-(c["registers"] or a["vgprs"]) // g) * g))
    pool = 2 if a["wgp"] else 1  # gfx11 WGP mode: two CUs' LDS and SIMDs
    lim = {"vgprs": by_vgpr, "waves": a["waves_per_simd"]}
    if c["shared_bytes"]:
        groups = a["lds"] * pool // c["shared_bytes"]
        lim["lds"] = round(groups * waves_g / (a["simds"] * pool), 3)  # the mean over the SIMDs
    waves = max(0, min(lim.values()))
    return dict(waves_per_simd=waves, resident_limit=min(lim, key=lim.get),
                occupancy=round(waves / a["waves_per_simd"], 4))


def model_amd(a, c):
    """Nonces/s terms from the hot loop's .s, per S-box: VALU and LDS instructions issue from
    the same wave (the issue term), LDS words share 32 a clock per CU, scratch goes to DRAM."""
    h = c["hot_loop"]
    clk = a["clock_ghz"] * 1e9
    cus = a["units"]
    lanes = cus * AMD_LANES_PER_CLK * clk
    terms = {"ideal": lanes / (AMD_IDEAL_LOGIC_PER_SBOX * SBOX_WORDS_PER_NONCE)}
    sb = h.get("sboxes")
    if sb:
        terms["issue"] = lanes / ((h["valu"] + h["lds_instructions"]) / sb * SBOX_WORDS_PER_NONCE)
        if h["lds_words"]:
            terms["shared"] = cus * SHARED_WORDS_PER_CLK * clk / (
                h["lds_words"] / sb * SBOX_WORDS_PER_NONCE)
        if h["scratch_bytes"]:
            terms["local_memory"] = a["dram_gbs"] * 1e9 / (
                h["scratch_bytes"] / sb * SBOX_WORDS_PER_NONCE)
    return terms


# ---- One row -------------------------------------------------------------------------------------
def measure(tools, v, arch, tmp):
    """Compile `v` for `arch` and model it: the JSON row."""
    a = ARCHS[arch]
    group = defines(v["build_options"]).get("LOCAL_SIZE", 64)
    row = dict(pow=v["pow"], variant=v["variant"], arch=arch, card=a["card"],
               kernel=v["kernel"], entry=v["entry"], build_options=v["build_options"],
               default_for=v.get("default_for", []), group=group)
    if a["vendor"] == "nvidia":
        c = compile_nvidia(tools, v, arch, tmp)
        occ = occupancy_nvidia(a, c["registers"], c["shared_bytes"], group)
        terms = model_nvidia(a, c)
        local_ops = c["kernel_ldl"] + c["kernel_stl"]
    else:
        c = compile_amd(tools, v, arch, tmp)
        occ = occupancy_amd(a, c, group)
        terms = model_amd(a, c)
        local_ops = c["kernel_scratch"]
    row.update(c)
    row.update(occ)
    row["local_ops"] = local_ops
    factor = min(1.0, occ["occupancy"] / OCCUPANCY_FULL)
    rates = {k: t for k, t in terms.items() if k not in ("logic", "ideal")} or dict(terms)
    limiter = min(rates, key=rates.get)
    row.update(terms={k: round(t) for k, t in terms.items()},
               occupancy_factor=round(factor, 4),
               limiter=limiter if factor >= 1 else f"{limiter}+occupancy",
               bound_nonces_per_s=round(min(rates.values()) * factor))
    return row


# ---- Budgets -------------------------------------------------------------------------------------
BUDGET_BEGIN = "<!-- gpu-static budgets -->"
BUDGET_END = "<!-- /gpu-static budgets -->"


def load_budgets(path):
    """The budget rows of the doc's marked table: pow, default_for label, arch, the most stack
    bytes, spill bytes and local-memory instructions, the least modelled G nonces/s."""
    with open(path) as f:
        text = f.read()
    if BUDGET_BEGIN not in text or BUDGET_END not in text:
        raise RuntimeError(f"{path}: no table between {BUDGET_BEGIN} and {BUDGET_END}")
    table = text.split(BUDGET_BEGIN, 1)[1].split(BUDGET_END, 1)[0]
    rows = []
    for line in table.splitlines():
        cells = [x.strip().strip("`") for x in line.strip().strip("|").split("|")]
        if len(cells) < 7 or not cells[0] or cells[0] == "pow" or set(cells[0]) <= set("-: "):
            continue
        try:
            rows.append(dict(pow=cells[0], default_for=cells[1], arch=cells[2],
                             stack_bytes=int(cells[3].replace(",", "")),
                             spill_bytes=int(cells[4].replace(",", "")),
                             local_ops=int(cells[5].replace(",", "")),
                             bound_g=float(cells[6])))
        except ValueError as e:
            raise RuntimeError(f"{path}: budget row {line.strip()!r}: {e}") from None
    if not rows:
        raise RuntimeError(f"{path}: the budget table has no rows")
    return rows


def gpu_label(arch):
    """The `default_for` label of a GPU of this architecture: `gpu:nvidia` or `gpu`."""
    return "gpu:nvidia" if ARCHS[arch]["vendor"] == "nvidia" else "gpu"


def budget_key(b):
    return f"{b['pow']}/{b['default_for']}/{b['arch']}"


def check_budgets(rows, budgets, known_failing):
    """(failures, known failures): one line each, per budget row whose arch was compiled."""
    failures, known = [], []
    archs = {r["arch"] for r in rows}
    for b in budgets:
        if b["arch"] not in archs:
            continue
        key = budget_key(b)
        hits = [r for r in rows if r["arch"] == b["arch"] and r["pow"] == b["pow"]
                and b["default_for"] in r.get("default_for", [])]
        if not hits:
            problems = ["no variant is its default (or it was not selected)"]
        elif "error" in hits[0]:
            problems = ["did not compile"]
        else:
            r = hits[0]
            problems = []
            for field, label in (("stack_bytes", "stack bytes"), ("spill_bytes", "spill bytes"),
                                 ("local_ops", "local-memory instructions")):
                if r[field] > b[field]:
                    problems.append(f"{label} {r[field]} > {b[field]}")
            if r["bound_nonces_per_s"] < b["bound_g"] * 1e9:
                problems.append(f"modelled {r['bound_nonces_per_s'] / 1e9:.2f} G/s < "
                                f"{b['bound_g']} G/s")
            key = f"{key} ({r['variant']})"
        if problems:
            line = f"{key}: {'; '.join(problems)}"
            (known if budget_key(b) in known_failing else failures).append(line)
    return failures, known


# ---- Output --------------------------------------------------------------------------------------
def fmt(x, width, digits=2):
    return f"{'-' if x is None else (f'{x:.{digits}f}' if isinstance(x, float) else x):>{width}}"


def print_table(rows):
    """Two tables: the NVIDIA rows (SASS of the hot loop) and the AMD rows (.s of the hot loop)."""
    nv = [r for r in rows if "error" not in r and ARCHS[r["arch"]]["vendor"] == "nvidia"]
    amd = [r for r in rows if "error" not in r and ARCHS[r["arch"]]["vendor"] == "amd"]
    if nv:
        print(f"{'pow':<11} {'variant':<11} {'arch':<7} {'regs':>4} {'stack':>6} {'spill':>5} "
              f"{'LDL/STL':>7} {'occ':>5} {'insts':>5} {'LOP3':>4} {'sbox':>4} {'i/LOP3':>6} "
              f"{'w/LOP3':>6} {'G/s':>5}  limiter")
        for r in nv:
            h = r["hot_loop"]
            print(f"{r['pow']:<11} {r['variant']:<11} {r['arch']:<7} {fmt(r['registers'], 4)} "
                  f"{r['stack_bytes']:>6} {r['spill_bytes']:>5} {r['local_ops']:>7} "
                  f"{r['occupancy']:>5.3f} {h['instructions']:>5} {h['lop3']:>4} "
                  f"{h['sbox_lop3']:>4} {fmt(h['instructions_per_lop3'], 6)} "
                  f"{fmt(h['shared_words_per_lop3'], 6)} {r['bound_nonces_per_s'] / 1e9:>5.2f}  "
                  f"{r['limiter']}")
    if amd:
        if nv:
            print()
        print(f"{'pow':<11} {'variant':<11} {'arch':<7} {'vgpr':>4} {'stack':>6} {'spill':>5} "
              f"{'scratch':>7} {'waves':>5} {'valu':>5} {'logic':>5} {'sbox':>4} {'logic/sb':>8} "
              f"{'valu/sb':>7} {'w/sb':>5} {'div':>3} {'G/s':>5}  limiter")
        for r in amd:
            h = r["hot_loop"]
            print(f"{r['pow']:<11} {r['variant']:<11} {r['arch']:<7} {fmt(r['registers'], 4)} "
                  f"{r['stack_bytes']:>6} {r['spill_bytes']:>5} {r['local_ops']:>7} "
                  f"{r['waves_per_simd']:>5} {h['valu']:>5} {h['logic_valu']:>5} "
                  f"{fmt(h['sboxes'], 4)} {fmt(h.get('logic_valu_per_sbox'), 8)} "
                  f"{fmt(h.get('valu_per_sbox'), 7)} {fmt(h.get('lds_words_per_sbox'), 5)} "
                  f"{h['divisions']:>3} {r['bound_nonces_per_s'] / 1e9:>5.2f}  {r['limiter']}")
    for r in rows:
        if "error" in r:
            print(f"{r['pow']:<11} {r['variant']:<11} {r['arch']:<7} ERROR {r['error'][:60]}")


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="gpu-static.sh",
        description="Compile the OpenCL kernel variants for NVIDIA and AMD GPUs and model them.")
    p.add_argument("--arch", help=f"comma-separated architectures (default: {','.join(ARCHS)})")
    p.add_argument("--variant", help="comma-separated variant names (default: every one)")
    p.add_argument("--pow", choices=["transaction", "block"], help="one proof of work only")
    p.add_argument("--defaults", action="store_true",
                   help="only each architecture's GPU default (default_for gpu:nvidia on NVIDIA, "
                        "gpu on AMD)")
    p.add_argument("--table", action="store_true", help="a table instead of JSON lines")
    p.add_argument("--budgets", default=DOC,
                   help="the doc whose marked table holds the budgets (default docs/gpu-kernels.md)")
    p.add_argument("--no-budgets", action="store_true", help="do not check the budgets")
    p.add_argument("--known-failing", default=os.environ.get("GPU_STATIC_KNOWN_FAILING", ""),
                   help="comma-separated budget rows (pow/default_for/arch) reported but not "
                        "failed (default $GPU_STATIC_KNOWN_FAILING)")
    return p.parse_args(argv)


def main(argv=None):
    try:
        args = parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code else 0
    archs = args.arch.split(",") if args.arch else list(ARCHS)
    unknown = [a for a in archs if a not in ARCHS]
    if unknown:
        print(f"gpu-static: unknown architecture(s) {unknown}; known: {list(ARCHS)}",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        tools = find_tools(any(ARCHS[a]["vendor"] == "nvidia" for a in archs),
                           any(ARCHS[a]["vendor"] == "amd" for a in archs))
        binary = find_curlpow()
    except Missing as e:
        print(f"gpu-static: SKIP: {e}", file=sys.stderr)
        return EXIT_MISSING
    try:
        variants = load_variants(binary)
        budgets = [] if args.no_budgets else load_budgets(args.budgets)
    except (RuntimeError, OSError) as e:
        print(f"gpu-static: {e}", file=sys.stderr)
        return EXIT_BUDGET
    if args.variant:
        variants = [v for v in variants if v["variant"] in args.variant.split(",")]
    if args.pow:
        variants = [v for v in variants if v["pow"] == args.pow]
    known_failing = {k.strip() for k in args.known_failing.split(",") if k.strip()}

    rows, failed = [], []
    tmp = tempfile.mkdtemp(prefix="gpu-static.")
    try:
        for v in variants:
            for arch in archs:
                if args.defaults and gpu_label(arch) not in v.get("default_for", []):
                    continue
                try:
                    row = measure(tools, v, arch, tmp)
                except (RuntimeError, OSError, KeyError, ZeroDivisionError) as e:
                    row = dict(pow=v["pow"], variant=v["variant"], arch=arch,
                               build_options=v["build_options"],
                               default_for=v.get("default_for", []), error=str(e)[-2000:])
                    failed.append(f"{v['pow']}/{v['variant']}/{arch}: did not compile")
                rows.append(row)
                if not args.table:
                    print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.table:
        print_table(rows)
    over, known = check_budgets(rows, budgets, known_failing)
    for line in known:
        print(f"gpu-static: known failing: {line}", file=sys.stderr)
    for line in failed + over:
        print(f"gpu-static: FAIL: {line}", file=sys.stderr)
    return EXIT_BUDGET if failed or over else 0


if __name__ == "__main__":
    sys.exit(main())
