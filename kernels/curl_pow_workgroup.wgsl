// Curl-P-81 proof-of-work search for wgpu with the state in workgroup memory: the cooperative
// kernel of curl_pow.cl (its COOP section) in WGSL. 32 lanes in u32 words.
//
// The host prepends a prelude (src/wgpu/workgroup.rs) that defines
//   COOP_P, COOP_S   invocations per state, states per workgroup (WORKGROUP_SIZE = P * S)
//   CHUNK, WORDS     trits per invocation (ceil(729 / P)); words of one state's half
//   fn phys(u: u32) -> u32           the word of element u (padded when CHUNK is even)
//   fn coop_pass(so: u32, me: vec4<u32>, first: bool, valid: u32)
//                                    one pass of three fused rounds, unrolled (registers only)
// and the lane helper of the 32-bit prelude (lowest_lane).
//
// Layout (as in curl_pow.cl): a state's element u = t + 2 holds L_0[t] = state[91 t mod 729]
// (the pass's read order); a pass writes trit z to t = -8 z mod 729. Invocation p of a state
// reads elements p C .. p C + C + 7 at fixed offsets from one base, computes its C trits three
// rounds on in registers, and writes them after a barrier. Reads that wrap (t < 0, t > 728)
// have their own address; low and high halves live in separate arrays.
//
// Bindings and results are those of curl_pow.wgsl (same host code): the host puts
// curl_pow_interface.wgsl between the prelude and this file. `params.stride` is the number of
// states of the dispatch; state g tries counter offsets j * stride + g.

var<workgroup> slo: array<u32, COOP_S * WORDS>;
var<workgroup> shi: array<u32, COOP_S * WORDS>;
var<workgroup> stop: u32;

// The S-box on bit-sliced pairs (x = low half, y = high half).
fn sbox(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.y ^ (a.x & ~b.x);
    let hi = a.x ^ (b.y & lo);
    return vec2<u32>(lo, hi);
}

// t = -8 z mod 729 for z < 729.
fn coop_slot(z: u32) -> u32 {
    let m = (8u * z) % STATE_LEN;
    return select(STATE_LEN - m, 0u, m == 0u);
}

// Element reads and writes of the state at word offset `so`.
fn rd(so: u32, w: u32) -> vec2<u32> {
    return vec2<u32>(slo[so + w], shi[so + w]);
}

fn put(so: u32, t: u32, v: vec2<u32>) {
    let w = phys(t + 2u);
    slo[so + w] = v.x;
    shi[so + w] = v.y;
}

// Trit z of the state (natural order).
fn trit(so: u32, z: u32) -> vec2<u32> {
    return rd(so, phys(coop_slot(z) + 2u));
}

fn splat(bit: bool) -> u32 {
    return select(0u, ~0u, bit);
}

// Invocation p's addressing: x = p C, y = phys(p C) (its first read), z = the first step whose
// read wraps past t = 728, w = -8 p C mod 729 (where its first output goes).
fn addressing(p: u32) -> vec4<u32> {
    let a = p * CHUNK;
    if a >= STATE_LEN {
        // Past the state: reads the first chunk, writes nothing.
        return vec4<u32>(a, 0u, CHUNK + 7u, 0u);
    }
    return vec4<u32>(a, phys(a), STATE_LEN + 2u - a, coop_slot(a));
}

fn valid_outputs(p: u32) -> u32 {
    let a = p * CHUNK;
    return select(0u, min(CHUNK, STATE_LEN - a), a < STATE_LEN);
}

// Write the balanced-ternary trits of the 64-bit counter (hi, lo) into counter trits 168..210.
fn write_counter(so: u32, lo_in: u32, hi_in: u32) {
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
        put(so, coop_slot(COUNTER_START + k), vec2<u32>(splat(r != 1u), splat(r != 2u)));
    }
}

// Offsets j' * stride + g of state g with j <= j' < n below params.remaining: what it leaves
// untried when it stops at transform j.
fn untried(j: u32, n: u32, g: u32) -> u32 {
    let stride = params.stride;
    if g >= stride || g >= params.remaining {
        return 0u;
    }
    let total = min(n, (params.remaining - g + stride - 1u) / stride);
    return select(0u, total - j, total > j);
}

fn transform(so: u32, p: u32) {
    let me = addressing(p);
    let valid = valid_outputs(p);
    for (var r = 0u; r < ROUNDS / 3u; r++) {
        coop_pass(so, me, p == 0u, valid);
    }
}

// The search: state g = workgroup * COOP_S + lid / COOP_P tries counter offsets j * stride + g
// for j in 0..params.transforms (those below params.remaining).
@compute @workgroup_size(WORKGROUP_SIZE)
fn search(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let s = lid / COOP_P;
    let p = lid % COOP_P;
    let g = wid.x * COOP_S + s;
    let so = s * WORDS;
    let stride = params.stride;
    let n = min(params.transforms, TRANSFORMS);
    var left = 0u;
    for (var j = 0u; j < n; j++) {
        // The group's first state has its smallest offset: past the dispatch, all are (uniform).
        if j * stride + wid.x * COOP_S >= params.remaining {
            break;
        }
        let offset = j * stride + g;
        let busy = g < stride && offset < params.remaining;
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
            write_counter(so, lo, hi);
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

// The transform test entry point: state g (params.stride states) is the bit-sliced state the
// host wrote into scratch[i * stride + g]; it is transformed in workgroup memory and written
// back there in natural order.
@compute @workgroup_size(WORKGROUP_SIZE)
fn transform_states(@builtin(local_invocation_index) lid: u32,
                    @builtin(workgroup_id) wid: vec3<u32>) {
    let s = lid / COOP_P;
    let p = lid % COOP_P;
    let g = wid.x * COOP_S + s;
    let so = s * WORDS;
    let stride = params.stride;
    let here = g < stride;
    for (var k = 0u; k < CHUNK; k++) {
        let z = p * CHUNK + k;
        if z < STATE_LEN && here {
            put(so, coop_slot(z), scratch[z * stride + g]);
        }
    }
    workgroupBarrier();
    transform(so, p);
    for (var k = 0u; k < CHUNK; k++) {
        let z = p * CHUNK + k;
        if z < STATE_LEN && here {
            scratch[z * stride + g] = trit(so, z);
        }
    }
}
