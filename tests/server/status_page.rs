//! `GET /status` in a real browser: headless Chromium loads the page from the real binary on a
//! loopback port (with auth on, the credentials in the URL as a browser keeps them) while a few
//! clients attach, and the figures it shows are checked against `/metrics` scraped just before
//! and just after; then again once the load has stopped, where they must be equal. The page must
//! have updated itself and drawn its plot.
//!
//! Needs Debian's `chromium` (or `CURLPOW_CHROMIUM=/path/to/chrome`); without it the test skips
//! visibly, and with `CURLPOW_REQUIRE_CHROMIUM=1` (CI) a missing Chromium fails.

use crate::common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const USER: &str = "operator";
const PASSWORD: &str = "status-page-test-pw";
/// A queue limit no default has, so the page shows the configured one.
const QUEUE: usize = 7;
const CLIENTS: usize = 3;
const MWM: usize = 10;

/// A running `curlpow serve` with auth; killed on drop.
struct Srv {
    child: Child,
    addr: String,
}

impl Srv {
    fn start() -> Srv {
        let mut child = Command::new(env!("CARGO_BIN_EXE_curlpow"))
            .args(["serve", "--listen", "127.0.0.1:0", "--backend", "cpu"])
            .args(["--threads", "2", "--log", "warn"])
            .args(["--queue", &QUEUE.to_string()])
            .env("CURLPOW_REMOTE_AUTH", format!("{USER}:{PASSWORD}"))
            .env_remove("CURLPOW_REMOTE_AUTH_FILE")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start curlpow serve");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let _ = tx.send(rest.split_whitespace().next().unwrap_or("").to_string());
                }
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("curlpow serve printed its address");
        Srv { child, addr }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn agent() -> ureq::Agent {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(120)))
            .build()
            .into()
    }

    fn auth() -> String {
        use base64::Engine as _;
        let pair = format!("{USER}:{PASSWORD}");
        let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
        format!("Basic {encoded}")
    }

    /// GET with or without the credentials: (status, WWW-Authenticate, body).
    fn get(&self, path: &str, with_auth: bool) -> (u16, Option<String>, String) {
        let mut req = Self::agent().get(self.url(path));
        if with_auth {
            req = req.header("Authorization", Self::auth());
        }
        let mut resp = req.call().expect("an answer");
        let www = resp
            .headers()
            .get("www-authenticate")
            .map(|v| v.to_str().unwrap().to_string());
        let body = resp.body_mut().read_to_string().unwrap();
        (resp.status().as_u16(), www, body)
    }

    fn post(&self, body: &str) -> (u16, Value) {
        let mut resp = Self::agent()
            .post(self.url("/"))
            .header("X-IOTA-API-Version", "1")
            .header("Content-Type", "application/json")
            .header("Authorization", Self::auth())
            .send(body)
            .expect("an answer");
        let text = resp.body_mut().read_to_string().unwrap();
        let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        (resp.status().as_u16(), v)
    }

    fn metrics(&self) -> Metrics {
        let (status, _, text) = self.get("/metrics", false);
        assert_eq!(status, 200);
        Metrics::parse(&text)
    }
}

impl Drop for Srv {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `/metrics` as name (with labels) → value.
struct Metrics(HashMap<String, f64>);

impl Metrics {
    fn parse(text: &str) -> Metrics {
        let mut m = HashMap::new();
        for line in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
        {
            let (name, value) = line.rsplit_once(' ').expect("name value");
            m.insert(name.to_string(), value.parse().expect("a number"));
        }
        Metrics(m)
    }

    fn get(&self, name: &str) -> f64 {
        *self
            .0
            .get(name)
            .unwrap_or_else(|| panic!("{name} not in /metrics"))
    }

    fn device(&self, family: &str, id: &str) -> f64 {
        self.get(&format!("{family}{{device=\"{id}\"}}"))
    }

