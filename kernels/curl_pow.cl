// Curl-P-81 proof-of-work, bit-sliced: the transaction search (`curl_search`) and the block
// search (`block_search`) on one transform, one set-up and one result protocol; they differ only
// in the nonce's layout ("The two nonce layouts" below). `curl_transform` is the transform's
// test entry point.
//
// Built by src/backend/opencl/session.rs with these macros (-D):
//   LANE_BITS   32 or 64: the scalar word (uint or ulong)
//   VEC         1, 2, 4, 8 or 16: words per trit half (OpenCL vector type when > 1)
//                 lanes per work-item = LANE_BITS * VEC (at most 729)
//   STATE_LOCAL 0: the state lives in private memory;
//               1: in __local memory, laid out [slot][half][work-item] (LOCAL_SIZE work-items)
//   LOCAL_SIZE  work-group size the kernel is launched with (used when STATE_LOCAL is 1)
//   FUSE        1: one round per pass over the state; 3 or 5: that many rounds fused per pass;
//               4 (the cooperative kernel only): 3 passes of 3 rounds, then 18 of 4
//   PREFETCH    0: load each trit when its step needs it; 2..4: load it that many steps ahead
//               (fused passes only), so that a load's latency overlaps the steps before it
//   COOP        0: one state per work-item (the above); 1: the cooperative kernel at the end of
//               this file: COOP_P work-items share each 32-lane state, kept in __local memory
//               (COOP_S states per work-group, LOCAL_SIZE = COOP_P * COOP_S)
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
// Nonce layouts: see "The two nonce layouts" below; lane l of a state is lane l of the layout.
//
// Results (src/backend/gpu/driver.rs): `flag` (one word for the whole search) is claimed once with an
// atomic by the first hit; its claimer writes res[0..4] = 1, lane, counter low, counter high of
// its launch's result slot. Every state checks the flag before each transform and stops when it
// is set, adding the counters it did not try to res[4] (`skipped`), so the host counts exactly
// the nonces tried.

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
#ifndef PREFETCH
#define PREFETCH 0
#endif
#ifndef COOP
#define COOP 0
#endif
#if PREFETCH != 0 && (PREFETCH < 2 || PREFETCH > 4 || FUSE == 1)
#error "PREFETCH must be 0, or 2..4 with fused passes"
#endif
#if FUSE == 4 && !COOP
#error "FUSE 4 is the cooperative kernel's"
#endif
#if FUSE == 1 || FUSE == 4
#define SLOTS STATE_LEN
#elif FUSE == 3
#define SLOTS (STATE_LEN + 5)
#elif FUSE == 5
#define SLOTS (STATE_LEN + 21)
#else
#error "FUSE must be 1, 3 or 5 (4: the cooperative kernel)"
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

// Loading L_0[t] for the step at position t: LOAD_AT(vl, vh, SLOT, SIDE) loads slot SLOT now,
// or, with PREFETCH = D, takes the value loaded D steps earlier and loads position t + D (slot
// `ps` of the running walk below 729, side slot t + D above it; past the last side slot a
// harmless dummy). Prefetching is safe in place: a step stores to the slot of position t - lag,
// which no load of positions t .. t + D touches.
#if PREFETCH
#define PF_DECL W pfl[PREFETCH], pfh[PREFETCH]; uint ps; int pt;
#define PF_LOAD_ONE(i, SIDE)                                                                   \
    do {                                                                                       \
        const uint ls_ = (pt < (int)STATE_LEN) ? ps : (uint)min(pt, (int)(STATE_LEN + (SIDE) - 1)); \
        pfl[i] = LO(st, ls_);                                                                  \
        pfh[i] = HI(st, ls_);                                                                  \
        NEXT_SLOT(ps, m);                                                                      \
        pt++;                                                                                  \
    } while (0)
#define PF_START(first_slot, first_pos, SIDE)                                                  \
    do {                                                                                       \
        ps = (first_slot);                                                                     \
        pt = (first_pos);                                                                      \
        _Pragma("unroll") for (int i_ = 0; i_ < PREFETCH; i_++) { PF_LOAD_ONE(i_, SIDE); }     \
    } while (0)
#define LOAD_AT(vl, vh, SLOT, SIDE)                                                            \
    do {                                                                                       \
        vl = pfl[0];                                                                           \
        vh = pfh[0];                                                                           \
        _Pragma("unroll") for (int i_ = 0; i_ < PREFETCH - 1; i_++) {                          \
            pfl[i_] = pfl[i_ + 1];                                                             \
            pfh[i_] = pfh[i_ + 1];                                                             \
        }                                                                                      \
        PF_LOAD_ONE(PREFETCH - 1, SIDE);                                                       \
    } while (0)
#else
#define PF_DECL
#define PF_START(first_slot, first_pos, SIDE)
#define LOAD_AT(vl, vh, SLOT, SIDE)                                                            \
    do {                                                                                       \
        vl = LO(st, SLOT);                                                                     \
        vh = HI(st, SLOT);                                                                     \
    } while (0)
#endif

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
    PF_DECL
    PF_START(rs, -2, 5);

