//! Warm runtimes: a pool of running Copilot runtimes that evals lease instead of starting
//! their own.
//!
//! Each [`PooledRuntime`] listens on 127.0.0.1 and has one request handler for its whole
//! life, the pool's [`Router`] (a runtime takes exactly one, docs/performance.md finding 1). A
//! run that leases it ([`RunOptions::pooled`](crate::run::RunOptions::pooled)) connects its own
//! client without a handler, names its loopback endpoint in its session id, and gets every
//! model request of its session back there, into its own request proxy: audit, budget gate,
//! image detail, recording and replay stay the run's ([`wire`] says how requests travel).
//!
//! A lease is exclusive: one run at a time per runtime, so the runtime's sessionless requests
//! (the model catalog, the account) go to the run that holds it. When a lease ends, what its
//! session left on the runtime is undone ([`LeaseEnd`]: processes still running are named and
//! killed, the runtime's folders reset), by the pool that owns the runtime, for a run of this
//! process and for a test process of the runner alike. A runtime is retired (killed, with every
//! process carrying its home) after a run that did not end cleanly or left something to undo
//! that could not be, after [`Pool::new`]'s `max_sessions`, and when the pool is dropped.

#[cfg(feature = "runner")]
pub mod control;
mod error;
mod folders;
mod key;
pub(crate) mod loopback;
pub(crate) mod mcp_relay;
pub(crate) mod nodelay;
pub(crate) mod relay;
pub mod remote;
pub mod router;
pub mod runtime;
pub mod wire;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub use error::PoolError;
pub use key::pool_key;
pub use remote::RunnerPool;
pub use router::Router;
pub use runtime::PooledRuntime;

/// Where a run gets a warm runtime from.
#[derive(Clone)]
pub enum PoolSource {
    /// A pool in this process.
    Local(Arc<Pool>),
    /// The pool of the `cargo copilot-eval` runner that started this test process, asked over
    /// its loopback control endpoint ([`RunnerPool::from_env`]).
    Runner(RunnerPool),
}

impl std::fmt::Debug for PoolSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Local(_) => f.write_str("PoolSource::Local"),
            Self::Runner(runner) => write!(f, "PoolSource::Runner({})", runner.url()),
        }
    }
}

impl PoolSource {
    /// Lease a runtime of pool key `key` for a run of the runtime at `runtime_path`.
    /// `Ok(None)`: this source has no runtime of that executable (the run starts its own).
    ///
    /// # Errors
    /// The pool could not start a runtime, or the runner's control endpoint failed; the text
    /// says which.
    ///
    /// `sandbox` is the run's own sandbox policy (`None`: the run is not confined): a pool
    /// whose runtimes' domain does not cover it exactly so ([`Pool::serves`]) gives none.
    pub async fn lease(
        &self,
        key: &str,
        runtime_path: &std::path::Path,
        sandbox: Option<&crate::run::sandbox::Policy>,
    ) -> Result<Option<Lease>, PoolError> {
        match self {
            Self::Local(pool) if pool.runtime_path == runtime_path && pool.serves(sandbox) => {
                pool.lease(key).await.map(Some)
            }
            Self::Local(_) => Ok(None),
            Self::Runner(runner) => runner.lease(key, runtime_path, sandbox).await,
        }
    }
}

/// A pool of warm runtimes of one runtime executable, offline. Shared as `Arc<Pool>`.
pub struct Pool {
    runtime_path: PathBuf,
    max_sessions: usize,
    max_idle: usize,
    /// Idle runtimes with their pool key; `None`: started ahead ([`Pool::prestart`]), no
    /// session yet, so any key may have it.
    idle: Mutex<Vec<(Option<String>, PooledRuntime)>>,
    /// Runtimes [`Pool::prestart`] is starting now.
    starting: std::sync::atomic::AtomicUsize,
    /// Notified when a runtime started ahead is idle (or failed to start).
    prestarted: tokio::sync::Notify,
    started: std::sync::atomic::AtomicUsize,
    retired: std::sync::atomic::AtomicUsize,
    /// The Landlock policy every runtime of the pool starts under (`None`: unconfined).
    sandbox: Option<crate::run::sandbox::Policy>,
    /// The relay its runtimes reach the runs' MCP mocks through ([`mcp_relay`]); the text says
    /// why it did not start.
    mcp_relay: Result<mcp_relay::McpRelay, String>,
}

