//! `curlpow`: Curl-P-81 proof-of-work from the command line.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use curlpow::{Backend, CpuKernel, Engine, Error, PowOptions, Selection, Transaction};

/// IOTA Curl-P-81 proof-of-work on CPU SIMD, OpenCL and wgpu devices.
#[derive(Parser)]
#[command(name = "curlpow", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Find nonces: one 2673-tryte transaction per line in, the same with the nonce set out.
    Pow(PowArgs),
    /// Curl-P-81 hash of each line (a multiple of 81 trytes), 81 trytes per line out.
    Hash(InputArg),
    /// Print each transaction's trailing zero trits; exit 1 if any is below --mwm.
    Verify(VerifyArgs),
    /// Nonces tried per second on one device, with an unreachable target.
    Bench(BenchArgs),
    /// List every device of every compiled backend.
    Devices(DevicesArgs),
}

#[derive(Args)]
struct InputArg {
    /// Input file; `-` or nothing for standard input.
    file: Option<PathBuf>,
}

#[derive(Args, Clone)]
struct EngineArgs {
    /// CPU worker threads [default: CURLPOW_THREADS, else all cores].
    #[arg(long)]
    threads: Option<usize>,
    /// Force a CPU kernel: portable, avx2, avx512 [default: CURLPOW_CPU_KERNEL, else the fastest].
    #[arg(long)]
    kernel: Option<String>,
    /// Only these backends: cpu, opencl, wgpu (repeat or comma-separate).
    #[arg(long, value_delimiter = ',')]
    backend: Vec<String>,
    /// Only these devices, by id from `curlpow devices` (repeat or comma-separate).
    #[arg(long, value_delimiter = ',')]
    device: Vec<String>,
    /// Never these devices (repeat or comma-separate).
    #[arg(long, value_delimiter = ',')]
    exclude: Vec<String>,
    /// Also use software GPU drivers (PoCL, lavapipe); implied by naming one with --device.
    #[arg(long)]
    software: bool,
    /// wgpu: use 32-bit lanes even where 64-bit integers are offered.
    #[arg(long)]
    wgpu_32bit: bool,
    /// Pin CPU worker threads to cores.
    #[arg(long)]
    pin: bool,
    /// Print what device discovery found wrong or skipped.
    #[arg(long, short)]
    verbose: bool,
}

#[derive(Args)]
struct PowArgs {
    /// Minimum weight magnitude: trailing zero trits of the hash (mainnet 14, testnet 9).
    #[arg(long, default_value_t = 14)]
    mwm: usize,
    /// Give up after this many seconds in all (exit 3).
    #[arg(long)]
    timeout: Option<f64>,
    /// Run each search on every free device at once (lowest latency).
    #[arg(long)]
    latency: bool,
    /// Print per-device statistics to stderr at the end.
    #[arg(long)]
    stats: bool,
    /// No progress display.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    engine: EngineArgs,
    #[command(flatten)]
    input: InputArg,
}

#[derive(Args)]
struct VerifyArgs {
    /// Minimum weight magnitude to check against.
    #[arg(long)]
    mwm: usize,
    #[command(flatten)]
    input: InputArg,
}

#[derive(Args)]
struct BenchArgs {
    /// Seconds to run.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    engine: EngineArgs,
}

#[derive(Args)]
struct DevicesArgs {
    /// JSON array of objects.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    engine: EngineArgs,
}

/// A usage or input error: exit 2.
#[derive(Debug)]
struct UsageError(String);
impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UsageError {}

