//! The suite runner behind `cargo copilot-eval`: discover the eval tests, run each once in its own
//! process, report, and decide the exit status.
//!
//! Architecture (one module per stage, the binary only parses arguments):
//! - [`list`]: build the test binaries through cargo and list exactly the eval tests (data
//!   before anything runs);
//! - [`executor`]: one process per test, a deadline watchdog, process-group kill, and the pure
//!   outcome decision ([`executor::classify`]);
//! - this module's [`run_suite`]: the pool of warm runtimes, the scheduler (`scheduler.rs`: at
//!   most `jobs` tests at a time, in list order; stop launching after an infrastructure error
//!   unless `no_fail_fast`), then the report and the artifacts;
//! - [`display`]: the human output; [`report`](crate::report): the JSON and JUnit writers.
//!
//! Exit statuses ([`exit_code`]): `0` every selected eval passed; `1` some eval failed (its own
//! checks) and none hit an infrastructure error; `2` the command line is invalid; `3` some eval
//! ended in an infrastructure error or was not run because of one; `4` no eval test matched;
//! `5` the suite could not build, list, or write its artifacts.

pub mod artifacts;
pub mod banner;
pub mod compare;
pub mod decide;
mod describe;
pub mod display;
pub mod drift;
pub mod executor;
pub mod github;
mod leftovers;
pub mod list;
pub mod models;
pub mod partition;
pub mod phases;
pub mod plan;
pub mod profile;
mod scheduler;
mod trials;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::harness::Mode;
use crate::report::{
    Outcome, Redactor, RuntimeInfo, SCHEMA_VERSION, SuiteReport, SuiteTotals, TestRecord, ToolInfo,
};
pub use banner::{live_banner, live_banner_to};
use list::{BuildOptions, TestList};

/// The exit statuses of `cargo copilot-eval` (see the module documentation).
pub mod exit_code {
    /// Every selected eval test passed (or `--list` succeeded).
    pub const SUCCESS: u8 = 0;
    /// At least one eval test failed its own checks; no infrastructure error.
    pub const TEST_FAILURES: u8 = 1;
    /// Invalid command line (clap's usage error status).
    pub const USAGE: u8 = 2;
    /// At least one eval test ended in an infrastructure error (setup, runtime start, transport,
    /// audit, cleanup, replay mismatch, crash, kill) or was not run after one.
    pub const INFRASTRUCTURE: u8 = 3;
    /// No eval test matched the selection and filters.
    pub const NO_TESTS: u8 = 4;
    /// The suite itself failed: the build, the listing, or writing an artifact.
    pub const SUITE_ERROR: u8 = 5;
}

/// Default time allowed past a test's deadline before its process is killed: long enough for
/// the engine's bounded cleanup steps.
pub const DEFAULT_CLEANUP_BOUND: Duration = Duration::from_secs(60);

