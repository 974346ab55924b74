// Curl-P-81 proof-of-work search (bit-sliced Pearl Diver) for wgpu, the state in a storage
// buffer.
//
// The host composes the module (src/backend/wgpu/source.rs): a prelude that defines the lane
// word and its helpers
//   alias W = u32;  or  alias W = u64;      (32 or 64 nonces per invocation)
//   fn lowest_lane(m: W) -> u32             (index of the lowest set bit, m != 0)
// so the same code below is compiled for both lane widths, then curl_pow_interface.wgsl (the
// parameters, result, flag, sizes, constants and bindings), curl_pow_shared.wgsl (the S-box
// and the transaction counter writer), this file, the block PoW's counter writer
// (block_pow.wgsl), and the search entry point (search_entry.wgsl) twice: `search` on the
// transaction layout and `block_search` on the block layout, both on this file's transform.
//
// Each invocation owns whole nonces: its own bit-sliced state of 729 trits, one `vec2<W>`
// (x = low half, y = high half) per trit. The state lives in the storage buffer `scratch`,
// interleaved so that neighbouring invocations touch neighbouring words (coalesced on GPUs,
// contiguous vectors on llvmpipe): trit slot `p` of invocation `g` is `scratch[p * stride + g]`.
// Private arrays are avoided on purpose: llvmpipe took minutes to compile them.
//
// The transform is computed in place: the round's index walk I[k] = 364 k mod 729 visits every
// slot once, and after computing new trit k the old value in slot I[k] is needed by no later step
// except slot 0 (needed by the last step: kept aside). The storage is then permuted: logical
// trit i lives in slot (m * i) mod 729 for a multiplier m that each round (or pass) updates.
// FUSE = 1: one round per pass, one load and one store per trit-round. FUSE = 3 (default):
// three rounds fused per pass as a wavefront with register windows, a third of the traffic;
// side slots per invocation for the fused passes' wrap-around copies (21 at most, for five
// fused rounds: 750 slots in all, `SLOTS`).
//
// Loop shape: llvmpipe caps one invocation at 65,535 loop iterations in total (and silently
// computes garbage beyond). Loops are partially unrolled: a single-round transform is 81 * 92
// iterations, a fused one 27 * 198, plus ~370 for set-up and the test (host constant
// LOOP_ITERATIONS_PER_TRANSFORM takes the larger). A dispatch runs `params.transforms`
// transforms per invocation (the launch length the host's sizing picks), never more than
// TRANSFORMS (pipeline-overridable), which the host keeps well under the cap on software
// adapters.
//
// Results: see curl_pow_interface.wgsl.

// (p + d) mod 729 for p, d < 729.
fn add_mod(p: u32, d: u32) -> u32 {
    let q = p + d;
    return select(q, q - STATE_LEN, q >= STATE_LEN);
}

// One in-place step: the new trit from `a` (already loaded, in slot `p`) and the trit in slot
// `next`; writes slot `p` and returns the old value of `next` (the next step's `a`).
fn step(a: vec2<W>, p: u32, next: u32, stride: u32, g: u32) -> vec2<W> {
    let b = scratch[next * stride + g];
    scratch[p * stride + g] = sbox(a, b);
    return b;
}

// 81 in-place rounds, one per pass. Returns the final multiplier m: logical trit i is then in
// slot (m * i) mod 729.
fn transform_single(g: u32, stride: u32) -> u32 {
    var m = 1u;
    for (var r = 0u; r < ROUNDS; r++) {
        m = (m * 364u) % STATE_LEN;
        let first = scratch[g];
        var a = first;
        var p = 0u;
        // Steps 0..728, eight per iteration.
        for (var k = 0u; k < 91u; k++) {
            var n = add_mod(p, m);
            a = step(a, p, n, stride, g);
            p = n; n = add_mod(p, m);
            a = step(a, p, n, stride, g);
            p = n; n = add_mod(p, m);
            a = step(a, p, n, stride, g);
            p = n; n = add_mod(p, m);
            a = step(a, p, n, stride, g);
            p = n; n = add_mod(p, m);
            a = step(a, p, n, stride, g);
            p = n; n = add_mod(p, m);
            a = step(a, p, n, stride, g);
            p = n; n = add_mod(p, m);
            a = step(a, p, n, stride, g);
            p = n; n = add_mod(p, m);
            a = step(a, p, n, stride, g);
            p = n;
        }
        // Step 728 reads slot 0's old value, kept aside.
        scratch[p * stride + g] = sbox(a, first);
    }
    return m;
}

