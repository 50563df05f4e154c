//! The server's connections: a TCP listener whose accepted connections a handler can mark to end
//! with a TCP reset (`RST`) instead of an orderly close (`FIN`), for the
//! [`Reply::Disconnect`](super::Reply::Disconnect) fault.
//!
//! Each accepted stream carries a shared flag ([`ResetOnClose`]); axum hands a clone of it to
//! every request of that connection (`ConnectInfo<ResetOnClose>`). When the connection ends with
//! the flag set, the socket gets `SO_LINGER` 0 just before it is closed, so the kernel sends a
//! reset and discards whatever the client has not acknowledged: the client's next read fails
//! with `ECONNRESET` ("connection reset by peer").

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll};

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// The model server's listener: `TcpListener` with `TCP_NODELAY` on every accepted stream (a
/// turn is many small SSE / WebSocket writes: without it, Nagle's algorithm and delayed ACKs add
/// about 40 ms to every WebSocket turn), each stream wrapped in a [`ResettableStream`]. `resets`
/// counts the connections closed with a reset.
pub(super) struct ResettableListener {
    pub(super) listener: TcpListener,
    pub(super) resets: Arc<AtomicUsize>,
}

impl Listener for ResettableListener {
    type Io = ResettableStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (stream, addr) = Listener::accept(&mut self.listener).await;
        let _ = stream.set_nodelay(true);
        let stream = ResettableStream {
            stream,
            reset: ResetOnClose::default(),
            resets: self.resets.clone(),
        };
        (stream, addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.listener.local_addr()
    }
}

/// Whether a connection ends with a TCP reset: shared by the stream and the requests it carries.
#[derive(Debug, Clone, Default)]
pub(super) struct ResetOnClose(Arc<AtomicBool>);

impl ResetOnClose {
    /// Close this connection with a reset (`RST`) instead of a `FIN` when it ends.
    pub(super) fn reset_on_close(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl Connected<IncomingStream<'_, ResettableListener>> for ResetOnClose {
    fn connect_info(stream: IncomingStream<'_, ResettableListener>) -> Self {
        stream.io().reset.clone()
    }
}

/// An accepted TCP stream that, when dropped with its flag set, is closed with a reset.
pub(super) struct ResettableStream {
    stream: TcpStream,
    reset: ResetOnClose,
    resets: Arc<AtomicUsize>,
}

impl Drop for ResettableStream {
    fn drop(&mut self) {
        if self.reset.0.load(Ordering::SeqCst) {
            // SO_LINGER 0: the close that follows (dropping `stream`) sends RST, not FIN.
            let _ = self.stream.set_zero_linger();
            self.resets.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl AsyncRead for ResettableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for ResettableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}