/// Errors of the suite itself (not of a test).
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// Building the test binaries failed.
    #[error("build failed: {0}")]
    Build(String),
    /// Listing a test binary failed.
    #[error("listing the tests failed: {0}")]
    List(String),
    /// Writing an artifact failed.
    #[error("writing {path} failed: {error}")]
    Artifact {
        /// The artifact's path.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// Appending the job summary to `GITHUB_STEP_SUMMARY` failed
    /// ([`github::report_to_github`]).
    #[error("cannot append the job summary to {} ({}): {error}", path.display(), github::ENV_STEP_SUMMARY)]
    JobSummary {
        /// The summary file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// `--models` is not a list of distinct model ids ([`models::parse_models`]): the message
    /// names `--models`, the entry and the fix.
    #[error("{0}")]
    Models(String),
}

/// Everything `cargo copilot-eval` was asked to do.
#[derive(Debug, Clone)]
pub struct SuiteOptions {
    /// How to build the test binaries (cargo, manifest, packages).
    pub build: BuildOptions,
    /// Substring filters on the test path; empty selects every eval test.
    pub filters: Vec<String>,
    /// Where to write the JSON results, if anywhere.
    pub json: Option<PathBuf>,
    /// Where to write the JUnit XML, if anywhere.
    pub junit: Option<PathBuf>,
    /// Where to write the HTML report, if anywhere.
    pub html: Option<PathBuf>,
    /// Where to write each skill eval's `grading.json` (`--grading DIR`), if anywhere.
    pub grading: Option<PathBuf>,
    /// At most this many tests at a time (>= 1).
    pub jobs: usize,
    /// `live` or `replay`.
    pub mode: Mode,
    /// List the eval tests and stop.
    pub list_only: bool,
    /// Keep launching tests after an infrastructure error.
    pub no_fail_fast: bool,
    /// Time allowed past a test's deadline before it is killed.
    pub cleanup_bound: Duration,
    /// Plain line output even on a terminal.
    pub plain: bool,
    /// Run only this shard of the selected evals (`--partition hash:K/N` or `count:K/N`).
    pub partition: Option<partition::Partition>,
    /// Filters match whole test paths (`--exact`), not substrings.
    pub exact: bool,
    /// Resolve cassette paths against this folder instead of each package root
    /// (`--cassette-root`; the tests get `COPILOT_EVAL_CASSETTE_ROOT`).
    pub cassette_root: Option<PathBuf>,
    /// The pricing table and the cost caps (`--pricing`, `--max-cost`,
    /// `--max-premium-requests`); see [`crate::cost`].
    pub cost: crate::cost::CostOptions,
    /// Run the tests under this runtime executable instead of the one that resolves
    /// ([`crate::runtime::resolve`]): the tests get `COPILOT_EVAL_RUNTIME_PATH`, and the report's
    /// `runtime` names it. `drift` sets it once per compared version.
    pub runtime: Option<PathBuf>,
    /// Start a runtime for every eval (`--fresh-runtime`) instead of running offline evals on
    /// warm pooled runtimes (docs/performance.md, "Warm runtimes").
    pub fresh_runtime: bool,
    /// The runner's sandbox mode (`--no-sandbox`: `Off`, `--sandbox required`: `Required`;
    /// docs/sandbox.md); `None`: each eval's own. The tests get `COPILOT_EVAL_SANDBOX`.
    pub sandbox: Option<crate::eval::SandboxMode>,
    /// Run each eval this many times (`--trials N`, >= 1), each trial its own test process and
    /// attempt with a fresh working directory, over the attribute's `trials`; `Some(1)`: once,
    /// whatever the attribute asks. `None`: once, unless an eval's attribute asks for N > 1
    /// trials (`trials = N`): its first test process is then trial 1 of N, and the suite runs
    /// trials 2 to N after it.
    pub trials: Option<u32>,
    /// How trials are judged (`--min-pass-rate`, `--pass-k`); unused with one trial. Its
    /// `min_pass_rate` is over each eval's `min_pass_rate` attribute key.
    pub trial_rule: crate::report::trials::TrialRule,
    /// Run each eval once per model (`--models a,b`, parsed by [`models::parse_models`]), over
    /// the attribute's `model` and `models`; empty: each eval on its own model.
    pub models: Vec<String>,
    /// Compare the finished suite with this earlier results file (`--baseline`,
    /// [`decide::compare_with_baseline`]).
    pub baseline: Option<PathBuf>,
    /// With `baseline`: exit 1 when an eval regressed significantly (`--fail-on-regression`).
    pub fail_on_regression: bool,
    /// Run only the evals that did not pass in this results file (`--rerun-failed`,
    /// [`decide::Rerun`]), each a new attempt.
    pub rerun_failed: Option<PathBuf>,
    /// Run each eval also without these inputs (`--ablate skills`, repeatable): the ablated
    /// side, same prompt and trials, its records named `<eval> (without skills)`, its outcome a
    /// measurement (the report's `skill_lift`), never the exit status. Empty: no ablated side.
    pub ablate: Vec<crate::eval::Ablate>,
    /// Where to write skill-creator's `benchmark.json` of the skill lift (`--benchmark PATH`),
    /// if anywhere.
    pub benchmark: Option<PathBuf>,
    /// A person's labels to compare the rubric judges with (`--judge-labels FILE`, read and
    /// checked by [`crate::report::judge_labels::JudgeLabels::read`]): the report's
    /// `judge_labels`. `None`: no comparison.
    pub judge_labels: Option<crate::report::judge_labels::JudgeLabels>,
    /// End an eval's trials once its verdict over them can no longer change (`--stop-early`,
    /// [`crate::report::trials::decided`]): the trials left are `not_run` with
    /// `stopped_early`, and never launched.
    pub stop_early: bool,
    /// Run each eval twice in every trial, as arm A and arm B of the same configuration
    /// (`--aa`): the report's `noise_floor` gives the fraction of (eval, trial) pairs whose
    /// verdicts differ. Arm B is a measurement: it never changes the exit status.
    pub aa: bool,
}

impl SuiteOptions {
    /// Defaults: cargo's default packages, no filters, no artifacts, one test at a time, live,
    /// fail-fast, [`DEFAULT_CLEANUP_BOUND`].
    pub fn new() -> Self {
        Self {
            build: BuildOptions::new(None, list::PackageSelection::Default),
            filters: Vec::new(),
            json: None,
            junit: None,
            html: None,
            grading: None,
            jobs: 1,
            mode: Mode::Live,
            list_only: false,
            no_fail_fast: false,
            cleanup_bound: DEFAULT_CLEANUP_BOUND,
            plain: false,
            partition: None,
            exact: false,
            cassette_root: None,
            cost: crate::cost::CostOptions::default(),
            runtime: None,
            fresh_runtime: false,
            sandbox: None,
            trials: None,
            trial_rule: Default::default(),
            models: Vec::new(),
            baseline: None,
            fail_on_regression: false,
            rerun_failed: None,
            ablate: Vec::new(),
            benchmark: None,
            judge_labels: None,
            stop_early: false,
            aa: false,
        }
    }
}

impl Default for SuiteOptions {
    fn default() -> Self {
        Self::new()
    }
}

/// The command's multi-threaded async runtime; `None` (said on stderr) when it cannot start.
fn async_runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            None
        }
    }
}

