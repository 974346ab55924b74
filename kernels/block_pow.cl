// The block PoW (Chrysalis messages, Stardust blocks): Curl-P-81, bit-sliced, 64 lanes (one
// ulong per trit half) per work-item, one whole state in private memory, one round per pass in
// place.
//
// Encoding of one trit (src/bitslice.rs): -1 -> (lo 1, hi 0), 0 -> (1, 1), +1 -> (0, 1).
// S-box, 4 operations: lo' = a.hi ^ (~b.lo & a.lo); hi' = a.lo ^ (b.hi & lo').
//
// In place: one round's index walk I[k] = 364 k mod 729 visits every slot once, so the new trit
// of chain position k overwrites the slot of old logical trit I[k] (only slot I[0] is needed
// again, at the very end: it is kept aside). After a round logical trit j lives in slot
// (c * j) mod 729, c multiplied by 364 each round.
//
// Nonce layout (src/block/job.rs): the nonce is counter << 16 | lane; its 8 little-endian bytes
// in b1t6 (each byte a signed 8-bit number in six balanced trits, least significant first) are
// block trits 192..240: the lane's two bytes at 192..204, the counter's six at 204..240.
//
// Results (src/gpu/driver.rs): `flag` is claimed once with an atomic by the first hit; its
// claimer writes res[0..4] = 1, lane, counter low, counter high. Every work-item checks the flag
// before each transform and stops when it is set, adding the counters it did not try to res[4].

#define STATE_LEN 729
#define HASH_LEN 243
#define ROUNDS 81
#define LANE_TRIT0 192
#define COUNTER_TRIT0 204
#define LANES 64

#define ONES (~(ulong)0)
#define SPLAT(cond) ((cond) ? ONES : (ulong)0)

// The six balanced trits of byte b read as a signed 8-bit number, least significant first.
void byte_trits(uint b, int *t) {
    int v = (int)(char)(uchar)b;
    for (uint j = 0; j < 6; j++) {
        int r = v % 3; // -2..2
        int x = (r == 2) ? -1 : ((r == -2) ? 1 : r);
        v = (v - x) / 3;
        t[j] = x;
    }
}

// 81 single rounds in place. Returns the final multiplier c: logical trit j is in slot
// (c * j) % 729.
uint transform(ulong *lo, ulong *hi) {
    uint c = 1;
    for (uint r = 0; r < ROUNDS; r++) {
        const uint d = (c * 364u) % STATE_LEN;
        ulong a_lo = lo[0];
        ulong a_hi = hi[0];
        const ulong z_lo = a_lo;
        const ulong z_hi = a_hi;
        uint s = 0;
        for (uint k = 0; k < STATE_LEN - 1; k++) {
            uint n = s + d;
            n = (n >= STATE_LEN) ? n - STATE_LEN : n;
            const ulong b_lo = lo[n];
            const ulong b_hi = hi[n];
            const ulong l = a_hi ^ (~b_lo & a_lo);
            hi[s] = a_lo ^ (b_hi & l);
            lo[s] = l;
            a_lo = b_lo;
            a_hi = b_hi;
            s = n;
        }
        const ulong l = a_hi ^ (~z_lo & a_lo);
        hi[s] = a_lo ^ (z_hi & l);
        lo[s] = l;
        c = d;
    }
    return c;
}

// Work-item gid tries counters base + gid * iters .. (at most `limit` counters from base in
// all), lanes 0..64 each; `mid` is the job's 729 trits (the nonce's trits zero).
__kernel void block_search(__global const char *mid, ulong base, uint iters, ulong limit,
                           uint zeros, __global volatile uint *res,
                           __global volatile uint *flag) {
    const ulong first = get_global_id(0) * (ulong)iters;
    if (first >= limit) {
        return;
    }
    const ulong end = min(first + (ulong)iters, limit);
    ulong lo[STATE_LEN], hi[STATE_LEN];
    // The lanes' trits: byte 0 of the nonce is the lane (byte 1 is zero for 64 lanes).
    ulong lane_lo[6], lane_hi[6];
    for (uint j = 0; j < 6; j++) {
        lane_lo[j] = 0;
        lane_hi[j] = 0;
    }
    for (uint l = 0; l < LANES; l++) {
        int t[6];
        byte_trits(l, t);
        for (uint j = 0; j < 6; j++) {
            lane_lo[j] |= (ulong)(t[j] != 1) << l;
            lane_hi[j] |= (ulong)(t[j] != -1) << l;
        }
    }
    for (ulong idx = first; idx < end; idx++) {
        if (flag[0] != 0) {
            atomic_add(&res[4], (uint)(end - idx));
            return;
        }
        const ulong counter = base + idx;
        for (uint i = 0; i < STATE_LEN; i++) {
            const char t = mid[i];
            lo[i] = SPLAT(t != 1);
            hi[i] = SPLAT(t != -1);
        }
        for (uint j = 0; j < 6; j++) {
            lo[LANE_TRIT0 + j] = lane_lo[j];
            hi[LANE_TRIT0 + j] = lane_hi[j];
        }
        // Nonce byte 1 (the lane's high byte) is zero: its trits are the mid-state's zeros.
        for (uint b = 0; b < 6; b++) {
            int t[6];
            byte_trits((uint)(counter >> (8 * b)) & 0xffu, t);
            for (uint j = 0; j < 6; j++) {
                lo[COUNTER_TRIT0 + 6 * b + j] = SPLAT(t[j] != 1);
                hi[COUNTER_TRIT0 + 6 * b + j] = SPLAT(t[j] != -1);
            }
        }

        const uint c = transform(lo, hi);

        ulong m = ONES;
        uint s = (c * (HASH_LEN - zeros)) % STATE_LEN;
        for (uint j = HASH_LEN - zeros; j < HASH_LEN; j++) {
            m &= ~(lo[s] ^ hi[s]);
            s += c;
            s = (s >= STATE_LEN) ? s - STATE_LEN : s;
        }
        if (m != 0) {
            const uint lane = (uint)popcount((m & (~m + 1)) - 1);
            if (atomic_cmpxchg(&flag[0], 0u, 1u) == 0u) {
                res[0] = 1u;
                res[1] = lane;
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
