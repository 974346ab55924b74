//! The one systemd notification the services send: `EXTEND_TIMEOUT_USEC`, when a stop begins,
//! so that the unit's `TimeoutStopSec` never cuts a drain the configured `--shutdown-grace`
//! allows (systemd waits that long past the message, however short `TimeoutStopSec` is).
//!
//! systemd passes `NOTIFY_SOCKET` to a service whose unit has `NotifyAccess=main` (or
//! `Type=notify`); without it this does nothing.

use std::time::Duration;

/// The time a stop may take past `grace`: the connections' own close (up to 10 s) and the
/// runtime's shutdown (up to 5 s), with 5 s to spare.
pub const STOP_MARGIN: Duration = Duration::from_secs(20);

/// Tell systemd the stop now under way may take `grace` + [`STOP_MARGIN`]. Errors are ignored:
/// a missing or unreachable socket only means the unit's own `TimeoutStopSec` applies.
pub fn extend_stop_timeout(grace: Duration) {
    let usec = grace
        .saturating_add(STOP_MARGIN)
        .as_micros()
        .min(u64::MAX as u128);
    let _ = notify(&format!("EXTEND_TIMEOUT_USEC={usec}"));
}

/// Send one message to `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace).
#[cfg(unix)]
fn notify(message: &str) -> std::io::Result<()> {
    use std::os::unix::net::UnixDatagram;
    let Some(path) = curlpow::env::other("NOTIFY_SOCKET").filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    let socket = UnixDatagram::unbound()?;
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str());
    if let Some(name) = bytes.strip_prefix(b"@") {
        return send_abstract(&socket, name, message);
    }
    socket.send_to(message.as_bytes(), path)?;
    Ok(())
}

/// Send to a socket of the abstract namespace (Linux only; elsewhere nothing is sent).
#[cfg(unix)]
fn send_abstract(
    socket: &std::os::unix::net::UnixDatagram,
    name: &[u8],
    message: &str,
) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
        socket.send_to_addr(message.as_bytes(), &addr)?;
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (socket, name, message);
    Ok(())
}

#[cfg(not(unix))]
fn notify(_: &str) -> std::io::Result<()> {
    Ok(())
}