/// Run the whole command: discover, list or run, write the artifacts, print the summary; return
/// the exit status ([`exit_code`]). Everything for the user goes to stderr, except the `--list`
/// output (stdout).
pub fn run_command(options: &SuiteOptions) -> u8 {
    phases::mark("start");
    if options.sandbox == Some(crate::eval::SandboxMode::Required)
        && let crate::run::sandbox::Kernel::Cannot { why, .. } = crate::run::sandbox::kernel()
    {
        eprintln!(
            "error: --sandbox required, but no session can be sandboxed here: {why} (`cargo copilot-eval doctor` says so too)"
        );
        return exit_code::SUITE_ERROR;
    }
    let Some(runtime) = async_runtime() else {
        return exit_code::SUITE_ERROR;
    };
    // The first warm runtime starts while the tests are built and listed.
    let pool = if options.list_only || options.fresh_runtime {
        None
    } else {
        let _entered = runtime.enter();
        prestarted_pool(options)
    };
    let mut list = match list::discover(&options.build, &options.filters, options.exact) {
        Ok(list) => list,
        Err(e) => {
            eprintln!("error: {e}");
            return exit_code::SUITE_ERROR;
        }
    };
    let (rerun, baseline) = match decide::prepare(options, &mut list) {
        Ok(prepared) => prepared,
        Err(status) => return status,
    };
    let in_other_shards = options.partition.map_or(0, |p| p.apply(&mut list));
    if let Some(partition) = options.partition {
        eprintln!(
            "partition {partition}: {} of {} selected eval tests are in this shard",
            list.tests.len(),
            list.tests.len() + in_other_shards
        );
    }
    if options.list_only {
        for test in &list.tests {
            println!("{}: {}", list.binary(test).id, test.name);
        }
        eprintln!(
            "{} ({} not listed, {} filtered out)",
            display::count(list.tests.len() as u64, "eval test", "eval tests"),
            display::count(list.other_tests as u64, "other test", "other tests"),
            list.filtered_out
        );
        return exit_code::SUCCESS;
    }
    if list.tests.is_empty() && in_other_shards == 0 {
        eprintln!("{}", list::no_match_warning(&list, &options.filters));
    }
    // With `--ablate`, each cell runs a second side.
    let sides = if options.ablate.is_empty() { 1 } else { 2 };
    let selected = models::cells(&list, &options.models).len() * sides;
    if let Some(banner) = live_banner(options, selected) {
        eprintln!("{banner}");
    }
    phases::mark("tests built and listed");
    let mut report = runtime.block_on(run_suite_with(&list, options, pool));
    if let Some(rerun) = &rerun {
        rerun.label(&mut report);
    }
    phases::mark("tests done, pool shut down");
    // `--baseline`: compared before the summary, which leads with each eval's verdict beside
    // the baseline's; the comparison's table prints after the artifacts.
    let redactor = Redactor::from_env();
    let comparison = match (&options.baseline, baseline) {
        (Some(file), Some(baseline)) => {
            let redacted = redactor.redact_report(&report);
            let (comparison, record) = decide::compare_with_baseline(file, baseline, &redacted);
            report.baseline = Some(record);
            Some(comparison)
        }
        _ => None,
    };
    eprint!("{}", display::summary(&report));
    if let Some(line) = crate::harness::recording_summary(&report) {
        eprint!("{line}");
    }
    let mut status = exit_status(&report);
    // An empty shard of a non-empty selection is not an error: the other shards run the tests.
    if list.tests.is_empty() && in_other_shards == 0 {
        status = exit_code::NO_TESTS;
    }
    write_and_decide(options, &report, &redactor, comparison, status)
}

