//! Running the real `cargo copilot-eval` command from end-to-end tests (shared by `runner.rs`,
//! `sharding.rs`, `cost.rs` and `secrets.rs`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use copilot_eval_core::report::SuiteReport;
use serde_json::Value;

/// The fixture crate of the runner tests.
pub const FIXTURE: &str = "copilot-eval-fixture";

/// The workspace's root folder.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// `$CARGO`, else `cargo`.
pub fn cargo() -> PathBuf {
    std::env::var_os("CARGO")
        .map(PathBuf::from)
        .unwrap_or_else(|| "cargo".into())
}

/// The `cargo-copilot-eval` executable, built once per test process.
pub fn command_path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let output = Command::new(cargo())
            .args([
                "build",
                "-p",
                "cargo-copilot-eval",
                "--bin",
                "cargo-copilot-eval",
                "--message-format",
                "json",
            ])
            .current_dir(workspace_root())
            .output()
            .expect("cargo runs");
        assert!(
            output.status.success(),
            "building cargo-copilot-eval failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|m| m["executable"].as_str().map(PathBuf::from))
            .next_back()
            .expect("cargo reports the executable")
    })
}

/// One finished suite run of the command, with the text of both artifacts.
pub struct SuiteRun {
    /// Exit status.
    pub status: i32,
    /// The command's stdout.
    pub stdout: String,
    /// The command's stderr.
    pub stderr: String,
    /// The JSON results, as written.
    pub json: String,
    /// The JUnit XML, as written.
    pub junit_xml: String,
    /// The JSON results, parsed.
    pub report: SuiteReport,
    /// The JUnit XML, parsed.
    pub junit: quick_junit::Report,
    /// Holds the artifacts and the TMPDIR of the run (kept working directories land there).
    pub scratch: tempfile::TempDir,
}

impl SuiteRun {
    /// Each test's name and outcome, in report order.
    pub fn outcomes(&self) -> Vec<(&str, copilot_eval_core::report::Outcome)> {
        self.report
            .tests
            .iter()
            .map(|t| (t.name.as_str(), t.outcome))
            .collect()
    }

    /// The test record called `name`.
    pub fn test(&self, name: &str) -> &copilot_eval_core::report::TestRecord {
        self.report
            .tests
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no test {name} in {:#?}", self.report.tests))
    }

    /// The run records of the test called `name` as the JSON file holds them (what a reader
    /// of the file sees, such as each turn's `prompt` number and `prompt_options`, which the
    /// parsed record derives from the result when it is written).
    pub fn written_runs(&self, name: &str) -> Vec<Value> {
        let json: Value = serde_json::from_str(&self.json).expect("the JSON results parse");
        let test = (json["tests"].as_array().expect("tests").iter())
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no test {name} in the JSON"));
        test["runs"].as_array().expect("runs").clone()
    }

    /// The JUnit test case called `name`.
    pub fn junit_case(&self, name: &str) -> &quick_junit::TestCase {
        self.junit
            .test_suites
            .iter()
            .flat_map(|s| &s.test_cases)
            .find(|c| c.name.as_str() == name)
            .unwrap_or_else(|| panic!("no JUnit test case {name}"))
    }

    /// The value of JUnit property `property` of test case `name`.
    pub fn junit_property(&self, name: &str, property: &str) -> String {
        self.junit_case(name)
            .properties
            .iter()
            .find(|p| p.name.as_str() == property)
            .map(|p| p.value.as_str().to_owned())
            .unwrap_or_else(|| panic!("{name} has no property {property}"))
    }

    /// The JUnit status of test case `name`: `success`, `failure`, `error` or `skipped`.
    pub fn junit_kind(&self, name: &str) -> &'static str {
        match &self.junit_case(name).status {
            quick_junit::TestCaseStatus::Success { .. } => "success",
            quick_junit::TestCaseStatus::NonSuccess {
                kind: quick_junit::NonSuccessKind::Failure,
                ..
            } => "failure",
            quick_junit::TestCaseStatus::NonSuccess {
                kind: quick_junit::NonSuccessKind::Error,
                ..
            } => "error",
            quick_junit::TestCaseStatus::Skipped { .. } => "skipped",
        }
    }

