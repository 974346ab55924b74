//! The workgroup-memory kernel (`kernels/curl_pow_workgroup.wgsl`, composed in `source.rs`): its
//! prelude, generated per shape, with the unrolled pass (WGSL has no unroll pragma; a pass written out step by step
//! keeps its windows and outputs in registers on every compiler), and its memory traffic.

use std::fmt::Write;

use crate::ternary::curl::STATE_LEN;

/// Trits per invocation with `p` invocations per state.
pub(super) fn chunk(p: u32) -> u32 {
    (STATE_LEN as u32).div_ceil(p.max(1))
}

/// States per workgroup with `p` invocations per state: up to 128 invocations (one state when
/// `p` is 64 or more), as the OpenCL cooperative kernel.
pub(crate) fn states_per_group(p: u32) -> u32 {
    if p >= 64 {
        1
    } else {
        (128 / p.max(1)).max(1)
    }
}

/// Words of one half of a state in workgroup memory (`WORDS`): 729 trits, two wrapped
/// elements in front, one word of padding per chunk when the chunk is even.
pub(super) fn words(p: u32) -> u32 {
    let c = chunk(p);
    STATE_LEN as u32
        + 2
        + if c.is_multiple_of(2) {
            (STATE_LEN as u32 + 1) / c
        } else {
            0
        }
}

/// Estimated bytes of workgroup-memory traffic per nonce: each pass, every invocation reads
/// its chunk and a halo of 7 trits and writes its chunk, two 4-byte words a trit; 32 nonces a
/// state.
pub(crate) fn bytes_per_nonce(p: u32) -> f64 {
    let per_pass = (2.0 * f64::from(p) * f64::from(chunk(p) + 7) + 2.0 * STATE_LEN as f64) * 4.0;
    27.0 * per_pass / 32.0
}

/// The prelude of the kernel for `p` invocations per state: constants, `phys`, `coop_pass`
/// (unrolled) and the 32-bit lane helper.
pub(super) fn prelude(p: u32) -> String {
    let c = chunk(p);
    let pad = c.is_multiple_of(2);
    let phys = |u: u32| u + if pad { u / c } else { 0 };
    let len = STATE_LEN as u32;
    let words = words(p);
    debug_assert_eq!(words, phys(len + 1) + 1);
    // The first step at which some invocation's read wraps past t = 728.
    let wrap_k = len + 2 - ((len - 1) / c) * c;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "alias W = u32;\n\
         fn lowest_lane(m: W) -> u32 {{ return countTrailingZeros(m); }}\n\
         const COOP_P: u32 = {p}u;\n\
         const COOP_S: u32 = {}u;\n\
         const CHUNK: u32 = {c}u;\n\
         const WORDS: u32 = {words}u;\n\
         fn phys(u: u32) -> u32 {{ return {}; }}",
        states_per_group(p),
        if pad {
            format!("u + u / {c}u")
        } else {
            "u".into()
        }
    );
    s.push_str(
        "// One pass of three fused rounds (see curl_pow.cl's coop_pass3), step k of the window\n\
         // reading element p C + k: x = L_0, n1 = L_1, n2 = L_2, n3 = L_3 (the outputs).\n\
         fn coop_pass(so: u32, me: vec4<u32>, first: bool, valid: u32) {\n\
         \x20   let a = me.x;\n\
         \x20   let base = so + me.y;\n\
         \x20   let wrap = me.z;\n",
    );
    for k in 0..c + 7 {
        let off = k + if pad { k / c } else { 0 };
        let addr = if k < 2 {
            format!("select(base + {off}u, so + {}u, first)", phys(len + k))
        } else if k >= wrap_k {
            format!("select(base + {off}u, so + phys(a + {k}u - {len}u), {k}u >= wrap)")
        } else {
            format!("base + {off}u")
        };
        let _ = writeln!(s, "    let w{k} = {addr};");
        let _ = writeln!(s, "    let x{k} = vec2<u32>(slo[w{k}], shi[w{k}]);");
        if k >= 4 {
            let _ = writeln!(s, "    let n1_{k} = sbox(x{}, x{k});", k - 4);
        }
        if k >= 6 {
            let _ = writeln!(s, "    let n2_{k} = sbox(n1_{k}, n1_{});", k - 2);
        }
        if k >= 7 {
            let _ = writeln!(s, "    let n3_{k} = sbox(n2_{}, n2_{k});", k - 1);
        }
    }
    s.push_str("    workgroupBarrier();\n    var t = me.w;\n");
    for j in 0..c {
        let _ = writeln!(
            s,
            "    if {j}u < valid {{ put(so, t, n3_{}); }}\n    t = min(t - 8u, t + {}u);",
            j + 7,
            len - 8
        );
    }
    s.push_str("    workgroupBarrier();\n}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!((chunk(32), states_per_group(32)), (23, 4));
        assert_eq!((chunk(64), states_per_group(64)), (12, 1));
        let p = prelude(64);
        assert!(
            p.contains("fn phys(u: u32) -> u32 { return u + u / 12u; }"),
            "{p}"
        );
        assert!(p.contains("let n3_18 = sbox(n2_17, n2_18);"), "{p}");
        assert!(!prelude(32).contains("u / 23u"));
        let b = bytes_per_nonce(32);
        assert!((11_000.0..11_500.0).contains(&b), "{b}");
    }
}
