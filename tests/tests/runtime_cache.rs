//! The runtime's first-start unpack (about 235 MB into the shared cache) is done before any
//! eval's clock starts, and the folders an interrupted unpack leaves behind are removed or
//! reported: each test uses a cold cache of its own (`COPILOT_EVAL_CACHE_DIR`, the pinned
//! install linked into it) with a planted leftover of a dead process and one of a live process.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use copilot_eval_core::runtime::{self, PINNED_RUNTIME_VERSION, npm_platform};
use copilot_eval_e2e::runtime_for;
use serde_json::Value;

mod support;

use support::{command_path, workspace_root};

/// A cold cache: the pinned runtime's npm install linked in (so it resolves as installed), an
/// empty runtime cache, and two leftovers in `pkg/<platform>/`: one named after a process that
/// is gone (`dead`), one after a live process (`live`, kept by everyone).
struct ColdCache {
    dir: tempfile::TempDir,
    dead: PathBuf,
    live: PathBuf,
    live_process: LiveProcess,
}

/// A process that stays alive while the test runs (its pid names the live leftover).
struct LiveProcess(Child);

impl Drop for LiveProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

impl ColdCache {
    fn new(pinned: &Path) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let install = runtime::install_dir(PINNED_RUNTIME_VERSION);
        assert!(pinned.starts_with(&install), "{}", pinned.display());
        std::fs::create_dir_all(dir.path().join("runtime")).unwrap();
        std::os::unix::fs::symlink(
            &install,
            dir.path().join("runtime").join(PINNED_RUNTIME_VERSION),
        )
        .unwrap();
        let platform = dir.path().join("runtime-cache/pkg").join(npm_platform());
        let live_process = LiveProcess(Command::new("sleep").arg("600").spawn().unwrap());
        let dead = platform.join(format!(
            ".extracting-{PINNED_RUNTIME_VERSION}-{}-1764561234567-1",
            dead_pid()
        ));
        let live = platform.join(format!(
            ".extracting-{PINNED_RUNTIME_VERSION}-{}-1764561234567-1",
            live_process.0.id()
        ));
        for folder in [&dead, &live] {
            std::fs::create_dir_all(folder.join("prebuilds")).unwrap();
            std::fs::write(folder.join("app.js"), vec![b'x'; 2_000_000]).unwrap();
        }
        // The runtime, when it unpacks, removes every leftover older than 5 minutes whatever its
        // process (measured in 1.0.102's loader): date the live one in the future so that only
        // our own rule decides about it, however long the build before the run takes.
        let status = Command::new("touch")
            .args(["-d", "+2 hours"])
            .arg(&live)
            .status()
            .unwrap();
        assert!(status.success());
        ColdCache {
            dir,
            dead,
            live,
            live_process,
        }
    }

    fn unpacked_marker(&self) -> PathBuf {
        self.dir
            .path()
            .join("runtime-cache/pkg")
            .join(npm_platform())
            .join(PINNED_RUNTIME_VERSION)
            .join(runtime::unpack::COMPLETE_MARKER)
    }

    /// `cargo copilot-eval ARGS` with this cache; returns the status, stdout and stderr.
    fn copilot_eval(&self, args: &[&str], scratch: &Path) -> (i32, String, String) {
        let output = Command::new(command_path())
            .arg("copilot-eval")
            .args(args)
            .current_dir(workspace_root())
            .env(runtime::CACHE_DIR_ENV, self.dir.path())
            .env("TMPDIR", scratch)
            .env_remove(runtime::RUNTIME_VERSION_ENV)
            .env_remove(runtime::RUNTIME_PATH_ENV)
            .env_remove(runtime::CLI_PATH_ENV)
            .env_remove("COPILOT_EVAL_MODE")
            .output()
            .expect("cargo-copilot-eval runs");
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }
}

