// Curl-P-81 proof-of-work, bit-sliced, one whole state per work-item.
//
// Built by src/opencl/mod.rs with these macros (-D):
//   LANE_BITS   32 or 64: the scalar word (uint or ulong)
//   VEC         1, 2, 4, 8 or 16: words per trit half (OpenCL vector type when > 1)
//                 lanes per work-item = LANE_BITS * VEC (at most 729)
//   STATE_LOCAL 0: the state lives in private memory;
//               1: in __local memory, laid out [slot][half][work-item] (LOCAL_SIZE work-items)
//   LOCAL_SIZE  work-group size the kernel is launched with (used when STATE_LOCAL is 1)
//   FUSE        1: one round per pass over the state; 3 or 5: that many rounds fused per pass
//
// Encoding of one trit (src/bitslice.rs): -1 -> (lo 1, hi 0), 0 -> (1, 1), +1 -> (0, 1).
// S-box, 4 operations: lo' = a.hi ^ (~b.lo & a.lo); hi' = a.lo ^ (b.hi & lo').
//
// In-place, permuted state (the CPU kernels' layout, src/cpu/wavefront.rs): one round's index walk
// I[k] = 364 k mod 729 visits every slot once, so the new trit of chain position k can overwrite
// the slot of old logical trit I[k] (only slot I[0] is needed again, at the very end: it is kept
// in registers). After a round logical trit j lives in slot (c * j) mod 729, c multiplied by 364
// each round; the walk of a round steps by d = 364 c. Half the memory of a double buffer, one
// load and one store per trit-round.
//
// Nonce layout (src/search.rs): lane l of a work-item = lane l of the layout, block trits
// 162..168 hold balanced ternary of l - 364, trits 168..210 the 64-bit counter, 210..243 zero.

#define STATE_LEN 729
#define HASH_LEN 243
#define ROUNDS 81
#define LANE_TRIT0 162
#define COUNTER_TRIT0 168
#define COUNTER_TRITS 42
#define LANES (LANE_BITS * VEC)
#ifndef FUSE
#define FUSE 3
#endif
#if FUSE == 1
#define SLOTS STATE_LEN
#elif FUSE == 3
#define SLOTS (STATE_LEN + 5)
#elif FUSE == 5
#define SLOTS (STATE_LEN + 21)
#else
#error "FUSE must be 1, 3 or 5"
#endif

#if LANE_BITS == 64
typedef ulong B;
#define B_NAME ulong
#elif LANE_BITS == 32
typedef uint B;
#define B_NAME uint
#else
#error "LANE_BITS must be 32 or 64"
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#if VEC == 1
typedef B W;
#else
typedef CAT(B_NAME, VEC) W;
#endif

#if STATE_LOCAL
#define STATE_SPACE __local
#define STRIDE LOCAL_SIZE
#else
#define STATE_SPACE __private
#define STRIDE 1
#endif

// The state pointer is already offset by the work-item's column.
#define LO(st, i) (st)[(2 * (i)) * STRIDE]
#define HI(st, i) (st)[(2 * (i) + 1) * STRIDE]

// All ones / all zeros.
#define ONES ((W)(~(B)0))
#define ZEROS ((W)((B)0))
#define SPLAT(cond) ((cond) ? ONES : ZEROS)

// Component c of a private W.
#define COMP(wptr, c) (((__private B *)(wptr))[(c)])

// The S-box on bit-sliced pairs: out = S(a, b).
#define SBOX(olo, ohi, alo, ahi, blo, bhi)                                                      \
    do {                                                                                       \
        olo = (ahi) ^ (~(blo) & (alo));                                                        \
        ohi = (alo) ^ ((bhi) & olo);                                                           \
    } while (0)

