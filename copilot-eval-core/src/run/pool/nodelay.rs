//! `TCP_NODELAY` on the SDK's connection to a pooled runtime.
//!
//! The SDK connects `Transport::External` with a plain `TcpStream` and leaves Nagle's algorithm
//! on. Over that connection go many small JSON-RPC messages in a row (a model response streamed
//! back as several messages, tool results, hook answers), and each one after the first then
//! waits for the runtime's delayed ACK. A private runtime talks over stdio, which has no such
//! wait. So after connecting, this process's sockets connected to the runtime's port get
//! `TCP_NODELAY` (found by their peer address: `getpeername` on this process's descriptors).

/// Set `TCP_NODELAY` on every TCP socket of this process connected to `127.0.0.1:port`.
/// Returns how many it set (0 off Unix).
pub(crate) fn to_port(port: u16) -> usize {
    #[cfg(unix)]
    {
        let mut set = 0;
        let fds = std::fs::read_dir("/proc/self/fd")
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        for fd in fds {
            if peer_port(fd) == Some(port) {
                let on: libc::c_int = 1;
                // SAFETY: `fd` is a socket of this process (getpeername succeeded on it); the
                // option value is a live c_int of the size given.
                let done = unsafe {
                    libc::setsockopt(
                        fd,
                        libc::IPPROTO_TCP,
                        libc::TCP_NODELAY,
                        (&on as *const libc::c_int).cast(),
                        std::mem::size_of::<libc::c_int>() as libc::socklen_t,
                    )
                };
                if done == 0 {
                    set += 1;
                }
            }
        }
        set
    }
    #[cfg(not(unix))]
    {
        let _ = port;
        0
    }
}

/// The peer port of descriptor `fd` when it is an IPv4 socket connected to 127.0.0.1.
#[cfg(unix)]
fn peer_port(fd: i32) -> Option<u16> {
    // SAFETY: an all-zero sockaddr_in is valid; getpeername writes at most `len` bytes into it
    // and fails (without writing) on a descriptor that is not a connected socket.
    let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    let done =
        unsafe { libc::getpeername(fd, (&mut addr as *mut libc::sockaddr_in).cast(), &mut len) };
    (done == 0
        && addr.sin_family == libc::AF_INET as libc::sa_family_t
        && u32::from_be(addr.sin_addr.s_addr) == u32::from(std::net::Ipv4Addr::LOCALHOST))
    .then(|| u16::from_be(addr.sin_port))
}
