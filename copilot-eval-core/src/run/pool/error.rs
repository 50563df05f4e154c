//! `PoolError`: why the pool could not give or bind a warm runtime.

use std::path::PathBuf;

/// Why a warm runtime could not be started, keyed, leased or bound ([`super::PooledRuntime::start`],
/// [`super::pool_key`], [`super::Pool::lease`], [`super::PoolSource::lease`],
/// [`super::Lease::bind`]). A run that meets one ends with `execution_error` and this message.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// A temporary folder for the runtime (its home or its working directory) cannot be created.
    #[error("cannot create a pooled runtime's {what}: {source}")]
    Folder {
        /// `home` or `directory`.
        what: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The runtime's home and directory cannot be read once it started (to reset them after
    /// each lease, [`super::PooledRuntime`]).
    #[error("cannot read a pooled runtime's folders as its start left them: {0}")]
    Snapshot(#[source] std::io::Error),
    /// The router's API front cannot be served.
    #[error("cannot serve a pooled runtime's API front: {0}")]
    Front(#[source] std::io::Error),
    /// The runtime's process cannot be started.
    #[error("cannot start the runtime {}: {source}", path.display())]
    Spawn {
        /// The runtime executable.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The runtime's process ended before it announced its port.
    #[error("the pooled runtime ended before it listened ({status})")]
    Ended {
        /// Its exit status, or `no exit status`.
        status: String,
    },
    /// The runtime's sandbox (its Landlock ruleset) could not be made: the message says why.
    #[error("cannot confine the pooled runtime: {0}")]
    Sandbox(String),
    /// The runtime started under its sandbox did not come up: the message is the error and the
    /// sandbox's hint ([`Policy::start_failure`](crate::run::sandbox::Policy::start_failure)).
    #[error("{0}")]
    ConfinedStart(String),
    /// The runtime did not announce its port within 120 s.
    #[error("the pooled runtime did not listen within 120 s")]
    NoListen,
    /// The relay or the owner client cannot connect to the runtime.
    #[error("cannot connect to the pooled runtime: {0}")]
    Connect(String),
    /// The model server could not be asked for the pool key.
    #[error("cannot ask {url} for the pool key: {source}")]
    KeyAsk {
        /// The URL asked.
        url: String,
        /// The HTTP error.
        source: reqwest::Error,
    },
    /// The model server answered a pool key request with a status other than 2xx.
    #[error("{url} answered {status} when asked for the pool key")]
    KeyStatus {
        /// The URL asked.
        url: String,
        /// The status it answered.
        status: reqwest::StatusCode,
    },
    /// The model server's answer to a pool key request cannot be read.
    #[error("cannot read {url}'s answer for the pool key: {source}")]
    KeyRead {
        /// The URL asked.
        url: String,
        /// The HTTP error.
        source: reqwest::Error,
    },
    /// The runner's pool (its control endpoint) failed or refused: the message says which, with
    /// the endpoint's URL and its answer.
    #[error("{0}")]
    Runner(String),
    /// The pool's MCP relay cannot relay a run's MCP mock ([`super::Lease::relay_mcp`]): it did
    /// not start, or the lease has ended; the message says which.
    #[error("{0}")]
    McpRelay(String),
    /// The loopback HTTP client could not be built (its TLS backend did not start): the
    /// message says why.
    #[error("{0}")]
    Client(String),
}