#if FUSE == 1
// 81 single rounds in place. Returns the final multiplier c: logical trit j is in slot
// (c * j) % 729.
uint transform(STATE_SPACE W *st) {
    uint c = 1;
    for (uint r = 0; r < ROUNDS; r++) {
        const uint d = (c * 364u) % STATE_LEN;
        // Slot of chain position 0 is slot 0 (logical 0 is always in slot 0).
        W a_lo = LO(st, 0);
        W a_hi = HI(st, 0);
        const W z_lo = a_lo;
        const W z_hi = a_hi;
        uint s = 0;
        for (uint k = 0; k < STATE_LEN - 1; k++) {
            uint n = s + d;
            n = (n >= STATE_LEN) ? n - STATE_LEN : n;
            const W b_lo = LO(st, n);
            const W b_hi = HI(st, n);
            W lo, hi;
            SBOX(lo, hi, a_lo, a_hi, b_lo, b_hi);
            LO(st, s) = lo;
            HI(st, s) = hi;
            a_lo = b_lo;
            a_hi = b_hi;
            s = n;
        }
        // Chain position 728: its b is old logical 0, kept aside.
        W lo, hi;
        SBOX(lo, hi, a_lo, a_hi, z_lo, z_hi);
        LO(st, s) = lo;
        HI(st, s) = hi;
        c = d;
    }
    return c;
}
#else
// Passes of 3 or 5 fused rounds, in place (the wavefront of src/cpu/wavefront.rs).
//
// Round r seen through L_r[z] = state_r[alpha_r z] with alpha_{r+1} = -2 alpha_r is a two-tap
// stencil: L_{r+1}[z] = S(L_r[z], L_r[z + delta_r]), delta_{r+1} = -delta_r / 2. A pass of F
// rounds starts at alpha_0 = -1/2^F (delta = 4, -2, 1 for F = 3; 16, -8, 4, -2, 1 for F = 5)
// and ends in natural order (L_F[z] = state_{r+F}[z]). It walks t upwards: loads L_0[t],
// computes one value of every level from register windows (level k keeps its last |delta_k| + 1
// values), and stores L_F[t - lag] into the slot L_0[t - lag] came from, which no later step
// reads. Each trit is loaded and stored once per F rounds. L_0[z] lives in slot (m z) mod 729
// (m = c alpha_0); for z >= 729 the pass reads copies of L_0[z - 729] made in side slots
// 729.. before it starts; z < 0 reads slots not yet overwritten.
// FUSE 3: 27 passes of 3. FUSE 5: 15 passes of 5, then 2 of 3 (81 = 75 + 6).

#define ALPHA3 91u  /* -1/8 mod 729:  8 * 91 = 728 */
#define ALPHA5 205u /* -1/32 mod 729: 32 * 205 = 6560 = 9 * 729 - 1 */

#define NEXT_SLOT(x, m)                                                                        \
    do {                                                                                       \
        x += (m);                                                                              \
        x = (x >= STATE_LEN) ? x - STATE_LEN : x;                                              \
    } while (0)

// Copy L_0[0..n] into the side slots.
void side_copies(STATE_SPACE W *st, uint m, uint n) {
    uint s = 0;
    for (uint z = 0; z < n; z++) {
        LO(st, STATE_LEN + z) = LO(st, s);
        HI(st, STATE_LEN + z) = HI(st, s);
        NEXT_SLOT(s, m);
    }
}

