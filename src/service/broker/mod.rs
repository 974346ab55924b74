//! Scale-out past one host over RabbitMQ (feature `broker`), speaking dcurl's remote-PoW
//! protocol, so dcurl's clients and workers and curlpow's interoperate.
//!
//! ```text
//!  dcurl client ─┐                                     ┌─► curlpow worker (host A: GPUs)
//!  curlpow serve ┼─► queue `incoming_queue` (durable) ─┼─► curlpow worker (host B)
//!  (RemoteDevice)┘   ◄── replies to each `reply_to` ───┘   dcurl worker …
//! ```
//!
//! - [`protocol`]: the message format (request = 2673 trytes + decimal MWM; reply = the 2673
//!   trytes with the nonce set), parsed with typed errors.
//! - [`BrokerWorker`], the consumer behind `curlpow worker`: PoW through an [`Engine`],
//!   the reply published and confirmed *before* the request is acknowledged (a worker that
//!   dies mid-job loses nothing: the broker hands the job to another), prefetch = the engine's
//!   device slots, malformed requests rejected with an error reply and never requeued,
//!   reconnection with backoff, drain on shutdown.
//! - remote: [`remote_devices`], devices that send each search to the queue and wait for
//!   the reply, for `curlpow serve --broker`. The engine verifies every nonce they return on
//!   the host, as it does for any device: a wrong answer is a fault and the search is retried.
//!
//! The AMQP client is [lapin](https://docs.rs/lapin) on tokio; heartbeats are on (10 s unless
//! the URL says `?heartbeat=N`); `amqps://` needs the `broker-tls` feature. `docs/scale-out.md`
//! has the topology, the guarantees and measured figures.
//!
//! [`Engine`]: crate::Engine

mod worker;

pub use crate::backend::remote::amqp::{
    mask_password, BrokerError, BrokerUrl, DEFAULT_HEARTBEAT_S, DEFAULT_QUEUE,
};
pub use crate::backend::remote::protocol;
pub use crate::backend::remote::{remote_devices, RemoteConfig};
pub use worker::{BrokerWorker, WorkerConfig, WorkerStats, MAX_REPLY_ATTEMPTS};
