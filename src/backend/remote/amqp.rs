//! The AMQP plumbing that the remote device and the broker worker share: the broker URL, its
//! errors, connecting with heartbeats, declaring the durable request queue, reconnect backoff.

use std::fmt;
use std::time::Duration;

use lapin::uri::{AMQPScheme, AMQPUri};

/// dcurl's request queue.
pub const DEFAULT_QUEUE: &str = "incoming_queue";

/// The heartbeat asked for when the URL sets none, in seconds (the broker may lower it).
pub const DEFAULT_HEARTBEAT_S: u16 = 10;

/// How long connecting may take when the URL sets no `connection_timeout`.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What can go wrong talking to the broker.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum BrokerError {
    /// A URL that does not parse, or that this build cannot use.
    #[error("broker URL {url}: {reason}")]
    Url {
        /// The URL with its password masked.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// The AMQP client failed (connection refused, access refused, channel closed, …).
    #[error("broker {url}: {message}")]
    Amqp {
        /// The URL with its password masked.
        url: String,
        /// What the client or the broker said.
        message: String,
    },
    /// A bad setting.
    #[error("broker configuration: {0}")]
    Config(String),
    /// The async runtime or a signal handler could not be set up.
    #[error("{what}: {message}")]
    Runtime {
        /// What was being done.
        what: String,
        /// The OS error.
        message: String,
    },
}

/// A broker address: `amqp://user:password@host:5672/%2f` (`%2f` is the vhost `/`), or
/// `amqps://…` with the `broker-tls` feature. Query parameters `heartbeat`,
/// `connection_timeout`, `frame_max` and `channel_max` are honoured. It prints (and debugs)
/// with the password masked, so it can go into logs.
///
/// ```
/// use curlpow::broker::BrokerUrl;
/// let url: BrokerUrl = "amqp://pow:s3cret@10.0.0.5:5672/%2f".parse().unwrap();
/// assert_eq!(url.to_string(), "amqp://pow:***@10.0.0.5:5672/%2f");
/// assert!(!format!("{url:?}").contains("s3cret"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct BrokerUrl {
    uri: AMQPUri,
    masked: String,
}

impl BrokerUrl {
    /// Parse and check a URL.
    pub fn parse(url: &str) -> Result<BrokerUrl, BrokerError> {
        let masked = mask_password(url);
        let bad = |reason: String| BrokerError::Url {
            url: masked.clone(),
            reason,
        };
        let lower = url.trim().to_ascii_lowercase();
        if !(lower.starts_with("amqp://") || lower.starts_with("amqps://")) {
            return Err(bad("expected amqp://user:password@host:port/vhost".into()));
        }
        let raw = url.trim();
        // The parser's messages may quote the URL: mask it there too.
        let mut uri: AMQPUri = raw
            .parse()
            .map_err(|e: String| bad(e.replace(raw, &masked)))?;
        // lapin's URI parser reads only domain names and puts `localhost` for an IP address
        // (`amqp://10.0.0.5/…` would connect to the local host): take the host from the URL.
        let parsed = url::Url::parse(raw).map_err(|e| bad(e.to_string()))?;
        uri.authority.host = match parsed.host() {
            Some(url::Host::Domain(d)) => d.to_string(),
            Some(url::Host::Ipv4(a)) => a.to_string(),
            Some(url::Host::Ipv6(a)) => a.to_string(),
            None => return Err(bad("no host".into())),
        };
        if uri.authority.host.is_empty() {
            return Err(bad("no host".into()));
        }
        if uri.scheme == AMQPScheme::AMQPS && !cfg!(feature = "broker-tls") {
            return Err(bad(
                "amqps:// needs TLS, which this build lacks (rebuild with --features broker-tls)"
                    .into(),
            ));
        }
        if uri.query.heartbeat.is_none() {
            uri.query.heartbeat = Some(DEFAULT_HEARTBEAT_S);
        }
        if uri.query.connection_timeout.is_none() {
            uri.query.connection_timeout = Some(DEFAULT_CONNECT_TIMEOUT.as_millis() as u64);
        }
        Ok(BrokerUrl { uri, masked })
    }

