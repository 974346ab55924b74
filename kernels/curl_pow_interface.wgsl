// What both wgpu kernels (curl_pow.wgsl, curl_pow_workgroup.wgsl) share with the host: the
// dispatch's parameters and result, the search's found flag, the pipeline-overridable sizes,
// the state's constants and the bindings. The host puts this file after the lane prelude
// (which defines `W`) and before the kernel (src/backend/wgpu/source.rs). A
// declaration one kernel does not use is dropped with everything else its entry points do not
// reach when a pipeline is built, so each kernel compiles as if it declared only its own.
//
// Results (src/backend/gpu/launcher.rs): `flag` (one word for the whole search) is claimed once with an
// atomic by the first hit; its claimer writes found/lane/counter into its dispatch's `result`.
// Every invocation checks the flag before each transform and stops when it is set, adding the
// counter offsets it did not try to `result.skipped`, so the host counts the nonces tried.

// Search parameters, rewritten before every dispatch.
struct Params {
    // First counter of this dispatch (low and high 32 bits).
    base_lo: u32,
    base_hi: u32,
    // Invocations in this dispatch (the scratch stride).
    stride: u32,
    // Counter offsets (j * stride + g) at or past this are outside the range: skipped.
    remaining: u32,
    // Minimum weight magnitude (0..=243).
    mwm: u32,
    // Transforms per invocation in this dispatch (at most TRANSFORMS).
    transforms: u32,
    _pad1: u32,
    _pad2: u32,
}

// One dispatch's result: written by the claimer of `flag` only, but `skipped`, which every
// invocation that stops early adds to.
struct Found {
    found: u32,
    lane: u32,
    counter_lo: u32,
    counter_hi: u32,
    skipped: atomic<u32>,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// The search's found flag, shared by every dispatch of the search.
struct Flag {
    found: atomic<u32>,
}

// Workgroup size (pipeline-overridable; the host always sets it).
override WORKGROUP_SIZE: u32 = 64u;
// Transforms per invocation per dispatch (pipeline-overridable; the host keeps it under the
// loop cap of software adapters, see curl_pow.wgsl).
override TRANSFORMS: u32 = 1u;
// Rounds per pass over the state: 1 (one load and store per trit-round), 3 or 5 (fused: a
// third or a fifth of the memory traffic, more registers; curl_pow.wgsl only).
override FUSE: u32 = 3u;

const STATE_LEN: u32 = 729u;
const HASH_LEN: u32 = 243u;
const ROUNDS: u32 = 81u;
const COUNTER_START: u32 = 168u;
const COUNTER_LEN: u32 = 42u;
// Slots per invocation: the state and the fused passes' side copies (21 at most;
// curl_pow.wgsl only).
const SLOTS: u32 = 750u;

@group(0) @binding(0) var<uniform> params: Params;
// The mid-state, bit-sliced: lane trits (162..168) hold each lane's number, counter trits zero
// (for the block entry point: the lanes' nonce bytes in trits 192..204, the counter's zero).
@group(0) @binding(1) var<storage, read> mid_state: array<vec2<W>, 729>;
// The kernel's working states.
@group(0) @binding(2) var<storage, read_write> scratch: array<vec2<W>>;
@group(0) @binding(3) var<storage, read_write> result: Found;
@group(0) @binding(4) var<storage, read_write> flag: Flag;