/// Mesa's Vulkan drivers print "XDG_RUNTIME_DIR is invalid or not set" on every instance when
/// the variable is unset (system services, CI, ssh without a session). curlpow never opens a
/// window, so before any thread starts it gives itself a private runtime folder (mode 0700, owned
/// by this user) and the message stays away. A folder that exists with another owner or wider
/// permissions is left alone, and so is the variable.
#[cfg(all(unix, feature = "wgpu"))]
fn quiet_headless_vulkan() {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    if std::env::var_os("XDG_RUNTIME_DIR").is_some() {
        return;
    }
    let Ok(uid) = std::fs::metadata("/proc/self").map(|m| m.uid()) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("curlpow-runtime-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() && m.uid() == uid && m.permissions().mode() & 0o077 == 0 => {
            std::env::set_var("XDG_RUNTIME_DIR", &dir);
        }
        _ => {}
    }
}

fn main() -> ExitCode {
    #[cfg(all(unix, feature = "wgpu"))]
    quiet_headless_vulkan();
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Pow(a) => cmd_pow(a),
        Cmd::Hash(a) => cmd_hash(a),
        Cmd::Verify(a) => cmd_verify(a),
        Cmd::Bench(a) => cmd_bench(a),
        Cmd::Devices(a) => cmd_devices(a),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            let code = if e.downcast_ref::<UsageError>().is_some() {
                2
            } else if let Some(Error::Timeout { .. }) = e.downcast_ref::<Error>() {
                3
            } else if let Some(Error::Cancelled { .. }) = e.downcast_ref::<Error>() {
                3
            } else if let Some(
                Error::InvalidMwm(_) | Error::UnsupportedKernel { .. } | Error::Config(_),
            ) = e.downcast_ref::<Error>()
            {
                2
            } else {
                1
            };
            eprintln!("curlpow: {e:#}");
            ExitCode::from(code)
        }
    }
}

/// Read the whole input; a missing file is a usage error.
fn read_input(file: &Option<PathBuf>) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    match file {
        Some(p) if p.as_os_str() != "-" => {
            buf = std::fs::read(p)
                .map_err(|e| UsageError(format!("cannot read {}: {e}", p.display())))?;
        }
        _ => {
            std::io::stdin()
                .read_to_end(&mut buf)
                .context("reading standard input")?;
        }
    }
    Ok(buf)
}

/// Non-blank lines with their 1-based numbers; CR and surrounding blanks removed.
fn lines(input: &[u8]) -> Vec<(usize, Result<&str, String>)> {
    input
        .split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(i, l)| {
            let l = l.trim_ascii();
            if l.is_empty() {
                return None;
            }
            Some((
                i + 1,
                std::str::from_utf8(l).map_err(|e| format!("not UTF-8 text: {e}")),
            ))
        })
        .collect()
}

/// Report every bad line, or return the parsed values.
fn parse_all<T>(
    input: &[u8],
    parse: impl Fn(&str) -> Result<T, Error>,
) -> Result<Vec<T>, UsageError> {
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for (n, l) in lines(input) {
        match l.and_then(|s| parse(s).map_err(|e| e.to_string())) {
            Ok(v) => ok.push(v),
            Err(e) => bad.push(format!("line {n}: {e}")),
        }
    }
    if bad.is_empty() {
        Ok(ok)
    } else {
        let n = bad.len();
        Err(UsageError(format!(
            "{n} bad input line{}:\n  {}",
            if n == 1 { "" } else { "s" },
            bad.join("\n  ")
        )))
    }
}

