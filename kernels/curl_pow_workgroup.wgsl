// Curl-P-81 proof-of-work search for wgpu with the state in workgroup memory: the cooperative
// kernel of curl_pow.cl (its COOP section) in WGSL. 32 lanes in u32 words.
//
// The module starts with a prelude (src/backend/wgpu/workgroup.rs) that defines
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
// The host composes the module (src/backend/wgpu/source.rs): the prelude,
// curl_pow_interface.wgsl (bindings and results, the same host code as curl_pow.wgsl),
// curl_pow_shared.wgsl (the S-box and the transaction counter writer), this file, the block
// PoW's counter writer (block_pow.wgsl), and the search entry point
// (search_entry_workgroup.wgsl) twice: `search` on the transaction layout and `block_search`
// on the block layout, both on this file's transform. `params.stride` is the number of states
// of the dispatch; state g tries counter offsets j * stride + g.

var<workgroup> slo: array<u32, COOP_S * WORDS>;
var<workgroup> shi: array<u32, COOP_S * WORDS>;
var<workgroup> stop: u32;

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

// The state at word offset `so` of the workgroup arrays.
struct StateRef {
    so: u32,
}

// Trit z of the state before its transform (natural order, stored at coop_slot(z)).
fn set_trit(st: StateRef, z: u32, v: vec2<u32>) {
    put(st.so, coop_slot(z), v);
}

// Offsets j' * stride + g of state g with j <= j' < n below params.remaining: what it leaves
// untried when it stops at transform j.
fn untried(j: u32, n: u32, g: u32) -> u32 {
    let stride = params.stride;
    if g >= stride || g >= params.remaining {
        return 0u;
    }
    // (remaining - g - 1) / stride + 1: never past 2^32, whatever remaining is.
    let total = min(n, (params.remaining - g - 1u) / stride + 1u);
    return select(0u, total - j, total > j);
}

fn transform(so: u32, p: u32) {
    let me = addressing(p);
    let valid = valid_outputs(p);
    for (var r = 0u; r < ROUNDS / 3u; r++) {
        coop_pass(so, me, p == 0u, valid);
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
