//! Running one eval test in its own process, watching its deadline, and turning what it left
//! (exit status, evidence file, output) into a [`TestRecord`].
//!
//! Each test process runs `<binary> <test id> --exact --ignored --nocapture --test-threads 1` in
//! the package root, in a process group of its own, with `COPILOT_EVAL_MODE`,
//! `COPILOT_EVAL_EVIDENCE_FILE` and a marker variable (`COPILOT_EVAL_SUITE_PROCESS`) set; its
//! stdout and stderr go to files. The runner kills the whole group (SIGKILL) when the process
//! outlives the deadline its evidence announces plus the cleanup bound, and after every exit it
//! kills whatever is left in the group or still carries the marker (a crashed test's runtime),
//! naming each one in the test's message; a passing test that left any is an `error`
//! (`leftover_processes`, `suite/leftovers.rs`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::list::{EvalTest, TestBinary};
use crate::harness::{
    ENV_CASSETTE_ROOT, ENV_EVIDENCE_FILE, ENV_MODE, ENV_MODEL, ENV_RECORD, ENV_TRIAL, ENV_TRIALS,
    EvidenceStatus, Mode, TestEvidence, TrialAsk,
};
use crate::report::{CapturedOutput, ErrorKind, ExitRecord, Outcome, TestRecord};

/// Environment variable the runner gives each test process (value unique per process); every
/// process that still carries it after the test ended is killed.
pub const ENV_SUITE_PROCESS: &str = "COPILOT_EVAL_SUITE_PROCESS";

/// How long a test process may run before its first evidence is written.
const STARTUP_BOUND: Duration = Duration::from_secs(60);
/// How much of each output stream is kept for a test that did not pass, bytes.
const OUTPUT_TAIL: u64 = 16 * 1024;

/// Settings of the executor.
#[derive(Debug, Clone)]
pub struct ExecOptions {
    /// `COPILOT_EVAL_MODE` for the tests.
    pub mode: Mode,
    /// Time allowed past a test's deadline (for the run's cleanup) before it is killed.
    pub cleanup_bound: Duration,
    /// Folder for the evidence and output files of this suite.
    pub scratch: PathBuf,
    /// `COPILOT_EVAL_CASSETTE_ROOT` for the tests, when set.
    pub cassette_root: Option<PathBuf>,
    /// A prefix unique to this suite, for the marker variable.
    pub suite_id: String,
    /// Run the tests under this runtime executable: `COPILOT_EVAL_RUNTIME_PATH` for the tests
    /// (and `COPILOT_EVAL_RUNTIME_VERSION` removed), when set.
    pub runtime: Option<PathBuf>,
    /// The runner's pool of warm runtimes, when the suite pools them (not `--fresh-runtime`):
    /// each test process gets its control URL (`COPILOT_EVAL_POOL_URL`) and its own id
    /// (`COPILOT_EVAL_POOL_CLIENT`); after the process ended, every runtime it still held is
    /// retired.
    pub pool: Option<Arc<crate::run::pool::control::Control>>,
    /// The command gave `--trials N`: a test process launched without a trial (N = 1) gets
    /// trial 1 of 1 ([`ENV_TRIAL`], [`ENV_TRIALS`]), so that its attribute's `trials` asks for
    /// no more; otherwise such a process is trial 1 of what its attribute asks.
    pub trials_given: bool,
    /// The runner's sandbox mode (`--no-sandbox`, `--sandbox required`): the tests get
    /// `COPILOT_EVAL_SANDBOX`; `None`: each eval's own.
    pub sandbox: Option<crate::eval::SandboxMode>,
}

/// Set when the user interrupts the suite (Ctrl-C); running tests are killed and reported as
/// interrupted.
#[derive(Debug, Default)]
pub struct Interrupt {
    flag: AtomicBool,
}

impl Interrupt {
    /// Mark the suite as interrupted.
    pub fn set(&self) {
        self.flag.store(true, Ordering::SeqCst);
    }
    /// Whether the suite was interrupted.
    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }
}