/// After the summary: write the artifacts, report to GitHub, print the comparison with
/// `--baseline`; return the exit status `status` becomes (a write or GitHub failure is a suite
/// error).
fn write_and_decide(
    options: &SuiteOptions,
    report: &SuiteReport,
    redactor: &Redactor,
    comparison: Option<compare::CompareReport>,
    mut status: u8,
) -> u8 {
    let paths = artifacts::ArtifactPaths {
        json: options.json.clone(),
        junit: options.junit.clone(),
        html: options.html.clone(),
        grading: options.grading.clone(),
        benchmark: options.benchmark.clone(),
    };
    if !artifacts::write_artifacts(report, &paths, redactor) {
        status = exit_code::SUITE_ERROR;
    }
    phases::mark("artifacts written");
    if let Err(e) = github::report_to_github(report, redactor) {
        eprintln!("error: {e}");
        status = exit_code::SUITE_ERROR;
    }
    if let Some(comparison) = comparison {
        status = decide::finish_baseline(&comparison, report, options.fail_on_regression, status);
    }
    status
}

/// The exit status a finished suite earns: `3` when any test is `error` or `not_run`, else `1`
/// when any is `failed`, else `0`. With trials, an eval run in trials counts by its verdict
/// over them ([`TrialSummary::verdict`](crate::report::TrialSummary::verdict)), not by each
/// trial: with `--min-pass-rate 60`, 3 passing trials of 5 make it pass.
///
/// The ablated side of `--ablate` (records with `ablated`) and arm B of `--aa` are
/// measurements: they never count.
pub fn exit_status(report: &SuiteReport) -> u8 {
    let measurement =
        |t: &TestRecord| !t.ablated.is_empty() || t.arm == Some(crate::report::aa::Arm::B);
    let ablated = |binary: &str, name: &str| {
        (report.tests.iter()).any(|t| measurement(t) && t.binary == binary && t.name == name)
    };
    if !report.trial_summaries.is_empty() {
        // With trials, each eval's verdict over its trials decides, not each trial.
        let once = (report.tests.iter()).filter(|t| t.trial.is_none() && !measurement(t));
        let summaries = (report.trial_summaries.iter()).filter(|s| !ablated(&s.binary, &s.name));
        let verdicts: Vec<Outcome> = once
            .map(|t| t.outcome)
            .chain(summaries.map(|s| s.verdict))
            .collect();
        return if verdicts
            .iter()
            .any(|o| matches!(o, Outcome::Error | Outcome::NotRun))
        {
            exit_code::INFRASTRUCTURE
        } else if verdicts.contains(&Outcome::Failed) {
            exit_code::TEST_FAILURES
        } else {
            exit_code::SUCCESS
        };
    }
    let t = match report.tests.iter().any(measurement) {
        false => report.totals.clone(),
        true => {
            let normal: Vec<TestRecord> = (report.tests.iter())
                .filter(|t| !measurement(t))
                .cloned()
                .collect();
            SuiteTotals::of(&normal)
        }
    };
    if t.error > 0 || t.not_run > 0 {
        exit_code::INFRASTRUCTURE
    } else if t.failed > 0 {
        exit_code::TEST_FAILURES
    } else {
        exit_code::SUCCESS
    }
}

