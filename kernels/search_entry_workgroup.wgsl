// The search entry point of the workgroup-memory kernel (curl_pow_workgroup.wgsl), one text
// for both nonce layouts: the host appends it twice (src/backend/wgpu/source.rs), with ENTRY
// and WRITE_COUNTER replaced by `search` / `write_counter` (the transaction layout,
// curl_pow_shared.wgsl) and `block_search` / `write_block_counter` (block_pow.wgsl's layout;
// params.mwm is then the trailing zeros a hit needs).
//
// State g = workgroup * COOP_S + lid / COOP_P tries counter offsets j * stride + g
// for j in 0..params.transforms (those below params.remaining).
@compute @workgroup_size(WORKGROUP_SIZE)
fn ENTRY(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let s = lid / COOP_P;
    let p = lid % COOP_P;
    let g = wid.x * COOP_S + s;
    let so = s * WORDS;
    let stride = params.stride;
    let n = min(params.transforms, TRANSFORMS);
    var left = 0u;
    // Offsets stay below params.remaining, which the host keeps within 32 bits; the counter's
    // carry into its high word is added here.
    for (var j = 0u; j < n; j++) {
        // The group's first state has its smallest offset: past the dispatch, all are (uniform).
        if j * stride + wid.x * COOP_S >= params.remaining {
            break;
        }
        let offset = j * stride + g;
        let busy = g < stride && offset < params.remaining;
        // The found flag, read atomically by one invocation and shared with the group.
        if lid == 0u {
            stop = atomicLoad(&flag.found);
        }
        if workgroupUniformLoad(&stop) != 0u {
            left = untried(j, n, g);
            break;
        }
        for (var k = 0u; k < CHUNK; k++) {
            let z = p * CHUNK + k;
            if z < STATE_LEN {
                put(so, coop_slot(z), mid_state[z]);
            }
        }
        workgroupBarrier();
        if p == 0u {
            let lo = params.base_lo + offset;
            let hi = params.base_hi + select(0u, 1u, lo < offset);
            WRITE_COUNTER(StateRef(so), lo, hi);
        }
        workgroupBarrier();
        transform(so, p);
        if p == 0u && busy {
            var mask = ~0u;
            for (var i = HASH_LEN - params.mwm; i < HASH_LEN; i++) {
                let t = trit(so, i);
                mask &= ~(t.x ^ t.y);
            }
            if mask != 0u && atomicAdd(&flag.found, 1u) == 0u {
                let lo = params.base_lo + offset;
                result.found = 1u;
                result.lane = lowest_lane(mask);
                result.counter_lo = lo;
                result.counter_hi = params.base_hi + select(0u, 1u, lo < offset);
            }
            // A state that hit stops at the next transform's flag check, which counts what it
            // did not try.
        }
        workgroupBarrier();
    }
    if p == 0u && left != 0u {
        atomicAdd(&result.skipped, left);
    }
}