// Three rounds fused per pass (the wavefront of src/cpu/wavefront.rs, as in curl_pow.cl).
// Round r seen through L_r[z] = state_r[alpha_r z] with alpha_{r+1} = -2 alpha_r is a two-tap
// stencil L_{r+1}[z] = S(L_r[z], L_r[z + delta_r]), delta = 4, -2, 1 when a pass starts at
// alpha_0 = -1/8 = 91 (mod 729); it ends in natural order. A pass walks t upwards, loads
// L_0[t], computes one value of each level from register windows and stores L_3[t - 5] into
// the slot L_0[t - 5] came from, which no later step reads: each trit is loaded and stored once
// per three rounds. L_0[0..5] are copied to side slots 729..734 first (the wrap-around reads).
struct Window {
    // L_0[t-4], L_0[t-3], L_0[t-2], L_0[t-1]
    p0: vec2<W>,
    p1: vec2<W>,
    p2: vec2<W>,
    p3: vec2<W>,
    // L_1[t-6], L_1[t-5]
    q0: vec2<W>,
    q1: vec2<W>,
    // L_2[t-5]
    r0: vec2<W>,
    // L_3[t-5], this step's output
    out: vec2<W>,
}

fn step3(w: Window, p4: vec2<W>) -> Window {
    let n1 = sbox(w.p0, p4); // L1[t-4] = S(L0[t-4], L0[t])
    let n2 = sbox(n1, w.q0); // L2[t-4] = S(L1[t-4], L1[t-6])
    let n3 = sbox(w.r0, n2); // L3[t-5] = S(L2[t-5], L2[t-4])
    return Window(w.p1, w.p2, w.p3, p4, w.q1, n1, n2, n3);
}

fn pass3(g: u32, stride: u32, m: u32) {
    var s = 0u;
    for (var z = 0u; z < 5u; z++) {
        scratch[(STATE_LEN + z) * stride + g] = scratch[s * stride + g];
        s = add_mod(s, m);
    }
    let zero = vec2<W>(W(0u), W(0u));
    var w = Window(zero, zero, zero, zero, zero, zero, zero, zero);
    // Read slot of t = -2, write slot of z = 0.
    var rs = STATE_LEN - (2u * m) % STATE_LEN;
    var ws = 0u;
    for (var t = 0u; t < 7u; t++) { // t = -2..5: fill the windows
        w = step3(w, scratch[rs * stride + g]);
        rs = add_mod(rs, m);
    }
    for (var k = 0u; k < 181u; k++) { // t = 5..729, four per iteration
        w = step3(w, scratch[rs * stride + g]);
        scratch[ws * stride + g] = w.out;
        rs = add_mod(rs, m); ws = add_mod(ws, m);
        w = step3(w, scratch[rs * stride + g]);
        scratch[ws * stride + g] = w.out;
        rs = add_mod(rs, m); ws = add_mod(ws, m);
        w = step3(w, scratch[rs * stride + g]);
        scratch[ws * stride + g] = w.out;
        rs = add_mod(rs, m); ws = add_mod(ws, m);
        w = step3(w, scratch[rs * stride + g]);
        scratch[ws * stride + g] = w.out;
        rs = add_mod(rs, m); ws = add_mod(ws, m);
    }
    for (var t = STATE_LEN; t < STATE_LEN + 5u; t++) { // the side copies
        w = step3(w, scratch[t * stride + g]);
        scratch[ws * stride + g] = w.out;
        ws = add_mod(ws, m);
    }
}

// 27 passes of 3 fused rounds. Returns the final multiplier as transform_single does.
fn transform_fused(g: u32, stride: u32) -> u32 {
    var m = 1u;
    for (var p = 0u; p < ROUNDS / 3u; p++) {
        m = (m * 91u) % STATE_LEN;
        pass3(g, stride, m);
    }
    return m;
}

