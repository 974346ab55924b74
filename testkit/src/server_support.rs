//! `curlpow serve` for the integration tests: the real binary (its path given by the caller,
//! `env!("CARGO_BIN_EXE_curlpow")`) on an ephemeral loopback port (`Srv`), a real HTTP client
//! (ureq) for its API, and a plain socket from any loopback address (`connect_from`, `raw_post`)
//! for what an HTTP library does not do: come from another address, send slowly, stay idle.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A running `curlpow serve`; killed on drop if it is still running.
pub struct Srv {
    pub child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The server's standard error, line by line.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Srv {
    /// Start the binary `bin` as `curlpow serve` with `args`.
    pub fn start(bin: impl AsRef<Path>, args: &[&str]) -> Srv {
        Self::start_with_env(bin, args, &[])
    }

    /// Start with `env` added to the environment.
    pub fn start_with_env(bin: impl AsRef<Path>, args: &[&str], env: &[(&str, &str)]) -> Srv {
        Self::launch(bin, args, env, None)
    }

    /// Start with the open-file limit (soft and hard) set to `nofile` when given.
    pub fn launch(
        bin: impl AsRef<Path>,
        args: &[&str],
        env: &[(&str, &str)],
        nofile: Option<u64>,
    ) -> Srv {
        let mut cmd = Command::new(bin.as_ref());
        cmd.args(["serve", "--listen", "127.0.0.1:0"]);
        // The CPU alone unless the test picks the devices (`--software` loads the drivers).
        if !args.iter().any(|a| *a == "--software" || *a == "--backend") {
            cmd.args(["--backend", "cpu"]);
        }
        cmd.args(["--threads", "2"])
            .args(args)
            .env_remove("CURLPOW_REMOTE_AUTH")
            .env_remove("CURLPOW_REMOTE_AUTH_FILE")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        if let Some(n) = nofile {
            set_nofile(&mut cmd, n);
        }
        let mut child = cmd.spawn().expect("start curlpow serve");
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let log2 = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    let addr = rest.split_whitespace().next().unwrap_or("").to_string();
                    let _ = tx.send(addr);
                }
                log2.lock().unwrap().push(line);
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("no listening line; stderr: {:?}", log.lock().unwrap()));
        Srv {
            child,
            base: format!("http://{addr}"),
            log,
        }
    }

    pub fn agent() -> ureq::Agent {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(180)))
            .build()
            .into()
    }

    /// POST a body with IRI's header; (status, JSON, Retry-After).
    pub fn post(&self, body: &str) -> (u16, Value, Option<String>) {
        self.post_with(body, &[("X-IOTA-API-Version", "1")])
    }

    pub fn post_with(&self, body: &str, headers: &[(&str, &str)]) -> (u16, Value, Option<String>) {
        let mut req = Self::agent()
            .post(format!("{}/", self.base))
            .header("Content-Type", "application/json");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let mut resp = req.send(body).expect("an answer");
        let status = resp.status().as_u16();
        let retry = resp
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_string());
        assert_eq!(
            resp.headers()
                .get("access-control-allow-origin")
                .map(|v| v.to_str().unwrap()),
            Some("*"),
            "CORS header on every answer"
        );
        let text = resp.body_mut().read_to_string().unwrap();
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        (status, v, retry)
    }

    pub fn get(&self, path: &str) -> (u16, String) {
        let mut resp = Self::agent()
            .get(format!("{}{path}", self.base))
            .call()
            .unwrap();
        (
            resp.status().as_u16(),
            resp.body_mut().read_to_string().unwrap(),
        )
    }

    /// The server's standard error so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    pub fn running(&self) -> u64 {
        let (_, v, _) = self.post(r#"{"command":"getNodeInfo"}"#);
        v["attachesRunning"].as_u64().unwrap()
    }

    pub fn wait_running(&self, n: u64) {
        self.wait_running_or(n, || false);
    }

    /// Wait until `n` attaches run, or `done()` (the attach finished first).
    pub fn wait_running_or(&self, n: u64, done: impl Fn() -> bool) {
        let t0 = Instant::now();
        while self.running() < n && !done() {
            assert!(t0.elapsed() < Duration::from_secs(30), "never {n} running");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn sigterm(&self) {
        // SAFETY: kill(2) on our own child's pid with a valid signal number; no memory involved.
        let r = unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        assert_eq!(r, 0);
    }

    pub fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let t0 = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(
                t0.elapsed() < within,
                "still running after {within:?}; stderr: {:?}",
                self.log.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Srv {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Set the child's open-file limit before it runs.
fn set_nofile(cmd: &mut Command, n: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and only calls setrlimit(2),
    // which is async-signal-safe; it touches no memory shared with the parent.
    unsafe {
        cmd.pre_exec(move || {
            let r = libc::rlimit {
                rlim_cur: n,
                rlim_max: n,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

impl Srv {
    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        self.base.trim_start_matches("http://").parse().unwrap()
    }

    /// One sample of `GET /metrics` (the first line that starts with `name`), e.g.
    /// `curlpow_connections_closed_total{reason="evicted"}`.
    pub fn metric(&self, name: &str) -> f64 {
        let (_, text) = self.get("/metrics");
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} not in:\n{text}"))
    }
}

/// A TCP connection to `to` from the loopback address `from` (Linux routes all of 127/8 to
/// the loopback interface, so each is a different peer to the server).
pub fn connect_from(from: IpAddr, to: SocketAddr) -> std::io::Result<TcpStream> {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    s.bind(&SocketAddr::new(from, 0).into())?;
    s.connect_timeout(&to.into(), Duration::from_secs(5))?;
    Ok(s.into())
}

/// Whether the server has closed this connection (EOF or reset), looking without waiting.
pub fn closed_by_server(s: &TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut b = [0u8; 512];
    let mut reader = s;
    let r = match reader.read(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
        Err(_) => true,
    };
    s.set_nonblocking(false).unwrap();
    r
}

/// A POST of `body` with IRI's header (and `extra` header lines) on a fresh connection from
/// `from`, `Connection: close`; the status and the JSON answer.
pub fn raw_post(from: IpAddr, to: SocketAddr, body: &str, extra: &[(&str, &str)]) -> (u16, Value) {
    let mut s = connect_from(from, to).expect("connect");
    let mut req = format!(
        "POST / HTTP/1.1\r\nHost: {to}\r\nX-IOTA-API-Version: 1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in extra {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    read_answer(&mut s)
}

/// Read one HTTP answer (headers, then `Content-Length` bytes): its status and JSON body. Stops
/// once it is complete, so a reset that follows it (a server closing with unread input) does
/// not lose it.
pub fn read_answer(s: &mut TcpStream) -> (u16, Value) {
    let mut raw = Vec::new();
    let mut b = [0u8; 8192];
    loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("no Content-Length: {head:?}"));
            if raw.len() >= end + 4 + len {
                raw.truncate(end + 4 + len);
                return parse_answer(&raw);
            }
        }
        match s.read(&mut b) {
            Ok(0) => panic!(
                "closed before a whole answer: {:?}",
                String::from_utf8_lossy(&raw)
            ),
            Ok(n) => raw.extend_from_slice(&b[..n]),
            Err(e) => panic!(
                "{e} before a whole answer: {:?}",
                String::from_utf8_lossy(&raw)
            ),
        }
    }
}

/// The status and JSON body of one HTTP/1.1 answer with a `Content-Length`.
pub fn parse_answer(raw: &[u8]) -> (u16, Value) {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP answer: {text:?}"));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status: {head:?}"));
    let v = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body:?}"));
    (status, v)
}

/// Basic auth header value.
pub fn basic(pair: &str) -> String {
    use base64::Engine as _;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

/// Wait until `f()` holds, at most `within`.
pub fn wait_until(within: Duration, what: &str, f: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(t0.elapsed() < within, "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