#define STEP3(LOAD_SLOT, STORE)                                                                \
    do {                                                                                       \
        W p4l, p4h;                                                                            \
        LOAD_AT(p4l, p4h, LOAD_SLOT, 5);                                                       \
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
    PF_DECL
    PF_START(rs, -10, 21);

#define SHIFT(arr, n)                                                                          \
    _Pragma("unroll") for (int i = 0; i < (n) - 1; i++) { arr[i] = arr[i + 1]; }

#define STEP5(LOAD_SLOT, STORE)                                                                \
    do {                                                                                       \
        SHIFT(al, 17) SHIFT(ah, 17)                                                            \
        LOAD_AT(al[16], ah[16], LOAD_SLOT, 21);                                                \
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

// ---- The two nonce layouts -------------------------------------------------------------------
// Both searches run the same transform, set-up, zero test and result protocol; they differ only
// in where the nonce's trits go and what they say (`pow`, a constant in each entry point):
//   POW_TX    (curl_search): lane l at trits 162..168 (balanced ternary of l - 364), the 64-bit
//             counter at 168..210 (42 balanced trits); src/search/nonce.rs.
//   POW_BLOCK (block_search): the nonce counter << 16 | lane in b1t6 (each little-endian byte a
//             signed 8-bit number in six balanced trits, least significant first): the lane's
//             two bytes at 192..204, the counter's six at 204..240; src/search/block/job.rs.
// The nonce's trits are contiguous: lane trits, then counter trits.
#define POW_TX 0u
#define POW_BLOCK 1u
#define LANE_T0(pow) ((pow) == POW_BLOCK ? 192u : 162u)
#define LANE_TN(pow) ((pow) == POW_BLOCK ? 12u : 6u)
#define CTR_TN(pow) ((pow) == POW_BLOCK ? 36u : 42u)
#define NONCE_TN(pow) (LANE_TN(pow) + CTR_TN(pow))
#define MAX_LANE_TRITS 12

// Balanced trit j (< 6) of v, |v| <= 364: standard trit j of v + 364, minus one.
int small_trit(int v, uint j) {
    uint x = (uint)(v + 364);
    for (uint k = 0; k < j; k++) {
        x /= 3u;
    }
    return (int)(x % 3u) - 1;
}

// Trit j (< LANE_TN) of lane l's number.
int lane_trit(uint pow, uint l, uint j) {
    if (pow == POW_BLOCK) {
        const uint byte = (j < 6u ? l : l >> 8) & 0xffu;
        return small_trit((int)(char)(uchar)byte, j % 6u);
    }
    return small_trit((int)l - 364, j);
}

// All LANE_TN trits of lane l's number into t[] (one division chain per 6 trits).
void lane_trits_of(uint pow, uint l, int *t) {
    for (uint b = 0; b < LANE_TN(pow) / 6u; b++) {
        // Transaction: l - 364 + 364 = l; block: byte b read as a signed 8-bit number.
        uint x = pow == POW_BLOCK ? (uint)((int)(char)(uchar)((l >> (8u * b)) & 0xffu) + 364) : l;
        for (uint k = 0; k < 6u; k++) {
            t[6u * b + k] = (int)(x % 3u) - 1;
            x /= 3u;
        }
    }
}

#define P3_14 4782969u /* 3^14 */
#define H3_14 2391484u /* (3^14 - 1) / 2 */

// Trit j (< CTR_TN) of counter n, computed on its own (so that work-items can compute the
// trits of one counter in parallel). A transaction counter is split n = a 3^28 + b 3^14 + c
// (two divisions by a constant, or from the pieces of n - 1: counter_pieces_next); each piece
// plus (3^14 - 1) / 2, carried upwards, holds 14 balanced trits as standard trits plus one.
int counter_trit3(uint a, uint b, uint c, uint j) {
    uint x0 = c + H3_14;
    const uint c0 = x0 >= P3_14 ? 1u : 0u;
    x0 -= c0 * P3_14;
    uint x1 = b + c0 + H3_14;
    const uint c1 = x1 >= P3_14 ? 1u : 0u;
    x1 -= c1 * P3_14;
    uint x = j < 14u ? x0 : (j < 28u ? x1 : a + c1 + H3_14);
    for (uint k = j % 14u; k > 0; k--) {
        x /= 3u;
    }
    return (int)(x % 3u) - 1;
}

// The pieces a, b, c of a transaction counter n = a 3^28 + b 3^14 + c.
uint3 counter_pieces(ulong n) {
    const ulong q = n / P3_14;
    const uint c = (uint)(n - q * P3_14);
    const uint a = (uint)(q / P3_14); // < 2^64 / 3^28 < 3^14 / 2
    return (uint3)(a, (uint)(q - (ulong)a * P3_14), c);
}

// The pieces of n + 1 from those of n.
uint3 counter_pieces_next(uint3 v) {
    v.z++;
    if (v.z == P3_14) {
        v.z = 0;
        v.y++;
        if (v.y == P3_14) {
            v.y = 0;
            v.x++;
        }
    }
    return v;
}

int counter_trit(uint pow, ulong n, uint j) {
    if (pow == POW_BLOCK) {
        const uint byte = (uint)(n >> (8u * (j / 6u))) & 0xffu;
        return small_trit((int)(char)(uchar)byte, j % 6u);
    }
    const uint3 v = counter_pieces(n);
    return counter_trit3(v.x, v.y, v.z, j);
}

// The stop flag, read atomically (an atomic no-op: OpenCL 1.2 has no atomic load).
#define STOP_SET(flag) (atomic_or(&(flag)[0], 0u) != 0u)

#if !COOP

// The search of either PoW (`pow`): work-item `gid` tries counters base + gid * iters + i for
// i < iters (and only those with gid * iters + i < limit), each over LANES lanes; see "Results"
// above. `st`: the work-item's state.
__attribute__((always_inline)) void search(const uint pow, STATE_SPACE W *st,
                                           __global const char *mid, ulong base, uint iters,
                                           ulong limit, uint zeros, __global volatile uint *res,
                                           __global volatile uint *flag) {
    const ulong first = get_global_id(0) * (ulong)iters;
    if (first >= limit) {
        return;
    }
    const ulong end = min(first + (ulong)iters, limit);
    W lane_lo[MAX_LANE_TRITS], lane_hi[MAX_LANE_TRITS];
#pragma unroll
    for (uint j = 0; j < MAX_LANE_TRITS; j++) {
        lane_lo[j] = ZEROS;
        lane_hi[j] = ZEROS;
    }
    for (uint l = 0; l < LANES; l++) {
        int t[MAX_LANE_TRITS];
        lane_trits_of(pow, l, t);
#pragma unroll
        for (uint j = 0; j < LANE_TN(pow); j++) {
            set_bit(&lane_lo[j], l, t[j] != 1);
            set_bit(&lane_hi[j], l, t[j] != -1);
        }
    }

    for (ulong idx = first; idx < end; idx++) {
        if (STOP_SET(flag)) {
            atomic_add(&res[4], (uint)(end - idx));
            return;
        }
        const ulong counter = base + idx;

        for (uint i = 0; i < STATE_LEN; i++) {
            const char t = mid[i];
            LO(st, i) = SPLAT(t != 1);
            HI(st, i) = SPLAT(t != -1);
        }
#pragma unroll
        for (uint j = 0; j < LANE_TN(pow); j++) {
            LO(st, LANE_T0(pow) + j) = lane_lo[j];
            HI(st, LANE_T0(pow) + j) = lane_hi[j];
        }
        for (uint j = 0; j < CTR_TN(pow); j++) {
            const int t = counter_trit(pow, counter, j);
            LO(st, LANE_T0(pow) + LANE_TN(pow) + j) = SPLAT(t != 1);
            HI(st, LANE_T0(pow) + LANE_TN(pow) + j) = SPLAT(t != -1);
        }

        const uint c = transform(st);

        W m = ONES;
        uint s = (c * (HASH_LEN - zeros)) % STATE_LEN;
        for (uint j = HASH_LEN - zeros; j < HASH_LEN; j++) {
            m &= ~(LO(st, s) ^ HI(st, s));
            s += c;
            s = (s >= STATE_LEN) ? s - STATE_LEN : s;
        }
        const int lane = lowest_lane(&m);
        if (lane >= 0) {
            if (atomic_cmpxchg(&flag[0], 0u, 1u) == 0u) {
                res[0] = 1u;
                res[1] = (uint)lane;
                res[2] = (uint)counter;
                res[3] = (uint)(counter >> 32);
            }
            if (end - idx > 1) {
                atomic_add(&res[4], (uint)(end - idx - 1));
            }
            return;
        }
    }
}

#if STATE_LOCAL
#define STATE_DECL                                                                             \
    __local W lst[2 * SLOTS * LOCAL_SIZE];                                                     \
    __local W *st = lst + get_local_id(0);
#else
#define STATE_DECL                                                                             \
    W pst[2 * SLOTS];                                                                          \
    W *st = pst;
#endif

// The transaction search (`mwm` trailing zero trits).
__kernel void curl_search(__global const char *mid, ulong base, uint iters, ulong limit,
                          uint mwm, __global volatile uint *res, __global volatile uint *flag) {
    STATE_DECL
    search(POW_TX, st, mid, base, iters, limit, mwm, res, flag);
}

// The block search (`zeros` trailing zero trits; the block layout).
__kernel void block_search(__global const char *mid, ulong base, uint iters, ulong limit,
                           uint zeros, __global volatile uint *res, __global volatile uint *flag) {
    STATE_DECL
    search(POW_BLOCK, st, mid, base, iters, limit, zeros, res, flag);
}

// The transform test entry point: work-item `gid` transforms states gid * LANES .. + LANES of
// `input` (n_states states of 729 trits each, one char per trit) into `output`, through the same
// bit-sliced in-place code as the search.
__kernel void curl_transform(__global const char *input, __global char *output, uint n_states) {
    const ulong first = (ulong)get_global_id(0) * LANES;
    STATE_DECL
    for (uint i = 0; i < STATE_LEN; i++) {
        W lo = ZEROS, hi = ZEROS;
        for (uint l = 0; l < LANES; l++) {
            const ulong k = first + l;
            const char t = (k < n_states) ? input[k * STATE_LEN + i] : 0;
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
            const ulong k = first + l;
            if (k < n_states) {
                const bool bl = get_bit(&lo, l);
                const bool bh = get_bit(&hi, l);
                output[k * STATE_LEN + j] = bl ? (bh ? 0 : -1) : 1;
            }
        }
        s += c;
        s = (s >= STATE_LEN) ? s - STATE_LEN : s;
    }
}

#else // COOP

// The cooperative kernel: COOP_P work-items share each state (32 lanes in `uint` words, the
// word NVIDIA's 3-input LOP3 works on), COOP_S states per work-group, all in __local memory.
//
// A pass of three fused rounds is the stencil of the wavefront above read cyclically:
// L_0[t] = state[91 t mod 729] (91 = -1/8), L_1[z] = S(L_0[z], L_0[z + 4]), L_2[z] = S(L_1[z],
// L_1[z - 2]), L_3[z] = S(L_2[z], L_2[z + 1]) = the state three rounds on, in natural order.
// Work-item p computes L_3 on its chunk [p C, p C + C) (C = ceil(729 / COOP_P)) from L_0 on
// [p C - 2, p C + C + 5) — its chunk and a halo of 7 — streamed through register windows, keeps
// its C outputs in registers, and writes them after a barrier (everyone has read the old state);
// a second barrier ends the pass. 27 passes per transform.
//
// Layout: the state is kept in the pass's read order, so that every pass reads consecutive
// words at fixed offsets from one base (no address arithmetic per read): element u = t + 2
// holds L_0[t] = state[91 t mod 729]; a trit z written by a pass goes to t = -8 z mod 729 (the
// L_0 index of the next pass). Reads that wrap (t < 0 for the first work-item, t >= 729 for
// the last ones) are the only ones with an address of their own: the first work-item's two
// from a base of its own, the last ones' from base - 729 past their wrap step. One array per
// state, the high halves at a fixed offset (HI_OFF) after the low ones, so that one address
// serves both (32-bit accesses: with C odd, the 32 work-items of a warp read 32 different
// banks; the writes' stride of -8 C mod 729 spreads over the banks too). With C even the array
// is padded by one word after every C (element u at u + u / C), which makes the read stride
// C + 1.
// The S-box is written as x = a.hi ^ (a.lo & b.lo), lo' = x ^ a.lo, hi' = bitselect(a.lo, x,
// b.hi) (= a.lo ^ (b.hi & lo')), with x opaque to the optimiser on AMD (an empty asm): its
// compiler then emits v_and, v_xor, v_xor, v_bfi_b32, 4 VALU and no v_not (LLVM would fold
// the form back into a.lo & ~b.lo, which gfx9 has no single VALU instruction for); NVIDIA's
// makes 2 LOP3 of any form.
#if LANE_BITS != 32 || VEC != 1
#error "the cooperative kernel uses 32-bit words"
#endif
#define CHUNK ((STATE_LEN + COOP_P - 1) / COOP_P)
#define COOP_PAD ((CHUNK % 2) == 0)
#define PHYS(u) ((u) + (COOP_PAD ? (u) / CHUNK : 0u))
// Elements: u = t + 2 for t in [-2, 729) (0 and 1 unused: the wrapped reads).
#define ELEMS (STATE_LEN + 2)
#define WORDS (PHYS(ELEMS - 1) + 1)
// The first step at which some work-item's read wraps past t = 728: that of the last one with
// outputs below 729.
#define WRAP_K (STATE_LEN + 2 - ((STATE_LEN - 1) / CHUNK) * CHUNK)

#if defined(__AMDGCN__)
#define OPAQUE(x) __asm__("" : "+v"(x))
#else
#define OPAQUE(x)
#endif
#define SBOX_BS(olo, ohi, alo, ahi, blo, bhi)                                                   \
    do {                                                                                       \
        uint x_ = (ahi) ^ ((alo) & (blo)); /* = a.lo ^ lo' */                                  \
        OPAQUE(x_);                                                                            \
        olo = x_ ^ (alo);                                                                      \
        ohi = bitselect((alo), x_, (bhi)); /* bhi ? x_ : a.lo = a.lo ^ (b.hi & lo') */          \
    } while (0)

// t = -8 z mod 729 for z < 729.
uint coop_slot(uint z) {
    const uint m = (8u * z) % STATE_LEN;
    return m == 0 ? 0u : STATE_LEN - m;
}

// A state is one array of 2 WORDS words: the low halves, then the high halves at HI_OFF (a
// fixed offset, so that one address serves both: `[R + imm]` addressing).
#define HI_OFF WORDS

// Write trit value (vl, vh) to read-order index t.
__attribute__((always_inline)) void coop_put(__local uint *st, uint t, uint vl, uint vh) {
    st[PHYS(t + 2u)] = vl;
    st[PHYS(t + 2u) + HI_OFF] = vh;
}

// Half `h` (0 low, 1 high) of trit z of the state, once a pass has written it (or the set-up).
#define COOP_GET(st, z, h) ((st)[PHYS(coop_slot(z) + 2u) + (h) * HI_OFF])

// Step k of a pass: L_0[t] (p4l, p4h) in, L_3[t - 5] out (from step 7 on: ol, oh[k - 7]).
#define COOP_STEP3(k)                                                                           \
    do {                                                                                       \
        uint n1l = 0, n1h = 0, n2l = 0, n2h = 0;                                               \
        if ((k) >= 4) {                                                                        \
            SBOX_BS(n1l, n1h, p0l, p0h, p4l, p4h); /* L1[t-4] = S(L0[t-4], L0[t]) */           \
        }                                                                                      \
        if ((k) >= 6) {                                                                        \
            SBOX_BS(n2l, n2h, n1l, n1h, q0l, q0h); /* L2[t-4] = S(L1[t-4], L1[t-6]) */         \
        }                                                                                      \
        if ((k) >= 7) {                                                                        \
            uint n3l, n3h;                                                                     \
            SBOX_BS(n3l, n3h, r0l, r0h, n2l, n2h); /* L3[t-5] = S(L2[t-5], L2[t-4]) */         \
            ol[(k) - 7] = n3l;                                                                 \
            oh[(k) - 7] = n3h;                                                                 \
        }                                                                                      \
        p0l = p1l; p0h = p1h; p1l = p2l; p1h = p2h; p2l = p3l; p2h = p3h; p3l = p4l; p3h = p4h; \
        q0l = q1l; q0h = q1h; q1l = n1l; q1h = n1h;                                            \
        r0l = n2l; r0h = n2h;                                                                  \
    } while (0)

// Every work-item of the state has outputs (P = 32: 31 C < 729): no test for one past it.
#define ALL_IN ((COOP_P - 1) * CHUNK < STATE_LEN)
// The fewest outputs below 729 of a work-item that has some: outputs below it need no test.
#define VALID_MIN (STATE_LEN - ((STATE_LEN - 1) / CHUNK) * CHUNK)
// Only the last work-item with outputs reads past t = 728 (from step WRAP_K on, by 729
// elements back), and the first work-item's two wrapped reads are consecutive: then both read
// through a base pointer of their own (unpadded layout).
#define WRAP_ONE (!COOP_PAD && ((STATE_LEN - 1) % CHUNK) > 3)

#if !COOP_PAD
// Writing a pass's outputs (unpadded layout): output j of the work-item goes to t_j = t_0 + M j
// mod 729 (M = -8 when the next pass has three rounds, 16 when it has four), which wraps at
// most once over a chunk (8 C, 16 C < 729): from pointer `wb` (element t_0 + 2) at constant
// offsets, and 729 elements back (M = 16) or on (M = -8) from the step `jw` on.
#define COOP_WRITE(M, t0)                                                                      \
    do {                                                                                       \
        if (ALL_IN || valid != 0) {                                                            \
            __local uint *wb = st + 2u + (t0);                                                 \
            __local uint *wb2 = (M) > 0 ? wb - STATE_LEN : wb + STATE_LEN;                     \
            /* the first j with t_0 + M j outside [0, 729) */                                  \
            const uint jw = (M) > 0 ? (STATE_LEN + 15u - (t0)) / 16u : (t0) / 8u + 1u;         \
            _Pragma("unroll") for (int j = 0; j < CHUNK; j++) {                                \
                if ((uint)j < VALID_MIN || (uint)j < valid) {                                  \
                    __local uint *w = (uint)j >= jw ? wb2 : wb;                                \
                    w[(M) * j] = ol[j];                                                        \
                    w[HI_OFF + (M) * j] = oh[j];                                               \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    } while (0)

// One pass of three rounds (unpadded layout), its outputs written for a next pass of three
// (M = -8) or four (M = 16) rounds. `me` holds this work-item's addressing (16-bit fields: 8
// bytes of __local memory a work-item), read from __local memory each pass (a compiler that
// sees it constant keeps every read and write address in registers, which costs occupancy):
// x = its first read (element a = p C: t = a - 2), y = 16 a mod 729 and w = -8 a mod 729:
// where its first output goes for M = 16 and M = -8, z = the first step whose read wraps past
// t = 728 (to u = a + k - 729). `first`: the first work-item, whose steps 0 and 1 wrap to
// t = 727, 728; `valid`: the outputs of its chunk below 729.
//
// Reads go through one pointer (`rb`, this work-item's first element) with constant offsets,
// the high half at a constant offset from the low one: one shared-memory instruction each, no
// address arithmetic, except a select at the steps whose read may wrap.
__attribute__((always_inline)) void coop_pass3(__local uint *st, __local const ushort4 *me,
                                               bool first, uint valid, const int M) {
    const uint4 m = convert_uint4(*me);
    const uint wrap = m.z;
    __local const uint *rb = st + m.x;
#if WRAP_ONE
    // Steps 0, 1 of the first work-item and the wrapped steps of the last one read through a
    // base pointer of their own, chosen once per pass.
    __local const uint *rb0 = first ? st + PHYS(STATE_LEN) : rb;
    __local const uint *rb2 = wrap == WRAP_K ? rb - STATE_LEN : rb;
#endif
    uint ol[CHUNK], oh[CHUNK];
    uint p0l = 0, p0h = 0, p1l = 0, p1h = 0, p2l = 0, p2h = 0, p3l = 0, p3h = 0;
    uint q0l = 0, q0h = 0, q1l = 0, q1h = 0;
    uint r0l = 0, r0h = 0;
#pragma unroll
    for (int k = 0; k < CHUNK + 7; k++) {
        __local const uint *r = rb + k;
#if WRAP_ONE
        if (k < 2) {
            r = rb0 + k;
        } else if (k >= WRAP_K) {
            r = rb2 + k;
        }
#else
        if (k < 2) {
            r = first ? st + PHYS(STATE_LEN + (uint)k) : r;
        } else if (k >= WRAP_K) {
            r = (uint)k >= wrap ? r - STATE_LEN : r;
        }
#endif
        const uint p4l = r[0];
        const uint p4h = r[HI_OFF];
        COOP_STEP3(k);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    COOP_WRITE(M, M > 0 ? m.y : m.w);
    barrier(CLK_LOCAL_MEM_FENCE);
}

#if FUSE == 4
#if CHUNK < 10 || !WRAP_ONE || 16 * (CHUNK - 1) >= STATE_LEN
#error "FUSE 4 needs the unpadded layout, chunks of 10 to 46 trits and one wrapping reader"
#endif
// One pass of four rounds (unpadded layout; every read wraps through a base of its own, see
// WRAP_ONE). Read order L_0[t] = state[319 t mod 729] (319 = 1/16): L_1[z] = S(L_0[z],
// L_0[z - 8]), L_2[z] = S(L_1[z], L_1[z + 4]), L_3[z] = S(L_2[z], L_2[z - 2]), L_4[z] =
// S(L_3[z], L_3[z + 1]) = the state four rounds on, in natural order. Work-item p computes L_4
// on its chunk [a, a + C) from L_0 on [a - 10, a + C + 5): C + 15 reads, 4 C + 11 S-boxes. Its
// outputs go to t = 16 z mod 729 for a next pass of four rounds (M = 16), -8 z for three.
__attribute__((always_inline)) void coop_pass4(__local uint *st, __local const ushort4 *me,
                                               bool first, uint valid, const int M) {
    const uint4 m = convert_uint4(*me);
    // Step k reads t = a - 10 + k: element a - 8 + k (a pass of three reads from a - 2).
    __local const uint *rb = st + m.x - 8;
    // Steps 0..9 of the first work-item read t = 719 + k (elements 721 + k); the last one's
    // reads past t = 728 start 8 steps later than a pass of three's.
    __local const uint *rb0 = first ? st + PHYS(STATE_LEN - 8u) : rb;
    __local const uint *rb2 = m.z == WRAP_K ? rb - STATE_LEN : rb;
    uint ol[CHUNK], oh[CHUNK];
    // Windows (index 0 oldest): L_0[t - 8 .. t - 1], L_1[t - 4 .. t - 1], L_2[t - 6, t - 5],
    // L_3[t - 5].
    uint al[8], ah[8], bl[4], bh[4], cl[2], ch[2], dl = 0, dh = 0;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        al[i] = 0;
        ah[i] = 0;
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        bl[i] = 0;
        bh[i] = 0;
    }
    cl[0] = cl[1] = ch[0] = ch[1] = 0;
#pragma unroll
    for (int k = 0; k < CHUNK + 15; k++) {
        __local const uint *r = k < 10 ? rb0 + k : (k >= WRAP_K + 8 ? rb2 + k : rb + k);
        const uint xl = r[0];
        const uint xh = r[HI_OFF];
        uint n1l = 0, n1h = 0, n2l = 0, n2h = 0, n3l = 0, n3h = 0;
        if (k >= 8) {
            SBOX_BS(n1l, n1h, xl, xh, al[0], ah[0]); /* L1[t] = S(L0[t], L0[t-8]) */
        }
        if (k >= 12) {
            SBOX_BS(n2l, n2h, bl[0], bh[0], n1l, n1h); /* L2[t-4] = S(L1[t-4], L1[t]) */
        }
        if (k >= 14) {
            SBOX_BS(n3l, n3h, n2l, n2h, cl[0], ch[0]); /* L3[t-4] = S(L2[t-4], L2[t-6]) */
        }
        if (k >= 15) {
            uint n4l, n4h;
            SBOX_BS(n4l, n4h, dl, dh, n3l, n3h); /* L4[t-5] = S(L3[t-5], L3[t-4]) */
            ol[k - 15] = n4l;
            oh[k - 15] = n4h;
        }
#pragma unroll
        for (int i = 0; i < 7; i++) {
            al[i] = al[i + 1];
            ah[i] = ah[i + 1];
        }
        al[7] = xl;
        ah[7] = xh;
#pragma unroll
        for (int i = 0; i < 3; i++) {
            bl[i] = bl[i + 1];
            bh[i] = bh[i + 1];
        }
        bl[3] = n1l;
        bh[3] = n1h;
        cl[0] = cl[1];
        ch[0] = ch[1];
        cl[1] = n2l;
        ch[1] = n2h;
        dl = n3l;
        dh = n3h;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    COOP_WRITE(M, M > 0 ? m.y : m.w);
    barrier(CLK_LOCAL_MEM_FENCE);
}
#endif

// `me`: __local memory of this work-item's own; `wa`: unused (the padded layout's).
void coop_transform(__local uint *st, __local ushort4 *me, const uint *wa, uint p) {
    const uint a = p * CHUNK;
    // Work-items past the state (a >= 729) read the second chunk (elements every pass writes:
    // not the unused elements 0 and 1) and write nothing.
    const bool in = a < STATE_LEN;
    // Step k reads t = a - 2 + k: past 728 from k = 731 - a on.
    *me = convert_ushort4((uint4)(in ? a : (uint)CHUNK, in ? (16u * a) % STATE_LEN : 0u,
                                  in ? STATE_LEN + 2 - a : (uint)CHUNK + 7u,
                                  in ? coop_slot(a) : 0u));
    const uint valid = in ? min((uint)CHUNK, STATE_LEN - a) : 0u;
#if FUSE == 4
    // 81 rounds = 3 passes of three, then 18 of four: the state is laid out for a pass of
    // three before the first and after the last (t = -8 z).
    for (uint pass = 0; pass < 2; pass++) {
        coop_pass3(st, me, p == 0, valid, -8);
    }
    coop_pass3(st, me, p == 0, valid, 16);
    for (uint pass = 0; pass < 17; pass++) {
        coop_pass4(st, me, p == 0, valid, 16);
    }
    coop_pass4(st, me, p == 0, valid, -8);
#else
    for (uint pass = 0; pass < ROUNDS / 3; pass++) {
        coop_pass3(st, me, p == 0, valid, -8);
    }
#endif
}

#else // COOP_PAD

// The padded layout's write addresses, once per launch (no division in a pass): `wa[j]`, the
// word of output j's low half (trit z = p C + j at t = -8 z mod 729), or for an output past
// trit 728 the padding word after chunk 0 (never read), so that every write is unconditional.
#define PAD_DUMMY ((uint)CHUNK)
__attribute__((always_inline)) void coop_waddr(uint p, uint *wa) {
#pragma unroll
    for (int j = 0; j < CHUNK; j++) {
        const uint z = p * CHUNK + (uint)j;
        wa[j] = z < STATE_LEN ? PHYS(coop_slot(z) + 2u) : PAD_DUMMY;
    }
}

// Only the last work-item with outputs reads past t = 728 (its second-to-last neighbour's
// reads end at t = 728 - VALID_MIN + 4): its wrapped reads are at fixed elements.
#define PAD_ONE_WRAPS (VALID_MIN >= 5)

// One pass (padded layout), addresses as word indices: reads at constant offsets from the
// work-item's first element (`rb`; steps 0, 1 of the first work-item and the wrapped steps of
// the last one from bases of their own, chosen once per pass), writes to the precomputed `wa`.
__attribute__((always_inline)) void coop_pass3_pad(__local uint *st, uint a, const uint *wa) {
    const bool in = a < STATE_LEN;
    // Work-items past the state read the second chunk (written by every pass, no padding word).
    const uint rb = in ? PHYS(a) : PHYS((uint)CHUNK);
    const bool first = a == 0;
#if PAD_ONE_WRAPS
    const bool last = a == STATE_LEN - VALID_MIN;
#else
    const uint wrap = in ? STATE_LEN + 2 - a : (uint)CHUNK + 7u;
#endif
    uint ol[CHUNK], oh[CHUNK];
    uint p0l = 0, p0h = 0, p1l = 0, p1h = 0, p2l = 0, p2h = 0, p3l = 0, p3h = 0;
    uint q0l = 0, q0h = 0, q1l = 0, q1h = 0;
    uint r0l = 0, r0h = 0;
#pragma unroll
    for (int k = 0; k < CHUNK + 7; k++) {
        // Element p C + k, padded: p (C + 1) + k + k / C.
        const uint off = (uint)k + (uint)k / CHUNK;
        uint base = rb;
        if (k < 2) {
            // t = k - 2 wraps to 727 + k: element 729 + k.
            base = first ? PHYS(STATE_LEN + (uint)k) - off : rb;
        } else if (k >= WRAP_K) {
#if PAD_ONE_WRAPS
            // t = a - 2 + k - 729: element k - VALID_MIN.
            base = last ? PHYS((uint)k - VALID_MIN) - off : rb;
#else
            base = (uint)k >= wrap ? PHYS(a + (uint)k - STATE_LEN) - off : rb;
#endif
        }
        const uint p4l = st[base + off];
        const uint p4h = st[base + off + HI_OFF];
        COOP_STEP3(k);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int j = 0; j < CHUNK; j++) {
        st[wa[j]] = ol[j];
        st[wa[j] + HI_OFF] = oh[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

// `me`: unused (the unpadded layout's); `wa`: from coop_waddr.
void coop_transform(__local uint *st, __local ushort4 *me, const uint *wa, uint p) {
    for (uint pass = 0; pass < ROUNDS / 3; pass++) {
        coop_pass3_pad(st, p * CHUNK, wa);
    }
}
#endif // COOP_PAD

// The mid-state's trit z in the layout's two words.
#define MID_LO(mid, z) SPLAT((mid)[z] != 1)
#define MID_HI(mid, z) SPLAT((mid)[z] != -1)

// With several states per group, the mid-state is laid out once per launch in __local memory
// (`init`, shared by the group's states) and copied word for word before each transform;
// with one state per group (less __local memory, more groups resident), each work-item re-reads
// its chunk of the mid-state from global memory.
#define INIT_LOCAL (COOP_S > 1)

// Set state `lo`/`hi` up for a transform, before the nonce's trits are written: work-item p
// copies words p, p + P, ... of the laid-out mid-state, or writes the mid-state's trits of its
// chunk.
__attribute__((always_inline)) void coop_load_mid(__local uint *st, __local const uint *init,
                                                  __global const char *mid, const uint *wa,
                                                  uint p) {
#if INIT_LOCAL
    for (uint w = p; w < 2 * WORDS; w += COOP_P) {
        st[w] = init[w];
    }
#elif COOP_PAD
    // Trit z = p C + j goes where output j of a pass goes.
#pragma unroll
    for (int j = 0; j < CHUNK; j++) {
        const uint z = p * CHUNK + (uint)j;
        if (z < STATE_LEN) {
            st[wa[j]] = MID_LO(mid, z);
            st[wa[j] + HI_OFF] = MID_HI(mid, z);
        }
    }
#else
    for (uint j = 0; j < CHUNK; j++) {
        const uint z = p * CHUNK + j;
        if (z < STATE_LEN) {
            coop_put(st, coop_slot(z), MID_LO(mid, z), MID_HI(mid, z));
        }
    }
#endif
}

// The search of either PoW (`pow`): state g (group * COOP_S + lid / COOP_P) tries counters
// base + g * iters + i for i < iters (and only those with g * iters + i < limit); see "Results"
// above. Per transform: copy the mid-state in, write the nonce's trits (lane words precomputed
// once per launch, counter trits computed in parallel: work-item p writes nonce trits p,
// p + P, ...), transform, and test the last `zeros` trits of the hash spread over the work-items
// (each ANDs its trits into the state's word `zm` with a __local atomic).
__attribute__((always_inline)) void coop_search(
    const uint pow, __local uint *st, __local uint *init,
    __local uint *lanes, __local ushort4 *me, __local volatile uint *stop,
    __local volatile uint *zm, __global const char *mid, ulong base, uint iters, ulong limit,
    uint zeros, __global volatile uint *res, __global volatile uint *flag) {
    const uint lid = get_local_id(0);
    const uint s = lid / COOP_P;
    const uint p = lid % COOP_P;
    const ulong group_first = (ulong)get_group_id(0) * COOP_S * iters;
    if (group_first >= limit) {
        return; // the whole group is past the launch (uniform)
    }
    const ulong first = group_first + (ulong)s * iters;
    const ulong end = max(first, min(first + (ulong)iters, limit));

    // Once per launch: the lanes' words (lanes[j], lanes[MAX_LANE_TRITS + j] for lane trit j)
    // and, with INIT_LOCAL, the laid-out mid-state (every word written: the unused elements
    // and padding words too).
    for (uint j = lid; j < LANE_TN(pow); j += LOCAL_SIZE) {
        uint wl = 0, wh = 0;
        for (uint l = 0; l < LANES; l++) {
            const int t = lane_trit(pow, l, j);
            wl |= (t != 1 ? 1u : 0u) << l;
            wh |= (t != -1 ? 1u : 0u) << l;
        }
        lanes[j] = wl;
        lanes[MAX_LANE_TRITS + j] = wh;
    }
#if INIT_LOCAL
    for (uint w = lid; w < 2 * WORDS; w += LOCAL_SIZE) {
        init[w] = 0u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint z = lid; z < STATE_LEN; z += LOCAL_SIZE) {
        coop_put(init, coop_slot(z), MID_LO(mid, z), MID_HI(mid, z));
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    // The padded layout's write addresses (coop_waddr).
    uint wa[COOP_PAD ? CHUNK : 1];
#if COOP_PAD
    coop_waddr(p, wa);
#endif
    // Where this work-item's first nonce trit goes.
    const uint nonce_t0 = LANE_T0(pow);
    // The pieces of this state's transaction counter (counter_pieces), carried on by one each
    // iteration: no 64-bit division per transform.
    uint3 pieces = counter_pieces(base + first);
    // Counters this state leaves untried when it stops early. (The loop is left with `break`,
    // never `return`: every exit is uniform across the group, and some compilers mishandle a
    // `return` between barriers.)
    ulong untried = 0;

    for (uint it = 0; it < iters; it++) {
        // State 0 of the group has the smallest counter: past the launch, all are (uniform).
        if (group_first + it >= limit) {
            break;
        }
        const ulong idx = first + it;
        const bool active = idx < end;
        if (lid == 0) {
            *stop = STOP_SET(flag) ? 1u : 0u;
        }
        if (p == 0) {
            *zm = ONES;
        }
        coop_load_mid(st, init, mid, wa, p);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (*stop != 0) {
            untried = active ? end - idx : 0;
            break; // uniform: every work-item read the same `stop`
        }
        const ulong counter = base + idx;
        for (uint j = p; j < NONCE_TN(pow); j += COOP_P) {
            uint vl, vh;
            if (j < LANE_TN(pow)) {
                vl = lanes[j];
                vh = lanes[MAX_LANE_TRITS + j];
            } else {
                const int t = pow == POW_BLOCK
                                  ? counter_trit(pow, counter, j - LANE_TN(pow))
                                  : counter_trit3(pieces.x, pieces.y, pieces.z, j - LANE_TN(pow));
                vl = SPLAT(t != 1);
                vh = SPLAT(t != -1);
            }
            coop_put(st, coop_slot(nonce_t0 + j), vl, vh);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        coop_transform(st, me, wa, p); // ends with a barrier
        uint m = ONES;
        for (uint j = HASH_LEN - zeros + p; j < HASH_LEN; j += COOP_P) {
            m &= ~(COOP_GET(st, j, 0) ^ COOP_GET(st, j, 1));
        }
        if (m != ONES) {
            atomic_and(zm, m);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (p == 0 && active) {
            const uint hit = *zm;
            if (hit != 0 && atomic_cmpxchg(&flag[0], 0u, 1u) == 0u) {
                res[0] = 1u;
                res[1] = (uint)popcount((hit & (~hit + 1)) - 1);
                res[2] = (uint)counter;
                res[3] = (uint)(counter >> 32);
            }
            // A state that hit stops at the next iteration's flag check, which counts what it
            // did not try.
        }
        pieces = counter_pieces_next(pieces);
    }
    if (p == 0 && untried != 0) {
        atomic_add(&res[4], (uint)untried);
    }
}

#if INIT_LOCAL
#define INIT_WORDS WORDS
#else
#define INIT_WORDS 1
#endif

// The __local memory of a search group.
#define COOP_SEARCH_DECL                                                                        \
    __local uint sst[COOP_S][2 * WORDS];                                                       \
    __local uint init[2 * INIT_WORDS];                                                         \
    __local uint lanes[2 * MAX_LANE_TRITS];                                                    \
    __local ushort4 mes[LOCAL_SIZE];                                                           \
    __local uint stop;                                                                         \
    __local uint zm[COOP_S];                                                                   \
    const uint s_ = get_local_id(0) / COOP_P;

// The transaction search (`mwm` trailing zero trits).
__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void curl_search(__global const char *mid, ulong base, uint iters, ulong limit, uint mwm,
                 __global volatile uint *res, __global volatile uint *flag) {
    COOP_SEARCH_DECL
    coop_search(POW_TX, sst[s_], init, lanes, &mes[get_local_id(0)], &stop, &zm[s_], mid, base,
                iters, limit, mwm, res, flag);
}

// The block search (`zeros` trailing zero trits; the block layout).
__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void block_search(__global const char *mid, ulong base, uint iters, ulong limit, uint zeros,
                  __global volatile uint *res, __global volatile uint *flag) {
    COOP_SEARCH_DECL
    coop_search(POW_BLOCK, sst[s_], init, lanes, &mes[get_local_id(0)], &stop, &zm[s_], mid, base,
                iters, limit, zeros, res, flag);
}

// The transform test entry point: state g of the launch (group * COOP_S + lid / COOP_P) holds
// states g * 32 .. + 32 of `input` (n_states states of 729 trits, one char per trit), one per
// lane; the group transforms them cooperatively and writes them to `output`.
__kernel __attribute__((reqd_work_group_size(LOCAL_SIZE, 1, 1)))
void curl_transform(__global const char *input, __global char *output, uint n_states) {
    __local uint sst[COOP_S][2 * WORDS];
    __local ushort4 mes[LOCAL_SIZE];
    const uint lid = get_local_id(0);
    const uint s = lid / COOP_P;
    const uint p = lid % COOP_P;
    const ulong first = ((ulong)get_group_id(0) * COOP_S + s) * LANES;
    __local uint *st = sst[s];
    for (uint j = 0; j < CHUNK; j++) {
        const uint z = p * CHUNK + j;
        if (z < STATE_LEN) {
            uint wl = 0, wh = 0;
            for (uint l = 0; l < LANES; l++) {
                const ulong k = first + l;
                const char t = (k < n_states) ? input[k * STATE_LEN + z] : 0;
                set_bit(&wl, l, t != 1);
                set_bit(&wh, l, t != -1);
            }
            coop_put(st, coop_slot(z), wl, wh);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint wa[COOP_PAD ? CHUNK : 1];
#if COOP_PAD
    coop_waddr(p, wa);
#endif
    coop_transform(st, &mes[lid], wa, p);
    for (uint j = 0; j < CHUNK; j++) {
        const uint z = p * CHUNK + j;
        if (z < STATE_LEN) {
            const uint wl = COOP_GET(st, z, 0);
            const uint wh = COOP_GET(st, z, 1);
            for (uint l = 0; l < LANES; l++) {
                const ulong k = first + l;
                if (k < n_states) {
                    const bool bl = get_bit(&wl, l);
                    const bool bh = get_bit(&wh, l);
                    output[k * STATE_LEN + z] = bl ? (bh ? 0 : -1) : 1;
                }
            }
        }
    }
}

#endif // COOP