impl Pool {
    /// A pool of runtimes at `runtime_path`; each is retired after `max_sessions` leases.
    pub fn new(runtime_path: impl Into<PathBuf>, max_sessions: usize) -> Arc<Self> {
        Self::with_idle_limit(runtime_path, max_sessions, usize::MAX)
    }

    /// [`Pool::new`], keeping at most `max_idle` idle runtimes (the oldest idle one is stopped
    /// when another would exceed it); the runner gives its `-j`.
    ///
    /// Its runtimes start confined to [`Policy::pool`](crate::run::sandbox::Policy::pool)
    /// when the kernel can confine them, unless this process runs under `--no-sandbox`
    /// ([`Pool::with_sandbox`] chooses).
    pub fn with_idle_limit(
        runtime_path: impl Into<PathBuf>,
        max_sessions: usize,
        max_idle: usize,
    ) -> Arc<Self> {
        let runtime_path = runtime_path.into();
        let confines = matches!(
            crate::run::sandbox::kernel(),
            crate::run::sandbox::Kernel::Confines { .. }
        );
        let off = crate::run::sandbox::runner_mode() == Some(crate::eval::SandboxMode::Off);
        let sandbox = (confines && !off).then(|| crate::run::sandbox::Policy::pool(&runtime_path));
        Self::with_sandbox(runtime_path, max_sessions, max_idle, sandbox)
    }

    /// [`Pool::with_idle_limit`], its runtimes started under `sandbox` (`None`: unconfined)
    /// with the port of the pool's MCP relay added (`mcp_relay.rs`, started here on a thread of
    /// its own; a relay that cannot start is logged, and a run with MCP mocks then cannot lease).
    pub fn with_sandbox(
        runtime_path: impl Into<PathBuf>,
        max_sessions: usize,
        max_idle: usize,
        sandbox: Option<crate::run::sandbox::Policy>,
    ) -> Arc<Self> {
        let mcp_relay = mcp_relay::McpRelay::start().map_err(|e| {
            let e = format!("the pool's MCP relay did not start on 127.0.0.1: {e}");
            tracing::warn!("copilot-eval: {e}");
            e
        });
        let sandbox = match &mcp_relay {
            Ok(relay) => sandbox.map(|policy| policy.with_port(relay.port())),
            Err(_) => sandbox,
        };
        Arc::new(Self {
            sandbox,
            mcp_relay,
            runtime_path: runtime_path.into(),
            max_sessions: max_sessions.max(1),
            max_idle: max_idle.max(1),
            idle: Mutex::default(),
            starting: Default::default(),
            prestarted: tokio::sync::Notify::new(),
            started: Default::default(),
            retired: Default::default(),
        })
    }

