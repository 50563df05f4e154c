//! The session's sandbox (docs/sandbox.md): a Landlock domain the runtime process starts in, so
//! that it and everything it starts (the agent's shell, stdio MCP servers, subagents' tools)
//! can read only the system, the runtime, the package and the eval's folders, write only the
//! run's folders, and connect only to the TCP ports the session needs.
//!
//! How the domain reaches the runtime: a Landlock domain belongs to the thread that calls
//! `landlock_restrict_self` and is inherited by every process that thread starts, and cannot be
//! lifted. The SDK spawns a private runtime from `Client::start`, synchronously on the thread
//! that polls it. So `start_confined` restricts a thread of its own, polls `Client::start` on
//! it ([`tokio::runtime::Handle::block_on`]: the client's tasks still go to the run's runtime
//! workers, which stay unconfined) and ends the thread once the runtime has started. A pooled
//! runtime is started by the pool with a `std::process::Command`, whose `pre_exec` hook
//! restricts the child before it executes the runtime (`Policy::pre_exec`). Neither needs a
//! launcher binary, so a plain `cargo test` confines as the runner does.

use std::path::{Path, PathBuf};

use github_copilot_sdk::{Client, ClientOptions};

use crate::eval::{CopilotEval, SandboxMode};
use crate::evidence::sandbox::{SandboxRecord, SandboxState};

/// The environment variable a test sets to stand in for the kernel's answer: the Landlock ABI
/// version to assume (`0`: no Landlock). Hidden; never set by an eval.
#[doc(hidden)]
pub const KERNEL_DOUBLE_ENV: &str = "COPILOT_EVAL_TEST_LANDLOCK_ABI";

/// The environment variable the runner (`--no-sandbox`: `off`, `--sandbox required`:
/// `required`) sets for its test processes; a run's mode is its eval's under it
/// ([`SandboxMode::under_runner`]).
pub const RUNNER_SANDBOX_ENV: &str = "COPILOT_EVAL_SANDBOX";

/// The lowest Landlock ABI that confines TCP connections (Linux 6.7).
const NET_ABI: u32 = 4;

/// The system folders every session may read (those missing on the machine are left out).
const SYSTEM_READ: [&str; 14] = [
    "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/proc",
    "/sys", "/run", "/var/lib", "/nix",
];

/// The system folders every session may write: devices (`/dev/null`, terminals).
const SYSTEM_WRITE: [&str; 1] = ["/dev"];

/// What the kernel offers for a sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kernel {
    /// Landlock with this ABI version, which confines files and TCP connections.
    Confines {
        /// The ABI version (`landlock_create_ruleset` with `LANDLOCK_CREATE_RULESET_VERSION`).
        abi: u32,
    },
    /// No sandbox is possible; the text says why.
    Cannot {
        /// Why, e.g. "the kernel has no Landlock (it is disabled or older than Linux 5.13)".
        why: String,
        /// The ABI version when there is one (too old to confine TCP connections).
        abi: Option<u32>,
    },
}

/// What this machine's kernel offers (or the test double's answer, [`KERNEL_DOUBLE_ENV`]).
pub fn kernel() -> Kernel {
    let abi = match std::env::var(KERNEL_DOUBLE_ENV) {
        Ok(value) => value.trim().parse::<u32>().unwrap_or(0),
        Err(_) => landlock_abi(),
    };
    kernel_for(abi)
}

/// What an ABI version `abi` offers (`0`: none).
pub(crate) fn kernel_for(abi: u32) -> Kernel {
    if !cfg!(target_os = "linux") {
        return Kernel::Cannot {
            why: format!("Landlock is Linux only (this is {})", std::env::consts::OS),
            abi: None,
        };
    }
    match abi {
        0 => Kernel::Cannot {
            why: "the kernel has no Landlock (it is disabled or older than Linux 5.13)".to_owned(),
            abi: None,
        },
        abi if abi < NET_ABI => Kernel::Cannot {
            why: format!(
                "the kernel's Landlock ABI {abi} does not confine TCP connections (ABI {NET_ABI}, Linux 6.7, does)"
            ),
            abi: Some(abi),
        },
        abi => Kernel::Confines { abi },
    }
}

