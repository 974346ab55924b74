// The search entry point of the storage-buffer kernel (curl_pow.wgsl), one text for both
// nonce layouts: the host appends it twice (src/backend/wgpu/source.rs), with ENTRY and
// WRITE_COUNTER replaced by `search` / `write_counter` (the transaction layout,
// curl_pow_shared.wgsl) and `block_search` / `write_block_counter` (block_pow.wgsl's layout;
// params.mwm is then the trailing zeros a hit needs). Invocation g tries counters
// base + j * stride + g for j in 0..params.transforms (j * stride + g < params.remaining, which
// the host keeps within 32 bits; the counter's carry into its high word is added here).

@compute @workgroup_size(WORKGROUP_SIZE)
fn ENTRY(@builtin(global_invocation_id) gid: vec3<u32>) {
    let g = gid.x;
    let stride = params.stride;
    if g >= stride {
        return;
    }
    let n = min(params.transforms, TRANSFORMS);
    for (var j = 0u; j < n; j++) {
        let offset = j * stride + g;
        if offset >= params.remaining {
            return;
        }
        // A hit was found (by this dispatch or an earlier one): stop, saying what is left.
        if atomicLoad(&flag.found) != 0u {
            atomicAdd(&result.skipped, untried(j, n, stride, g));
            return;
        }
        let lo = params.base_lo + offset;
        let hi = params.base_hi + select(0u, 1u, lo < offset);
        load_mid_state(stride, g);
        WRITE_COUNTER(StateRef(stride, g), lo, hi);
        let m = transform(g, stride);
        let mask = zero_mask(m, params.mwm, stride, g);
        if mask != W(0u) {
            if atomicAdd(&flag.found, 1u) == 0u {
                result.found = 1u;
                result.lane = lowest_lane(mask);
                result.counter_lo = lo;
                result.counter_hi = hi;
            }
            let left = untried(j + 1u, n, stride, g);
            if left != 0u {
                atomicAdd(&result.skipped, left);
            }
            return;
        }
    }
}