/// The record of `test` (of `binary`) with `outcome` and nothing else yet: no message,
/// properties, runs or process details, duration 0.
pub(super) fn test_record(test: &EvalTest, binary: &TestBinary, outcome: Outcome) -> TestRecord {
    TestRecord {
        name: test.name.clone(),
        test_id: test.test_id.clone(),
        binary: binary.id.clone(),
        outcome,
        error_kind: None,
        duration_ms: 0,
        message: None,
        properties: Vec::new(),
        runs: Vec::new(),
        workdir: None,
        cassette: None,
        exit: None,
        output: None,
        cost: None,
        source: None,
        skill_eval: None,
        trigger_query: None,
        provenance: None,
        attempt: None,
        stopped_early: None,
        arm: None,
        ablated: Vec::new(),
        expectations: Vec::new(),
        comparisons: Vec::new(),
        triggers: Vec::new(),
        judges: Vec::new(),
        trial: None,
        model: None,
    }
}

/// Run `test` (the `index`-th process of the suite) in its own process and report it, with what
/// its attribute asks of the eval's trials ([`TestEvidence::trial_ask`]); as `trial` of its
/// eval when given (the test process gets [`ENV_TRIAL`] and [`ENV_TRIALS`]); on `model` when
/// given (`--models`: the test process gets [`ENV_MODEL`], and the record is named
/// `<eval>@<model>`). A test of a model matrix (its evidence names its model) is recorded under
/// the name and model its evidence gives. Launched without a trial and without `--trials`
/// ([`ExecOptions::trials_given`]), a test whose ask is N > 1 trials is recorded as trial 1 of
/// N.
///
/// With `ablate` (the eval's ablated side, `--ablate`), the test process gets
/// [`ENV_ABLATE`](crate::harness::ENV_ABLATE) and the record is named
/// [`ablated_name`](crate::report::lift::ablated_name) with its `ablated` kinds.
#[allow(clippy::too_many_arguments)]
pub async fn run_one(
    index: usize,
    trial: Option<crate::report::TrialOf>,
    model: Option<&str>,
    ablate: &[crate::eval::Ablate],
    test: &EvalTest,
    binary: &TestBinary,
    options: &ExecOptions,
    interrupt: Arc<Interrupt>,
) -> (TestRecord, Option<TrialAsk>) {
    let files = ProcessFiles::new(index, options);
    let started = Instant::now();
    let mut record = test_record(test, binary, Outcome::Error);
    record.trial = trial;
    if let Some(model) = model {
        record.name = super::models::cell_name(&test.name, model);
        record.model = Some(model.to_owned());
    }
    if !ablate.is_empty() {
        record.name = crate::report::lift::ablated_name(&record.name, ablate);
        record.ablated = ablate.to_vec();
    }
    let outputs = std::fs::File::create(&files.stdout)
        .and_then(|out| Ok((out, std::fs::File::create(&files.stderr)?)));
    let outputs = match outputs {
        Ok(outputs) => outputs,
        Err(e) => {
            record.error_kind = Some(ErrorKind::Setup);
            record.message = Some(format!("cannot create the output files: {e}"));
            return (record, None);
        }
    };
    super::phases::mark(&format!("test {index} starts"));
    let launch = Launch {
        test,
        binary,
        trial,
        model,
        ablate,
    };
    let child = match launch.command(options, &files, outputs).spawn() {
        Ok(child) => child,
        Err(e) => {
            record.error_kind = Some(ErrorKind::Crashed);
            record.message = Some(format!("cannot start {}: {e}", binary.path.display()));
            return (record, None);
        }
    };
    let ended = watch(child, &files.evidence, options, &interrupt).await;
    super::phases::mark(&format!("test {index} exited"));
    let leftovers = sweep(&ended, &files.marker, options).await;
    super::phases::mark(&format!(
        "test {index} ended (leftovers swept, runtimes released)"
    ));
    record.duration_ms = started.elapsed().as_millis() as u64;
    let exit = ended.exit_record();
    let evidence = TestEvidence::read(&files.evidence);
    let interrupted = ended.killed && interrupt.is_set();
    let verdict = classify(
        &exit,
        evidence.as_ref().ok(),
        options.cleanup_bound,
        interrupted,
    );
    record.outcome = verdict.outcome;
    record.error_kind = verdict.error_kind;
    record.message = verdict.message;
    note_leftovers(&mut record, &leftovers);
    let ask = evidence
        .ok()
        .and_then(|evidence| take_evidence(&mut record, evidence, trial, options));
    if record.outcome != Outcome::Passed {
        record.output = Some(CapturedOutput {
            stdout: tail(&files.stdout),
            stderr: tail(&files.stderr),
        });
    }
    record.exit = Some(exit);
    (record, ask)
}