/// The kernel's Landlock ABI version, `0` when it has none.
fn landlock_abi() -> u32 {
    #[cfg(target_os = "linux")]
    {
        const LANDLOCK_CREATE_RULESET_VERSION: libc::c_ulong = 1;
        // SAFETY: the version query takes no attribute and returns a number or -1.
        let abi = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<libc::c_void>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        u32::try_from(abi).unwrap_or(0)
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// The mode the runner asked its test processes for ([`RUNNER_SANDBOX_ENV`]), if any.
pub fn runner_mode() -> Option<SandboxMode> {
    std::env::var(RUNNER_SANDBOX_ENV)
        .ok()
        .and_then(|value| SandboxMode::parse(&value).ok())
}

/// What a Landlock domain allows: folders to read, folders to write (and read), TCP ports to
/// connect to. Everything else on the file system and every other TCP connection is refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Policy {
    /// Folders and files readable (and executable).
    pub read: Vec<PathBuf>,
    /// Folders and files writable (and readable).
    pub write: Vec<PathBuf>,
    /// TCP ports the domain may connect to.
    pub connect: Vec<u16>,
    /// The runtime's install as [`Policy::base`] derived it from the runtime path (also in
    /// `read`), named by the hint of a runtime that did not start ([`Policy::start_failure`]).
    #[serde(default)]
    pub install: PathBuf,
}

impl Policy {
    /// The system's folders (`SYSTEM_READ`, `SYSTEM_WRITE`) that exist, the runtime's
    /// install (the folder holding `node_modules`, else the executable's folder; for a symbolic
    /// link, that of its target too) and the shared runtime cache (written by the runtime).
    pub fn base(runtime_path: &Path) -> Policy {
        let mut policy = Policy::default();
        policy.read.extend(SYSTEM_READ.iter().map(PathBuf::from));
        policy.write.extend(SYSTEM_WRITE.iter().map(PathBuf::from));
        policy.install = runtime_install(runtime_path);
        policy.read.push(policy.install.clone());
        if let Ok(target) = runtime_path.canonicalize() {
            let linked = runtime_install(&target);
            if linked != policy.install {
                policy.read.push(linked);
            }
        }
        policy.write.push(crate::runtime::runtime_cache_dir());
        policy
    }

    /// The error of a runtime that did not start under this policy: `error`, then what the
    /// sandbox let it read and how to allow more (a wrapper script as the runtime path runs a
    /// runtime installed elsewhere, which the domain does not let it read: the start fails with
    /// no more than a broken pipe).
    pub fn start_failure(&self, error: impl std::fmt::Display) -> String {
        format!(
            "starting the runtime failed under the sandbox: {error}\n(the sandbox lets the runtime read its install, {}, derived from the runtime path; when that path is a wrapper that runs a runtime installed elsewhere, let the session read that folder with `sandbox_allow_read`, or run without the sandbox: `sandbox = false`, `--no-sandbox`; docs/sandbox.md)",
            self.install.display()
        )
    }

    /// Add what `eval` declares and holds: the package's workspace (read: the nearest folder
    /// above the package root holding a `Cargo.lock`, where its fixtures, sibling packages and
    /// built programs are; the package root when there is none), its skill folders, agent and
    /// instructions files, stdio MCP servers' programs and folders (read), its
    /// `sandbox_allow_read` / `sandbox_allow_write` / `sandbox_allow_connect`, and the ports of
    /// its MCP HTTP servers.
    pub fn with_eval(mut self, eval: &CopilotEval) -> Policy {
        let settings = &eval.sandbox;
        self.read.push(workspace_of(&settings.package));
        self.read.extend(eval.skill_directories.iter().cloned());
        self.read.extend(eval.input_files.iter().cloned());
        let servers = eval.mcp_servers.values().chain(
            eval.custom_agents
                .iter()
                .filter_map(|agent| agent.mcp_servers.as_ref())
                .flat_map(|servers| servers.values()),
        );
        for server in servers {
            match server {
                github_copilot_sdk::McpServerConfig::Stdio(stdio) => {
                    let command = Path::new(&stdio.command);
                    if command.is_absolute()
                        && let Some(dir) = command.parent()
                    {
                        self.read.push(dir.to_path_buf());
                    }
                    if let Some(dir) = &stdio.working_directory {
                        self.read.push(PathBuf::from(dir));
                    }
                }
                github_copilot_sdk::McpServerConfig::Http(http)
                | github_copilot_sdk::McpServerConfig::Sse(http) => {
                    if let Some(port) = url_port(&http.url) {
                        self.connect.push(port);
                    }
                }
                // A kind the pinned SDK adds later grants nothing until it is named here.
                _ => {}
            }
        }
        self.read.extend(settings.allow_read.iter().cloned());
        self.write.extend(settings.allow_write.iter().cloned());
        self.connect.extend(settings.allow_connect.iter().copied());
        self
    }

    /// The policy of a pool's runtimes, which serve many evals: [`Policy::base`], the
    /// workspace of the current directory readable (the nearest folder above it holding a
    /// `Cargo.lock`, else the current directory: every package's skills, agents, fixtures),
    /// and the temporary folder writable, where the leases' working directories and homes
    /// live (the pool folder). A run leases from the pool only when this covers its own
    /// policy ([`Policy::covers`]).
    pub fn pool(runtime_path: &Path) -> Policy {
        let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let mut policy = Policy::base(runtime_path);
        policy.read.push(workspace_of(&here));
        policy.write.push(std::env::temp_dir());
        policy
    }

    /// Whether a domain of this policy allows everything `needs` allows: each folder `needs`
    /// reads lies under one this reads or writes, each it writes under one this writes, each
    /// port is one of this policy's.
    pub fn covers(&self, needs: &Policy) -> bool {
        let canonical =
            |path: &PathBuf| std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let reads: Vec<PathBuf> = self.read.iter().chain(&self.write).map(canonical).collect();
        let writes: Vec<PathBuf> = self.write.iter().map(canonical).collect();
        let under = |roots: &[PathBuf], path: &PathBuf| {
            let path = canonical(path);
            roots.iter().any(|root| path.starts_with(root))
        };
        needs.read.iter().all(|p| under(&reads, p))
            && needs.write.iter().all(|p| under(&writes, p))
            && needs.connect.iter().all(|port| self.connect.contains(port))
    }

    /// This policy without `port` (a pooled runtime does not reach the run's model server: its
    /// requests go through the pool's router).
    pub fn without_port(mut self, port: u16) -> Policy {
        self.connect.retain(|p| *p != port);
        self
    }

    /// Add the run's folders (its working directory, its private home) as writable.
    pub fn with_writable(mut self, folders: impl IntoIterator<Item = PathBuf>) -> Policy {
        self.write.extend(folders);
        self
    }

    /// Add `port` (the model server's, or the live service's) as one the session connects to.
    pub fn with_port(mut self, port: u16) -> Policy {
        self.connect.push(port);
        self
    }

    /// The policy as the run record writes it: its paths that exist, sorted, without repeats.
    pub(crate) fn record(&self, mode: SandboxMode, abi: Option<u32>) -> SandboxRecord {
        let texts = |paths: &[PathBuf]| {
            let mut texts: Vec<String> = paths
                .iter()
                .filter(|p| p.exists())
                .map(|p| p.display().to_string())
                .collect();
            texts.sort();
            texts.dedup();
            texts
        };
        let mut connect = self.connect.clone();
        connect.sort_unstable();
        connect.dedup();
        SandboxRecord {
            state: SandboxState::Confined,
            mode,
            why: None,
            abi,
            read: texts(&self.read),
            write: texts(&self.write),
            connect,
            refusals: Vec::new(),
        }
    }

    /// Restrict the calling thread (and every process it starts from now on) to this policy.
    ///
    /// # Errors
    /// The kernel refused the ruleset or a rule; the text says which. A path that does not
    /// exist is left out, not an error.
    pub(crate) fn restrict_current_thread(&self) -> Result<(), String> {
        self.ruleset()?
            .restrict_self()
            .map(|_| ())
            .map_err(|e| format!("the sandbox could not be applied: {e}"))
    }

    /// The created ruleset, ready for `restrict_self`: files handled at the highest ABI this
    /// crate knows (best effort below it), TCP connect handled.
    fn ruleset(&self) -> Result<landlock::RulesetCreated, String> {
        use landlock::{
            ABI, Access, AccessFs, AccessNet, NetPort, PathBeneath, PathFd, Ruleset, RulesetAttr,
            RulesetCreatedAttr,
        };
        let abi = ABI::V5;
        let fail = |what: &str, e: landlock::RulesetError| format!("the sandbox {what}: {e}");
        let mut ruleset = Ruleset::default()
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.handle_access(AccessNet::ConnectTcp))
            .map_err(|e| fail("ruleset could not be made", e))?
            .create()
            .map_err(|e| fail("ruleset could not be created", e))?;
        let rules = self
            .read
            .iter()
            .map(|p| (p, AccessFs::from_read(abi)))
            .chain(self.write.iter().map(|p| (p, AccessFs::from_all(abi))));
        for (path, access) in rules {
            // A path that does not exist (a system folder this machine lacks) grants nothing.
            let Ok(fd) = PathFd::new(path) else { continue };
            // A file takes only the rights a file can have.
            let access = if path.is_dir() {
                access
            } else {
                access & AccessFs::from_file(abi)
            };
            ruleset = ruleset
                .add_rule(PathBeneath::new(fd, access))
                .map_err(|e| fail(&format!("rule for {} was refused", path.display()), e))?;
        }
        for port in &self.connect {
            ruleset = ruleset
                .add_rule(NetPort::new(*port, AccessNet::ConnectTcp))
                .map_err(|e| fail(&format!("rule for port {port} was refused"), e))?;
        }
        Ok(ruleset)
    }

    /// Make `command` restrict its child to this policy before the child executes (the pooled
    /// runtime's start). The ruleset is created here, before the fork; between fork and exec
    /// only `prctl` and `landlock_restrict_self` run.
    ///
    /// # Errors
    /// The ruleset could not be created.
    pub(crate) fn pre_exec(&self, command: &mut std::process::Command) -> Result<(), String> {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let ruleset = self.ruleset()?;
        let fd: Option<std::os::fd::OwnedFd> = ruleset.into();
        let fd = fd.ok_or_else(|| "the sandbox's ruleset has no file descriptor".to_owned())?;
        // SAFETY: only async-signal-safe system calls between fork and exec; the descriptor is
        // kept alive by the closure, which the command owns until it has spawned.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Ok(())
    }
}