// One pass of 3 rounds with multiplier m.
void pass3(STATE_SPACE W *st, uint m) {
    side_copies(st, m, 5);
    W p0l = ZEROS, p0h = ZEROS, p1l = ZEROS, p1h = ZEROS, p2l = ZEROS, p2h = ZEROS,
      p3l = ZEROS, p3h = ZEROS;
    W q0l = ZEROS, q0h = ZEROS, q1l = ZEROS, q1h = ZEROS;
    W r0l = ZEROS, r0h = ZEROS;
    // Read slot of t = -2; write slot of z = 0.
    uint rs = STATE_LEN - (2u * m) % STATE_LEN;
    uint ws = 0;

#define STEP3(LOAD_SLOT, STORE)                                                                \
    do {                                                                                       \
        const W p4l = LO(st, LOAD_SLOT);                                                       \
        const W p4h = HI(st, LOAD_SLOT);                                                       \
        W n1l, n1h, n2l, n2h, n3l, n3h;                                                        \
        SBOX(n1l, n1h, p0l, p0h, p4l, p4h); /* L1[t-4] = S(L0[t-4], L0[t]) */                  \
        SBOX(n2l, n2h, n1l, n1h, q0l, q0h); /* L2[t-4] = S(L1[t-4], L1[t-6]) */                \
        SBOX(n3l, n3h, r0l, r0h, n2l, n2h); /* L3[t-5] = S(L2[t-5], L2[t-4]) */                \
        if (STORE) {                                                                           \
            LO(st, ws) = n3l;                                                                  \
            HI(st, ws) = n3h;                                                                  \
            NEXT_SLOT(ws, m);                                                                  \
        }                                                                                      \
        p0l = p1l; p0h = p1h; p1l = p2l; p1h = p2h; p2l = p3l; p2h = p3h; p3l = p4l; p3h = p4h; \
        q0l = q1l; q0h = q1h; q1l = n1l; q1h = n1h;                                            \
        r0l = n2l; r0h = n2h;                                                                  \
    } while (0)

    for (int t = -2; t < 5; t++) { // fill the windows
        STEP3(rs, 0);
        NEXT_SLOT(rs, m);
    }
#pragma unroll 4
    for (uint t = 5; t < STATE_LEN; t++) { // store L3[t - 5]
        STEP3(rs, 1);
        NEXT_SLOT(rs, m);
    }
    for (uint t = STATE_LEN; t < STATE_LEN + 5; t++) { // read the side copies
        STEP3(t, 1);
    }
#undef STEP3
}

#if FUSE == 5
// One pass of 5 rounds with multiplier m. Windows: L0 17 values, L1 9, L2 5, L3 3, L4 2
// (index 0 oldest); fully unrolled shifts so that they stay in registers.
void pass5(STATE_SPACE W *st, uint m) {
    side_copies(st, m, 21);
    W al[17], ah[17], bl[9], bh[9], cl[5], ch[5], dl[3], dh[3], el[2], eh[2];
#pragma unroll
    for (int i = 0; i < 17; i++) { al[i] = ZEROS; ah[i] = ZEROS; }
#pragma unroll
    for (int i = 0; i < 9; i++) { bl[i] = ZEROS; bh[i] = ZEROS; }
#pragma unroll
    for (int i = 0; i < 5; i++) { cl[i] = ZEROS; ch[i] = ZEROS; }
#pragma unroll
    for (int i = 0; i < 3; i++) { dl[i] = ZEROS; dh[i] = ZEROS; }
    el[0] = el[1] = eh[0] = eh[1] = ZEROS;
    // Read slot of t = -10; write slot of z = 0.
    uint rs = STATE_LEN - (10u * m) % STATE_LEN;
    uint ws = 0;

#define SHIFT(arr, n)                                                                          \
    _Pragma("unroll") for (int i = 0; i < (n) - 1; i++) { arr[i] = arr[i + 1]; }

#define STEP5(LOAD_SLOT, STORE)                                                                \
    do {                                                                                       \
        SHIFT(al, 17) SHIFT(ah, 17)                                                            \
        al[16] = LO(st, LOAD_SLOT);                                                            \
        ah[16] = HI(st, LOAD_SLOT);                                                            \
        SHIFT(bl, 9) SHIFT(bh, 9)                                                              \
        SBOX(bl[8], bh[8], al[0], ah[0], al[16], ah[16]); /* L1[t-16] */                       \
        SHIFT(cl, 5) SHIFT(ch, 5)                                                              \
        SBOX(cl[4], ch[4], bl[8], bh[8], bl[0], bh[0]);   /* L2[t-16] */                       \
        SHIFT(dl, 3) SHIFT(dh, 3)                                                              \
        SBOX(dl[2], dh[2], cl[0], ch[0], cl[4], ch[4]);   /* L3[t-20] */                       \
        SHIFT(el, 2) SHIFT(eh, 2)                                                              \
        SBOX(el[1], eh[1], dl[2], dh[2], dl[0], dh[0]);   /* L4[t-20] */                       \
        if (STORE) {                                                                           \
            W ol, oh;                                                                          \
            SBOX(ol, oh, el[0], eh[0], el[1], eh[1]);     /* L5[t-21] */                       \
            LO(st, ws) = ol;                                                                   \
            HI(st, ws) = oh;                                                                   \
            NEXT_SLOT(ws, m);                                                                  \
        }                                                                                      \
    } while (0)

    for (int t = -10; t < 21; t++) { // fill the windows
        STEP5(rs, 0);
        NEXT_SLOT(rs, m);
    }
#pragma unroll 16
    for (uint t = 21; t < STATE_LEN; t++) { // store L5[t - 21]
        STEP5(rs, 1);
        NEXT_SLOT(rs, m);
    }
    for (uint t = STATE_LEN; t < STATE_LEN + 21; t++) { // read the side copies
        STEP5(t, 1);
    }
#undef STEP5
#undef SHIFT
}
#endif