/// The files of the `index`-th test process of the suite, in its scratch folder, and the value
/// of its marker variable ([`ENV_SUITE_PROCESS`]).
struct ProcessFiles {
    /// `COPILOT_EVAL_EVIDENCE_FILE`.
    evidence: PathBuf,
    /// Its standard output.
    stdout: PathBuf,
    /// Its standard error.
    stderr: PathBuf,
    /// Unique to this process in this suite.
    marker: String,
}

impl ProcessFiles {
    fn new(index: usize, options: &ExecOptions) -> Self {
        Self {
            evidence: options.scratch.join(format!("{index}.evidence.json")),
            stdout: options.scratch.join(format!("{index}.stdout")),
            stderr: options.scratch.join(format!("{index}.stderr")),
            marker: format!("{}-{index}", options.suite_id),
        }
    }
}

/// What a test process is launched as: the test, its binary, and the trial and model of its
/// slot.
struct Launch<'a> {
    test: &'a EvalTest,
    binary: &'a TestBinary,
    trial: Option<crate::report::TrialOf>,
    model: Option<&'a str>,
    /// The kinds of input the process goes without (`--ablate`); empty for the normal side.
    ablate: &'a [crate::eval::Ablate],
}

impl Launch<'_> {
    /// The command of the test process (see the module documentation): its arguments, folder
    /// and environment, its output into `outputs` (stdout, stderr), its own process group.
    fn command(
        &self,
        options: &ExecOptions,
        files: &ProcessFiles,
        outputs: (std::fs::File, std::fs::File),
    ) -> tokio::process::Command {
        let library = super::list::library_path(self.binary);
        let mut command = tokio::process::Command::new(&self.binary.path);
        command
            .arg(&self.test.test_id)
            .args(["--exact", "--ignored", "--nocapture", "--test-threads", "1"])
            .current_dir(&self.binary.cwd)
            .env(library.0, library.1)
            .env(ENV_MODE, options.mode.as_str())
            .env(ENV_EVIDENCE_FILE, &files.evidence)
            .env(ENV_SUITE_PROCESS, &files.marker)
            .env(
                crate::harness::ENV_RUNNER_PID,
                std::process::id().to_string(),
            )
            .env_remove(ENV_RECORD)
            .stdin(Stdio::null())
            .stdout(Stdio::from(outputs.0))
            .stderr(Stdio::from(outputs.1))
            .kill_on_drop(true);
        if self.ablate.is_empty() {
            command.env_remove(crate::harness::ENV_ABLATE);
        } else {
            let kinds: Vec<&str> = self.ablate.iter().map(|kind| kind.as_str()).collect();
            command.env(crate::harness::ENV_ABLATE, kinds.join(","));
        }
        match self.trial {
            Some(trial) => command
                .env(ENV_TRIAL, trial.trial.to_string())
                .env(ENV_TRIALS, trial.trials.to_string()),
            None if options.trials_given => command.env(ENV_TRIAL, "1").env(ENV_TRIALS, "1"),
            None => command.env_remove(ENV_TRIAL).env_remove(ENV_TRIALS),
        };
        match self.model {
            Some(model) => command.env(ENV_MODEL, model),
            None => command.env_remove(ENV_MODEL),
        };
        if let Mode::Record(policy) = options.mode {
            command.env(ENV_RECORD, policy.as_str());
        }
        if let Some(root) = &options.cassette_root {
            command.env(ENV_CASSETTE_ROOT, root);
        }
        match options.sandbox {
            Some(mode) => command.env(crate::run::sandbox::RUNNER_SANDBOX_ENV, mode.as_str()),
            None => command.env_remove(crate::run::sandbox::RUNNER_SANDBOX_ENV),
        };
        match &options.pool {
            Some(pool) => command
                .env(crate::run::pool::remote::ENV_POOL_URL, pool.url())
                .env(crate::run::pool::remote::ENV_POOL_CLIENT, &files.marker),
            None => command
                .env_remove(crate::run::pool::remote::ENV_POOL_URL)
                .env_remove(crate::run::pool::remote::ENV_POOL_CLIENT),
        };
        if let Some(runtime) = &options.runtime {
            command
                .env(crate::runtime::RUNTIME_PATH_ENV, runtime)
                .env_remove(crate::runtime::RUNTIME_VERSION_ENV);
        }
        #[cfg(unix)]
        command.process_group(0);
        command
    }
}

