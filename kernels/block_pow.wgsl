// The block PoW (Chrysalis messages, Stardust blocks) for wgpu: the block nonce layout's
// counter writer. The host adds it to both kernels' modules (after the layout, which provides
// `set_trit`, see curl_pow_shared.wgsl) with their search entry point instantiated a second
// time as `block_search` on this writer, so the block search shares each kernel's transform,
// mid-state load, zero test and stop accounting; only the nonce's layout differs.
//
// Nonce layout (src/search/block): the nonce is counter << 16 | lane; its 8 little-endian
// bytes in b1t6 (each byte a signed 8-bit number in six balanced trits, least significant
// first) are block trits 192..240. The host writes each lane's two bytes (trits 192..204) into
// the mid-state; the search writes the counter's six bytes (trits 204..240).

const BLOCK_COUNTER_START: u32 = 204u;

// The counter's six low bytes (from its low and high 32 bits) in b1t6.
fn write_block_counter(st: StateRef, lo: u32, hi: u32) {
    for (var b = 0u; b < 6u; b++) {
        var byte = 0u;
        if b < 4u {
            byte = (lo >> (8u * b)) & 0xffu;
        } else {
            byte = (hi >> (8u * (b - 4u))) & 0xffu;
        }
        var v = i32(byte);
        if v >= 128 {
            v = v - 256;
        }
        for (var j = 0u; j < 6u; j++) {
            // Truncating remainder: -2..2; balanced digit -1, 0 or 1.
            let r = v % 3;
            var t = r;
            if r == 2 {
                t = -1;
            } else if r == -2 {
                t = 1;
            }
            v = (v - t) / 3;
            set_trit(st, BLOCK_COUNTER_START + 6u * b + j, vec2<W>(splat(t != 1), splat(t != -1)));
        }
    }
}