/// The folder of the runtime's install: the one holding its `node_modules` (npm installs the
/// executable at `<install>/node_modules/@github/copilot-linux-x64/copilot`), else the
/// executable's own folder.
fn runtime_install(runtime_path: &Path) -> PathBuf {
    runtime_path
        .ancestors()
        .find(|dir| dir.file_name().is_some_and(|name| name == "node_modules"))
        .and_then(Path::parent)
        .or_else(|| runtime_path.parent())
        .unwrap_or(runtime_path)
        .to_path_buf()
}

/// The workspace of `dir`: the nearest folder at or above it holding a `Cargo.lock`, else
/// `dir` itself.
fn workspace_of(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|folder| folder.join("Cargo.lock").is_file())
        .unwrap_or(dir)
        .to_path_buf()
}

/// The port of `url` (its scheme's default when it names none).
pub(crate) fn url_port(url: &str) -> Option<u16> {
    reqwest::Url::parse(url).ok()?.port_or_known_default()
}

/// The sandbox decision of a run whose eval asked for `mode`: confine with the policy, leave
/// it unconfined with the record saying why, or refuse to start.
pub(crate) enum Decision {
    /// Confine the runtime with this policy.
    Confine(Policy),
    /// Run unconfined; the record says whether it was asked off or could not be had.
    Unconfined,
}