#[test]
fn the_runner_unpacks_before_the_first_eval_and_removes_a_dead_unpack() {
    let Some(pinned) =
        runtime_for("the_runner_unpacks_before_the_first_eval_and_removes_a_dead_unpack")
    else {
        return;
    };
    let cache = ColdCache::new(&pinned.path);
    let scratch = tempfile::tempdir().unwrap();
    let json = scratch.path().join("results.json");
    let (status, _, stderr) = cache.copilot_eval(
        &[
            "-p",
            "quickstart",
            "--replay",
            "--plain",
            "--json",
            json.to_str().unwrap(),
        ],
        scratch.path(),
    );
    assert_eq!(status, 0, "{stderr}");
    // Said once, before the first test's line.
    let unpacking = stderr
        .find(&format!("unpacking runtime {PINNED_RUNTIME_VERSION} into "))
        .unwrap_or_else(|| panic!("no unpack line:\n{stderr}"));
    assert_eq!(stderr.matches("unpacking runtime").count(), 1, "{stderr}");
    let first_test = stderr.find("PASS").unwrap_or(stderr.len());
    assert!(unpacking < first_test, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "removed {}: left by an interrupted unpack",
            cache.dead.display()
        )),
        "{stderr}"
    );
    assert!(!cache.dead.exists(), "the dead process's unpack is removed");
    assert!(
        cache.live.join("app.js").is_file(),
        "an unpack of a running process is kept"
    );
    assert!(cache.unpacked_marker().is_file(), "{stderr}");
    // The unpack happened in the runner: no run waited for it (nor counted it).
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let runs: Vec<&Value> = report["tests"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|test| test["runs"].as_array().unwrap())
        .collect();
    assert!(!runs.is_empty(), "{report}");
    for run in runs {
        assert!(run["timings"].get("runtime_unpack_ms").is_none(), "{run}");
    }

    // The next suite removes the in-use markers a killed runtime left in the version folder
    // before it launches tests, and keeps those of a running process.
    let version_dir = cache.unpacked_marker().parent().unwrap().to_path_buf();
    let dead = dead_pid();
    let live = cache.live_process.0.id();
    let markers =
        |pid: u32| ["lock", "hold"].map(|kind| version_dir.join(format!("inuse.{pid}.{kind}")));
    for marker in markers(dead).iter().chain(&markers(live)) {
        std::fs::write(marker, b"").unwrap();
    }
    let (status, _, stderr) = cache.copilot_eval(
        &[
            "-p",
            "quickstart",
            "--replay",
            "--plain",
            "--exact",
            "creates_a_greeting_file",
        ],
        scratch.path(),
    );
    assert_eq!(status, 0, "{stderr}");
    for marker in markers(dead) {
        assert!(!marker.exists(), "{} is removed", marker.display());
    }
    for marker in markers(live) {
        assert!(marker.exists(), "{} is kept", marker.display());
    }
}

