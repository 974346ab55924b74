//! A small blocking AMQP client for the broker tests and benchmark (lapin on its own tokio
//! runtime): declare and delete queues, publish as dcurl's client does, read replies.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lapin::message::Delivery;
use lapin::options::{
    BasicConsumeOptions, BasicPublishOptions, QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable, ShortString};
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties, Consumer};
use tokio_stream::StreamExt;

/// The broker the tests use: `CURLPOW_TEST_BROKER`, else RabbitMQ's guest account on loopback.
pub fn broker_url() -> String {
    std::env::var("CURLPOW_TEST_BROKER")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "amqp://guest:guest@127.0.0.1:5672/%2f".into())
}

/// Whether the broker answers. Without one the calling test is skipped with a visible
/// `SKIPPED:` line, unless `CURLPOW_REQUIRE_BROKER=1` (CI), where a missing broker fails.
pub fn broker_available() -> bool {
    static UP: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let up = UP.get_or_init(|| Amqp::connect(&broker_url()).map(|_| ()));
    match up {
        Ok(()) => true,
        Err(e) => {
            crate::skip::skip_unless_required(
                "CURLPOW_REQUIRE_BROKER",
                &format!(
                    "no RabbitMQ broker answers at {} ({e}); start one (rabbitmq-server -detached) or set CURLPOW_TEST_BROKER",
                    masked()
                ),
            );
            false
        }
    }
}

/// The broker's URL with its password replaced by `***`.
fn masked() -> String {
    let url = broker_url();
    match url::Url::parse(&url) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        Ok(_) => url,
        Err(_) => "(an unparsable URL)".into(),
    }
}