/// Decide a run's sandbox: `mode` (the eval's under the runner's), what `kernel` offers, and the
/// `policy` to confine with.
///
/// # Errors
/// `mode` is `required` and the kernel cannot confine: the text says why (the run fails before
/// its session starts).
pub(crate) fn decide(
    mode: SandboxMode,
    kernel: &Kernel,
    policy: Policy,
) -> Result<(Decision, SandboxRecord), String> {
    let unconfined = |state, why: Option<String>, abi| SandboxRecord {
        state,
        mode,
        why,
        abi,
        read: Vec::new(),
        write: Vec::new(),
        connect: Vec::new(),
        refusals: Vec::new(),
    };
    match (mode, kernel) {
        (SandboxMode::Off, _) => Ok((
            Decision::Unconfined,
            unconfined(SandboxState::Off, None, None),
        )),
        (SandboxMode::Required, Kernel::Cannot { why, .. }) => Err(format!(
            "the sandbox is required (sandbox = \"required\" or --sandbox required) but cannot be had: {why}; run on a Linux kernel with Landlock ABI {NET_ABI} or later, or drop the requirement"
        )),
        (SandboxMode::On, Kernel::Cannot { why, abi }) => {
            let record = unconfined(SandboxState::Unsandboxed, Some(why.clone()), *abi);
            Ok((Decision::Unconfined, record))
        }
        (_, Kernel::Confines { abi }) => {
            let record = policy.record(mode, Some(*abi));
            Ok((Decision::Confine(policy), record))
        }
    }
}

