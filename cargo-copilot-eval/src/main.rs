//! `cargo copilot-eval`: the command-line face of copilot-eval. Thin: it parses arguments and
//! calls `copilot-eval-core` (the suite runner is `copilot_eval_core::suite`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

mod cassette;
mod compare;
mod cost;
mod doctor;
mod drift;
mod init;
mod lint;
mod merge;
mod packages;
mod plan;
mod profile;
mod record;
use copilot_eval_core::runtime;
use copilot_eval_core::suite::{self, SuiteOptions, exit_code};

/// Cargo passes its subcommand name as the first argument; accept both
/// `cargo copilot-eval ...` and `cargo-copilot-eval ...`.
#[derive(Parser)]
#[command(name = "cargo", bin_name = "cargo")]
enum Cargo {
    /// Test GitHub Copilot skills, agents and instructions with real runtime sessions.
    CopilotEval(Cli),
}

#[derive(clap::Args)]
#[command(
    version,
    about = "Test GitHub Copilot skills, custom agents, MCP servers and instructions with real Copilot runtime sessions.",
    long_about = "Build the test targets, find the #[copilot_eval] tests (never the crate's other tests), run \
each once in its own process, and write JSON, JUnit and HTML artifacts.\n\n\
Exit status: 0 every eval passed; 1 an eval failed its checks; 2 invalid command line; \
3 an eval hit an infrastructure error (setup, runtime, transport, audit, cleanup, replay \
mismatch, crash, kill) or was not run after one; 4 no eval test matched; 5 the build, the \
listing or an artifact write failed.",
    args_conflicts_with_subcommands = true,
    args_override_self = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// Run only eval tests whose path contains one of these strings.
    #[arg(value_name = "FILTER")]
    filters: Vec<String>,
    /// Filters match whole test paths (e.g. `evals::greets`), not substrings, as libtest's
    /// `--exact`.
    #[arg(long)]
    exact: bool,
    /// Write the JSON results here (their JSON Schema: `cargo copilot-eval schema`).
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Write JUnit XML here (one testsuite per test binary, one testcase per eval test).
    #[arg(long, value_name = "PATH")]
    junit: Option<PathBuf>,
    /// Write the HTML report here: one self-contained page (summary, outcome filter, each eval's
    /// timeline, a duration and token chart), from the same data as --json.
    #[arg(long, value_name = "PATH")]
    html: Option<PathBuf>,
    /// Write a skill-creator grading.json for each eval that checked expectations
    /// (`ctx.expect`, skill evals from evals/evals.json) under this folder: DIR/EVAL/grading.json.
    #[arg(long, value_name = "DIR")]
    grading: Option<PathBuf>,
    /// Run at most N eval tests at a time [default: the number of CPUs available to this process].
    #[arg(short = 'j', long, value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Run every eval offline against its cassette (a missing cassette is an error, never a live call).
    #[arg(long)]
    replay: bool,
    /// List the eval tests and exit.
    #[arg(long)]
    list: bool,
    #[command(flatten)]
    packages: packages::PackageArgs,
    /// Keep launching evals after an infrastructure error (by default the rest are not run).
    #[arg(long)]
    no_fail_fast: bool,
    /// Seconds a test may run past its deadline (its run's timeout_s) for cleanup before it is killed.
    #[arg(long, value_name = "SECONDS", default_value_t = suite::DEFAULT_CLEANUP_BOUND.as_secs_f64())]
    cleanup_bound_s: f64,
    /// One line per finished test even on a terminal (no progress bar).
    #[arg(long)]
    plain: bool,
    /// Start a Copilot runtime for every eval instead of running offline evals on warm pooled
    /// runtimes (one eval at a time each; see docs/performance.md).
    #[arg(long)]
    fresh_runtime: bool,
    /// Run no session sandboxed (docs/sandbox.md): every eval's runtime runs unconfined, and
    /// each result says so (`sandbox.state = off`).
    #[arg(long, conflicts_with = "sandbox")]
    no_sandbox: bool,
    /// `required`: every eval's session must run sandboxed (Landlock); where the kernel cannot
    /// confine, the suite fails before any session starts. `on` (the default): sandboxed where
    /// the kernel can, else a warning `unsandboxed: <why>` on each result.
    #[arg(long, value_name = "MODE", value_parser = ["on", "required"])]
    sandbox: Option<String>,
    /// Run under this installed runtime version instead of the pinned one (install it first with
    /// `runtime install --version X`); sets COPILOT_EVAL_RUNTIME_VERSION for the test processes.
    #[arg(long, value_name = "X")]
    runtime_version: Option<String>,
    /// Run each eval N times, each trial its own test process and attempt (none is a retry);
    /// the report gives every trial and, per eval, its pass rate, 95% interval, pass@k,
    /// pass^k and a flaky mark. An infrastructure error in a trial stops that eval's further
    /// trials. With --record each trial records its own cassette (TEST/trial-K.yaml); with
    /// --replay each trial replays its own when the eval has trial cassettes. Overrides the
    /// attribute's `trials = N` (--trials 1 runs each eval once) [default: 1, or the
    /// attribute's `trials`].
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    trials: Option<u32>,
    /// With trials (--trials, or the attribute's `trials`): an eval passes when at least
    /// PERCENT of its trials that reached a verdict passed (and none ended in an error);
    /// overrides the attribute's `min_pass_rate`; without either every trial must pass.
    #[arg(long, value_name = "PERCENT")]
    min_pass_rate: Option<f64>,
    /// With trials (--trials, or the attribute's `trials`): the k of pass@k and pass^k,
    /// comma-separated [default: 1 and the trials run].
    #[arg(long, value_name = "K,...", value_delimiter = ',',
          value_parser = clap::value_parser!(u32).range(1..))]
    pass_k: Vec<u32>,
    /// Run each eval once per model (a model matrix), comma-separated, over the attribute's
    /// `model` and `models`: each is its own eval, `name@model`, with its own cassette; the
    /// report sets the models side by side. The test processes get COPILOT_EVAL_MODEL.
    #[arg(long, value_name = "MODEL,...")]
    models: Option<String>,
    /// Skill lift: run each selected eval also without these inputs (skills, agents,
    /// instructions, mcp; repeatable or comma-separated), same prompt and trials, as real
    /// sessions named `EVAL (without skills)`; the report gives each eval's and each skill's
    /// pass rate with and without, the lift and Fisher's p. The side without is a measurement:
    /// its failures never change the exit status. Replays read `TEST.ablate-skills.yaml`.
    #[arg(long, value_name = "KIND", value_delimiter = ',')]
    ablate: Vec<String>,
    /// With --ablate skills: write skill-creator's benchmark.json of the skill lift here
    /// (with_skill and without_skill runs, mean, stddev, min and max, delta).
    #[arg(long, value_name = "PATH")]
    benchmark: Option<PathBuf>,
    /// Compare the rubric judges' verdicts with a person's labels in FILE (JSON: {"labels":
    /// [{"eval": NAME, "trial": 1, "criterion": NAME, "label": "pass" or "fail"}]}): the report
    /// gives per eval, judge and criterion the agreement and Cohen's kappa with n
    /// (docs/judges.md, "Judges against human labels").
    #[arg(long, value_name = "FILE")]
    judge_labels: Option<PathBuf>,
    /// With trials: end an eval's trials once its verdict over them (--min-pass-rate, else
    /// every trial must pass) can no longer change, by exact counting; the trials left are
    /// reported not_run with `stopped_early` (JUnit: skipped) and no session is spent on them.
    #[arg(long)]
    stop_early: bool,
    /// A/A: run each eval twice in every trial, as arm A and arm B of the same configuration;
    /// the report gives the flip rate (the (eval, trial) pairs whose verdicts differ), the
    /// suite's noise floor. Arm B (`EVAL (arm B)`) never changes the exit status.
    #[arg(long)]
    aa: bool,
    /// Apply this profile of .config/copilot-eval.toml (the nearest one from here up): its
    /// options go before the command line's, which win; `[profile.default]` applies first, and
    /// alone when no profile is named [env: COPILOT_EVAL_PROFILE].
    #[arg(long, value_name = "NAME")]
    profile: Option<String>,
    #[command(flatten)]
    cost: cost::CostArgs,
    #[command(flatten)]
    record: record::RecordArgs,
    #[command(flatten)]
    decide: compare::DecideArgs,
    #[command(flatten)]
    negations: profile::Negations,
}