    /// The message of test case `name`'s failure, error or skip (empty when it has none).
    pub fn junit_message(&self, name: &str) -> String {
        match &self.junit_case(name).status {
            quick_junit::TestCaseStatus::NonSuccess { message, .. }
            | quick_junit::TestCaseStatus::Skipped { message, .. } => message
                .as_ref()
                .map(|m| m.as_str().to_owned())
                .unwrap_or_default(),
            _ => String::new(),
        }
    }
}

/// Where `value` (a results JSON document) breaks the committed schema
/// (`docs/schema/results.schema.json`): one line per problem, empty when it is valid.
pub fn schema_problems(value: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(workspace_root().join("docs/schema/results.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the published schema compiles");
    validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Run `cargo copilot-eval --replay --plain --json .. --junit .. ARGS` in `cwd` with `env`,
/// artifacts (in nested folders that do not exist yet) and TMPDIR in a fresh scratch folder;
/// check the JSON against the committed schema and parse both artifacts back.
pub fn copilot_eval(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> SuiteRun {
    suite_run(cwd, &["--replay"], args, env)
}

/// [`copilot_eval`] in live mode (no `--replay`), with no token in the environment and
/// `COPILOT_EVAL_LIVE_BASE_URL` pointing at a closed loopback port: any live model request
/// fails, so only tests that script their model can pass.
pub fn copilot_eval_live_unreachable(cwd: &Path, args: &[&str]) -> SuiteRun {
    let env = [("COPILOT_EVAL_LIVE_BASE_URL", "http://127.0.0.1:9")];
    suite_run(cwd, &[], args, &env)
}

/// The work of [`copilot_eval`]: `mode` is `["--replay"]` or empty (live). In live mode the
/// tokens of the environment are removed.
fn suite_run(cwd: &Path, mode: &[&str], args: &[&str], env: &[(&str, &str)]) -> SuiteRun {
    let scratch = tempfile::tempdir().unwrap();
    let json = scratch.path().join("results/nested/native.json");
    let junit = scratch.path().join("results/junit.xml");
    let tmp = scratch.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut command = Command::new(command_path());
    if mode.is_empty() {
        for token in ["GITHUB_TOKEN", "GH_TOKEN", "COPILOT_GITHUB_TOKEN"] {
            command.env_remove(token);
        }
    }
    let output = command
        .arg("copilot-eval")
        .args(mode)
        .arg("--plain")
        .args(["--cleanup-bound-s", "2"])
        .arg("--json")
        .arg(&json)
        .arg("--junit")
        .arg(&junit)
        .args(args)
        .current_dir(cwd)
        .env("TMPDIR", &tmp)
        .env_remove("COPILOT_EVAL_MODE")
        .envs(env.iter().copied())
        .output()
        .expect("cargo-copilot-eval runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let text = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("no JSON results ({e}); stderr:\n{stderr}"));
    let value: Value = serde_json::from_str(&text).unwrap();
    let problems = schema_problems(&value);
    assert!(
        problems.is_empty(),
        "results do not match the schema: {problems:#?}"
    );
    let report: SuiteReport = serde_json::from_value(value).unwrap();
    let junit_xml = std::fs::read_to_string(&junit).expect("JUnit written");
    let parsed = quick_junit::Report::deserialize_from_str(&junit_xml)
        .unwrap_or_else(|e| panic!("JUnit does not parse back: {e}\n{junit_xml}"));
    SuiteRun {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr,
        json: text,
        junit_xml,
        report,
        junit: parsed,
        scratch,
    }
}

/// [`copilot_eval`] on the fixture crate from the workspace root.
pub fn fixture(args: &[&str], env: &[(&str, &str)]) -> SuiteRun {
    let args = [&["-p", FIXTURE][..], args].concat();
    copilot_eval(&workspace_root(), &args, env)
}

/// The evidence side file of the suite's first test (`0.evidence.json` in a
/// `copilot-eval-suite-*` scratch folder under `tmp`, the runner's `TMPDIR`), if written yet.
pub fn first_evidence_file(tmp: &Path) -> Option<PathBuf> {
    std::fs::read_dir(tmp)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|d| {
            d.file_name()
                .to_string_lossy()
                .starts_with("copilot-eval-suite-")
        })
        .map(|d| d.path().join("0.evidence.json"))
        .find(|p| p.is_file())
}

/// The processes of the fixture's `hangs_in_a_tool_handler` while its tool handler holds the
/// session: the test process, its runtime, the stdio MCP server the runtime started and the
/// child process the tool handler started.
#[derive(Debug, Clone, Copy)]
pub struct HeldProcesses {
    /// The test process (the evidence's `pid`).
    pub test: u32,
    /// The runtime: the test process's child whose command line names `copilot`.
    pub runtime: u32,
    /// The MCP server (the pid it logged when it started).
    pub mcp_server: u32,
    /// The tool handler's child process (`sleep 600`).
    pub tool_child: u32,
}

impl HeldProcesses {
    /// Each process with what it is, for messages.
    pub fn named(&self) -> [(&'static str, u32); 4] {
        [
            ("test process", self.test),
            ("runtime", self.runtime),
            ("MCP server", self.mcp_server),
            ("tool child", self.tool_child),
        ]
    }
}

/// The parent of process `pid` (Linux `/proc`), if it is still there.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.split(' ').nth(1)?.parse().ok()
}

/// The command line of process `pid`, its arguments joined by spaces (Linux `/proc`).
pub fn command_line(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " "))
        .unwrap_or_default()
}

/// Wait (an event, at most `bound`) until the suite's first test, the fixture's
/// `hangs_in_a_tool_handler`, has recorded `held_processes` from inside its tool handler, then
/// name its processes (read from its evidence and `/proc`).
pub fn held_processes(tmp: &Path, bound: std::time::Duration) -> HeldProcesses {
    wait_for_first_evidence(tmp, "held_processes", bound);
    let path = first_evidence_file(tmp).expect("the evidence file");
    let evidence = copilot_eval_core::harness::TestEvidence::read(&path).unwrap();
    let held = &evidence
        .properties
        .iter()
        .find(|p| p.name == "held_processes")
        .unwrap_or_else(|| panic!("no held_processes in {:?}", evidence.properties))
        .value;
    let pid = |name: &str| {
        held[name]
            .as_u64()
            .unwrap_or_else(|| panic!("held_processes has no {name}: {held}")) as u32
    };
    let (tool_child, mcp_server) = (pid("tool_child"), pid("mcp_server"));
    let runtime = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .find(|&p| {
            p != tool_child
                && parent_of(p) == Some(evidence.pid)
                && command_line(p).contains("copilot")
        })
        .unwrap_or_else(|| panic!("no runtime process under the test process {}", evidence.pid));
    HeldProcesses {
        test: evidence.pid,
        runtime,
        mcp_server,
        tool_child,
    }
}

/// Wait until the evidence side file of the suite's first test (`0.evidence.json` in a
/// `copilot-eval-suite-*` scratch folder under `tmp`, the runner's `TMPDIR`) mentions `needle`
/// (an event, not a delay), at most `bound`; panics naming `needle` past it.
pub fn wait_for_first_evidence(tmp: &Path, needle: &str, bound: std::time::Duration) {
    let until = std::time::Instant::now() + bound;
    loop {
        let found = std::fs::read_dir(tmp)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|d| {
                d.file_name()
                    .to_string_lossy()
                    .starts_with("copilot-eval-suite-")
            })
            .any(|d| {
                std::fs::read_to_string(d.path().join("0.evidence.json"))
                    .is_ok_and(|t| t.contains(needle))
            });
        if found {
            return;
        }
        assert!(
            std::time::Instant::now() < until,
            "the first test's evidence never mentioned {needle} within {bound:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Start `cargo copilot-eval --replay --plain -p <fixture> ARGS` in the background, with both
/// artifacts (`results.json`, `junit.xml`) and TMPDIR (`tmp/`) in `scratch`, stdin and stdout
/// null and the runner's stderr as `stderr` (for tests that signal or kill the runner).
pub fn spawn_fixture_runner(scratch: &Path, args: &[&str], stderr: Stdio) -> Child {
    let tmp = scratch.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    Command::new(command_path())
        .args(["copilot-eval", "--replay", "--plain", "-p", FIXTURE])
        .arg("--json")
        .arg(scratch.join("results.json"))
        .arg("--junit")
        .arg(scratch.join("junit.xml"))
        .args(args)
        .current_dir(workspace_root())
        .env("TMPDIR", &tmp)
        .env_remove("COPILOT_EVAL_MODE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("cargo-copilot-eval starts")
}