/// The warning a result carries when its sandbox was asked for but could not be had.
pub(crate) fn unsandboxed_warning(record: &SandboxRecord) -> Option<String> {
    (record.state == SandboxState::Unsandboxed).then(|| {
        format!(
            "unsandboxed: {}",
            record.why.as_deref().unwrap_or("unknown")
        )
    })
}

/// Start the SDK client with its runtime confined to `policy`: `Client::start` is polled on a
/// thread of its own that is restricted first ([module docs](self)).
///
/// # Errors
/// The sandbox could not be applied, or the runtime did not start; the text says which.
pub(crate) async fn start_confined(
    options: ClientOptions,
    policy: Policy,
) -> Result<Client, String> {
    let handle = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (cancel, cancelled) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("copilot-eval-sandbox".to_owned())
        .spawn(move || {
            let outcome = policy.restrict_current_thread().and_then(|()| {
                handle.block_on(async {
                    tokio::select! {
                        started = Client::start(options) => started
                            .map(Some)
                            .map_err(|e| policy.start_failure(e)),
                        // The run stopped waiting (a timeout): the start is dropped here, on
                        // this thread, which stops the runtime it spawned, as an unconfined
                        // start dropped by the run would.
                        _ = cancelled => Ok(None),
                    }
                })
            });
            match outcome {
                Ok(Some(client)) => {
                    let _ = tx.send(Ok(client));
                }
                Ok(None) => {}
                Err(e) => {
                    let _ = tx.send(Err(e));
                }
            }
        })
        .map_err(|e| format!("the sandbox's starting thread could not be made: {e}"))?;
    // Dropped with this future (the run stopped waiting): cancel the start and wait for the
    // thread, so the runtime it spawned is stopped before the run's cleanup looks for leftovers.
    let mut guard = StartGuard {
        cancel: Some(cancel),
        thread: Some(thread),
    };
    let answer = rx.await;
    guard.cancel = None;
    drop(guard);
    answer.map_err(|_| "the sandbox's starting thread ended without an answer".to_owned())?
}