/// Run every test of `list` once (at most `options.jobs` at a time, in list order; an eval's
/// trials on one model one after another) and build the report. After a test ends in `error`,
/// no further test is launched unless `options.no_fail_fast`; those not launched are
/// `not_run`. A record that is `not_run` or `error` is completed from its test's description
/// (its cell's name and model, its attribute's trials, its owed trigger check). Ctrl-C (SIGINT) or SIGTERM kills the
/// running tests and launches no more; the report is still built and returned. Each finished test is redacted ([`Redactor::from_env`]) and priced
/// ([`crate::cost::CostControl`]); once a cost cap of `options.cost` is reached, no further
/// test is launched either (`not_run`, with the cap as the reason).
pub async fn run_suite(list: &TestList, options: &SuiteOptions) -> SuiteReport {
    run_suite_with(list, options, None).await
}

/// [`run_suite`] with the pool `prestarted` (from [`prestarted_pool`]) when given; without
/// one, the suite makes its own unless `options.fresh_runtime`.
async fn run_suite_with(
    list: &TestList,
    options: &SuiteOptions,
    prestarted: Option<Arc<crate::run::pool::Pool>>,
) -> SuiteReport {
    let started_at = SystemTime::now();
    let pool = pool_for(list, options, prestarted).await;
    let started = Instant::now();
    let provenance = decide::provenance_task(options);
    // The report's runtime (asking its version starts it once): found while the tests run.
    let given = options.runtime.clone();
    let runtime = tokio::task::spawn_blocking(move || match given {
        Some(path) => RuntimeInfo {
            version: crate::runtime::version(&path).ok(),
            path: Some(path.display().to_string()),
            error: None,
        },
        None => runtime_info(),
    });
    if matches!(options.mode, Mode::Live | Mode::Record(_)) {
        // A live run's token may come from `gh` instead of the environment: asking once here
        // puts it on this process's redaction list too (the test processes ask on their own).
        let _ = crate::run::live_token();
    }
    let ran = scheduler::run_all(list, options, pool.clone(), started_at).await;
    let runtime = runtime.await.unwrap_or_else(|e| RuntimeInfo {
        version: None,
        path: None,
        error: Some(format!("finding the runtime failed: {e}")),
    });
    let provenance = provenance.await.ok().map(|mut provenance| {
        provenance.runtime_version = runtime.version.clone();
        provenance
    });
    let pool = pool.map(|control| {
        let pool = control.pool();
        let record = crate::report::PoolRecord {
            runtimes_started: pool.started() as u64,
            runtimes_retired: pool.retired() as u64,
        };
        pool.shutdown();
        record
    });
    let mut report = suite_report(options, ran, runtime, pool, started_at, started);
    report.provenance = provenance;
    report
}

/// The pool of warm runtimes the suite's tests lease from, served on its control endpoint:
/// `prestarted` when given, else one of its own (its runtime unpacked first), unless
/// `options.fresh_runtime`; none when `list` is empty or no runtime resolves.
async fn pool_for(
    list: &TestList,
    options: &SuiteOptions,
    prestarted: Option<Arc<crate::run::pool::Pool>>,
) -> Option<Arc<crate::run::pool::control::Control>> {
    if list.tests.is_empty() {
        return None;
    }
    if let Some(prestarted) = prestarted {
        return serve_pool(prestarted).await;
    }
    let path = match &options.runtime {
        Some(path) => path.clone(),
        None => crate::runtime::resolve().ok()?.path,
    };
    warm_runtime(&path);
    if options.fresh_runtime {
        return None;
    }
    serve_pool(suite_pool(&path, options.jobs, options.sandbox)).await
}