// The whole transform. Returns the final multiplier c: logical trit j is in slot (c * j) % 729.
uint transform(STATE_SPACE W *st) {
    uint c = 1;
#if FUSE == 5
    for (uint pass = 0; pass < 15; pass++) {
        c = (c * ALPHA5) % STATE_LEN;
        pass5(st, c);
    }
    for (uint pass = 0; pass < 2; pass++) {
        c = (c * ALPHA3) % STATE_LEN;
        pass3(st, c);
    }
#else
    for (uint pass = 0; pass < ROUNDS / 3; pass++) {
        c = (c * ALPHA3) % STATE_LEN;
        pass3(st, c);
    }
#endif
    return c;
}
#endif

// Bit `lane` of a private W. (No `inline` anywhere: C99 inline semantics can leave a
// non-inlined call without a definition on some OpenCL compilers; they inline anyway.)
void set_bit(W *w, uint lane, bool v) {
    const uint ci = lane / LANE_BITS;
    const B bit = ((B)1) << (lane % LANE_BITS);
    if (v) {
        COMP(w, ci) |= bit;
    } else {
        COMP(w, ci) &= ~bit;
    }
}

bool get_bit(const W *w, uint lane) {
    return ((COMP(w, lane / LANE_BITS) >> (lane % LANE_BITS)) & 1) != 0;
}

// Lowest set lane of w, or -1.
int lowest_lane(const W *w) {
    for (uint ci = 0; ci < VEC; ci++) {
        const B x = COMP(w, ci);
        if (x != 0) {
            return (int)(ci * LANE_BITS + popcount((x & (~x + 1)) - 1));
        }
    }
    return -1;
}