    /// The URL with its password replaced by `***`.
    pub fn masked(&self) -> &str {
        &self.masked
    }

    /// The heartbeat asked for, in seconds.
    pub fn heartbeat(&self) -> u16 {
        self.uri.query.heartbeat.unwrap_or(DEFAULT_HEARTBEAT_S)
    }

    fn connect_timeout(&self) -> Duration {
        self.uri
            .query
            .connection_timeout
            .map_or(DEFAULT_CONNECT_TIMEOUT, Duration::from_millis)
    }

    /// A client error as a [`BrokerError`] naming this broker.
    pub(crate) fn err(&self, e: impl fmt::Display) -> BrokerError {
        BrokerError::Amqp {
            url: self.masked.clone(),
            message: e.to_string(),
        }
    }
}

impl std::str::FromStr for BrokerUrl {
    type Err = BrokerError;
    fn from_str(s: &str) -> Result<BrokerUrl, BrokerError> {
        BrokerUrl::parse(s)
    }
}

impl fmt::Display for BrokerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.masked)
    }
}

impl fmt::Debug for BrokerUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BrokerUrl({})", self.masked)
    }
}

/// `url` with the password of its user info (between the first `:` after `scheme://`, or the
/// start, and the last `@` before the path) replaced by `***`; the rest unchanged. Works on any string, parsed
/// or not, so even an error about a malformed URL never shows a password.
///
/// ```
/// use curlpow::broker::mask_password;
/// assert_eq!(mask_password("amqp://u:p@h/%2f"), "amqp://u:***@h/%2f");
/// assert_eq!(mask_password("amqp://h:5672"), "amqp://h:5672");
/// assert_eq!(mask_password("amqp://u:p@ss:w@h"), "amqp://u:***@h");
/// ```
pub fn mask_password(url: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[start..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return url.to_string();
    };
    match rest[..at].find(':') {
        Some(colon) => format!("{}{}:***{}", &url[..start], &rest[..colon], &rest[at..]),
        None => url.to_string(),
    }
}

/// A queue name as AMQP carries it: 1 to 255 bytes.
pub(crate) fn queue_name(name: &str) -> Result<lapin::types::ShortString, BrokerError> {
    lapin::types::ShortString::try_new(name.to_string())
        .ok()
        .filter(|q| !q.as_str().is_empty())
        .ok_or_else(|| BrokerError::Config(format!("queue name {name:?}: expected 1 to 255 bytes")))
}

/// Open a connection (the caller is inside the tokio runtime), bounded by the URL's connection
/// timeout.
pub(crate) async fn connect(url: &BrokerUrl, name: &str) -> Result<lapin::Connection, BrokerError> {
    let props = lapin::ConnectionProperties::default().with_connection_name(name.into());
    match tokio::time::timeout(
        url.connect_timeout() + Duration::from_secs(1),
        lapin::Connection::connect_uri(url.uri.clone(), props),
    )
    .await
    {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err(url.err(e)),
        Err(_) => Err(url.err(format!("no connection within {:?}", url.connect_timeout()))),
    }
}

/// Declare the queue durable, as dcurl's peers do; if it exists with other arguments (a quorum
/// queue created by the operator, say) the broker refuses and closes the channel, and the queue
/// is used as it is. Returns the channel to use.
pub(crate) async fn declare_queue(
    conn: &lapin::Connection,
    ch: lapin::Channel,
    queue: &lapin::types::ShortString,
) -> lapin::Result<lapin::Channel> {
    let durable = lapin::options::QueueDeclareOptions {
        durable: true,
        ..Default::default()
    };
    if ch
        .queue_declare(queue.clone(), durable, lapin::types::FieldTable::default())
        .await
        .is_ok()
    {
        return Ok(ch);
    }
    let ch = conn.create_channel().await?;
    let passive = lapin::options::QueueDeclareOptions {
        passive: true,
        ..Default::default()
    };
    ch.queue_declare(queue.clone(), passive, lapin::types::FieldTable::default())
        .await?;
    Ok(ch)
}

