//! One pooled runtime: the Copilot CLI listening on a 127.0.0.1 port (`--server --port 0
//! --log-level none`), with a home of its own, and the pool's own client connected first as
//! its only request handler (the [`Router`]).
//!
//! What a lease leaves on it is undone when the lease ends (`PooledRuntime::end_lease`), as
//! stopping a private runtime and removing its home undoes it: the processes its session
//! started that still run (the agent's shell can start detached ones, which carry the
//! runtime's home in their environment, not the run's) are named and killed, and the runtime's
//! folders are put back as its start left them (`run/pool/folders.rs`). A retired runtime takes
//! every process carrying its home with it.

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use github_copilot_sdk::{CliProgram, Client, ClientOptions, Transport};

use super::PoolError;
use super::router::Router;
use crate::run::{OFFLINE_TOKEN, Target};

/// How long a starting runtime may take to announce its port (the first start may unpack it).
const LISTEN_BOUND: Duration = Duration::from_secs(120);
/// How long the end of a lease waits for the processes it killed to have exited.
const EXIT_BOUND: Duration = Duration::from_secs(15);

/// A running pooled runtime. Dropping it kills the process.
pub struct PooledRuntime {
    child: Child,
    port: u16,
    token: String,
    router: Arc<Router>,
    owner: Option<Client>,
    /// The owner client's connection to the runtime ([`super::relay`]).
    relay: Option<super::relay::Relay>,
    /// Stops the API front when dropped.
    _front: tokio::sync::oneshot::Sender<()>,
    home: tempfile::TempDir,
    cwd: tempfile::TempDir,
    /// Its home and directory as its start left them.
    folders: Option<super::folders::Folders>,
    /// The processes carrying its home when the current lease began (itself among them); `None`
    /// between leases.
    present: Option<Vec<u32>>,
    /// Sessions leased on it so far.
    pub(super) sessions: usize,
}

impl PooledRuntime {
    /// Start the runtime at `runtime_path` offline (every model request goes through the
    /// router, so its API URL is a placeholder) and connect the router's client.
    ///
    /// # Errors
    /// The process cannot start, does not announce its port within 120 s, or the client
    /// cannot connect; the text says which.
    ///
    /// With `sandbox`, the runtime (and everything it starts) runs under a Landlock domain of
    /// that policy, which also lets it connect to the router's front.
    pub async fn start(
        runtime_path: &Path,
        sandbox: Option<&crate::run::sandbox::Policy>,
    ) -> Result<Self, PoolError> {
        let folder = |what| move |source| PoolError::Folder { what, source };
        let home = tempfile::Builder::new()
            .prefix("copilot-eval-pool-home-")
            .tempdir()
            .map_err(folder("home"))?;
        let cwd = tempfile::Builder::new()
            .prefix("copilot-eval-pool-cwd-")
            .tempdir()
            .map_err(folder("directory"))?;
        let token = uuid::Uuid::new_v4().simple().to_string();
        let router = Router::new();
        let (front_port, front_stop) = super::router::front(router.clone())
            .await
            .map_err(PoolError::Front)?;
        let target = Target::Offline {
            base_url: format!("http://127.0.0.1:{front_port}"),
        };
        let mut command = server_command(runtime_path, home.path(), cwd.path(), &target, &token);
        if let Some(policy) = sandbox {
            let policy = policy
                .clone()
                .with_writable([home.path().to_path_buf(), cwd.path().to_path_buf()])
                .with_port(front_port);
            policy.pre_exec(&mut command).map_err(PoolError::Sandbox)?;
            // The user's home is not readable inside: the runtime's own is `HOME`.
            command.env("HOME", home.path());
        }
        let mut child = command.spawn().map_err(|source| PoolError::Spawn {
            path: runtime_path.to_path_buf(),
            source,
        })?;
        let port = listening_port(&mut child)
            .await
            .map_err(|e| match sandbox {
                Some(policy) => PoolError::ConfinedStart(policy.start_failure(e)),
                None => e,
            })?;
        let mut runtime = Self {
            child,
            port,
            token,
            router: router.clone(),
            owner: None,
            relay: None,
            _front: front_stop,
            home,
            cwd,
            folders: None,
            present: None,
            sessions: 0,
        };
        let relay = super::relay::to_runtime(port)
            .await
            .map_err(|e| PoolError::Connect(e.to_string()))?;
        let owner = Client::start(
            ClientOptions::new()
                .with_transport(Transport::External {
                    host: "127.0.0.1".into(),
                    port: relay.port(),
                    connection_token: Some(runtime.token.clone()),
                })
                .with_program(CliProgram::Path(runtime_path.to_path_buf()))
                .with_request_handler(router),
        )
        .await
        .map_err(|e| PoolError::Connect(e.to_string()))?;
        super::nodelay::to_port(relay.port());
        runtime.owner = Some(owner);
        runtime.relay = Some(relay);
        // Its folders as its start left them, which every lease finds again.
        runtime.folders = Some(
            super::folders::Folders::snapshot(&[runtime.home.path(), runtime.cwd.path()])
                .map_err(PoolError::Snapshot)?,
        );
        Ok(runtime)
    }