/// How a test process ended.
struct Ended {
    /// Its process id (the leader of its process group).
    pid: Option<u32>,
    /// Its exit status, as waiting for it gave it.
    status: std::io::Result<std::process::ExitStatus>,
    /// The runner killed it (overdue, or the suite was interrupted).
    killed: bool,
}

impl Ended {
    /// The record of how it ended.
    fn exit_record(&self) -> ExitRecord {
        match &self.status {
            Ok(status) => ExitRecord {
                code: status.code(),
                signal: signal_of(status),
                killed_by_runner: self.killed,
            },
            Err(_) => ExitRecord {
                code: None,
                signal: None,
                killed_by_runner: self.killed,
            },
        }
    }
}

/// Wait for `child` to end, killing its process group once it outlives the deadline its
/// evidence (at `evidence`) announces plus the cleanup bound ([`STARTUP_BOUND`] after its start
/// while it has written none), or when the suite is interrupted.
async fn watch(
    mut child: tokio::process::Child,
    evidence: &Path,
    options: &ExecOptions,
    interrupt: &Interrupt,
) -> Ended {
    let pid = child.id();
    let spawned_at = SystemTime::now();
    let mut killed = false;
    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            _ = tokio::time::sleep(Duration::from_millis(200)) => {
                let deadline = match TestEvidence::read(evidence) {
                    Ok(evidence) => UNIX_EPOCH + Duration::from_millis(evidence.deadline_unix_ms),
                    Err(_) => spawned_at + STARTUP_BOUND,
                };
                let overdue = SystemTime::now() > deadline + options.cleanup_bound;
                if (overdue || interrupt.is_set()) && !killed {
                    killed = true;
                    kill_group(pid);
                    let _ = child.start_kill();
                }
            }
        }
    };
    Ended {
        pid,
        status,
        killed,
    }
}

/// Kill what the ended test left behind: its process group and any process that still carries
/// its `marker` (e.g. the runtime of a crashed test), named with their command lines (read
/// before they are killed); then release the warm runtimes it leased. The leftovers, with those
/// of its leases the pool killed.
async fn sweep(
    ended: &Ended,
    marker: &str,
    options: &ExecOptions,
) -> Vec<super::leftovers::Leftover> {
    let mut leftovers =
        super::leftovers::find(ended.pid, &format!("{ENV_SUITE_PROCESS}={marker}")).await;
    kill_group(ended.pid);
    for leftover in &leftovers {
        crate::runtime::kill_process(leftover.pid);
    }
    super::leftovers::wait_gone(&leftovers).await;
    // The warm runtimes the process used go back to the pool only when it ended by itself and
    // left nothing behind; otherwise (it crashed, was killed, or left processes) they are
    // retired, with any it never gave back (its session may still be open).
    if let Some(pool) = &options.pool {
        let clean = !ended.killed
            && leftovers.is_empty()
            && ended.status.as_ref().is_ok_and(|s| s.code().is_some());
        // A pooled runtime's processes carry neither the test's group nor its marker: the
        // pool finds and kills those of the leases the process never gave back.
        leftovers.extend(pool.end_client(marker, clean).await);
    }
    leftovers
}

