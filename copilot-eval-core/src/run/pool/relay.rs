//! The loopback relay between an SDK client and a pooled runtime.
//!
//! A pooled runtime talks JSON-RPC over TCP, and the runtime (Node.js) writes with Nagle's
//! algorithm on: a small write waits until the peer has acknowledged the last one, and Linux
//! delays an acknowledgement up to 40 ms unless the receiving socket asks for a quick one
//! (`TCP_QUICKACK`, which the kernel turns off again by itself, so it is set again after every
//! read). A session's messages come in bursts of small writes, so most of them waited: on a
//! pooled runtime a 2-turn eval's turns took about 430 ms against about 200 ms over stdio
//! (docs/performance.md, "Latency on the pooled path"). The SDK's `Transport::External` reads
//! its socket itself, so the SDK connects to this relay instead, and the relay reads the
//! runtime's socket: it asks for a quick acknowledgement after every read from either side and
//! copies the bytes both ways, with `TCP_NODELAY` on its own sockets. The bytes are not looked
//! at: the JSON-RPC stream, its framing and the connection token pass through unchanged.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A relay to one pooled runtime, for one connection: the SDK connects to [`Relay::port`].
/// Dropping it closes both connections; so does either side closing its own.
pub(crate) struct Relay {
    port: u16,
    task: tokio::task::AbortHandle,
}

impl Relay {
    /// The 127.0.0.1 port the SDK connects to (`Transport::External`).
    pub(crate) fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Connect to the runtime listening on `127.0.0.1:port` and serve a relay to it (on a task of
/// the current tokio runtime) for the first connection to [`Relay::port`].
///
/// # Errors
/// The runtime's port refused the connection, or no loopback port could be bound.
pub(crate) async fn to_runtime(port: u16) -> std::io::Result<Relay> {
    let upstream = TcpStream::connect(("127.0.0.1", port)).await?;
    let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
    let local = listener.local_addr()?.port();
    let task = tokio::spawn(async move {
        let Ok((downstream, _)) = listener.accept().await else {
            return;
        };
        drop(listener);
        pipe(downstream, upstream).await;
    });
    Ok(Relay {
        port: local,
        task: task.abort_handle(),
    })
}

/// Copy both ways between `a` and `b` until either side ends; then both are closed.
async fn pipe(a: TcpStream, b: TcpStream) {
    let _ = a.set_nodelay(true);
    let _ = b.set_nodelay(true);
    let (a_read, a_write) = a.into_split();
    let (b_read, b_write) = b.into_split();
    tokio::select! {
        () = copy(a_read, b_write) => {}
        () = copy(b_read, a_write) => {}
    }
}

/// Copy from `from` to `to` until `from` ends or either fails, asking for a quick
/// acknowledgement after every read.
async fn copy(mut from: tokio::net::tcp::OwnedReadHalf, mut to: tokio::net::tcp::OwnedWriteHalf) {
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        quick_ack(from.as_ref());
        if to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
    }
}

/// Acknowledge what `stream` has received now (`TCP_QUICKACK`; Linux only, else nothing).
fn quick_ack(stream: &TcpStream) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let on: libc::c_int = 1;
        // SAFETY: the descriptor is the live socket `stream` borrows; the option value is a
        // live c_int of the size given. A failure only leaves the delayed acknowledgement.
        unsafe {
            libc::setsockopt(
                stream.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_QUICKACK,
                (&on as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = stream;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes pass both ways unchanged, and the runtime's side closing closes the client's.
    #[tokio::test]
    async fn bytes_pass_both_ways_and_a_close_passes_through() {
        let runtime = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let port = runtime.local_addr().unwrap().port();
        let relay = to_runtime(port).await.unwrap();
        let (mut upstream, _) = runtime.accept().await.unwrap();
        let mut client = TcpStream::connect(("127.0.0.1", relay.port()))
            .await
            .unwrap();

        let request = b"Content-Length: 7\r\n\r\n{\"a\":1}";
        client.write_all(request).await.unwrap();
        let mut seen = vec![0u8; request.len()];
        upstream.read_exact(&mut seen).await.unwrap();
        assert_eq!(seen, request, "client to runtime");

        let reply = vec![7u8; 200 * 1024];
        upstream.write_all(&reply).await.unwrap();
        let mut got = vec![0u8; reply.len()];
        client.read_exact(&mut got).await.unwrap();
        assert!(
            got == reply,
            "runtime to client: {} bytes differ",
            got.len()
        );

        drop(upstream);
        let mut rest = Vec::new();
        let read = client.read_to_end(&mut rest).await.unwrap();
        assert_eq!(read, 0, "the client saw the runtime's close: {rest:?}");
    }

    /// A runtime port that refuses connections is an error, not a relay to nowhere.
    #[tokio::test]
    async fn a_closed_runtime_port_is_an_error() {
        let closed = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        assert!(to_runtime(port).await.is_err());
    }
}