    /// `COPILOT_HOME=<its home>`: the entry every process of this runtime carries in its
    /// environment (its tools' and their children's, detached ones too).
    fn marker(&self) -> String {
        format!("COPILOT_HOME={}", self.home.path().display())
    }

    /// A lease begins: the processes carrying its home now (the runtime itself, and any of its
    /// own) are not the lease's.
    pub(super) fn begin_lease(&mut self) {
        self.present = Some(crate::runtime::processes_with_env(&self.marker()));
    }

    /// The lease that began last ([`PooledRuntime::begin_lease`]) ends (its session was shut
    /// down): every process carrying the runtime's home that did not exist when it began is
    /// named and killed, once the processes the runtime stops itself have had a moment (1 s at
    /// most) to go; then the runtime's folders are reset. A second call before the next lease
    /// does nothing.
    pub(super) async fn end_lease(&mut self) -> super::LeaseEnd {
        let Some(present) = self.present.take() else {
            return super::LeaseEnd::default();
        };
        let marker = self.marker();
        let own = self.pid();
        let started_in_lease = || {
            let mut pids = crate::runtime::processes_with_env(&marker);
            pids.retain(|pid| *pid != own && !present.contains(pid));
            pids.sort_unstable();
            pids
        };
        let mut left = started_in_lease();
        for _ in 0..20 {
            if left.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            left = started_in_lease();
        }
        let mut end = super::LeaseEnd::default();
        if !left.is_empty() {
            // Named while they run (a killed process's command line is gone).
            end.leftovers = left
                .iter()
                .copied()
                .map(crate::runtime::Leftover::of)
                .collect();
            for pid in &left {
                crate::runtime::kill_process(*pid);
            }
            let alive = crate::runtime::wait_for_exits(left, EXIT_BOUND).await;
            if !alive.is_empty() {
                end.errors.push(format!(
                    "the pooled runtime's processes {alive:?} were killed but had not exited {EXIT_BOUND:?} later"
                ));
            }
        }
        if let Some(folders) = &self.folders {
            for error in folders.reset() {
                end.errors.push(format!(
                    "resetting the pooled runtime's folders failed: {error}; the pool retires it"
                ));
            }
        }
        end
    }

    /// Its 127.0.0.1 port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The connection token a client must present.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Its router.
    pub fn router(&self) -> &Arc<Router> {
        &self.router
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process still runs.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for PooledRuntime {
    /// Retire it: the process, and every process still carrying its home (what its sessions
    /// started; none is left to a later run or to the machine).
    fn drop(&mut self) {
        drop(self.owner.take());
        drop(self.relay.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
        for pid in crate::runtime::processes_with_env(&self.marker()) {
            crate::runtime::kill_process(pid);
        }
    }
}

/// The command that starts the runtime as a server on a free 127.0.0.1 port, with its own home
/// and directory, the shared runtime cache, the offline `target`, the placeholder token, and
/// the connection `token` the pool's clients must present; only its stdout is read (it
/// announces the port there).
fn server_command(
    runtime_path: &Path,
    home: &Path,
    cwd: &Path,
    target: &Target,
    token: &str,
) -> Command {
    let cache = crate::runtime::runtime_cache_dir();
    let mut command = Command::new(runtime_path);
    command
        .args([
            "--server",
            "--port",
            "0",
            "--no-auto-update",
            "--log-level",
            "none",
        ])
        .args([
            "--auth-token-env",
            "COPILOT_SDK_AUTH_TOKEN",
            "--no-auto-login",
        ])
        .current_dir(cwd)
        .envs(crate::run::runtime_env(home, &cache, target))
        .env("COPILOT_SDK_AUTH_TOKEN", OFFLINE_TOKEN)
        .env("COPILOT_CONNECTION_TOKEN", token)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    die_with_parent(&mut command);
    command
}

/// The port the started runtime announces on its stdout (`listening on port N`), read on a
/// thread of its own. Errors: the process ended first, or it said nothing within 120 s (it is
/// then killed).
async fn listening_port(child: &mut Child) -> Result<u16, PoolError> {
    let stdout = child.stdout.take().expect("stdout is piped");
    let (port_tx, port_rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut port_tx = Some(port_tx);
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(port) = line
                .split("listening on port ")
                .nth(1)
                .and_then(|p| p.trim().parse::<u16>().ok())
                && let Some(tx) = port_tx.take()
            {
                let _ = tx.send(port);
            }
        }
    });
    match tokio::time::timeout(LISTEN_BOUND, port_rx).await {
        Ok(Ok(port)) => Ok(port),
        Ok(Err(_)) => {
            let status = child.wait().ok();
            Err(PoolError::Ended {
                status: status.map_or("no exit status".to_owned(), |s| s.to_string()),
            })
        }
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(PoolError::NoListen)
        }
    }
}

/// Linux: the runtime gets SIGKILL when the thread that started it ends, so that no pooled
/// runtime outlives its owner (also when the owner is killed with SIGKILL); and it never
/// starts when the owner is already gone.
fn die_with_parent(command: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: only async-signal-safe calls (prctl, getppid, _exit) between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}