#[derive(Subcommand)]
enum Command {
    /// Install or locate the pinned Copilot runtime (the Copilot CLI from npm).
    Runtime {
        #[command(subcommand)]
        action: RuntimeAction,
    },
    /// Print the JSON Schema of the --json results file.
    Schema,
    /// Check skills (SKILL.md), custom agents (*.agent.md) and instructions files under PATHs:
    /// one line per problem, a summary; exit 0 when no error was found.
    Lint(lint::LintArgs),
    /// Check the setup before spending anything: the runtime, its cache, npm, the
    /// authentication source (never the secret), the model catalog and the --model ids; one line
    /// per check with ok/warn/fail and a fix; exit 1 when a check failed.
    Doctor(doctor::DoctorArgs),
    /// Add a starter eval test (with its cassette, so it runs offline at once), the
    /// copilot-eval-core dev-dependency, and `results/` to .gitignore; never overwrites a file.
    /// With --ci github: write a GitHub Actions workflow that replays the evals instead.
    Init(init::InitArgs),
    /// Merge the JSON results of several shards (--partition) into one report: the tests in
    /// list order, totals summed again; writes --json, --junit and --html like a suite run.
    Merge(merge::MergeArgs),
    /// Replay the selected evals with the pinned runtime and with --runtime-version X (same
    /// cassettes) and report, per eval, what drifts and its first difference; exit 0 when
    /// nothing drifts, 1 when some eval drifts.
    Drift(drift::DriftArgs),
    /// Compare results files (oldest first): per eval the pass rate in each, the change,
    /// Fisher's exact p-value and a verdict (regressed, improved, underpowered, unchanged, new,
    /// removed), tokens, time and cost per pass, the inputs whose hashes differ, and the
    /// suite's runtime, SDK, model or settings changes; with more than two files each eval's
    /// history. Exit 0, or 1 with --fail-on-regression when an eval regressed significantly.
    Compare(compare::CompareArgs),
    /// Print what a run with the same options would cost, running nothing: per eval the runs
    /// (evals x models x trials x sides), what is known of the spend and the caps; with
    /// --detect PP the trials per side a comparison needs to detect PP points.
    Plan(Box<plan::PlanArgs>),
    /// Work on cassette files: `cassette split FILE` splits a cassette that holds several
    /// recorded sessions into one cassette per session.
    Cassette {
        #[command(subcommand)]
        action: cassette::CassetteAction,
    },
}

