// What both wgpu state layouts (curl_pow.wgsl in a storage buffer, curl_pow_workgroup.wgsl in
// workgroup memory) share beyond the interface: the S-box, the lane splat and the transaction
// nonce layout's counter writer. The host puts this file after curl_pow_interface.wgsl and
// before the layout (src/backend/wgpu/source.rs).
//
// A layout provides
//   struct StateRef                             which state (the layout's own addressing)
//   fn set_trit(st: StateRef, z: u32, v: vec2<W>)  writes trit z of that state before its
//                                               transform (natural order)
// and the counter writers here and in block_pow.wgsl write through it, so each nonce layout's
// writer is one text for both state layouts.

// The 4-operation S-box on bit-sliced trits (x = low half, y = high half) a = s[I[i]],
// b = s[I[i+1]].
fn sbox(a: vec2<W>, b: vec2<W>) -> vec2<W> {
    let lo = a.y ^ (~b.x & a.x);
    let hi = a.x ^ (b.y & lo);
    return vec2<W>(lo, hi);
}

// Every lane's bit set (true) or clear (false).
fn splat(bit: bool) -> W {
    return select(W(0u), ~W(0u), bit);
}

// The transaction layout: the balanced-ternary trits of the 64-bit counter (hi, lo) into
// counter trits 168..210.
fn write_counter(st: StateRef, lo_in: u32, hi_in: u32) {
    var hi = hi_in;
    var lo = lo_in;
    for (var k = 0u; k < COUNTER_LEN; k++) {
        // (hi, lo) / 3 by 16-bit long division; r = remainder.
        let qh = hi / 3u;
        var r = hi % 3u;
        let c1 = (r << 16u) | (lo >> 16u);
        let q1 = c1 / 3u;
        r = c1 % 3u;
        let c0 = (r << 16u) | (lo & 0xffffu);
        let q0 = c0 / 3u;
        r = c0 % 3u;
        hi = qh;
        lo = (q1 << 16u) | q0;
        // Remainder 2 is trit -1 with a carry of one into the quotient.
        if r == 2u {
            lo = lo + 1u;
            hi = hi + select(0u, 1u, lo == 0u);
        }
        // Encoding: -1 -> (1, 0), 0 -> (1, 1), +1 -> (0, 1).
        set_trit(st, COUNTER_START + k, vec2<W>(splat(r != 1u), splat(r != 2u)));
    }
}
