//! Helpers shared by the integration tests and benchmarks: the public vectors (`tests/vectors/`,
//! each file naming its upstream source), random transactions, and the rule for GPU tests that
//! find no device.

pub use crate::skip::skip;

use std::path::{Path, PathBuf};

use curlpow::Transaction;
use serde_json::Value;

/// The repository: `CURLPOW_TEST_ROOT` when set (a test binary carried to another machine, as
/// `scripts/gpu-check.sh` does, finds the repository there), else the folder above this crate.
pub fn repo_root() -> PathBuf {
    match std::env::var_os("CURLPOW_TEST_ROOT") {
        Some(root) => PathBuf::from(root),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
    }
}

/// Every `.rs` file under `dir`, appended to `out` (for the tests that read the sources).
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A JSON file of `tests/vectors/`.
pub fn vectors(name: &str) -> Value {
    let path = repo_root().join("tests/vectors").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every public Curl-P-81 vector: (input trytes, expected squeeze output trytes).
pub fn curl_vectors() -> Vec<(String, String)> {
    let files = [
        "curlp81_iota_go_golden.json",
        "curlp81_iota_go_table.json",
        "curlp81_crypto_rs_input_243_output_243.json",
        "curlp81_crypto_rs_input_243_output_486.json",
        "curlp81_crypto_rs_input_243_output_6561.json",
        "curlp81_crypto_rs_input_486_output_486.json",
        "curlp81_crypto_rs_input_6561_output_243.json",
        "curlp81_crypto_rs_input_6561_output_6561.json",
        "curlp81_crypto_rs_input_8019_output_243.json",
    ];
    let mut out = Vec::new();
    for f in files {
        for v in vectors(f)["vectors"].as_array().expect("vectors array") {
            let input = v["in"].as_str().expect("in").to_string();
            let expected = v
                .get("out")
                .or_else(|| v.get("hash"))
                .and_then(Value::as_str)
                .expect("out or hash")
                .to_string();
            out.push((input, expected));
        }
    }
    out
}

/// The public PoW inputs with the MWM each suite used.
pub fn pow_inputs() -> Vec<(Transaction, usize)> {
    vectors("pow_input_transactions.json")["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["trytes"].as_str().unwrap().parse().unwrap(),
                v["mwm_used"].as_u64().unwrap() as usize,
            )
        })
        .collect()
}

/// Endless pseudo-random trits (the crate's xorshift64, deterministic per seed).
pub fn random_trits(seed: u64) -> impl Iterator<Item = i8> {
    curlpow::internal::xorshift::trits(seed)
}