    /// Lease a runtime of pool key `key`: an idle one of that key that still runs, else a new
    /// one. The key must name everything the runtime fixes for all its sessions (docs/
    /// performance.md): the model catalog it was answered (model ids, wire format, vision) and
    /// the account answer (MCP on or off) above all; runs whose keys differ never share one.
    ///
    /// # Errors
    /// A new runtime could not start ([`PooledRuntime::start`]).
    pub async fn lease(self: &Arc<Self>, key: &str) -> Result<Lease, PoolError> {
        loop {
            // Registered before the idle list is read, so a runtime that becomes idle in
            // between is not missed.
            let prestarted = self.prestarted.notified();
            tokio::pin!(prestarted);
            prestarted.as_mut().enable();
            let idle = {
                let mut idle = self.idle.lock().expect("pool lock");
                idle.iter()
                    .position(|(k, _)| k.as_deref() == Some(key))
                    .or_else(|| idle.iter().position(|(k, _)| k.is_none()))
                    .map(|i| idle.remove(i).1)
            };
            match idle {
                Some(mut runtime) => {
                    if runtime.is_running() {
                        return Ok(self.lease_of(key, runtime));
                    }
                    self.retired
                        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                // A runtime started ahead is on its way: wait for it rather than start another.
                None if self.starting.load(std::sync::atomic::Ordering::SeqCst) > 0 => {
                    prestarted.await;
                }
                None => break,
            }
        }
        let runtime = PooledRuntime::start(&self.runtime_path, self.sandbox.as_ref()).await?;
        self.started
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(self.lease_of(key, runtime))
    }

    fn lease_of(self: &Arc<Self>, key: &str, mut runtime: PooledRuntime) -> Lease {
        runtime.sessions += 1;
        runtime.begin_lease();
        Lease {
            port: runtime.port(),
            token: runtime.token().to_owned(),
            pid: runtime.pid(),
            sandbox: self.sandbox.clone(),
            binding: Binding::InProcess(Arc::new(InProcess {
                pool: self.clone(),
                key: key.to_owned(),
                runtime: Mutex::new(Some(runtime)),
                mcp_tokens: Mutex::default(),
            })),
        }
    }

    /// Start `count` runtimes now, in the background (tasks of the current tokio runtime), for
    /// the first leases of any key: the runner calls it before it builds and lists the tests,
    /// so that a runtime's start overlaps with that work. A lease that finds no idle runtime
    /// while one is starting waits for it. A runtime that fails to start is only logged (a
    /// lease then starts its own and reports the error).
    pub fn prestart(self: &Arc<Self>, count: usize) {
        for _ in 0..count {
            self.starting
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let pool = self.clone();
            tokio::spawn(async move {
                match PooledRuntime::start(&pool.runtime_path, pool.sandbox.as_ref()).await {
                    Ok(runtime) => {
                        pool.started
                            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        pool.idle.lock().expect("pool lock").push((None, runtime));
                    }
                    Err(e) => tracing::warn!("copilot-eval: a pooled runtime did not start: {e}"),
                }
                pool.starting
                    .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                pool.prestarted.notify_waiters();
            });
        }
    }

    /// Whether this pool's runtimes may serve a run whose own sandbox policy is `needs`
    /// (`None`: unconfined): both unconfined, or both confined and the pool's domain covers
    /// the run's ([`Policy::covers`](crate::run::sandbox::Policy::covers)). A run the pool
    /// cannot serve starts its private runtime.
    pub fn serves(&self, needs: Option<&crate::run::sandbox::Policy>) -> bool {
        match (&self.sandbox, needs) {
            (None, None) => true,
            (Some(pool), Some(needs)) => pool.covers(needs),
            _ => false,
        }
    }

    /// The Landlock policy its runtimes start under (`None`: unconfined).
    pub fn sandbox(&self) -> Option<&crate::run::sandbox::Policy> {
        self.sandbox.as_ref()
    }

    /// The 127.0.0.1 port of the pool's MCP relay (`mcp_relay.rs`), in its runtimes' sandbox
    /// policy; `None`: the relay did not start.
    pub fn mcp_relay_port(&self) -> Option<u16> {
        self.mcp_relay.as_ref().ok().map(mcp_relay::McpRelay::port)
    }

    /// The runtime executable this pool starts.
    pub fn runtime_path(&self) -> &std::path::Path {
        &self.runtime_path
    }

    /// Leases a runtime serves before it is retired.
    pub fn max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// Idle runtimes kept at most (the oldest idle one is retired past it).
    pub fn max_idle(&self) -> usize {
        self.max_idle
    }

    /// Take back a runtime whose lease ended cleanly, or retire it.
    fn give_back(&self, key: &str, runtime: PooledRuntime, clean: bool) {
        runtime.router().lease_to(None);
        if clean && runtime.sessions < self.max_sessions {
            let mut idle = self.idle.lock().expect("pool lock");
            idle.push((Some(key.to_owned()), runtime));
            while idle.len() > self.max_idle {
                idle.remove(0);
                self.retired
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        } else {
            self.retired
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// Runtimes started so far.
    pub fn started(&self) -> usize {
        self.started.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Runtimes retired so far (unclean end, session bound, or found dead).
    pub fn retired(&self) -> usize {
        self.retired.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Process ids of the idle runtimes.
    pub fn idle_pids(&self) -> Vec<u32> {
        self.idle
            .lock()
            .expect("pool lock")
            .iter()
            .map(|(_, runtime)| runtime.pid())
            .collect()
    }

    /// Stop every idle runtime.
    pub fn shutdown(&self) {
        self.idle.lock().expect("pool lock").clear();
    }
}

/// What a run holds while it uses a pooled runtime: where to connect, and how to route the
/// runtime's requests to itself and give the runtime back.
#[derive(Clone)]
pub struct Lease {
    /// The runtime's 127.0.0.1 port.
    pub port: u16,
    /// The connection token to present (`Transport::External`).
    pub token: String,
    /// The runtime's process id (a process of the pool's owner, not of the run).
    pub pid: u32,
    /// The Landlock policy the runtime runs under (`None`: unconfined).
    pub sandbox: Option<crate::run::sandbox::Policy>,
    binding: Binding,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease").field("port", &self.port).finish()
    }
}

/// How a lease talks to its pool.
#[derive(Clone)]
enum Binding {
    /// A pool of this process.
    InProcess(Arc<InProcess>),
    /// The runner's pool, through its control endpoint.
    Runner(remote::RunnerLease),
}

impl Lease {
    /// Route the runtime's sessionless requests to the endpoint on `endpoint` (127.0.0.1), and
    /// its account and catalog requests to the run's model server at `base_url`.
    ///
    /// # Errors
    /// The runner's control endpoint did not take the binding (a lease of an in-process pool
    /// cannot fail).
    pub async fn bind(&self, endpoint: u16, base_url: &str) -> Result<(), PoolError> {
        match &self.binding {
            Binding::InProcess(lease) => {
                lease.bind(endpoint, base_url);
                Ok(())
            }
            Binding::Runner(lease) => lease.bind(endpoint, base_url).await,
        }
    }

    /// Route nothing to the run any more (the runtime stays leased): its sessionless requests
    /// fail until the next [`Lease::bind`].
    pub fn unbind(&self) {
        if let Binding::InProcess(lease) = &self.binding
            && let Some(runtime) = lease.runtime.lock().expect("lease lock").as_ref()
        {
            runtime.router().lease_to(None);
        }
    }

    /// Relay the runtime's MCP traffic for the mock on `127.0.0.1:port` through the pool's
    /// relay (`mcp_relay.rs`) until the lease ends: the relay's URL for it
    /// (`http://127.0.0.1:<relay>/mcp/<token>`, to which the mock's own path is added).
    ///
    /// # Errors
    /// The pool's relay did not start, the lease has ended, or the runner's control endpoint
    /// did not answer; the text says which.
    pub async fn relay_mcp(&self, port: u16) -> Result<String, PoolError> {
        match &self.binding {
            Binding::InProcess(lease) => lease.relay_mcp(port),
            Binding::Runner(lease) => lease.relay_mcp(port).await,
        }
    }

    /// Give the runtime back; `clean: false` (the run did not end cleanly: a session may still
    /// be open in it) retires it. First the pool that owns the runtime undoes what the lease
    /// left on it ([`LeaseEnd`], returned); a lease that left anything to undo retires the
    /// runtime too. A lease of the runner that this process never gives back (it crashed, or
    /// was killed) is ended and retired by the runner when the process has ended.
    pub async fn release(&self, clean: bool) -> LeaseEnd {
        match &self.binding {
            Binding::InProcess(lease) => lease.release(clean).await,
            Binding::Runner(lease) => lease.release(clean).await,
        }
    }

    /// The runner's control endpoint hands this lease (kept for its test process) out again: a
    /// new lease of the runtime begins.
    #[cfg(feature = "runner")]
    fn begin(&self) {
        if let Binding::InProcess(lease) = &self.binding
            && let Some(runtime) = lease.runtime.lock().expect("lease lock").as_mut()
        {
            runtime.begin_lease();
        }
    }

    /// The lease's session has ended: undo what it left on the runtime, which stays leased.
    #[cfg(feature = "runner")]
    async fn end(&self) -> LeaseEnd {
        match &self.binding {
            Binding::InProcess(lease) => lease.end().await,
            Binding::Runner(_) => LeaseEnd::default(),
        }
    }
}

/// What a lease left on its pooled runtime, found and undone by the pool when the lease ended
/// (the runtime's home is the pool's, so the run's own leftover sweep, by its private home,
/// cannot see these). The run reports them as a private runtime's run does: as cleanup errors.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LeaseEnd {
    /// Processes the lease's session started that still ran after it ended (carrying the
    /// runtime's home in their environment, e.g. one the agent's shell detached): killed.
    pub leftovers: Vec<crate::runtime::Leftover>,
    /// What could not be undone or checked (a folder reset that failed, a killed process that
    /// did not exit, the runner's pool not answering the release), each naming it.
    pub errors: Vec<String>,
}

impl LeaseEnd {
    /// Nothing was left to undo.
    pub fn is_clean(&self) -> bool {
        self.leftovers.is_empty() && self.errors.is_empty()
    }
}

/// A lease of a pool in this process.
struct InProcess {
    pool: Arc<Pool>,
    key: String,
    runtime: Mutex<Option<PooledRuntime>>,
    /// The MCP relay's tokens of this lease ([`Lease::relay_mcp`]), revoked when it ends.
    mcp_tokens: Mutex<Vec<String>>,
}

impl InProcess {
    fn relay_mcp(&self, port: u16) -> Result<String, PoolError> {
        if self.runtime.lock().expect("lease lock").is_none() {
            return Err(PoolError::McpRelay(
                "the lease of the pooled runtime has ended: no MCP relay for it".to_owned(),
            ));
        }
        let relay = self
            .pool
            .mcp_relay
            .as_ref()
            .map_err(|e| PoolError::McpRelay(e.clone()))?;
        let (token, url) = relay.register(port);
        self.mcp_tokens.lock().expect("lease lock").push(token);
        Ok(url)
    }

    /// Stop relaying the lease's MCP traffic ([`Lease::relay_mcp`]).
    fn revoke_mcp(&self) {
        let tokens = std::mem::take(&mut *self.mcp_tokens.lock().expect("lease lock"));
        if let Ok(relay) = &self.pool.mcp_relay {
            for token in &tokens {
                relay.revoke(token);
            }
        }
    }

    fn bind(&self, endpoint: u16, base_url: &str) {
        if let Some(runtime) = self.runtime.lock().expect("lease lock").as_ref() {
            runtime
                .router()
                .lease_to(Some((endpoint, base_url.to_owned())));
        }
    }

    /// Undo what the lease left on the runtime ([`PooledRuntime::end_lease`]); the runtime
    /// stays leased.
    async fn end(&self) -> LeaseEnd {
        self.revoke_mcp();
        let Some(mut runtime) = self.runtime.lock().expect("lease lock").take() else {
            return LeaseEnd::default();
        };
        let end = runtime.end_lease().await;
        *self.runtime.lock().expect("lease lock") = Some(runtime);
        end
    }

    async fn release(&self, clean: bool) -> LeaseEnd {
        let end = self.end().await;
        if let Some(mut runtime) = self.runtime.lock().expect("lease lock").take() {
            let running = runtime.is_running();
            self.pool
                .give_back(&self.key, runtime, clean && running && end.is_clean());
        }
        end
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        // A lease dropped without release: the run did not end cleanly. The runtime is retired
        // (with every process carrying its home).
        self.revoke_mcp();
        if let Some(runtime) = self.runtime.lock().expect("lease lock").take() {
            self.pool.give_back(&self.key, runtime, false);
        }
    }
}