#[derive(Subcommand)]
enum RuntimeAction {
    /// Install the pinned runtime (or --version X beside it) with npm into the per-user cache
    /// (idempotent); print its path and version.
    Install {
        /// Install this published version instead of the pinned one (e.g. to run `drift`).
        #[arg(long, value_name = "X")]
        version: Option<String>,
    },
    /// Print the runtime that resolves (COPILOT_EVAL_RUNTIME_PATH, COPILOT_CLI_PATH,
    /// COPILOT_EVAL_RUNTIME_VERSION, then the installed pinned runtime) and where it came from.
    Path,
    /// List the installed runtime versions (the pinned one marked).
    List,
}

fn main() -> ExitCode {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Invoked directly as `cargo-copilot-eval ...`: insert the subcommand name cargo would pass.
    if args.get(1).is_none_or(|a| a != "copilot-eval") {
        args.insert(1, "copilot-eval".into());
    }
    let mut cli = match parse(&args) {
        Ok(cli) => cli,
        Err(status) => return status,
    };
    // A suite run and `plan` (which takes a suite run's options) apply the profile; its options
    // go right after the subcommand name (`copilot-eval`), or after `plan`.
    let profiled = match &cli.command {
        None => Some((2, &cli.run)),
        Some(Command::Plan(plan)) => args
            .iter()
            .skip(2)
            .position(|a| a == "plan")
            .map(|i| (i + 3, plan.run_args())),
        Some(_) => None,
    }
    // Owned: `cli` is parsed again below.
    .map(|(at, run)| {
        let manifest = run
            .packages
            .manifest_path()
            .map(std::path::Path::to_path_buf);
        (at, run.profile.clone(), manifest)
    });
    if let Some((at, named, manifest)) = profiled {
        match profile::apply(&args, at, named.as_deref(), manifest.as_deref()) {
            Ok(None) => {}
            Ok(Some(with_profile)) => match parse(&with_profile) {
                Ok(again) => cli = again,
                Err(status) => return status,
            },
            Err(message) => {
                eprintln!("error: {message}");
                return ExitCode::from(exit_code::USAGE);
            }
        }
    }
    match cli.command {
        Some(Command::Runtime { action }) => match runtime_command(action) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("error: {message}");
                ExitCode::FAILURE
            }
        },
        Some(Command::Lint(args)) => ExitCode::from(lint::run(args)),
        Some(Command::Doctor(args)) => ExitCode::from(doctor::run(args)),
        Some(Command::Init(args)) => ExitCode::from(init::run(args)),
        Some(Command::Merge(args)) => ExitCode::from(merge::run(args)),
        Some(Command::Drift(args)) => ExitCode::from(drift::run(args)),
        Some(Command::Compare(args)) => ExitCode::from(compare::run(args)),
        Some(Command::Plan(args)) => ExitCode::from(plan::run(*args)),
        Some(Command::Cassette { action }) => ExitCode::from(cassette::run(action)),
        Some(Command::Schema) => {
            print!("{}", copilot_eval_core::report::json_schema());
            ExitCode::SUCCESS
        }
        None => ExitCode::from(run_command(cli.run)),
    }
}