/// Fill `record` from the test's `evidence`: its runs and what the test recorded, its name and
/// model when the evidence names a model, its cassette (unless live or only scripted), its
/// working directory when kept or when it did not pass. Returns what its attribute asks of
/// trials; with N > 1 trials asked, a test launched without a trial and without `--trials` is
/// trial 1 of N.
fn take_evidence(
    record: &mut TestRecord,
    evidence: TestEvidence,
    trial: Option<crate::report::TrialOf>,
    options: &ExecOptions,
) -> Option<TrialAsk> {
    let ask = evidence.trial_ask;
    if trial.is_none()
        && !options.trials_given
        && let Some(ask) = ask.filter(|ask| ask.trials > 1)
    {
        // The attribute's `trials = N`: this process was trial 1 of N (`ctx.trial()`).
        record.trial = Some(crate::report::TrialOf {
            trial: 1,
            trials: ask.trials,
        });
    }
    // The cassette is named only when the test read or wrote one: not for a test whose every
    // run was scripted (`ctx.offline`), which never touches a cassette.
    let scripted_only =
        !evidence.runs.is_empty() && evidence.runs.iter().all(|r| r.mode == "scripted");
    record.properties = evidence.properties;
    record.runs = evidence.runs;
    record.comparisons = evidence.comparisons;
    record.triggers = evidence.triggers;
    record.judges = evidence.judges;
    record.source = evidence.source;
    record.skill_eval = evidence.skill_eval;
    record.trigger_query = evidence.trigger_query;
    record.expectations = evidence.expectations;
    record.provenance = evidence.provenance;
    if let Some(model) = evidence.model {
        record.name = match record.ablated.is_empty() {
            true => evidence.name,
            false => crate::report::lift::ablated_name(&evidence.name, &record.ablated),
        };
        record.model = Some(model);
    }
    if options.mode != Mode::Live && !scripted_only {
        record.cassette = Some(evidence.cassette);
    }
    if evidence.workdir_kept || record.outcome != Outcome::Passed {
        record.workdir = evidence.workdir;
    }
    ask
}

/// What [`classify`] decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The outcome.
    pub outcome: Outcome,
    /// For `error`: what failed.
    pub error_kind: Option<ErrorKind>,
    /// The failure or error message.
    pub message: Option<String>,
}

impl Verdict {
    fn error(kind: ErrorKind, message: String) -> Self {
        Self {
            outcome: Outcome::Error,
            error_kind: Some(kind),
            message: Some(message),
        }
    }
}