/// Cancels a confined start that is still running and waits for its thread (see
/// [`start_confined`]'s body): on drop, the cancel is sent, then the thread joined.
struct StartGuard {
    cancel: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for StartGuard {
    fn drop(&mut self) {
        if let Some(cancel) = self.cancel.take() {
            let _ = cancel.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_confines_from_the_abi_that_confines_tcp() {
        assert!(matches!(kernel_for(0), Kernel::Cannot { abi: None, .. }));
        let Kernel::Cannot { why, abi } = kernel_for(3) else {
            panic!("ABI 3 cannot confine TCP")
        };
        assert_eq!(abi, Some(3));
        assert!(why.contains("does not confine TCP"), "{why}");
        assert_eq!(kernel_for(4), Kernel::Confines { abi: 4 });
        assert_eq!(kernel_for(7), Kernel::Confines { abi: 7 });
    }

    #[test]
    fn required_without_landlock_is_an_error_and_on_is_a_warning() {
        let none = kernel_for(0);
        let error = decide(SandboxMode::Required, &none, Policy::default())
            .err()
            .expect("required without Landlock is an error");
        assert!(error.contains("required"), "{error}");
        let (decision, record) = decide(SandboxMode::On, &none, Policy::default()).unwrap();
        assert!(matches!(decision, Decision::Unconfined));
        assert_eq!(record.state, SandboxState::Unsandboxed);
        assert!(
            unsandboxed_warning(&record)
                .unwrap()
                .starts_with("unsandboxed: the kernel has no Landlock")
        );
        let (_, off) = decide(SandboxMode::Off, &none, Policy::default()).unwrap();
        assert_eq!(off.state, SandboxState::Off);
        assert_eq!(unsandboxed_warning(&off), None);
        let (decision, confined) = decide(
            SandboxMode::Required,
            &kernel_for(7),
            Policy::default().with_port(8080),
        )
        .unwrap();
        assert!(matches!(decision, Decision::Confine(_)));
        assert_eq!(confined.state, SandboxState::Confined);
        assert_eq!(confined.connect, [8080]);
    }

    #[test]
    fn a_pool_serves_a_run_whose_folders_and_ports_its_domain_covers() {
        let temp = tempfile::tempdir().unwrap();
        // The workspace, read by the pool, lives outside the folder it writes.
        let outside = tempfile::tempdir().unwrap();
        let ws = outside.path().join("ws");
        let pool = Policy {
            read: vec![PathBuf::from("/usr"), ws.clone()],
            write: vec![temp.path().to_path_buf()],
            connect: vec![8080],
            ..Policy::default()
        };
        let inside = temp.path().join("work");
        let run = Policy {
            read: vec![PathBuf::from("/usr/bin"), ws.join("pkg"), inside.clone()],
            write: vec![inside.clone()],
            connect: vec![8080],
            ..Policy::default()
        };
        assert!(pool.covers(&run));
        // A folder read outside, a folder written that the pool only reads, a port.
        let mut reads_home = run.clone();
        reads_home.read.push(PathBuf::from("/root/.ssh"));
        assert!(!pool.covers(&reads_home));
        let mut writes_workspace = run.clone();
        writes_workspace.write.push(ws.join("pkg"));
        assert!(!pool.covers(&writes_workspace));
        let port = run.clone().with_port(5432);
        assert!(!pool.covers(&port));
        assert!(pool.covers(&port.without_port(5432)));
        // A sibling whose name starts alike is not inside.
        let mut sibling = run;
        sibling.read.push(outside.path().join("ws-other"));
        assert!(!pool.covers(&sibling));
    }

    /// A runtime path that is a symbolic link (e.g. `~/.local/bin/copilot`) lets the session
    /// read the link's folder and its target's install.
    #[test]
    fn a_linked_runtime_path_lets_the_session_read_its_targets_install() {
        let root = tempfile::tempdir().unwrap();
        let install = root.path().join("runtime");
        let program = install.join("node_modules/@github/copilot-linux-x64/copilot");
        std::fs::create_dir_all(program.parent().unwrap()).unwrap();
        std::fs::write(&program, "").unwrap();
        let bin = root.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::os::unix::fs::symlink(&program, bin.join("copilot")).unwrap();
        let policy = Policy::base(&bin.join("copilot"));
        assert_eq!(policy.install, bin);
        let install = install.canonicalize().unwrap();
        assert!(policy.read.contains(&install), "{:?}", policy.read);
        let message = policy.start_failure("Broken pipe");
        assert!(
            message.contains(&format!("its install, {},", bin.display()))
                && message.contains("`sandbox_allow_read`"),
            "{message}"
        );
    }

    #[test]
    fn the_runtime_install_is_the_folder_holding_node_modules() {
        assert_eq!(
            runtime_install(Path::new(
                "/c/runtime/1.0/node_modules/@github/copilot-linux-x64/copilot"
            )),
            Path::new("/c/runtime/1.0")
        );
        assert_eq!(
            runtime_install(Path::new("/opt/copilot/copilot")),
            Path::new("/opt/copilot")
        );
    }

    #[test]
    fn a_confined_thread_cannot_read_outside_its_policy_and_its_children_neither() {
        if !matches!(kernel(), Kernel::Confines { .. }) {
            return;
        }
        let allowed = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        let policy = Policy {
            read: SYSTEM_READ.iter().map(PathBuf::from).collect(),
            write: vec![allowed.path().to_path_buf(), PathBuf::from("/dev")],
            connect: Vec::new(),
            ..Policy::default()
        };
        let secret = outside.path().join("secret");
        let written = allowed.path().join("w");
        let (read, child, write) = std::thread::spawn(move || {
            policy.restrict_current_thread().unwrap();
            let read = std::fs::read_to_string(&secret);
            let child = std::process::Command::new("cat")
                .arg(&secret)
                .output()
                .unwrap();
            (read, child, std::fs::write(&written, "ok"))
        })
        .join()
        .unwrap();
        assert_eq!(
            read.unwrap_err().kind(),
            std::io::ErrorKind::PermissionDenied
        );
        assert!(!child.status.success());
        assert!(String::from_utf8_lossy(&child.stderr).contains("Permission denied"));
        write.unwrap();
        // This thread stays unconfined.
        assert_eq!(
            std::fs::read_to_string(outside.path().join("secret")).unwrap(),
            "s"
        );
    }
}
