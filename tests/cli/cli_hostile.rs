//! The generated bad-input campaign: inputs and option values made to break the
//! binary, each run through the real `curlpow` with the exit code an independent oracle
//! expects. Never a panic or a crash, never a wrong exit code, peak memory under 100 MB.
//!
//! `cases_through_the_binary` runs 300 cases in the regular suite. The full campaign (12,000
//! cases plus 50 MB inputs) is `#[ignore]`d; `scripts/hostile.sh` runs it and prints the
//! figures that `docs/hardening.md` records.

use crate::cli_support;
use crate::common;

use std::time::Instant;

use cli_support::{command, example, run_measured, Run};
use common::Rng;

const ALPHABET: &[u8] = b"9ABCDEFGHIJKLMNOPQRSTUVWXYZ";
/// Peak memory allowed for any run, KiB.
const MAX_RSS_KIB: u64 = 100 * 1024;

/// Characters people and programs put where trytes belong.
const BAD_CHARS: &[&str] = &[
    "\0",
    "\u{a0}",
    "\u{feff}",
    "\u{b}",
    "\u{c}",
    " ",
    "\t",
    "a",
    "z",
    "0",
    "8",
    "é",
    "€",
    "\u{1F600}",
    "\u{200b}",
    "\u{2028}",
    "\r",
    "\u{7f}",
    "\u{1}",
    "\u{fffd}",
    "А",
    "-",
    "_",
    "\\",
];
/// Byte sequences that are not UTF-8.
const BAD_BYTES: &[&[u8]] = &[
    b"\xff",
    b"\xfe",
    b"\xc0\x80",
    b"\x80",
    b"\xe2\x82",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\xc3",
];

/// A line that is most likely bad: a mutated transaction, junk, or whitespace.
fn line(rng: &mut Rng, good: &[u8]) -> Vec<u8> {
    let mut l = good.to_vec();
    match rng.below(12) {
        0 => {
            let i = rng.below(l.len());
            l.splice(i..i + 1, rng.pick(BAD_CHARS).bytes());
        }
        1 => {
            let i = rng.below(l.len() + 1);
            l.splice(i..i, rng.pick(BAD_CHARS).bytes());
        }
        2 => {
            let i = rng.below(l.len());
            l.splice(i..i + 1, rng.pick(BAD_BYTES).iter().copied());
        }
        3 => {
            let n = 1 + rng.below(40);
            l.truncate(l.len() - n);
        }
        4 => {
            for _ in 0..1 + rng.below(81) {
                l.push(*rng.pick(ALPHABET));
            }
        }
        5 => {
            let ws = *rng.pick(&[" ", "\t", "  ", " \t"]);
            if rng.chance(50) {
                l.splice(0..0, ws.bytes());
            } else {
                l.extend_from_slice(ws.as_bytes());
            }
        }
        6 => l = (0..rng.below(60)).map(|_| rng.next() as u8).collect(),
        7 => l = b" \t ".to_vec(),
        8 => l.make_ascii_lowercase(),
        9 => l.extend_from_slice(b"\r"),
        10 => l = l[..81 * (1 + rng.below(5))].to_vec(),
        _ => {}
    }
    l
}

