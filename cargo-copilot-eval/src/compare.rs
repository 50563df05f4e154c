//! `compare`: the face of `copilot_eval_core::suite::compare`; and the options of a suite run
//! that decide across runs (`--baseline`, `--fail-on-regression`, `--rerun-failed`,
//! `copilot_eval_core::suite::decide`).

use std::path::PathBuf;

use copilot_eval_core::suite::compare::{self, CompareOptions};
use copilot_eval_core::suite::exit_code;

/// Arguments of `compare`.
#[derive(clap::Args)]
pub(crate) struct CompareArgs {
    /// The results files (each a suite run's --json), oldest first: BASE.json NEW.json compares
    /// two; more show each eval's history and compare the last two.
    #[arg(value_name = "RESULTS.json", required_unless_present = "schema", num_args = 2..)]
    files: Vec<PathBuf>,
    /// Write the comparison as JSON here (compare --schema prints its JSON Schema).
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Write the comparison as one self-contained HTML page here.
    #[arg(long, value_name = "PATH")]
    html: Option<PathBuf>,
    /// Exit 1 when an eval regressed significantly (Fisher's exact test, p < 0.05); an
    /// underpowered difference never does.
    #[arg(long)]
    fail_on_regression: bool,
    /// Print the JSON Schema of the --json comparison and exit.
    #[arg(long, conflicts_with_all = ["json", "html", "files"])]
    schema: bool,
}

/// Run `compare`; returns its exit status (see `copilot_eval_core::suite::compare::run_compare`).
pub(crate) fn run(args: CompareArgs) -> u8 {
    if args.schema {
        print!("{}", compare::json_schema());
        return exit_code::SUCCESS;
    }
    compare::run_compare(&CompareOptions {
        files: args.files,
        json: args.json,
        html: args.html,
        fail_on_regression: args.fail_on_regression,
    })
}

/// The options of a suite run that decide across runs.
#[derive(clap::Args)]
pub(crate) struct DecideArgs {
    /// Compare this run with an earlier results file as it finishes (as `compare BASE.json
    /// NEW.json`): the table on stderr, and in GitHub Actions a job-summary section and one
    /// warning per regression.
    #[arg(long, value_name = "BASE.json")]
    baseline: Option<PathBuf>,
    /// With --baseline: exit 1 when an eval regressed significantly (an underpowered
    /// difference never does).
    #[arg(long, requires = "baseline")]
    fail_on_regression: bool,
    /// Run only the evals that failed, errored or did not run in this results file, each a new
    /// attempt (labelled `attempt` in the results; the earlier outcome is never replaced).
    #[arg(long, value_name = "RESULTS.json")]
    rerun_failed: Option<PathBuf>,
}

impl DecideArgs {
    /// `(baseline, fail_on_regression, rerun_failed)` for `SuiteOptions`.
    pub(crate) fn options(self) -> (Option<PathBuf>, bool, Option<PathBuf>) {
        (self.baseline, self.fail_on_regression, self.rerun_failed)
    }
}
