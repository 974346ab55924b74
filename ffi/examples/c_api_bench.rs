//! PoW through the C API of the built `libdcurl.so` beside `Engine::pow` in the same process:
//! the same transactions, interleaved call by call (A/B, the order alternating), so that host
//! load hits both alike. The library is loaded with `dlopen` and called through its exported
//! `dcurl_init` / `dcurl_entry` / `dcurl_destroy`, as any C caller would.
//!
//! ```sh
//! cargo build --release                       # target/release/libdcurl.so
//! cargo run --release -p curlpow-dcurl --example c_api_bench -- [CALLS=30] [MWM=14] [LIB]
//! ```
//!
//! With `C_API_BENCH_TX=FILE` the transactions are the first CALLS lines of FILE (2673 trytes
//! each) instead of pseudo-random ones, e.g. to run a peer's benchmark on the same inputs.
//!
//! Prints mean, median and p90 wall time per call for both, their ratio, the nonces tried per
//! CPU-second of this process (which other processes' load does not inflate: the C side's
//! nonces come from the library's own statistics, `curlpow_device_get`), and the per-call
//! overhead at MWM 1 (200 calls each), with the host's load average before and after.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use curlpow::{Engine, Transaction, TRANSACTION_TRYTES};

type Init = unsafe extern "C" fn(*mut c_void) -> bool;
type Entry = unsafe extern "C" fn(*mut i8, c_int, c_int) -> *mut i8;
type Destroy = unsafe extern "C" fn();
type DeviceCount = unsafe extern "C" fn() -> usize;
type DeviceGet = unsafe extern "C" fn(usize, *mut Device) -> c_int;

/// `curlpow_device` of `include/curlpow.h`.
#[repr(C)]
struct Device {
    id: [c_char; 64],
    name: [c_char; 128],
    backend: [c_char; 16],
    searches: u64,
    nonces: u64,
    hits: u64,
    errors: u64,
    busy_seconds: f64,
    healthy: c_int,
}

struct Dcurl {
    init: Init,
    entry: Entry,
    destroy: Destroy,
    device_count: DeviceCount,
    device_get: DeviceGet,
}

impl Dcurl {
    /// Nonces tried so far by every device of the library's engine.
    fn nonces(&self) -> u64 {
        // SAFETY: plain calls of the exported functions; `d` is a writable curlpow_device.
        unsafe {
            (0..(self.device_count)())
                .map(|i| {
                    let mut d: Device = std::mem::zeroed();
                    if (self.device_get)(i, &mut d) == 0 {
                        d.nonces
                    } else {
                        0
                    }
                })
                .sum()
        }
    }
}