/// One case: arguments, environment, input, and the exit codes the oracle accepts.
struct Case {
    args: Vec<String>,
    env: Vec<(&'static str, String)>,
    input: Vec<u8>,
    expect: Vec<i32>,
    /// For a good `pow`: the MWM every output line must reach.
    pow_mwm: Option<usize>,
    lines: usize,
}

/// The oracle's reading of an input: (every line good, good lines), by the README's rules
/// (LF or CRLF line ends, empty lines skipped, a line is its trytes and nothing else).
fn oracle(input: &[u8], hash: bool) -> (bool, usize) {
    let mut n = 0;
    for raw in input.split(|&b| b == b'\n') {
        let l = raw.strip_suffix(b"\r").unwrap_or(raw);
        if l.is_empty() {
            continue;
        }
        let ok = l.iter().all(|b| ALPHABET.contains(b))
            && if hash {
                l.len() % 81 == 0
            } else {
                l.len() == 2673
            };
        if !ok {
            return (false, n);
        }
        n += 1;
    }
    (true, n)
}

/// What an option value does to the exit code.
enum Effect {
    /// A usage error whatever the input: exit 2.
    Usage,
    /// Accepted.
    Valid,
    /// Accepted, but the selection it makes is empty: exit 2 once there is work.
    EmptySelection,
}

fn engine_option(
    rng: &mut Rng,
    max_threads: usize,
) -> (Vec<String>, Vec<(&'static str, String)>, Effect) {
    use Effect::*;
    let s = |a: &[&str]| a.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let fault_hook = cfg!(feature = "fault-injection");
    match rng.below(26) {
        0 => (s(&["--threads", "0"]), vec![], Usage),
        1 => (
            vec![
                "--threads".into(),
                (max_threads + 1 + rng.below(100_000)).to_string(),
            ],
            vec![],
            Usage,
        ),
        2 => (
            s(&[
                "--threads",
                *rng.pick(&["-1", "abc", "", "1.5", "1e3", "99999999999999999999999"]),
            ]),
            vec![],
            Usage,
        ),
        3 => (
            vec!["--threads".into(), (1 + rng.below(4)).to_string()],
            vec![],
            Valid,
        ),
        4 => (
            s(&[
                "--timeout",
                *rng.pick(&[
                    "nan", "NaN", "inf", "-inf", "-1", "1e19", "1e20", "1e300", "x", "", "1s",
                ]),
            ]),
            vec![],
            Usage,
        ),
        5 => (
            s(&["--timeout", *rng.pick(&["1e9", "100", "5.5"])]),
            vec![],
            Valid,
        ),
        // 0: no limit, as `serve --request-timeout 0`.
        6 => (s(&["--timeout", "0"]), vec![], Valid),
        7 => (
            s(&[
                "--mwm",
                *rng.pick(&[
                    "244",
                    "1000",
                    "-1",
                    "abc",
                    "",
                    "1e2",
                    "99999999999999999999999",
                ]),
            ]),
            vec![],
            Usage,
        ),
        8 => (
            s(&[
                "--backend",
                *rng.pick(&["bogus", "", "cpu,", ",", "cuda", "cpu,metal"]),
            ]),
            vec![],
            Usage,
        ),
        9 => (
            s(&["--backend", *rng.pick(&["cpu", "CPU", " cpu", "cpu,cpu"])]),
            vec![],
            Valid,
        ),
        10 => (
            s(&[
                "--kernel",
                *rng.pick(&["bogus", "", "avx9", "sse2", "portable,avx2"]),
            ]),
            vec![],
            Usage,
        ),
        11 => (
            s(&[
                "--kernel",
                *rng.pick(&["portable", "PORTABLE", " portable "]),
            ]),
            vec![],
            Valid,
        ),
        12 => (
            s(&[
                "--device",
                *rng.pick(&[
                    "nope:0",
                    "",
                    "cpu:0",
                    "wgpu:",
                    "opencl:0",
                    "opencl:a:b",
                    "gpu",
                    ":",
                    "wgpu:0:0",
                    "wgpu:99999999999",
                ]),
            ]),
            vec![],
            Usage,
        ),
        13 => (
            s(&["--exclude", *rng.pick(&["nope:0", "", "cpu:1", "x"])]),
            vec![],
            Usage,
        ),
        14 => (s(&["--device", "cpu"]), vec![], Valid),
        15 => (s(&["--exclude", "cpu"]), vec![], EmptySelection),
        16 => (
            vec![],
            vec![(
                "CURLPOW_THREADS",
                rng.pick(&["0", "abc", "-1", "100000", "1.5"]).to_string(),
            )],
            Usage,
        ),
        17 => (
            vec![],
            vec![("CURLPOW_THREADS", rng.pick(&["1", "2", ""]).to_string())],
            Valid,
        ),
        18 => (
            vec![],
            vec![(
                "CURLPOW_CPU_KERNEL",
                rng.pick(&["bogus", "avx9"]).to_string(),
            )],
            Usage,
        ),
        19 => (
            vec![],
            vec![("CURLPOW_CPU_KERNEL", "portable".to_string())],
            Valid,
        ),
        20 => (
            vec![],
            vec![(
                "CURLPOW_INJECT_FAULT",
                rng.pick(&["boom", "hang:2", "x:y"]).to_string(),
            )],
            if fault_hook { Usage } else { Valid },
        ),
        21 => (
            s(&[*rng.pick(&["--bogus", "-x", "--mwm=", "--threads=", "--timeout="])]),
            vec![],
            Usage,
        ),
        22 => (s(&["--pin"]), vec![], Valid),
        23 => (s(&["--verbose"]), vec![], Valid),
        24 => (s(&["--wgpu-32bit"]), vec![], Valid),
        _ => (s(&["/no/such/file"]), vec![], Usage),
    }
}

fn case(rng: &mut Rng, good: &[u8], max_threads: usize) -> Case {
    // The input: 0 to 4 lines, good ones among them.
    let mut input = Vec::new();
    for _ in 0..rng.below(5) {
        if rng.chance(35) {
            input.extend_from_slice(good);
        } else if rng.chance(8) {
            // Blank lines and CRLF ends are fine.
            input.extend_from_slice(if rng.chance(50) { b"" } else { b"\r" });
        } else {
            input.extend_from_slice(&line(rng, good));
        }
        input.extend_from_slice(if rng.chance(20) { b"\r\n" } else { b"\n" });
    }
    if rng.chance(10) && input.ends_with(b"\n") {
        input.pop();
    }
    let cmd = *rng.pick(&["pow", "pow", "pow", "hash", "verify", "bench", "devices"]);
    let mut args = vec![cmd.to_string()];
    let mut env = Vec::new();
    let mut effect = Effect::Valid;
    let mut pow_mwm = None;
    let (all_good, lines) = oracle(&input, cmd == "hash");
    let work = all_good && lines > 0;
    match cmd {
        "pow" => {
            let mwm = rng.below(4);
            args.extend(["--mwm".to_string(), mwm.to_string(), "-q".into()]);
            if rng.chance(40) {
                let (a, e, eff) = engine_option(rng, max_threads);
                args.extend(a);
                env = e;
                effect = eff;
            }
            // Discovery of GPU drivers costs a process start-up; the CPU is enough here.
            if !args.iter().any(|a| a == "--backend" || a == "--device") {
                args.extend(["--backend".into(), "cpu".into()]);
            }
            pow_mwm = Some(mwm);
        }
        "verify" => {
            if rng.chance(30) {
                let v = *rng.pick(&["244", "-1", "x", ""]);
                args.extend(["--mwm".into(), v.into()]);
                effect = Effect::Usage;
            } else {
                args.extend(["--mwm".into(), "0".into()]);
            }
        }
        "hash" => {
            if rng.chance(15) {
                args.push(rng.pick(&["--bogus", "/no/such/file", "a b"]).to_string());
                effect = Effect::Usage;
            }
        }
        _ => {
            // bench and devices: option values only (a valid bench would run for seconds).
            let (a, e, eff) = engine_option(rng, max_threads);
            args.extend(a);
            env = e;
            effect = match eff {
                Effect::Usage => Effect::Usage,
                _ => {
                    // Make it invalid for sure: a bad --seconds, or a bad thread count.
                    if cmd == "bench" {
                        let v = *rng.pick(&["0", "1e19", "1e300", "nan", "-1", "inf", "1e-9"]);
                        args.extend(["--seconds".into(), v.into()]);
                    } else {
                        args.extend(["--threads".into(), "0".into()]);
                    }
                    Effect::Usage
                }
            };
            if cmd == "bench" && !args.iter().any(|a| a == "--backend" || a == "--device") {
                args.extend(["--backend".into(), "cpu".into()]);
            }
        }
    }
    let expect = match effect {
        Effect::Usage => vec![2],
        _ if !all_good => vec![2],
        _ if !work => vec![0],
        Effect::EmptySelection if cmd == "pow" => vec![2],
        _ => vec![0],
    };
    let pow_mwm = pow_mwm.filter(|_| expect == [0] && work);
    Case {
        args,
        env,
        input,
        expect,
        pow_mwm,
        lines,
    }
}

/// Run `n` generated cases (two at a time); the failures, described, the peak memory, and how
/// many cases expected an error and how many checked a PoW result.
fn campaign(seed: u64, n: usize) -> (Vec<String>, u64, usize, usize) {
    let good = example().trim_end().as_bytes().to_vec();
    let max_threads = (4 * std::thread::available_parallelism().map_or(1, |n| n.get())).max(64);
    let mut rng = Rng(seed | 1);
    let cases: Vec<Case> = (0..n).map(|_| case(&mut rng, &good, max_threads)).collect();
    let bad_count = cases.iter().filter(|c| c.expect != [0]).count();
    let pow_checked = cases.iter().filter(|c| c.pow_mwm.is_some()).count();
    let results: Vec<(usize, Run)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let cases = &cases;
                s.spawn(move || {
                    (w..cases.len())
                        .step_by(2)
                        .map(|i| {
                            let c = &cases[i];
                            let mut cmd =
                                command(&c.args.iter().map(String::as_str).collect::<Vec<_>>());
                            for (k, v) in &c.env {
                                cmd.env(k, v);
                            }
                            (i, run_measured(cmd, &c.input))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    let mut failures = Vec::new();
    let mut max_rss = 0;
    let mut peak_case = String::new();
    for (i, r) in &results {
        let c = &cases[*i];
        if r.max_rss_kib > max_rss {
            max_rss = r.max_rss_kib;
            peak_case = format!("curlpow {} (env {:?})", c.args.join(" "), c.env);
        }
        let code = r.code.unwrap_or(-1);
        let mut why = None;
        if r.crashed() {
            why = Some("crashed");
        } else if !c.expect.contains(&code) {
            why = Some("wrong exit code");
        } else if r.max_rss_kib > MAX_RSS_KIB {
            why = Some("too much memory");
        } else if let (Some(mwm), 0) = (c.pow_mwm, code) {
            let text = String::from_utf8_lossy(&r.stdout);
            let ok = text.lines().count() == c.lines
                && text.lines().all(|l| {
                    l.parse::<curlpow::Transaction>()
                        .is_ok_and(|t| t.weight() >= mwm)
                });
            if !ok {
                why = Some("bad pow output");
            }
        } else if code != 0 && !r.stdout.is_empty() {
            why = Some("output despite an error");
        }
        if let Some(why) = why {
            failures.push(format!(
                "case {i}: {why}: args {:?} env {:?} input {:?}: exit {:?} signal {:?}, expected {:?}; stderr: {}",
                c.args,
                c.env,
                String::from_utf8_lossy(&c.input[..c.input.len().min(120)]),
                r.code,
                r.signal,
                c.expect,
                r.stderr.chars().take(400).collect::<String>()
            ));
        }
    }
    eprintln!("  peak RSS {:.1} MB: {peak_case}", max_rss as f64 / 1024.0);
    (failures, max_rss, bad_count, pow_checked)
}

fn report(
    what: &str,
    n: usize,
    counts: (usize, usize),
    failures: &[String],
    max_rss: u64,
    t: Instant,
) {
    eprintln!(
        "{what}: {n} cases ({} expecting a usage error or a stop, {} PoW outputs checked), \
         {} failures, peak RSS {:.1} MB, {:.1} s",
        counts.0,
        counts.1,
        failures.len(),
        max_rss as f64 / 1024.0,
        t.elapsed().as_secs_f64()
    );
    for f in failures.iter().take(20) {
        eprintln!("  {f}");
    }
}

#[test]
fn cases_through_the_binary() {
    let t = Instant::now();
    let (failures, max_rss, bad, pows) = campaign(0x5EED_0010, 300);
    report("hostile (regular)", 300, (bad, pows), &failures, max_rss, t);
    assert!(failures.is_empty(), "{} failures", failures.len());
}

/// The full campaign: `cargo test --test cli_hostile -- --ignored --nocapture`.
#[test]
#[ignore = "the full campaign: minutes; scripts/hostile.sh runs it"]
fn full_campaign() {
    let n = std::env::var("CURLPOW_HOSTILE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12_000);
    let t = Instant::now();
    let (failures, max_rss, bad, pows) = campaign(0xC0FF_EE10, n);
    report("hostile (full)", n, (bad, pows), &failures, max_rss, t);
    assert!(failures.is_empty(), "{} failures", failures.len());
}

/// 50 MB inputs: bad lines, one long line, and a large good file.
#[test]
#[ignore = "50 MB inputs: scripts/hostile.sh runs it"]
fn large_inputs_stay_under_100_mb() {
    let good = example();
    let many_bad = "A\n".repeat(25_000_000);
    let one_line = "9".repeat(50_000_000);
    let good_many = good.repeat(8_000);
    let cases: [(&str, &[&str], &[u8], i32); 7] = [
        ("50 MB of bad lines", &["pow"], many_bad.as_bytes(), 2),
        ("50 MB of bad lines", &["hash"], many_bad.as_bytes(), 2),
        ("one 50 MB line", &["pow"], one_line.as_bytes(), 2),
        ("one 50 MB line", &["hash"], one_line.as_bytes(), 2),
        (
            "21 MB of good transactions",
            &["verify", "--mwm", "0"],
            good_many.as_bytes(),
            0,
        ),
        (
            "21 MB of good transactions",
            &["hash"],
            good_many.as_bytes(),
            0,
        ),
        (
            "21 MB of good transactions",
            &["pow", "--mwm", "1", "--backend", "cpu", "-q"],
            good_many.as_bytes(),
            0,
        ),
    ];
    let mut worst = 0;
    for (what, args, input, code) in cases {
        let t = Instant::now();
        let r = run_measured(command(args), input);
        eprintln!(
            "{what}, curlpow {}: exit {:?}, peak RSS {:.1} MB, {:.1} s, {} bytes out, {} bytes on stderr",
            args.join(" "),
            r.code,
            r.max_rss_kib as f64 / 1024.0,
            t.elapsed().as_secs_f64(),
            r.stdout.len(),
            r.stderr.len()
        );
        assert!(!r.crashed(), "{what}: {}", r.stderr);
        assert_eq!(r.code, Some(code), "{what}: {}", r.stderr);
        assert!(r.stderr.len() < 64 * 1024, "{what}: stderr is bounded too");
        if code == 0 && args[0] != "hash" {
            assert_eq!(
                r.stdout.iter().filter(|&&b| b == b'\n').count(),
                8_000,
                "{what}"
            );
        }
        worst = worst.max(r.max_rss_kib);
    }
    assert!(worst < MAX_RSS_KIB, "peak {worst} KiB");
}