fn build_engine(a: &EngineArgs) -> Result<(Engine, Selection)> {
    let mut b = Engine::builder().pin_threads(a.pin);
    let mut backends = Vec::new();
    if let Some(n) = a.threads {
        if n == 0 {
            return Err(UsageError("--threads must be at least 1".into()).into());
        }
        b = b.threads(n);
    }
    if let Some(k) = &a.kernel {
        b = b.cpu_kernel(CpuKernel::from_name(k)?);
    }
    for name in &a.backend {
        let be = Backend::from_name(name).ok_or_else(|| {
            UsageError(format!(
                "unknown backend {name:?} (known: cpu, opencl, wgpu)"
            ))
        })?;
        if !be.compiled() {
            return Err(UsageError(format!(
                "backend {be} is not compiled into this binary (rebuild with --features {be})"
            ))
            .into());
        }
        backends.push(be);
    }
    // Naming a software device (PoCL, lavapipe) or a GPU backend on a host without GPUs must
    // find it, so naming devices lets software drivers be discovered.
    let software = a.software || !a.device.is_empty();
    b = b.include_software(software).force_32bit_lanes(a.wgpu_32bit);
    if !backends.is_empty() {
        let mut discover = backends.clone();
        if !discover.contains(&Backend::Cpu) {
            discover.push(Backend::Cpu);
        }
        b = b.backends(&discover);
    }
    let sel = Selection {
        backends,
        devices: a.device.clone(),
        exclude: a.exclude.clone(),
    };
    let mut engine = b.clone().build()?;
    // `--backend opencl` (or wgpu) on a host whose only driver of that API is a software one
    // (PoCL, lavapipe) asks for that driver: look again with software drivers allowed.
    if !software && !sel.backends.is_empty() && engine.check_selection(&sel).is_err() {
        let again = b.include_software(true).build()?;
        if again.check_selection(&sel).is_ok() {
            eprintln!("curlpow: note: no hardware device for the selected backend; using its software driver");
            engine = again;
        }
    }
    // Discovery notes (a skipped software adapter, a driver that did not answer) matter when
    // the caller asked for devices; a plain `pow` on a headless box stays quiet.
    if a.verbose || !a.backend.is_empty() || !a.device.is_empty() {
        for w in engine.discovery_warnings() {
            eprintln!("curlpow: note: {w}");
        }
    }
    engine
        .check_selection(&sel)
        .map_err(|e| UsageError(e.to_string()))?;
    Ok((engine, sel))
}

fn cmd_pow(a: PowArgs) -> Result<ExitCode> {
    let input = read_input(&a.input.file)?;
    curlpow::search::check_mwm(a.mwm).map_err(|e| UsageError(e.to_string()))?;
    let txs = parse_all(&input, |s| s.parse::<Transaction>())?;
    if txs.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let (engine, selection) = build_engine(&a.engine)?;
    let mut opts = PowOptions::mwm(a.mwm);
    opts.selection = selection;
    opts.latency = a.latency;
    if let Some(t) = a.timeout {
        if !(t.is_finite() && t >= 0.0) {
            return Err(UsageError(format!("--timeout {t} is not a number of seconds")).into());
        }
        opts.timeout = Some(Duration::from_secs_f64(t.min(1e9)));
    }
    let progress = (!a.quiet && std::io::stderr().is_terminal())
        .then(|| Progress::start(engine.clone(), txs.len()));
    let started = Instant::now();
    let results = engine.pow_many(&txs, &opts);
    if let Some(p) = progress {
        p.finish();
    }
    let done = results.iter().filter(|r| r.is_ok()).count();
    let first_err = results.into_iter().collect::<Result<Vec<_>, _>>();
    if a.stats {
        print_stats(&engine);
    }
    match first_err {
        Ok(results) => {
            let mut out = std::io::stdout().lock();
            for r in &results {
                writeln!(out, "{}", r.transaction.to_trytes())?;
            }
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ Error::Timeout { .. }) => {
            eprintln!(
                "curlpow: timed out after {:.2?}: {done} of {} transactions done, nothing written",
                started.elapsed(),
                txs.len()
            );
            Err(e.into())
        }
        Err(e) => Err(e.into()),
    }
}