// The search: work-item `gid` tries counters base + gid * iters + i for i < iters (and only
// those with gid * iters + i < limit), each over LANES lanes. The first hit anywhere claims
// res[0] with an atomic and writes res[1..3] = lane, counter low, counter high (the layout
// every GPU backend shares).
__kernel void curl_search(__global const char *mid, ulong base, uint iters, ulong limit,
                          uint mwm, __global volatile uint *res) {
    const ulong gid = get_global_id(0);
#if STATE_LOCAL
    __local W lst[2 * SLOTS * LOCAL_SIZE];
    __local W *st = lst + get_local_id(0);
#else
    W pst[2 * SLOTS];
    W *st = pst;
#endif

    // Lane-number trits: lane l holds balanced ternary of l - 364.
    W lane_lo[6], lane_hi[6];
    for (uint j = 0; j < 6; j++) {
        lane_lo[j] = ZEROS;
        lane_hi[j] = ZEROS;
    }
    for (uint l = 0; l < LANES; l++) {
        int v = (int)l - 364;
        for (uint j = 0; j < 6; j++) {
            int r = v % 3; // -2..2
            int t = (r == 2) ? -1 : ((r == -2) ? 1 : r);
            v = (v - t) / 3;
            set_bit(&lane_lo[j], l, t != 1);
            set_bit(&lane_hi[j], l, t != -1);
        }
    }

    for (uint it = 0; it < iters; it++) {
        const ulong idx = gid * (ulong)iters + it;
        if (idx >= limit || res[0] != 0) {
            return;
        }
        const ulong counter = base + idx;

        for (uint i = 0; i < STATE_LEN; i++) {
            const char t = mid[i];
            LO(st, i) = SPLAT(t != 1);
            HI(st, i) = SPLAT(t != -1);
        }
        for (uint j = 0; j < 6; j++) {
            LO(st, LANE_TRIT0 + j) = lane_lo[j];
            HI(st, LANE_TRIT0 + j) = lane_hi[j];
        }
        ulong n = counter;
        for (uint j = 0; j < COUNTER_TRITS; j++) {
            const uint r = (uint)(n % 3);
            n /= 3;
            int t = (int)r;
            if (r == 2) {
                t = -1;
                n += 1;
            }
            LO(st, COUNTER_TRIT0 + j) = SPLAT(t != 1);
            HI(st, COUNTER_TRIT0 + j) = SPLAT(t != -1);
        }

        const uint c = transform(st);

        W m = ONES;
        uint s = (c * (HASH_LEN - mwm)) % STATE_LEN;
        for (uint j = HASH_LEN - mwm; j < HASH_LEN; j++) {
            m &= ~(LO(st, s) ^ HI(st, s));
            s += c;
            s = (s >= STATE_LEN) ? s - STATE_LEN : s;
        }
        const int lane = lowest_lane(&m);
        if (lane >= 0) {
            if (atomic_cmpxchg(&res[0], 0u, 1u) == 0u) {
                res[1] = (uint)lane;
                res[2] = (uint)counter;
                res[3] = (uint)(counter >> 32);
            }
            return;
        }
    }
}

// The transform test entry point: work-item `gid` transforms states gid * LANES .. + LANES of
// `input` (n_states states of 729 trits each, one char per trit) into `output`, through the same
// bit-sliced in-place code as the search.
__kernel void curl_transform(__global const char *input, __global char *output, uint n_states) {
    const uint first = get_global_id(0) * LANES;
#if STATE_LOCAL
    __local W lst[2 * SLOTS * LOCAL_SIZE];
    __local W *st = lst + get_local_id(0);
#else
    W pst[2 * SLOTS];
    W *st = pst;
#endif
    for (uint i = 0; i < STATE_LEN; i++) {
        W lo = ZEROS, hi = ZEROS;
        for (uint l = 0; l < LANES; l++) {
            const uint k = first + l;
            const char t = (k < n_states) ? input[(size_t)k * STATE_LEN + i] : 0;
            set_bit(&lo, l, t != 1);
            set_bit(&hi, l, t != -1);
        }
        LO(st, i) = lo;
        HI(st, i) = hi;
    }
    const uint c = transform(st);
    uint s = 0;
    for (uint j = 0; j < STATE_LEN; j++) {
        const W lo = LO(st, s);
        const W hi = HI(st, s);
        for (uint l = 0; l < LANES; l++) {
            const uint k = first + l;
            if (k < n_states) {
                const bool bl = get_bit(&lo, l);
                const bool bh = get_bit(&hi, l);
                output[(size_t)k * STATE_LEN + j] = bl ? (bh ? 0 : -1) : 1;
            }
        }
        s += c;
        s = (s >= STATE_LEN) ? s - STATE_LEN : s;
    }
}