/// The command line parsed; `Err` holds the exit status after clap printed its message.
fn parse(args: &[std::ffi::OsString]) -> Result<Cli, ExitCode> {
    match Cargo::try_parse_from(args) {
        Ok(Cargo::CopilotEval(cli)) => Ok(cli),
        Err(e) => {
            let _ = e.print();
            Err(ExitCode::from(if e.use_stderr() {
                exit_code::USAGE
            } else {
                exit_code::SUCCESS
            }))
        }
    }
}

fn run_command(args: RunArgs) -> u8 {
    match suite_options(args) {
        Ok(options) => suite::run_command(&options),
        Err(status) => status,
    }
}

/// The suite's options from the run's arguments; `Err` holds the exit status of a usage error
/// (its message printed).
fn suite_options(args: RunArgs) -> Result<SuiteOptions, u8> {
    if let Some(version) = &args.runtime_version {
        // SAFETY: set before any thread is started (the async runtime is built later, in
        // suite::run_command); the test processes inherit it.
        unsafe { std::env::set_var(runtime::RUNTIME_VERSION_ENV, version) };
        if let Err(e) = runtime::resolve() {
            eprintln!("error: {e}");
            return Err(exit_code::USAGE);
        }
    }
    if !args.cleanup_bound_s.is_finite() || args.cleanup_bound_s < 0.0 {
        eprintln!("error: --cleanup-bound-s must be a non-negative number of seconds");
        return Err(exit_code::USAGE);
    }
    let cost = match args.cost.options() {
        Ok(cost) => cost,
        Err(message) => {
            eprintln!("error: {message}");
            return Err(exit_code::USAGE);
        }
    };
    let (mode, cassette_root) = match (args.record.mode(args.replay), args.record.cassette_root()) {
        (Ok(mode), Ok(root)) => (mode, root),
        (Err(message), _) | (_, Err(message)) => {
            eprintln!("error: {message}");
            return Err(exit_code::USAGE);
        }
    };
    // SAFETY: set before any thread is started (as above); the test processes inherit it.
    unsafe {
        if args.record.strict() {
            std::env::set_var(copilot_eval_core::harness::ENV_RECORD_STRICT, "1");
        } else {
            std::env::remove_var(copilot_eval_core::harness::ENV_RECORD_STRICT);
        }
    }
    if let Some(rate) = args.min_pass_rate
        && !(0.0..=100.0).contains(&rate)
    {
        eprintln!("error: --min-pass-rate takes a percentage from 0 to 100, got {rate}");
        return Err(exit_code::USAGE);
    }
    // Without --trials, an eval's attribute may ask for trials (`trials = N`): both options
    // then judge those.
    if args.trials == Some(1) && (args.min_pass_rate.is_some() || !args.pass_k.is_empty()) {
        eprintln!(
            "error: --min-pass-rate and --pass-k judge trials: give --trials N with N > 1 (or leave --trials out for the attribute's `trials`)"
        );
        return Err(exit_code::USAGE);
    }
    if let Some(trials) = args.trials
        && let Some(k) = args.pass_k.iter().find(|&&k| k > trials)
    {
        eprintln!(
            "error: --pass-k {k} is more than --trials {trials}: pass@k needs k <= the trials"
        );
        return Err(exit_code::USAGE);
    }
    let models = match args.models.as_deref().map(suite::models::parse_models) {
        None => Vec::new(),
        Some(Ok(models)) => models,
        Some(Err(message)) => {
            eprintln!("error: {message}");
            return Err(exit_code::USAGE);
        }
    };
    let ablate = match copilot_eval_core::eval::Ablate::parse_list(&args.ablate.join(",")) {
        Ok(kinds) => kinds,
        Err(e) => {
            eprintln!("error: --ablate: {e}");
            return Err(exit_code::USAGE);
        }
    };
    if args.benchmark.is_some() && ablate.is_empty() {
        eprintln!(
            "error: --benchmark writes the skill lift: give --ablate skills (the side without the skill) too"
        );
        return Err(exit_code::USAGE);
    }
    if args.stop_early && args.trials == Some(1) {
        eprintln!(
            "error: --stop-early ends an eval's trials: give --trials N with N > 1 (or leave --trials out for the attribute's `trials`)"
        );
        return Err(exit_code::USAGE);
    }
    if args.stop_early && (!ablate.is_empty() || args.aa) {
        eprintln!(
            "error: --stop-early cannot be used with --ablate or --aa: their sides are measurements that need every trial"
        );
        return Err(exit_code::USAGE);
    }
    if args.aa && !ablate.is_empty() {
        eprintln!(
            "error: --aa and --ablate each add a second side to every eval: give one of them"
        );
        return Err(exit_code::USAGE);
    }
    let judge_labels = match args
        .judge_labels
        .as_deref()
        .map(copilot_eval_core::report::judge_labels::JudgeLabels::read)
    {
        None => None,
        Some(Ok(labels)) => Some(labels),
        Some(Err(message)) => {
            eprintln!("error: --judge-labels: {message}");
            return Err(exit_code::USAGE);
        }
    };
    let (baseline, fail_on_regression, rerun_failed) = args.decide.options();
    let options = SuiteOptions {
        baseline,
        fail_on_regression,
        rerun_failed,
        build: args.packages.build_options(),
        filters: args.filters,
        json: args.json,
        junit: args.junit,
        html: args.html,
        grading: args.grading,
        jobs: args.jobs.map_or_else(suite::default_jobs, usize::from),
        mode,
        list_only: args.list,
        no_fail_fast: args.no_fail_fast,
        cleanup_bound: Duration::from_secs_f64(args.cleanup_bound_s),
        plain: args.plain,
        cost,
        partition: args.record.partition(),
        exact: args.exact,
        cassette_root,
        runtime: None,
        fresh_runtime: args.fresh_runtime,
        sandbox: if args.no_sandbox {
            Some(copilot_eval_core::eval::SandboxMode::Off)
        } else {
            args.sandbox
                .as_deref()
                .and_then(|mode| copilot_eval_core::eval::SandboxMode::parse(mode).ok())
        },
        trials: args.trials,
        trial_rule: copilot_eval_core::report::trials::TrialRule {
            pass_k: args.pass_k,
            min_pass_rate: args.min_pass_rate.map(|percent| percent / 100.0),
        },
        models,
        ablate,
        benchmark: args.benchmark,
        judge_labels,
        stop_early: args.stop_early,
        aa: args.aa,
    };
    Ok(options)
}