/// Decide a test's outcome from how its process ended and the evidence it left (pure).
///
/// - killed by the runner: `error` (`killed`, or `crashed` with "interrupted" on Ctrl-C);
/// - no evidence: `error` (`missing_evidence`, or `crashed` after a signal);
/// - a signal or an exit status other than 0 and 101: `error` (`crashed`);
/// - a setup error in the evidence: `error` (`setup`);
/// - exit 0 with the evidence `passed`: `passed`, unless a run ended on an infrastructure stop
///   ([`StopClass::Infrastructure`](crate::StopClass::Infrastructure)) the test did not declare
///   with `ctx.expect_stop(..)`: then `error` (`run`), naming each such run (number, eval name),
///   its stop reason and its error text;
/// - exit 101 with the evidence `failed`: `error` (`run`) when a run ended on such an
///   undeclared infrastructure stop, else `failed` with the test's message;
/// - any other combination: `error` (`crashed`).
pub fn classify(
    exit: &ExitRecord,
    evidence: Option<&TestEvidence>,
    cleanup_bound: Duration,
    interrupted: bool,
) -> Verdict {
    let running = evidence
        .and_then(|e| e.running.as_deref())
        .map(|r| format!(" while running {r}"))
        .unwrap_or_default();
    if interrupted {
        return Verdict::error(
            ErrorKind::Crashed,
            format!("interrupted: the suite was stopped{running}"),
        );
    }
    if exit.killed_by_runner {
        return Verdict::error(
            ErrorKind::Killed,
            format!(
                "killed: the test process outlived its deadline plus the cleanup bound ({}s){running}",
                cleanup_bound.as_secs_f64()
            ),
        );
    }
    let how = match (exit.code, exit.signal) {
        (_, Some(signal)) => format!("terminated by signal {signal}{}", signal_name(signal)),
        (Some(code), None) => format!("exited with status {code}"),
        (None, None) => "ended in an unknown way".to_owned(),
    };
    let Some(evidence) = evidence else {
        return if exit.signal.is_some() {
            Verdict::error(
                ErrorKind::Crashed,
                format!("the test process {how} before writing its evidence"),
            )
        } else {
            Verdict::error(
                ErrorKind::MissingEvidence,
                format!("the test process {how} without writing its evidence (did the test run?)"),
            )
        };
    };
    let abnormal = exit.signal.is_some() || !matches!(exit.code, Some(0) | Some(101));
    if abnormal {
        let mut message = format!("the test process {how}{running}");
        if let Some(failure) = &evidence.failure {
            message.push_str(&format!("; the test had failed: {failure}"));
        }
        return Verdict::error(ErrorKind::Crashed, message);
    }
    if let Some(setup) = &evidence.setup_error {
        return Verdict::error(ErrorKind::Setup, setup.clone());
    }
    match (exit.code, evidence.status) {
        (Some(0), EvidenceStatus::Passed) => passed(evidence),
        (Some(101), EvidenceStatus::Failed) => failed(evidence),
        (_, status) => Verdict::error(
            ErrorKind::Crashed,
            format!("the test process {how} but its evidence says {status:?}{running}"),
        ),
    }
}

/// One line per run of `evidence` that `picked` picks, e.g. `run 2 (fix_bug): <text>`, the
/// text from the run by `text`.
fn run_lines(
    evidence: &TestEvidence,
    picked: impl Fn(&crate::report::RunRecord) -> bool,
    text: impl Fn(&crate::report::RunRecord) -> String,
) -> Vec<String> {
    evidence
        .runs
        .iter()
        .enumerate()
        .filter(|(_, r)| picked(r))
        .map(|(i, r)| format!("run {} ({}){}", i + 1, r.eval_name, text(r)))
        .collect()
}

/// The runs of `evidence` that ended on an infrastructure stop the test did not declare, one
/// line each: `run 1 (e) stopped with <reason>: <error>`.
fn undeclared_infrastructure_stops(evidence: &TestEvidence) -> Vec<String> {
    run_lines(
        evidence,
        |r| r.is_unexpected_infrastructure_stop(),
        |r| {
            format!(
                " stopped with {}: {}",
                r.stop_reason,
                r.error.as_deref().unwrap_or("no error text")
            )
        },
    )
}

/// The verdict of a test whose process exited 0 with its evidence `passed`: `passed`, unless
/// a run ended on an undeclared infrastructure stop.
fn passed(evidence: &TestEvidence) -> Verdict {
    let infrastructure = undeclared_infrastructure_stops(evidence);
    if infrastructure.is_empty() {
        return Verdict {
            outcome: Outcome::Passed,
            error_kind: None,
            message: None,
        };
    }
    // The test's checks held, but over a run that did not do what it asked for (a stale
    // cassette, an unaudited request, a failed cleanup, ...).
    Verdict::error(
        ErrorKind::Run,
        format!(
            "the test passed, but {}\n(a run that ends on an infrastructure stop did not do what the test asked for; when that stop is the point of the test, declare it with ctx.expect_stop(..))",
            infrastructure.join("\n")
        ),
    )
}