/// The pinned runtime's in-use markers: a started runtime writes `inuse.<pid>.lock` and
/// `inuse.<pid>.hold` into its version folder of the shared cache; SIGKILL leaves them, and
/// `remove_stale_in_use_markers` removes them while it keeps a running runtime's; SIGTERM makes
/// the runtime remove its own.
#[test]
fn a_killed_runtimes_in_use_markers_are_removed_and_a_running_ones_kept() {
    let Some(pinned) =
        runtime_for("a_killed_runtimes_in_use_markers_are_removed_and_a_running_ones_kept")
    else {
        return;
    };
    runtime::unpack::warm(&pinned.path).unwrap();
    let version_dir = runtime::unpack::platform_dir().join(PINNED_RUNTIME_VERSION);
    let markers =
        |pid: u32| ["lock", "hold"].map(|kind| version_dir.join(format!("inuse.{pid}.{kind}")));
    let home = tempfile::tempdir().unwrap();
    let start = || {
        let cache = runtime::runtime_cache_dir();
        let child = Command::new(&pinned.path)
            .args([
                "--server",
                "--port",
                "0",
                "--log-level",
                "none",
                "--no-auto-update",
            ])
            .env("XDG_CACHE_HOME", &cache)
            .env("COPILOT_CACHE_HOME", &cache)
            .env("COPILOT_HOME", home.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let runtime = LiveProcess(child);
        // Written at its start: waited for, an event per check, with an ample bound.
        let bound = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !markers(runtime.0.id()).iter().all(|m| m.exists())
            && std::time::Instant::now() < bound
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(
            markers(runtime.0.id()).iter().all(|m| m.exists()),
            "runtime {} wrote no in-use markers in {}",
            runtime.0.id(),
            version_dir.display()
        );
        runtime
    };
    let mut killed = start();
    let running = start();
    let killed_pid = killed.0.id();
    killed.0.kill().unwrap();
    killed.0.wait().unwrap();
    for marker in markers(killed_pid) {
        assert!(marker.exists(), "SIGKILL leaves {}", marker.display());
    }
    assert!(runtime::unpack::remove_stale_in_use_markers(PINNED_RUNTIME_VERSION) >= 2);
    for marker in markers(killed_pid) {
        assert!(!marker.exists(), "{} is removed", marker.display());
    }
    for marker in markers(running.0.id()) {
        assert!(marker.exists(), "{} is kept", marker.display());
    }
    // SIGTERM: the runtime removes its own markers as it exits.
    let mut running = running;
    let pid = running.0.id();
    let status = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -TERM {pid}");
    running.0.wait().unwrap();
    for marker in markers(pid) {
        assert!(!marker.exists(), "SIGTERM removes {}", marker.display());
    }
}

#[test]
fn doctor_reports_an_interrupted_unpack_and_the_cold_cache() {
    let Some(pinned) = runtime_for("doctor_reports_an_interrupted_unpack_and_the_cold_cache")
    else {
        return;
    };
    let cache = ColdCache::new(&pinned.path);
    let scratch = tempfile::tempdir().unwrap();
    let (_, stdout, stderr) = cache.copilot_eval(&["doctor", "--json"], scratch.path());
    let report: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    let checks = report["checks"].as_array().unwrap();
    let unpack: Vec<&Value> = checks
        .iter()
        .filter(|check| check["name"] == "runtime unpack")
        .collect();
    let line = |path: &Path| {
        unpack
            .iter()
            .find(|check| {
                check["detail"]
                    .as_str()
                    .unwrap()
                    .starts_with(&path.display().to_string())
            })
            .unwrap_or_else(|| panic!("no line for {}: {stdout}", path.display()))
    };
    let dead = line(&cache.dead);
    assert_eq!(dead["status"], "warn", "{stdout}");
    assert!(
        dead["detail"]
            .as_str()
            .unwrap()
            .ends_with("(2 MB) was left by an interrupted unpack"),
        "{stdout}"
    );
    assert!(dead["fix"].as_str().unwrap().contains("rm -rf"), "{stdout}");
    assert_eq!(line(&cache.live)["status"], "ok", "{stdout}");
    assert!(
        unpack.iter().any(|check| check["detail"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{PINNED_RUNTIME_VERSION} not unpacked yet"))),
        "{stdout}"
    );
    // doctor reports, it does not remove.
    assert!(cache.dead.join("app.js").is_file());
}

/// The eval's timeout in [`a_run_unpacks_before_its_clock_starts`]: ample for a runtime start,
/// a session and one scripted turn on a loaded machine.
const EVAL_TIMEOUT_S: f64 = 60.0;

/// How much longer than the unpack itself the slowed first start takes in
/// [`a_run_unpacks_before_its_clock_starts`]: more than [`EVAL_TIMEOUT_S`], so the unpack
/// outlasts the eval's timeout on any machine, however fast.
const UNPACK_DELAY_S: u64 = 65;

/// A runtime whose first start (the unpack) takes [`UNPACK_DELAY_S`] longer: in `folder`, a
/// wrapper `copilot` that, while the version is not unpacked in `cache` yet, sleeps before a
/// `--version` start (the run's warm-up) and otherwise runs the pinned runtime itself (`exec`,
/// same process), beside a copy of the pinned install's `package.json` (so the run sees the
/// pinned version and warms it up). Returns the wrapper's path.
fn slow_first_start(pinned: &Path, cache: &ColdCache, folder: &Path) -> PathBuf {
    std::fs::create_dir_all(folder).unwrap();
    std::fs::copy(
        pinned.parent().unwrap().join("package.json"),
        folder.join("package.json"),
    )
    .unwrap();
    let wrapper = folder.join("copilot");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh
if [ \"$1\" = --version ] && [ ! -e '{}' ]; then sleep {UNPACK_DELAY_S}; fi
exec '{}' \"$@\"\n",
            cache.unpacked_marker().display(),
            pinned.display()
        ),
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&wrapper).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&wrapper, permissions).unwrap();
    wrapper
}

/// The eval itself, run in a child process with the cold cache (the cache folder comes from the
/// environment, which this process shares with its other tests): the unpack happens in the
/// run's preparation, before the eval's clock starts, and is reported as
/// `timings.runtime_unpack_ms`. The runtime's first start is slowed ([`slow_first_start`]) so
/// that the unpack takes longer than the eval's timeout: the run completes only because the
/// clock starts after it.
#[test]
#[ignore = "run by a_run_unpacks_before_its_clock_starts in a child process"]
fn child_run_with_a_cold_cache() {
    let runtime = PathBuf::from(std::env::var_os("COLD_CACHE_RUNTIME").expect("set by the parent"));
    // The wrapper runs the pinned runtime from its own install, which the wrapper's path does
    // not name: the sandbox is told to let the session read it.
    let pinned_install =
        PathBuf::from(std::env::var_os("COLD_CACHE_PINNED_INSTALL").expect("set by the parent"));
    let body = async {
        let script = copilot_eval_core::model_server::Script::new([])
            .turn(copilot_eval_core::model_server::ScriptedTurn::text("warm"));
        let server = copilot_eval_core::model_server::ModelServer::start(
            copilot_eval_core::model_server::ServerConfig::new(std::sync::Arc::new(script))
                .model(copilot_eval_e2e::MODEL),
        )
        .await
        .unwrap();
        let work = tempfile::tempdir().unwrap();
        let eval = copilot_eval_core::CopilotEval::builder()
            .model(copilot_eval_e2e::MODEL)
            .working_directory(work.path())
            .timeout_s(EVAL_TIMEOUT_S)
            .sandbox_allow_read(&pinned_install)
            .build()
            .unwrap();
        let result = copilot_eval_core::run_with(
            &eval,
            "Say warm.",
            &copilot_eval_core::RunOptions::offline(server.base_url()).runtime_path(&runtime),
        )
        .await;
        copilot_eval_e2e::assert_no_runtime_left(&result);
        result
    };
    let result = tokio::runtime::Runtime::new().unwrap().block_on(body);
    assert_eq!(
        result.stop_reason,
        copilot_eval_core::StopReason::Completed,
        "{:?}",
        result.error
    );
    let unpack = result
        .timings
        .runtime_unpack_ms
        .expect("the run unpacked the runtime first");
    // The unpack alone outlasted the timeout, yet the run completed.
    assert!(
        unpack > (EVAL_TIMEOUT_S * 1000.0) as u64,
        "unpack {unpack} ms"
    );
    println!("unpack_ms={unpack} duration_ms={}", result.duration_ms);
}

/// A run on a cold cache whose unpack takes longer than the eval's timeout completes: the clock
/// starts after the unpack. The unpack itself takes about 1.5 s on a 2-core machine, too short
/// for a timeout below it to hold a runtime start and a session, so the first start is slowed
/// by [`UNPACK_DELAY_S`] (more than [`EVAL_TIMEOUT_S`]); no speed of the machine can make the
/// unpack shorter than the timeout or the timeout too short for the run.
#[test]
fn a_run_unpacks_before_its_clock_starts() {
    let Some(pinned) = runtime_for("a_run_unpacks_before_its_clock_starts") else {
        return;
    };
    let cache = ColdCache::new(&pinned.path);
    let slow = slow_first_start(
        &pinned.path,
        &cache,
        &cache.dir.path().join("slow-first-start"),
    );
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_run_with_a_cold_cache",
            "--nocapture",
        ])
        .env(runtime::CACHE_DIR_ENV, cache.dir.path())
        .env("COLD_CACHE_RUNTIME", &slow)
        .env(
            "COLD_CACHE_PINNED_INSTALL",
            (pinned.path.ancestors())
                .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
                .and_then(Path::parent)
                .unwrap_or_else(|| pinned.path.parent().unwrap()),
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    assert!(cache.unpacked_marker().is_file());
    assert!(
        !cache.dead.exists(),
        "the run's warm-up removes a dead unpack"
    );
    assert!(cache.live.is_dir());
    // The child printed what the run reported.
    let unpack_ms: u64 = stdout
        .split_whitespace()
        .find_map(|word| word.strip_prefix("unpack_ms="))
        .unwrap_or_else(|| panic!("{stdout}"))
        .parse()
        .unwrap();
    assert!(unpack_ms > UNPACK_DELAY_S * 1000, "{stdout}");
}