/// CPU time of this process (all threads), in seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes one rusage.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn dlerror() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated message owned by libc.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown dlopen error".into()
    } else {
        // SAFETY: non-NULL, NUL-terminated (above).
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

fn load(path: &Path) -> Result<Dcurl, String> {
    let c = CString::new(path.to_string_lossy().as_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: a NUL-terminated path; the handle is kept for the life of the process.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if h.is_null() {
        return Err(format!("dlopen {}: {}", path.display(), dlerror()));
    }
    let sym = |name: &CStr| {
        // SAFETY: a live handle and a NUL-terminated name.
        let p = unsafe { libc::dlsym(h, name.as_ptr()) };
        if p.is_null() {
            Err(format!("dlsym {name:?}: {}", dlerror()))
        } else {
            Ok(p)
        }
    };
    // SAFETY: the symbols are the functions include/dcurl.h declares, with these signatures.
    unsafe {
        Ok(Dcurl {
            init: std::mem::transmute::<*mut c_void, Init>(sym(c"dcurl_init")?),
            entry: std::mem::transmute::<*mut c_void, Entry>(sym(c"dcurl_entry")?),
            destroy: std::mem::transmute::<*mut c_void, Destroy>(sym(c"dcurl_destroy")?),
            device_count: std::mem::transmute::<*mut c_void, DeviceCount>(sym(
                c"curlpow_device_count",
            )?),
            device_get: std::mem::transmute::<*mut c_void, DeviceGet>(sym(c"curlpow_device_get")?),
        })
    }
}

fn transactions(n: usize) -> Vec<String> {
    let mut trytes = curlpow::internal::xorshift::trytes(0x2545_F491_4F6C_DD1D);
    (0..n)
        .map(|_| {
            (&mut trytes)
                .take(TRANSACTION_TRYTES)
                .map(char::from)
                .collect()
        })
        .collect()
}

/// One call: wall time, CPU time of the process, nonces tried.
#[derive(Default, Clone, Copy)]
struct Call {
    wall: Duration,
    cpu: f64,
    nonces: u64,
}

/// One `dcurl_entry` call, its result checked with the scalar reference.
fn c_pow(d: &Dcurl, trytes: &str, mwm: usize) -> Call {
    let (n0, c0) = (d.nonces(), cpu_seconds());
    let mut input = trytes.as_bytes().to_vec(); // 2673 bytes, no NUL: dcurl's input
    let t0 = Instant::now();
    // SAFETY: `input` holds 2673 readable bytes; the result is malloc'd and freed below.
    let out = unsafe { (d.entry)(input.as_mut_ptr().cast(), mwm as c_int, 0) };
    let took = t0.elapsed();
    assert!(!out.is_null(), "dcurl_entry failed");
    // SAFETY: a non-NULL result is NUL-terminated (2673 trytes + NUL).
    let text = unsafe { CStr::from_ptr(out.cast::<c_char>()) }
        .to_str()
        .expect("ASCII")
        .to_owned();
    // SAFETY: from malloc in the library, freed once.
    unsafe { libc::free(out.cast()) };
    let cpu = cpu_seconds() - c0;
    let tx: Transaction = text.parse().expect("2673 trytes");
    assert!(tx.weight() >= mwm, "weight below {mwm}");
    Call {
        wall: took,
        cpu,
        nonces: d.nonces() - n0,
    }
}

fn rust_pow(engine: &Engine, trytes: &str, mwm: usize) -> Call {
    // Parsing counts on both sides: the C API parses its input too.
    let c0 = cpu_seconds();
    let t0 = Instant::now();
    let tx: Transaction = trytes.parse().expect("2673 trytes");
    let done = engine.pow(&tx, mwm).expect("pow");
    let took = t0.elapsed();
    let cpu = cpu_seconds() - c0;
    assert!(done.transaction.weight() >= mwm);
    Call {
        wall: took,
        cpu,
        nonces: done.report.nonces,
    }
}

struct Summary {
    mean: f64,
    median: f64,
    p90: f64,
    /// Million nonces per CPU-second over all the calls.
    per_cpu_second: f64,
}

fn summary(v: &[Call]) -> Summary {
    let per_cpu_second = v.iter().map(|c| c.nonces).sum::<u64>() as f64
        / v.iter().map(|c| c.cpu).sum::<f64>().max(1e-9)
        / 1e6;
    let mut s: Vec<f64> = v.iter().map(|c| c.wall.as_secs_f64()).collect();
    s.sort_by(f64::total_cmp);
    let at = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
    Summary {
        mean: s.iter().sum::<f64>() / s.len() as f64,
        median: at(0.5),
        p90: at(0.9),
        per_cpu_second,
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let calls: usize = args
        .first()
        .map_or(Ok(30), |a| a.parse())
        .map_err(|e| format!("CALLS: {e}"))?;
    let mwm: usize = args
        .get(1)
        .map_or(Ok(14), |a| a.parse())
        .map_err(|e| format!("MWM: {e}"))?;
    let lib = args.get(2).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/release/libdcurl.so")
    });
    let d = load(&lib)?;
    // SAFETY: NULL config is allowed.
    if !unsafe { (d.init)(std::ptr::null_mut()) } {
        return Err("dcurl_init failed".into());
    }
    let engine = Engine::new().map_err(|e| e.to_string())?;
    println!(
        "library {}; engine: {} CPU threads, kernel {}; load average before: {}",
        lib.display(),
        curlpow::internal::engine_cpu(&engine).threads(),
        curlpow::internal::engine_cpu(&engine).kernel().name(),
        loadavg()
    );
    let txs = match std::env::var_os("C_API_BENCH_TX") {
        Some(path) => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("C_API_BENCH_TX {}: {e}", Path::new(&path).display()))?;
            let txs: Vec<String> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .take(calls)
                .map(str::to_owned)
                .collect();
            if txs.len() < calls {
                return Err(format!(
                    "C_API_BENCH_TX {}: {} transactions, {calls} asked for",
                    Path::new(&path).display(),
                    txs.len()
                ));
            }
            if let Some((i, bad)) = txs
                .iter()
                .enumerate()
                .find(|(_, t)| t.parse::<Transaction>().is_err())
            {
                return Err(format!(
                    "C_API_BENCH_TX line {}: not 2673 trytes ({} characters)",
                    i + 1,
                    bad.len()
                ));
            }
            txs
        }
        None => transactions(calls),
    };
    // Warm both (pools started, pages touched).
    c_pow(&d, &txs[0], 9);
    rust_pow(&engine, &txs[0], 9);

    let (mut c, mut r) = (Vec::new(), Vec::new());
    for (i, t) in txs.iter().enumerate() {
        if i % 2 == 0 {
            c.push(c_pow(&d, t, mwm));
            r.push(rust_pow(&engine, t, mwm));
        } else {
            r.push(rust_pow(&engine, t, mwm));
            c.push(c_pow(&d, t, mwm));
        }
    }
    let (cs, rs) = (summary(&c), summary(&r));
    let expected = 3f64.powi(mwm as i32);
    println!("MWM {mwm}, {calls} transactions, each through both (interleaved):");
    println!(
        "| | mean s | median s | p90 s | effective M nonces/s (3^{mwm} / mean) | M nonces per CPU-second |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, s) in [("C API `dcurl_entry`", &cs), ("Rust `Engine::pow`", &rs)] {
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} | {:.2} | {:.2} |",
            s.mean,
            s.median,
            s.p90,
            expected / s.mean / 1e6,
            s.per_cpu_second
        );
    }
    println!(
        "C API / Rust: mean {:.3}, median {:.3}",
        cs.mean / rs.mean,
        cs.median / rs.median
    );

    // Per-call overhead: MWM 1 is a search of one batch.
    let n = 200;
    let (mut c1, mut r1) = (Vec::new(), Vec::new());
    for i in 0..n {
        let t = &txs[i % txs.len()];
        c1.push(c_pow(&d, t, 1));
        r1.push(rust_pow(&engine, t, 1));
    }
    let (c1, r1) = (summary(&c1), summary(&r1));
    println!(
        "MWM 1, {n} calls each: C API median {:.1} us (mean {:.1}), Engine::pow median {:.1} us (mean {:.1})",
        c1.median * 1e6,
        c1.mean * 1e6,
        r1.median * 1e6,
        r1.mean * 1e6
    );
    println!("load average after: {}", loadavg());
    // SAFETY: no call in flight.
    unsafe { (d.destroy)() };
    Ok(())
}