/// The verdict of a test whose process exited 101 with its evidence `failed`: an `error`
/// (`run`) when a run ended on an undeclared infrastructure stop, an `error` (`judge`) when a
/// judge gave no verdict, else `failed`, its message led by the runs whose script ran out of
/// turns.
fn failed(evidence: &TestEvidence) -> Verdict {
    let failure = evidence
        .failure
        .clone()
        .unwrap_or_else(|| "the test failed".to_owned());
    let infrastructure = undeclared_infrastructure_stops(evidence);
    if !infrastructure.is_empty() {
        return Verdict::error(
            ErrorKind::Run,
            format!(
                "{}\nthe test then failed: {}",
                infrastructure.join("\n"),
                without_run_errors(&failure, evidence)
            ),
        );
    }
    // A judge that gave no verdict, then a failed test: the failure may be the missing
    // verdict (`ctx.judge(..).await.unwrap()`), not the agent's work; never a fail of it.
    let judge_errors: Vec<String> = (evidence.judges.iter().enumerate())
        .filter_map(|(i, j)| j.error.as_ref().map(|e| format!("judge {}: {e}", i + 1)))
        .collect();
    if !judge_errors.is_empty() {
        return Verdict::error(
            ErrorKind::Judge,
            format!(
                "{}
the test then failed: {failure}
(a judge that gave no verdict says nothing about the agent: the test is neither a pass nor a fail; handle the JudgeError in the test to keep its own checks' verdict)",
                judge_errors.join("\n")
            ),
        );
    }
    // A script that ran out of turns is the test's own mistake: it fails the test, and the
    // message says so first (the test's assertion may not mention it).
    let exhausted = run_lines(
        evidence,
        |r| r.stop_reason == crate::StopReason::ScriptExhausted,
        |r| {
            format!(
                ": {}",
                r.error.as_deref().unwrap_or("the script ran out of turns")
            )
        },
    );
    let message = if exhausted.is_empty() {
        failure
    } else {
        format!(
            "{}\nthe test then failed: {}",
            exhausted.join("\n"),
            without_run_errors(&failure, evidence)
        )
    };
    Verdict {
        outcome: Outcome::Failed,
        error_kind: None,
        message: Some(message),
    }
}

/// The test's `failure` with each run error of `evidence` it repeats (as written or as `{:?}`
/// shows it, the usual `assert!(result.success, "{:?}", result.error)`) replaced by a pointer
/// to the run's line above it, so that the message shows each error once.
fn without_run_errors(failure: &str, evidence: &TestEvidence) -> String {
    let mut text = failure.to_owned();
    for error in evidence.runs.iter().filter_map(|r| r.error.as_deref()) {
        if error.trim().is_empty() {
            continue;
        }
        for form in [format!("{error:?}"), error.to_owned()] {
            text = text.replace(&form, "<the run's error, shown above>");
        }
    }
    text
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        6 => " (SIGABRT)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        15 => " (SIGTERM)",
        2 => " (SIGINT)",
        _ => "",
    }
}

#[cfg(unix)]
fn signal_of(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// SIGKILL the process group led by `pid` (the test process was started as its leader).
fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid {
        // SAFETY: kill(2) on a process group id we created; no memory is involved. ESRCH (the
        // group is gone) is the normal case and ignored.
        unsafe {
            libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// What the processes a test left behind (killed already) do to its record: a test that passed
/// becomes an `error` (`leftover_processes`) naming each one; any other keeps its outcome and
/// gets the line `killed processes the test left behind: …` under its message.
fn note_leftovers(record: &mut TestRecord, leftovers: &[super::leftovers::Leftover]) {
    if leftovers.is_empty() {
        return;
    }
    let list = super::leftovers::describe(leftovers);
    if record.outcome == Outcome::Passed {
        // A process that outlives its test is a leak a later test or the machine pays for.
        record.outcome = Outcome::Error;
        record.error_kind = Some(ErrorKind::LeftoverProcesses);
        record.message = Some(format!(
            "the test passed, but processes it started outlived it and were killed: {list} (stop every process the test starts before it returns)"
        ));
    } else {
        let note = format!("killed processes the test left behind: {list}");
        record.message = Some(match record.message.take() {
            Some(m) => format!("{m}\n{note}"),
            None => note,
        });
    }
}

/// The last [`OUTPUT_TAIL`] bytes of a file, lossy UTF-8 (empty when unreadable).
fn tail(path: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > OUTPUT_TAIL {
        let _ = file.seek(SeekFrom::Start(len - OUTPUT_TAIL));
    }
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
pub(crate) mod tests;