/// The suite's report: the scheduler's records (`ran`) with their totals, trials, model
/// matrix and triggers, and where and how the suite ran.
fn suite_report(
    options: &SuiteOptions,
    ran: scheduler::Ran,
    runtime: RuntimeInfo,
    pool: Option<crate::report::PoolRecord>,
    started_at: SystemTime,
    started: Instant,
) -> SuiteReport {
    let tests = ran.tests;
    SuiteReport {
        provenance: None,
        schema_version: SCHEMA_VERSION.to_owned(),
        tool: ToolInfo {
            name: "copilot-eval".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        },
        runtime,
        mode: crate::report::suite_mode(&tests, options.mode.as_str()),
        requested_mode: Some(options.mode.as_str().to_owned()),
        started_at: crate::report::rfc3339(started_at),
        duration_ms: started.elapsed().as_millis() as u64,
        totals: SuiteTotals::of(&tests),
        trial_summaries: crate::report::trials::summarize_asked(
            &tests,
            &options.trial_rule,
            &ran.asked_rates,
        ),
        model_matrix: crate::report::matrix::of(&tests),
        skill_triggers: crate::report::triggers::of(&tests),
        skill_lift: crate::report::lift::of(&tests),
        discrimination: crate::report::discrimination::of(&tests),
        judge_labels: (options.judge_labels.as_ref())
            .map(|labels| crate::report::judge_labels::agreement(&tests, labels)),
        noise_floor: crate::report::aa::of(&tests),
        baseline: None,
        cost_control: Some(ran.cost.record()),
        partition: options.partition.map(|p| p.record()),
        pool,
        tests,
    }
}

fn label(binary: &str, name: &str) -> String {
    format!("{binary} {name}")
}

/// The name of a slot's record: the test's, or `<eval>@<model>` on a model of `--models`;
/// on the ablated side, `<name> (without skills)`; on arm B of `--aa`, `<name> (arm B)`.
fn slot_name(list: &TestList, slot: &trials::Slot, options: &SuiteOptions) -> String {
    let test = &list.tests[slot.test];
    let name = match slot.model {
        Some(model) => models::cell_name(&test.name, &options.models[model]),
        None => test.name.clone(),
    };
    match (slot.ablated, slot.arm_b) {
        (true, _) => crate::report::lift::ablated_name(&name, &options.ablate),
        (false, true) => crate::report::aa::arm_b_name(&name),
        (false, false) => name,
    }
}

/// The progress label of a slot: the test (on its model of `--models`), and its trial
/// (`[trial 2/5]`) when it has one.
fn slot_label(list: &TestList, slot: &trials::Slot, options: &SuiteOptions) -> String {
    let test = &list.tests[slot.test];
    let label = label(&list.binary(test).id, &slot_name(list, slot, options));
    match slot.trial {
        Some(trial) => format!("{label} {}", trial.label()),
        None => label,
    }
}

fn not_run(
    list: &TestList,
    slot: &trials::Slot,
    options: &SuiteOptions,
    message: String,
) -> TestRecord {
    let test = &list.tests[slot.test];
    TestRecord {
        message: Some(message),
        trial: slot.trial,
        name: slot_name(list, slot, options),
        model: slot.model.map(|m| options.models[m].clone()),
        ablated: match slot.ablated {
            true => options.ablate.clone(),
            false => Vec::new(),
        },
        arm: options.aa.then_some(match slot.arm_b {
            true => crate::report::aa::Arm::B,
            false => crate::report::aa::Arm::A,
        }),
        ..executor::test_record(test, list.binary(test), Outcome::NotRun)
    }
}

/// The default of `-j`: the number of CPUs this process may use
/// (`std::thread::available_parallelism`), at least 1. Each eval's runtime is mostly CPU-bound
/// (its start and its JavaScript), so more at a time than CPUs only queues them.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Sessions a pooled runtime serves before it is retired (a fresh one starts on demand).
pub const POOL_MAX_SESSIONS: usize = 50;