// Five rounds fused per pass: the same wavefront with alpha_0 = -1/32 = 205 (mod 729),
// delta = 16, -8, 4, -2, 1, register windows of 17, 9, 5, 3 and 2 values (index 0 oldest),
// 21 side copies. 81 = 15 passes of 5 + 2 passes of 3. The windows are explicit fields
// (shifted by renaming, no loops: llvmpipe counts every loop iteration against its cap).
struct Window5 {
    a0: vec2<W>,
    a1: vec2<W>,
    a2: vec2<W>,
    a3: vec2<W>,
    a4: vec2<W>,
    a5: vec2<W>,
    a6: vec2<W>,
    a7: vec2<W>,
    a8: vec2<W>,
    a9: vec2<W>,
    a10: vec2<W>,
    a11: vec2<W>,
    a12: vec2<W>,
    a13: vec2<W>,
    a14: vec2<W>,
    a15: vec2<W>,
    a16: vec2<W>,
    b0: vec2<W>,
    b1: vec2<W>,
    b2: vec2<W>,
    b3: vec2<W>,
    b4: vec2<W>,
    b5: vec2<W>,
    b6: vec2<W>,
    b7: vec2<W>,
    b8: vec2<W>,
    c0: vec2<W>,
    c1: vec2<W>,
    c2: vec2<W>,
    c3: vec2<W>,
    c4: vec2<W>,
    d0: vec2<W>,
    d1: vec2<W>,
    d2: vec2<W>,
    e0: vec2<W>,
    e1: vec2<W>,
    out: vec2<W>,
}

fn step5(w: Window5, v: vec2<W>) -> Window5 {
    let nb8 = sbox(w.a1, v);     // L1[t-16] = S(L0[t-16], L0[t])
    let nc4 = sbox(nb8, w.b1);   // L2[t-16] = S(L1[t-16], L1[t-24])
    let nd2 = sbox(w.c1, nc4);   // L3[t-20] = S(L2[t-20], L2[t-16])
    let ne1 = sbox(nd2, w.d1);   // L4[t-20] = S(L3[t-20], L3[t-22])
    let out = sbox(w.e1, ne1);   // L5[t-21] = S(L4[t-21], L4[t-20])
    return Window5(
        w.a1, w.a2, w.a3, w.a4, w.a5, w.a6, w.a7, w.a8,
        w.a9, w.a10, w.a11, w.a12, w.a13, w.a14, w.a15, w.a16,
        v, w.b1, w.b2, w.b3, w.b4, w.b5, w.b6, w.b7,
        w.b8, nb8, w.c1, w.c2, w.c3, w.c4, nc4, w.d1,
        w.d2, nd2, w.e1, ne1, out,
    );
}

fn pass5(g: u32, stride: u32, m: u32) {
    var s = 0u;
    for (var z = 0u; z < 21u; z++) {
        scratch[(STATE_LEN + z) * stride + g] = scratch[s * stride + g];
        s = add_mod(s, m);
    }
    let o = vec2<W>(W(0u), W(0u));
    var w = Window5(
        o, o, o, o, o, o, o, o, o, o, o, o,
        o, o, o, o, o, o, o, o, o, o, o, o,
        o, o, o, o, o, o, o, o, o, o, o, o,
        o,
    );
    // Read slot of t = -10, write slot of z = 0.
    var rs = STATE_LEN - (10u * m) % STATE_LEN;
    var ws = 0u;
    for (var t = 0u; t < 31u; t++) { // t = -10..21: fill the windows
        w = step5(w, scratch[rs * stride + g]);
        rs = add_mod(rs, m);
    }
    for (var k = 0u; k < 177u; k++) { // t = 21..729, four per iteration
        w = step5(w, scratch[rs * stride + g]);
        scratch[ws * stride + g] = w.out;
        rs = add_mod(rs, m); ws = add_mod(ws, m);
        w = step5(w, scratch[rs * stride + g]);
        scratch[ws * stride + g] = w.out;
        rs = add_mod(rs, m); ws = add_mod(ws, m);
        w = step5(w, scratch[rs * stride + g]);
        scratch[ws * stride + g] = w.out;
        rs = add_mod(rs, m); ws = add_mod(ws, m);
        w = step5(w, scratch[rs * stride + g]);
        scratch[ws * stride + g] = w.out;
        rs = add_mod(rs, m); ws = add_mod(ws, m);
    }
    for (var t = STATE_LEN; t < STATE_LEN + 21u; t++) { // the side copies
        w = step5(w, scratch[t * stride + g]);
        scratch[ws * stride + g] = w.out;
        ws = add_mod(ws, m);
    }
}