    fn attaches(&self) -> f64 {
        self.get("curlpow_attach_duration_seconds_count")
    }
}

/// The browser, or why there is none.
fn chromium() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("CURLPOW_CHROMIUM") {
        return Ok(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome", "chrome"] {
            let p = dir.join(name);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err("chromium is not installed (apt-get install chromium, or set CURLPOW_CHROMIUM)".into())
}

/// Load `url` in headless Chromium, let the page run for `budget_ms` of virtual time, and return
/// the DOM it then has.
fn dump_dom(browser: &Path, url: &str, budget_ms: u32) -> String {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let profile = std::env::temp_dir().join(format!(
        "curlpow-status-chromium-{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).unwrap();
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--virtual-time-budget={budget_ms}"))
        .arg("--dump-dom")
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", browser.display()));
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if t0.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let dom = reader.join().unwrap();
    let stderr = err_reader.join().unwrap();
    let _ = std::fs::remove_dir_all(&profile);
    match status {
        Some(s) if s.success() && dom.contains("</html>") => dom,
        Some(s) => panic!("chromium exited with {s}; stdout: {dom}\nstderr: {stderr}"),
        None => panic!("chromium did not finish within 120 s; stderr: {stderr}"),
    }
}

/// The start tag of the element with this attribute (`id="rate"`, `data-device="cpu"`).
fn tag<'a>(dom: &'a str, attr: &str) -> &'a str {
    let at = dom
        .find(attr)
        .unwrap_or_else(|| panic!("no element with {attr} in the page:\n{dom}"));
    let start = dom[..at].rfind('<').unwrap();
    let end = at + dom[at..].find('>').unwrap();
    &dom[start..=end]
}

/// An attribute's value in a start tag.
fn attr(tag: &str, name: &str) -> String {
    let key = format!(" {name}=\"");
    let at = tag
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + key.len();
    let len = tag[at..].find('"').unwrap();
    tag[at..at + len].replace("&amp;", "&")
}

/// The text right after the start tag of the element with this id.
fn text(dom: &str, id: &str) -> String {
    let t = tag(dom, &format!("id=\"{id}\""));
    let at = dom.find(t).unwrap() + t.len();
    let len = dom[at..].find('<').unwrap();
    dom[at..at + len].to_string()
}

/// A figure's exact value (its `data-value`); `None` when the page shows none.
fn figure(dom: &str, id: &str) -> Option<f64> {
    let v = attr(tag(dom, &format!("id=\"{id}\"")), "data-value");
    (!v.is_empty()).then(|| {
        v.parse()
            .unwrap_or_else(|e| panic!("{id}: {v:?} is not a number: {e}"))
    })
}

fn device_field(dom: &str, id: &str, field: &str) -> f64 {
    let v = attr(tag(dom, &format!("data-device=\"{id}\"")), field);
    v.parse()
        .unwrap_or_else(|e| panic!("device {id} {field}: {v:?}: {e}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn attach_body(seed: u64) -> String {
    json!({
        "command": "attachToTangle",
        "trunkTransaction": "A".repeat(81),
        "branchTransaction": "B".repeat(81),
        "minWeightMagnitude": MWM,
        "trytes": [common::random_tx(seed).to_trytes()],
    })
    .to_string()
}

#[test]
fn the_status_page_shows_the_live_figures_of_a_loaded_server() {
    let browser = match chromium() {
        Ok(b) => b,
        Err(why) => {
            return curlpow_testkit::skip::skip_unless_required("CURLPOW_REQUIRE_CHROMIUM", &why);
        }
    };
    let srv = Srv::start();

    // The API's auth guards the page and its figures; a browser is asked for credentials.
    for path in ["/status", "/status.json"] {
        let (status, www, _) = srv.get(path, false);
        assert_eq!(status, 401, "{path} without credentials");
        assert_eq!(www.as_deref(), Some("Basic realm=\"curlpow\""), "{path}");
    }
    let (status, _, html) = srv.get("/status", true);
    assert_eq!(status, 200);
    assert!(html.starts_with("<!doctype html>"), "{html}");
    let (status, _, figures) = srv.get("/status.json", true);
    assert_eq!(status, 200);
    let figures: Value = serde_json::from_str(&figures).unwrap();
    assert_eq!(figures["queue"]["limit"], json!(QUEUE));
    // Any other method on these paths is IRI's API, as on every path.
    let (status, info) = srv.post(r#"{"command":"getNodeInfo"}"#);
    assert_eq!(status, 200);
    let concurrency = info["limits"]["concurrency"].as_f64().unwrap();
    let ids: Vec<String> = info["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect();
    assert!(!ids.is_empty());

    // A few clients attach back to back; every answer must be a result.
    let stop = Arc::new(AtomicBool::new(false));
    let failures = Arc::new(AtomicU64::new(0));
    let clients: Vec<_> = (0..CLIENTS as u64)
        .map(|c| {
            let (stop, failures) = (stop.clone(), failures.clone());
            let url = srv.url("/");
            std::thread::spawn(move || {
                let agent = Srv::agent();
                let mut seed = c * 1_000_000;
                while !stop.load(Ordering::Relaxed) {
                    seed += 1;
                    let r = agent
                        .post(&url)
                        .header("X-IOTA-API-Version", "1")
                        .header("Content-Type", "application/json")
                        .header("Authorization", Srv::auth())
                        .send(attach_body(seed));
                    if !matches!(r, Ok(ref resp) if resp.status() == 200) {
                        failures.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    // Long enough for the rates' window and a few points of the plot.
    std::thread::sleep(Duration::from_secs(7));

    let page = format!("http://{USER}:{PASSWORD}@{}/status", srv.addr);
    let before = srv.metrics();
    let t0 = Instant::now();
    let dom = dump_dom(&browser, &page, 4000);
    let elapsed = t0.elapsed().as_secs_f64();
    let after = srv.metrics();

    // It fetched its figures and updated itself more than once.
    let body = tag(&dom, "<body");
    assert_eq!(attr(body, "data-state"), "live", "{dom}");
    let updates: u32 = attr(body, "data-updates").parse().unwrap();
    assert!(updates >= 2, "the page updated itself {updates} times");

    // The counters lie between the scrapes before and after.
    let between = |page: f64, a: f64, b: f64, what: &str| {
        assert!(
            a <= page && page <= b,
            "{what}: the page shows {page}, /metrics {a} before and {b} after"
        );
    };
    let mut nonces_before = 0.0;
    let mut nonces_after = 0.0;
    for id in &ids {
        let fam = "curlpow_device_nonces_total";
        let (a, b) = (before.device(fam, id), after.device(fam, id));
        between(device_field(&dom, id, "data-nonces"), a, b, id);
        nonces_before += a;
        nonces_after += b;
        let fam = "curlpow_device_searches_total";
        between(
            device_field(&dom, id, "data-searches"),
            before.device(fam, id),
            after.device(fam, id),
            id,
        );
    }
    between(
        figure(&dom, "attaches-total").unwrap(),
        before.attaches(),
        after.attaches(),
        "attaches",
    );
    between(
        figure(&dom, "transactions-total").unwrap(),
        before.get("curlpow_attach_transactions_total"),
        after.get("curlpow_attach_transactions_total"),
        "transactions",
    );

    // The rates: work is being done, at about the pace /metrics shows over the same time (the
    // page's are over its last 5 s, so only the order of magnitude is compared).
    let rate = figure(&dom, "rate").expect("a search rate under load");
    let measured = (nonces_after - nonces_before) / elapsed;
    assert!(
        rate > 0.0 && rate > measured / 10.0 && rate < measured * 10.0,
        "the page shows {rate} nonces/s; /metrics grew by {measured} nonces/s meanwhile"
    );
    let attach_rate = figure(&dom, "attach-rate").expect("an attach rate under load");
    assert!(attach_rate > 0.0, "{attach_rate}");
    let latency = figure(&dom, "latency").expect("a latency under load");
    let (ds, dc) = (
        after.get("curlpow_attach_duration_seconds_sum")
            - before.get("curlpow_attach_duration_seconds_sum"),
        after.attaches() - before.attaches(),
    );
    if dc > 0.0 {
        let measured_ms = ds / dc * 1e3;
        assert!(
            latency > measured_ms / 20.0 && latency < measured_ms * 20.0,
            "the page shows {latency} ms; /metrics {measured_ms} ms meanwhile"
        );
    }
    assert!(latency > 0.0);

    // The queue: its limit as configured, depths within the limits.
    assert_eq!(figure(&dom, "queue-limit"), Some(QUEUE as f64));
    assert_eq!(text(&dom, "queue-limit"), QUEUE.to_string());
    assert_eq!(figure(&dom, "concurrency"), Some(concurrency));
    let waiting = figure(&dom, "queue-waiting").unwrap();
    assert!((0.0..=QUEUE as f64).contains(&waiting), "{waiting}");
    let running = figure(&dom, "running").unwrap();
    assert!((0.0..=concurrency).contains(&running), "{running}");

    // The plot: a line through the last seconds.
    let svg = tag(&dom, "id=\"plot\"");
    let points: usize = attr(svg, "data-points").parse().unwrap();
    assert!(points >= 3, "{points} points in the plot");
    let line = attr(tag(&dom, "id=\"plot-rate\""), "points");
    assert_eq!(line.split_whitespace().count(), points, "{line}");
    assert!(tag(&dom, "id=\"plot-latency\"").contains(" d=\"M"));

    // Every device has its row, with its name and backend.
    for d in info["devices"].as_array().unwrap() {
        let id = d["id"].as_str().unwrap();
        let row_at = dom.find(&format!("data-device=\"{id}\"")).unwrap();
        let row = &dom[row_at..row_at + dom[row_at..].find("</tr>").unwrap()];
        for field in ["backend", "kind"] {
            let want = format!("<td>{}", d[field].as_str().unwrap());
            assert!(row.contains(&want), "{id}: no {want} in {row}");
        }
    }

    // Stop the load; once quiet, the page and /metrics must agree exactly.
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    assert_eq!(failures.load(Ordering::Relaxed), 0, "failed attaches");
    let t0 = Instant::now();
    loop {
        let m = srv.metrics();
        if m.get("curlpow_attaches_running") == 0.0 && m.get("curlpow_queue_depth") == 0.0 {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "attaches never finished"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let quiet = srv.metrics();
    let dom = dump_dom(&browser, &page, 2000);
    let again = srv.metrics();
    assert_eq!(quiet.attaches(), again.attaches(), "nothing ran meanwhile");
    assert!(quiet.attaches() > 0.0);
    for id in &ids {
        for (field, fam) in [
            ("data-nonces", "curlpow_device_nonces_total"),
            ("data-searches", "curlpow_device_searches_total"),
            ("data-faults", "curlpow_device_faults_total"),
            ("data-busy-seconds", "curlpow_device_busy_seconds_total"),
        ] {
            let (page, metric) = (device_field(&dom, id, field), quiet.device(fam, id));
            assert!(
                close(page, metric),
                "{id} {field}: page {page}, {fam} {metric}"
            );
        }
        assert_eq!(device_field(&dom, id, "data-searching"), 0.0, "{id} idle");
    }
    assert_eq!(figure(&dom, "attaches-total"), Some(quiet.attaches()));
    assert_eq!(
        text(&dom, "attaches-total").replace(',', ""),
        quiet.attaches().to_string()
    );
    assert_eq!(
        figure(&dom, "transactions-total"),
        Some(quiet.get("curlpow_attach_transactions_total"))
    );
    let mean = figure(&dom, "latency-mean").unwrap();
    let want = quiet.get("curlpow_attach_duration_seconds_sum") / quiet.attaches() * 1e3;
    assert!(
        close(mean, want),
        "mean latency: page {mean} ms, /metrics {want} ms"
    );
    assert_eq!(
        figure(&dom, "queue-waiting"),
        Some(quiet.get("curlpow_queue_depth"))
    );
    assert_eq!(
        figure(&dom, "running"),
        Some(quiet.get("curlpow_attaches_running"))
    );
    let total: f64 = ids
        .iter()
        .map(|id| quiet.device("curlpow_device_nonces_total", id))
        .sum();
    assert_eq!(figure(&dom, "nonces-total"), Some(total));
}