/// The suite's pool of warm runtimes of `path`: each retired after [`POOL_MAX_SESSIONS`]
/// leases, and at most `jobs` (`-j`) idle; confined to
/// [`Policy::pool`](crate::run::sandbox::Policy::pool) where the kernel can confine, unless
/// `sandbox` is `Off` (`--no-sandbox`).
fn suite_pool(
    path: &std::path::Path,
    jobs: usize,
    sandbox: Option<crate::eval::SandboxMode>,
) -> Arc<crate::run::pool::Pool> {
    let confines = matches!(
        crate::run::sandbox::kernel(),
        crate::run::sandbox::Kernel::Confines { .. }
    );
    let policy = (confines && sandbox != Some(crate::eval::SandboxMode::Off))
        .then(|| crate::run::sandbox::Policy::pool(path));
    crate::run::pool::Pool::with_sandbox(path, POOL_MAX_SESSIONS, jobs.max(1), policy)
}

/// The control endpoint of the suite's pool of warm runtimes; `None` (every eval starts its
/// own runtime, as `--fresh-runtime`) when the endpoint cannot be served, said on stderr.
async fn serve_pool(
    pool: Arc<crate::run::pool::Pool>,
) -> Option<Arc<crate::run::pool::control::Control>> {
    match crate::run::pool::control::Control::serve(pool).await {
        Ok(control) => Some(Arc::new(control)),
        Err(e) => {
            eprintln!(
                "warning: cannot serve the pool of warm runtimes ({e}); every eval starts its own runtime"
            );
            None
        }
    }
}

/// The suite's pool of warm runtimes (at most `-j` idle), with its first runtime already
/// starting ([`crate::run::pool::Pool::prestart`]; call inside a tokio runtime); `None` when
/// no runtime resolves (the tests report that themselves) or in record mode (nothing pools).
fn prestarted_pool(options: &SuiteOptions) -> Option<Arc<crate::run::pool::Pool>> {
    if matches!(options.mode, Mode::Record(_)) {
        return None;
    }
    let path = match &options.runtime {
        Some(path) => path.clone(),
        None => crate::runtime::resolve().ok()?.path,
    };
    warm_runtime(&path);
    let pool = suite_pool(&path, options.jobs, options.sandbox);
    pool.prestart(1);
    Some(pool)
}

/// Unpack the runtime into the shared cache before the first test starts, so that no eval's
/// timeout (nor the runner's deadline for its test) pays for it; says so on stderr when it
/// happens. A failure is only printed: each run's own start reports it with its cause. Then
/// remove the in-use markers killed runtimes left in its folder
/// ([`unpack::remove_stale_in_use_markers`](crate::runtime::unpack::remove_stale_in_use_markers)).
fn warm_runtime(path: &std::path::Path) {
    use crate::runtime::unpack;
    let version = unpack::package_version(path);
    if let Some(version) = version.as_deref().filter(|v| !unpack::is_unpacked(v)) {
        eprintln!(
            "unpacking runtime {version} into {} (its first start, once per version) ...",
            unpack::platform_dir().display()
        );
    }
    match unpack::warm(path) {
        Ok(unpack::Warmed::Started { ms, removed }) => {
            for folder in removed {
                eprintln!(
                    "removed {}: left by an interrupted unpack",
                    folder.display()
                );
            }
            eprintln!("unpacked in {:.1} s", ms as f64 / 1000.0);
        }
        Ok(_) => {}
        Err(e) => eprintln!("warning: {e}"),
    }
    if let Some(version) = &version {
        unpack::remove_stale_in_use_markers(version);
    }
}

/// The runtime that resolves now, with its version.
fn runtime_info() -> RuntimeInfo {
    match crate::runtime::resolve() {
        Ok(resolved) => RuntimeInfo {
            version: crate::runtime::version(&resolved.path).ok(),
            path: Some(resolved.path.display().to_string()),
            error: None,
        },
        Err(e) => RuntimeInfo {
            version: None,
            path: None,
            error: Some(e.to_string()),
        },
    }
}

#[cfg(test)]
mod pool_tests {
    /// docs/performance.md: the runner's pooled runtimes retire after 50 sessions, and when
    /// more than `-j` would be idle (the pool's own retirement: tests/tests/pool.rs).
    #[test]
    fn the_suites_pool_retires_after_50_sessions_and_keeps_j_idle() {
        let pool = super::suite_pool(std::path::Path::new("copilot"), 3, None);
        assert_eq!((pool.max_sessions(), pool.max_idle()), (50, 3));
        assert_eq!(
            super::suite_pool(std::path::Path::new("copilot"), 0, None).max_idle(),
            1
        );
    }
}