// 15 passes of 5 fused rounds, then 2 of 3. Returns the final multiplier.
fn transform_fused5(g: u32, stride: u32) -> u32 {
    var m = 1u;
    for (var p = 0u; p < 15u; p++) {
        m = (m * 205u) % STATE_LEN;
        pass5(g, stride, m);
    }
    for (var p = 0u; p < 2u; p++) {
        m = (m * 91u) % STATE_LEN;
        pass3(g, stride, m);
    }
    return m;
}

// The transform of invocation g's state (slots 0..729 in natural order on entry). FUSE picks
// the shape; both leave logical trit i in slot (m * i) mod 729 for the returned m.
fn transform(g: u32, stride: u32) -> u32 {
    if FUSE == 5u {
        return transform_fused5(g, stride);
    }
    if FUSE == 3u {
        return transform_fused(g, stride);
    }
    return transform_single(g, stride);
}

// Invocation g's state: slot z of it is scratch[z * stride + g].
struct StateRef {
    stride: u32,
    g: u32,
}

// Trit z of the state before its transform (slot z: natural order).
fn set_trit(st: StateRef, z: u32, v: vec2<W>) {
    scratch[z * st.stride + st.g] = v;
}

// Copy the mid-state into invocation g's slots (lane trits included, counter trits zero).
fn load_mid_state(stride: u32, g: u32) {
    for (var i = 0u; i < STATE_LEN; i += 9u) {
        scratch[(i + 0u) * stride + g] = mid_state[i + 0u];
        scratch[(i + 1u) * stride + g] = mid_state[i + 1u];
        scratch[(i + 2u) * stride + g] = mid_state[i + 2u];
        scratch[(i + 3u) * stride + g] = mid_state[i + 3u];
        scratch[(i + 4u) * stride + g] = mid_state[i + 4u];
        scratch[(i + 5u) * stride + g] = mid_state[i + 5u];
        scratch[(i + 6u) * stride + g] = mid_state[i + 6u];
        scratch[(i + 7u) * stride + g] = mid_state[i + 7u];
        scratch[(i + 8u) * stride + g] = mid_state[i + 8u];
    }
}

// Lanes whose last `mwm` hash trits are zero (bit l = lane l), reading logical trit i from
// slot (m * i) mod 729.
fn zero_mask(m: u32, mwm: u32, stride: u32, g: u32) -> W {
    var mask = ~W(0u);
    for (var i = HASH_LEN - mwm; i < HASH_LEN; i++) {
        let t = scratch[((m * i) % STATE_LEN) * stride + g];
        mask &= ~(t.x ^ t.y);
    }
    return mask;
}

// Counter offsets j' * stride + g of invocation g with j <= j' < n inside the dispatch (below
// params.remaining): what it leaves untried when it stops at transform j.
// (remaining - g - 1) / stride + 1 counts them without passing 2^32 for any remaining.
fn untried(j: u32, n: u32, stride: u32, g: u32) -> u32 {
    if g >= params.remaining {
        return 0u;
    }
    let total = min(n, (params.remaining - g - 1u) / stride + 1u);
    return select(0u, total - j, total > j);
}

// The transform test entry point: invocation g transforms the state the host wrote into its
// slots (params.stride invocations), leaving logical trit i in slot (m * i) mod 729 with the
// multiplier m the host computes the same way.
@compute @workgroup_size(WORKGROUP_SIZE)
fn transform_states(@builtin(global_invocation_id) gid: vec3<u32>) {
    let g = gid.x;
    if g >= params.stride {
        return;
    }
    _ = transform(g, params.stride);
}