fn runtime_command(action: RuntimeAction) -> Result<(), String> {
    match action {
        RuntimeAction::Install { version } => {
            let version = version.unwrap_or_else(|| runtime::PINNED_RUNTIME_VERSION.to_owned());
            runtime::check_version_text(&version).map_err(|e| e.to_string())?;
            let installed = match runtime::installed(&version) {
                Some(found) => {
                    eprintln!(
                        "{}@{version} is already installed",
                        runtime::RUNTIME_PACKAGE
                    );
                    found
                }
                None => {
                    eprintln!(
                        "installing {}@{version} into {}",
                        runtime::RUNTIME_PACKAGE,
                        runtime::install_dir(&version).display()
                    );
                    runtime::install_version_checked(&version, &|path| {
                        copilot_eval_core::doctor::check_protocol(path).map_err(|e| e.to_string())
                    })
                    .map_err(|e| e.to_string())?
                }
            };
            println!("{}", installed.path.display());
            println!("{}", installed.version);
            Ok(())
        }
        RuntimeAction::List => {
            let versions = runtime::installed_versions();
            if versions.is_empty() {
                eprintln!(
                    "no runtime installed in {}; run `cargo copilot-eval runtime install`",
                    runtime::cache_root().join("runtime").display()
                );
            }
            for version in versions {
                let pinned = if version == runtime::PINNED_RUNTIME_VERSION {
                    "  (pinned)"
                } else {
                    ""
                };
                println!("{version}{pinned}");
            }
            Ok(())
        }
        RuntimeAction::Path => {
            let resolved = runtime::resolve().map_err(|e| e.to_string())?;
            let version =
                runtime::version(&resolved.path).unwrap_or_else(|e| format!("unknown ({e})"));
            println!("{}", resolved.path.display());
            println!("source: {}", resolved.source.describe());
            println!("version: {version}");
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::Cargo;

    fn run_args(args: &[&str]) -> super::RunArgs {
        let Cargo::CopilotEval(cli) =
            Cargo::try_parse_from([&["cargo", "copilot-eval"], args].concat()).unwrap();
        cli.run
    }

    /// A flag a profile turns on (its options come first) is turned off by its negation on the
    /// command line, and the other way round: the last one given wins.
    #[test]
    fn the_command_line_turns_off_a_flag_a_profile_turned_on() {
        let args = run_args(&[
            "--replay",
            "--no-fail-fast",
            "--plain",
            "--fresh-runtime",
            "--stop-early",
            "--baseline",
            "b.json",
            "--fail-on-regression",
            "--no-replay",
            "--fail-fast",
            "--no-plain",
            "--no-fresh-runtime",
            "--no-stop-early",
            "--no-fail-on-regression",
        ]);
        assert!(!args.replay);
        assert!(!args.no_fail_fast);
        assert!(!args.plain);
        assert!(!args.fresh_runtime);
        assert!(!args.stop_early);
        assert!(!args.decide.options().1, "--no-fail-on-regression");
        let args = run_args(&["--no-replay", "--replay", "--fail-fast", "--no-fail-fast"]);
        assert!(args.replay && args.no_fail_fast);
    }
}