fn cmd_hash(a: InputArg) -> Result<ExitCode> {
    let input = read_input(&a.file)?;
    let hashes = parse_all(&input, |s| {
        let n = s.chars().count();
        if n == 0 || n % 81 != 0 {
            return Err(curlpow::TryteError::Length {
                found: n,
                expected: "a multiple of 81",
            }
            .into());
        }
        let trits = curlpow::trytes_to_trits(s)?;
        curlpow::trits_to_trytes(&curlpow::hash(&trits)?)
    })?;
    let mut out = std::io::stdout().lock();
    for h in hashes {
        writeln!(out, "{h}")?;
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_verify(a: VerifyArgs) -> Result<ExitCode> {
    let input = read_input(&a.input.file)?;
    curlpow::search::check_mwm(a.mwm).map_err(|e| UsageError(e.to_string()))?;
    let weights = parse_all(&input, |s| s.parse::<Transaction>().map(|t| t.weight()))?;
    let mut out = std::io::stdout().lock();
    let mut ok = true;
    for w in weights {
        writeln!(out, "{w}")?;
        ok &= w >= a.mwm;
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn cmd_bench(a: BenchArgs) -> Result<ExitCode> {
    if !(a.seconds.is_finite() && a.seconds > 0.0) {
        return Err(UsageError(format!("--seconds {} must be positive", a.seconds)).into());
    }
    let mut ea = a.engine.clone();
    if ea.backend.is_empty() && ea.device.is_empty() {
        ea.backend.push("cpu".into());
    }
    let (engine, selection) = build_engine(&ea)?;
    let devices = engine.select(&selection);
    if devices.is_empty() {
        return Err(UsageError("no device matches the selection".into()).into());
    }
    for info in devices {
        let r = engine.bench(&info.id, Duration::from_secs_f64(a.seconds))?;
        if a.json {
            println!("{}", serde_json::to_string(&r)?);
        } else {
            println!(
                "{:<12} {:<40} {:>10.3} M nonces/s  ({} nonces in {:.2} s{})",
                r.device_id,
                r.device,
                r.nonces_per_second / 1e6,
                r.nonces,
                r.seconds,
                r.kernel
                    .as_deref()
                    .map(|k| format!(", kernel {k}"))
                    .unwrap_or_default()
                    + &r.threads
                        .map(|t| format!(", {t} threads"))
                        .unwrap_or_default()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_devices(a: DevicesArgs) -> Result<ExitCode> {
    let mut ea = a.engine.clone();
    ea.software = true;
    ea.verbose = true;
    let (engine, _) = build_engine(&ea)?;
    let list = engine.device_report();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&list)?);
    } else {
        for d in &list {
            println!(
                "{:<14} {:<7} {:<5} {}",
                d.info.id,
                d.info.backend.name(),
                serde_json::to_value(d.info.kind)?.as_str().unwrap_or(""),
                d.info.name
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_stats(engine: &Engine) {
    eprintln!(
        "{:<14} {:>8} {:>14} {:>6} {:>6} {:>10}",
        "device", "searches", "nonces", "hits", "errors", "busy"
    );
    for d in engine.device_report() {
        let s = &d.stats;
        eprintln!(
            "{:<14} {:>8} {:>14} {:>6} {:>6} {:>9.3}s",
            d.info.id, s.searches, s.nonces, s.hits, s.errors, s.busy_seconds
        );
    }
}

/// A progress line on stderr while searches run (only when stderr is a terminal).
struct Progress {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

impl Progress {
    fn start(engine: Engine, total: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            let start = Instant::now();
            let base = engine.nonces_tried();
            while !s.load(Ordering::Relaxed) {
                let n = engine.nonces_tried() - base;
                let rate = n as f64 / start.elapsed().as_secs_f64().max(1e-3);
                let done: u64 = engine.device_report().iter().map(|d| d.stats.hits).sum();
                bar.set_message(format!(
                    "{done}/{total} transaction{} done: {n} nonces tried, {:.2} M nonces/s",
                    if total == 1 { "" } else { "s" },
                    rate / 1e6
                ));
                bar.tick();
                std::thread::sleep(Duration::from_millis(100));
            }
            bar.finish_and_clear();
        });
        Progress { stop, thread }
    }

    fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.join();
    }
}