/// A queue name no other test (or test run) uses: `incoming_queue-test-<pid>-<n>-<what>`.
pub fn unique_queue(what: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "incoming_queue-test-{}-{}-{what}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// One connection and channel, blocking calls.
pub struct Amqp {
    rt: tokio::runtime::Runtime,
    conn: Connection,
    pub ch: Channel,
    created: Vec<String>,
}

impl Amqp {
    /// Connect within 10 s.
    pub fn connect(url: &str) -> Result<Amqp, String> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let (conn, ch) = rt.block_on(async {
            let conn = tokio::time::timeout(
                Duration::from_secs(10),
                Connection::connect(url, ConnectionProperties::default()),
            )
            .await
            .map_err(|_| "no connection within 10 s".to_string())?
            .map_err(|e| e.to_string())?;
            let ch = conn.create_channel().await.map_err(|e| e.to_string())?;
            Ok::<_, String>((conn, ch))
        })?;
        Ok(Amqp {
            rt,
            conn,
            ch,
            created: Vec::new(),
        })
    }

    /// Connect, retrying for up to `within` (after a broker restart).
    pub fn connect_retrying(url: &str, within: Duration) -> Amqp {
        let t0 = std::time::Instant::now();
        loop {
            match Amqp::connect(url) {
                Ok(a) => return a,
                Err(e) if t0.elapsed() > within => panic!("no broker within {within:?}: {e}"),
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }

    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// Declare a durable queue (as dcurl's peers declare `incoming_queue`), deleted on drop.
    pub fn durable_queue(&mut self, name: &str) {
        let opts = QueueDeclareOptions {
            durable: true,
            ..Default::default()
        };
        self.block_on(
            self.ch
                .queue_declare(name.into(), opts, FieldTable::default()),
        )
        .expect("queue.declare");
        self.created.push(name.to_string());
    }

    /// A queue that refuses every message (`x-max-length` 0, `x-overflow` `reject-publish`):
    /// a reply sent to it is nacked by the broker. Deleted on drop.
    pub fn refusing_queue(&mut self, name: &str) {
        let mut args = FieldTable::default();
        args.insert("x-max-length".into(), AMQPValue::LongLongInt(0));
        args.insert(
            "x-overflow".into(),
            AMQPValue::LongString("reject-publish".into()),
        );
        self.block_on(
            self.ch
                .queue_declare(name.into(), QueueDeclareOptions::default(), args),
        )
        .expect("queue.declare");
        self.created.push(name.to_string());
    }

    /// Forget the queues to delete on drop (another connection will).
    pub fn keep_queues(&mut self) {
        self.created.clear();
    }

    /// Delete the queue on drop (a queue another process declared).
    pub fn delete_on_drop(&mut self, name: &str) {
        self.created.push(name.to_string());
    }

    /// dcurl's callback queue: exclusive, server-named, `x-message-ttl` 10000.
    pub fn dcurl_callback_queue(&self) -> ShortString {
        let mut args = FieldTable::default();
        args.insert("x-message-ttl".into(), AMQPValue::LongUInt(10_000));
        let opts = QueueDeclareOptions {
            exclusive: true,
            ..Default::default()
        };
        self.block_on(self.ch.queue_declare(ShortString::default(), opts, args))
            .expect("callback queue")
            .name()
            .clone()
    }

    /// Publish through the default exchange.
    pub fn publish(&self, queue: &str, body: &[u8], props: BasicProperties) {
        self.block_on(async {
            self.ch
                .basic_publish(
                    ShortString::default(),
                    queue.into(),
                    BasicPublishOptions::default(),
                    body,
                    props,
                )
                .await?
                .await
        })
        .expect("basic.publish");
    }

    /// Consume a queue without acknowledgements.
    pub fn consume(&self, queue: &str) -> Consumer {
        let opts = BasicConsumeOptions {
            no_ack: true,
            ..Default::default()
        };
        self.block_on(self.ch.basic_consume(
            queue.into(),
            ShortString::default(),
            opts,
            FieldTable::default(),
        ))
        .expect("basic.consume")
    }

    /// The next delivery within `within`, if any.
    pub fn next(&self, consumer: &mut Consumer, within: Duration) -> Option<Delivery> {
        self.block_on(async {
            match tokio::time::timeout(within, consumer.next()).await {
                Ok(Some(Ok(d))) => Some(d),
                _ => None,
            }
        })
    }

    /// Messages ready in a queue (not counting those delivered and unacknowledged).
    pub fn ready(&self, queue: &str) -> u32 {
        let opts = QueueDeclareOptions {
            passive: true,
            ..Default::default()
        };
        self.block_on(
            self.ch
                .queue_declare(queue.into(), opts, FieldTable::default()),
        )
        .map(|q| q.message_count())
        .unwrap_or(u32::MAX)
    }
}

impl Drop for Amqp {
    fn drop(&mut self) {
        let queues = std::mem::take(&mut self.created);
        self.rt.block_on(async {
            for q in queues {
                let _ = tokio::time::timeout(
                    Duration::from_secs(5),
                    self.ch
                        .queue_delete(q.as_str().into(), QueueDeleteOptions::default()),
                )
                .await;
            }
            let _ = tokio::time::timeout(
                Duration::from_secs(5),
                self.conn.close(200, "test done".into()),
            )
            .await;
        });
    }
}

/// The properties dcurl's client publishes with: text/plain, persistent, `reply_to`, and no
/// correlation id.
pub fn dcurl_properties(reply_to: &ShortString) -> BasicProperties {
    BasicProperties::default()
        .with_content_type("text/plain".into())
        .with_delivery_mode(2)
        .with_reply_to(reply_to.clone())
}

/// A header of a delivery, if present.
pub fn header(d: &Delivery, key: &str) -> Option<AMQPValue> {
    d.properties
        .headers()
        .as_ref()
        .and_then(|h| h.inner().get(key).cloned())
}

/// A string header.
pub fn header_str(d: &Delivery, key: &str) -> Option<String> {
    match header(d, key)? {
        AMQPValue::LongString(s) => Some(s.to_string()),
        AMQPValue::ShortString(s) => Some(s.to_string()),
        _ => None,
    }
}
