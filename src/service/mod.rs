//! The services on top of an [`Engine`](crate::Engine): the IRI-compatible HTTP server
//! (`server`, feature `server`), the RabbitMQ worker (`broker`, feature `broker`), and the
//! signal handling both use (`signals`). They reach devices only through the engine.
//!
//! It may import every layer below.

#[cfg(feature = "broker")]
pub mod broker;
#[cfg(feature = "server")]
pub mod server;
#[cfg(any(feature = "server", feature = "broker"))]
pub mod signals;