/// Reconnection delays: doubling from `min` to `max`, with up to 25% random jitter so many
/// workers do not all knock on a restarted broker at the same instant.
#[derive(Debug)]
pub(crate) struct Backoff {
    min: Duration,
    max: Duration,
    next: Duration,
    seed: u64,
}

impl Backoff {
    pub(crate) fn new(min: Duration, max: Duration) -> Self {
        let min = min.max(Duration::from_millis(1));
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
            ^ u64::from(std::process::id()) << 32;
        Backoff {
            min,
            max: max.max(min),
            next: min,
            seed: seed | 1,
        }
    }

    /// The delay before the next attempt.
    pub(crate) fn delay(&mut self) -> Duration {
        let d = self.next;
        self.next = (self.next * 2).min(self.max);
        // xorshift64: a jitter source that needs no dependency.
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        d + d.mul_f64((self.seed % 1000) as f64 / 4000.0)
    }

    /// A connection succeeded: start again from `min`.
    pub(crate) fn reset(&mut self) {
        self.next = self.min;
    }
}

/// A unique-enough id for this process's connections and correlation ids.
pub(crate) fn process_tag() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{}-{:08x}", std::process::id(), nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_mask_and_get_a_heartbeat() {
        let u = BrokerUrl::parse("amqp://guest:guest@127.0.0.1:5672/%2f").unwrap();
        assert_eq!(u.masked(), "amqp://guest:***@127.0.0.1:5672/%2f");
        assert_eq!(u.heartbeat(), DEFAULT_HEARTBEAT_S);
        let u = BrokerUrl::parse("amqp://127.0.0.1/%2f?heartbeat=3").unwrap();
        assert_eq!(u.heartbeat(), 3);
        for (url, host) in [
            ("amqp://u:p@10.0.0.5:5672/%2f", "10.0.0.5"),
            ("amqp://[::1]:5672/%2f", "::1"),
            ("amqp://rabbit.internal/%2f", "rabbit.internal"),
        ] {
            assert_eq!(BrokerUrl::parse(url).unwrap().uri.authority.host, host);
        }
        for bad in ["http://h", "amqp://u:secret@[::1", "127.0.0.1:5672", ""] {
            let e = BrokerUrl::parse(bad).unwrap_err().to_string();
            assert!(!e.contains("secret"), "{e}");
        }
        #[cfg(not(feature = "broker-tls"))]
        assert!(BrokerUrl::parse("amqps://h/%2f")
            .unwrap_err()
            .to_string()
            .contains("broker-tls"));
    }

    #[test]
    fn masking_never_shows_a_password() {
        for (url, want) in [
            ("amqp://u:p@h:1/v", "amqp://u:***@h:1/v"),
            ("amqps://u:p@h", "amqps://u:***@h"),
            ("amqp://u@h", "amqp://u@h"),
            ("amqp://h/a@b", "amqp://h/a@b"),
            ("u:p@h:5672", "u:***@h:5672"),
        ] {
            assert_eq!(mask_password(url), want);
        }
    }

    #[test]
    fn backoff_doubles_to_its_cap_and_resets() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_millis(400));
        let d: Vec<Duration> = (0..4).map(|_| b.delay()).collect();
        assert!(d[0] >= Duration::from_millis(100) && d[0] <= Duration::from_millis(125));
        assert!(d[2] >= Duration::from_millis(400) && d[3] <= Duration::from_millis(500));
        b.reset();
        assert!(b.delay() <= Duration::from_millis(125));
    }
}