/// Run the calling test alone, in a child process of this test binary (for tests that measure
/// the whole process, such as its thread count, which other tests running in parallel would
/// disturb). Returns true in the child, where the test body runs; in the parent it runs the
/// child, fails if the child failed, and returns false.
pub fn run_alone(test_name: &str) -> bool {
    const CHILD: &str = "CURLPOW_TEST_RUN_ALONE";
    if std::env::var_os(CHILD).is_some() {
        return true;
    }
    let exe = std::env::current_exe().expect("test binary path");
    // The name libtest runs the test under, with its module path in a binary of several
    // modules: the name of the thread it runs the test on.
    let full = std::thread::current()
        .name()
        .filter(|n| n.ends_with(test_name))
        .unwrap_or(test_name)
        .to_string();
    let out = std::process::Command::new(exe)
        .args([full.as_str(), "--exact"])
        .args(["--test-threads", "1", "--nocapture"])
        .env(CHILD, "1")
        .output()
        .expect("run the test in a child process");
    assert!(
        out.status.success(),
        "{test_name} failed in its own process:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

/// A pseudo-random transaction (xorshift, deterministic per seed).
pub fn random_tx(seed: u64) -> Transaction {
    let trits: Vec<i8> = random_trits(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .take(curlpow::TRANSACTION_TRITS)
        .collect();
    Transaction::from_trits(&trits).unwrap()
}

/// Check a PoW result by property: weight reached, only the nonce changed.
pub fn assert_valid_pow(input: &Transaction, output: &Transaction, mwm: usize) {
    // The weight from the scalar reference sponge, independent of every fast path.
    let w = curlpow::trits::trailing_zeros(&curlpow::hash(output.trits()).unwrap());
    assert!(w >= mwm, "weight {w} < mwm {mwm}");
    let nonce = curlpow::Field::Nonce.trits();
    for i in 0..curlpow::TRANSACTION_TRITS {
        if !nonce.contains(&i) {
            assert_eq!(
                input.trits()[i],
                output.trits()[i],
                "trit {i} outside the nonce changed"
            );
        }
    }
}

/// Whether a GPU test for `backend` must run. With `CURLPOW_REQUIRE_BACKENDS` naming the backend
/// (comma-separated), a missing device is a failure; otherwise the test is skipped with a visible
/// message. Call with `found` = whether a device was found.
pub fn gpu_available(backend: &str, found: bool) -> bool {
    if found {
        return true;
    }
    let required = std::env::var("CURLPOW_REQUIRE_BACKENDS").unwrap_or_default();
    if required
        .split(',')
        .any(|b| b.trim().eq_ignore_ascii_case(backend))
    {
        panic!("CURLPOW_REQUIRE_BACKENDS requires {backend}, but no {backend} device was found");
    }
    skip(&format!(
        "no {backend} device found (set CURLPOW_REQUIRE_BACKENDS={backend} to make this a failure)"
    ));
    false
}

/// `n` pseudo-random 729-trit states (xorshift, deterministic per seed).
pub fn random_states(n: usize, seed: u64) -> Vec<[i8; curlpow::curl::STATE_LEN]> {
    let mut trits = random_trits(seed);
    (0..n)
        .map(|_| {
            let mut st = [0i8; curlpow::curl::STATE_LEN];
            for t in st.iter_mut() {
                *t = trits.next().expect("endless");
            }
            st
        })
        .collect()
}

/// Run every public Curl-P-81 vector through a sponge built on a backend's batch `transform`
/// (states in, the same states transformed out), all vectors in lockstep: one call per step for
/// every vector that still needs a transform. Output block `j` is the rate after `blocks + j`
/// transforms. Panics naming the first vector that differs; returns how many were checked.
pub fn check_vectors_with(
    label: &str,
    mut transform: impl FnMut(
        Vec<[i8; curlpow::curl::STATE_LEN]>,
    ) -> Vec<[i8; curlpow::curl::STATE_LEN]>,
) -> usize {
    let vectors = curl_vectors();
    let inputs: Vec<Vec<i8>> = vectors
        .iter()
        .map(|(i, _)| curlpow::trits::trytes_to_trits(i).unwrap())
        .collect();
    let blocks_in: Vec<usize> = inputs.iter().map(|i| i.len() / 243).collect();
    let total: Vec<usize> = vectors
        .iter()
        .zip(&blocks_in)
        .map(|((_, o), &b)| b + o.len() / 81 - 1)
        .collect();
    let mut states = vec![[0i8; curlpow::curl::STATE_LEN]; vectors.len()];
    let mut outputs: Vec<Vec<i8>> = vec![Vec::new(); vectors.len()];
    for step in 0..total.iter().copied().max().unwrap_or(0) {
        let todo: Vec<usize> = (0..vectors.len()).filter(|&k| step < total[k]).collect();
        for &k in &todo {
            if step < blocks_in[k] {
                states[k][..243].copy_from_slice(&inputs[k][step * 243..(step + 1) * 243]);
            }
        }
        let out = transform(todo.iter().map(|&k| states[k]).collect());
        assert_eq!(
            out.len(),
            todo.len(),
            "{label}: transform returned a wrong count"
        );
        for (&k, s) in todo.iter().zip(out) {
            states[k] = s;
            if step + 1 >= blocks_in[k] {
                outputs[k].extend_from_slice(&s[..243]);
            }
        }
    }
    for ((input, expected), got) in vectors.iter().zip(&outputs) {
        assert_eq!(
            curlpow::trits::trits_to_trytes(got).unwrap(),
            *expected,
            "{label}: input {}…",
            &input[..20.min(input.len())]
        );
    }
    vectors.len()
}

/// Search `range` on a device directly (no engine) and check the answer: a hit inside the range,
/// in one of the device's `lanes`, that passes the host check and changes only the nonce.
pub fn device_search_valid(
    dev: &dyn curlpow::device::Device,
    lanes: usize,
    tx: &Transaction,
    mwm: usize,
    range: curlpow::device::CounterRange,
) -> Transaction {
    use std::time::{Duration, Instant};
    let label = format!("{} ({})", dev.info().id, dev.info().kernel);
    let job = curlpow::device::SearchJob::new(tx, mwm).unwrap();
    let ctl =
        curlpow::device::SearchControl::new(None, Some(Instant::now() + Duration::from_secs(300)));
    let out = dev.search(&job, range, &ctl).expect("search");
    let hit = out
        .hit
        .unwrap_or_else(|| panic!("{label}: no hit at MWM {mwm}"));
    assert!(out.nonces > 0, "{label}: no nonces counted");
    assert!(
        hit.counter >= range.start && hit.counter - range.start < range.len,
        "{label}: hit counter {} outside {range:?}",
        hit.counter
    );
    assert!(hit.lane < lanes, "{label}: lane {} of {lanes}", hit.lane);
    let found = job
        .verify(hit)
        .unwrap_or_else(|| panic!("{label}: {hit:?} fails the host check at MWM {mwm}"));
    assert_valid_pow(tx, &found, mwm);
    found
}

/// The CPU kernels this machine can run, for tests that try each; prints a line for each one
/// skipped.
pub fn cpu_kernels() -> Vec<curlpow::CpuKernel> {
    curlpow::CpuKernel::ALL
        .iter()
        .copied()
        .filter(|k| {
            let ok = k.is_supported();
            if !ok {
                skip(&format!("this CPU cannot run the {k} kernel"));
            }
            ok
        })
        .collect()
}

/// xorshift64 with shifts 13, 7, 17: deterministic per seed (a non-zero seed).
pub struct Rng(pub u64);

impl Rng {
    /// The next number. (Named as in the tests that use it; an endless generator, not an
    /// `Iterator`.)
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// True `percent` times in 100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}
