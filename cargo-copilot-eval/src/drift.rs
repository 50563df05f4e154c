//! `cargo copilot-eval drift`: the command-line face of `copilot_eval_core::suite::drift`.

use std::path::PathBuf;

use copilot_eval_core::suite::drift::{self, DriftOptions};
use copilot_eval_core::suite::{SuiteOptions, exit_code};

/// Arguments of `drift`.
#[derive(clap::Args)]
pub(crate) struct DriftArgs {
    /// Run only eval tests whose path contains one of these strings.
    #[arg(value_name = "FILTER")]
    filters: Vec<String>,
    /// The runtime version to compare with the pinned one (install it first with `runtime
    /// install --version X`).
    #[arg(long, value_name = "X", required_unless_present = "schema")]
    runtime_version: Option<String>,
    /// Write the drift report as JSON here: {schema_version, pinned, candidate, summary,
    /// totals, evals: [{binary, name, status, cassette, pinned, candidate, difference}]}
    /// (drift --schema prints its JSON Schema).
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Print the JSON Schema of the --json drift report and exit.
    #[arg(long, conflicts_with_all = ["json", "filters"])]
    schema: bool,
    #[command(flatten)]
    packages: crate::packages::PackageArgs,
    /// Run at most N eval tests at a time (in each of the two runs) [default: the number of CPUs].
    #[arg(short = 'j', long, value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Read cassettes under DIR instead of each package's root (DIR/tests/cassettes/...).
    #[arg(long, value_name = "DIR")]
    cassette_root: Option<PathBuf>,
    /// One line per finished test even on a terminal (no progress bar).
    #[arg(long)]
    plain: bool,
    /// Replay each eval N times, each trial its own cassette when the eval has trial cassettes
    /// (TEST/trial-K.yaml, from `--record --trials N`), and compare each trial on its own.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    trials: u32,
}

/// Run `drift`; returns its exit status (see `copilot_eval_core::suite::drift::run_drift`).
pub(crate) fn run(args: DriftArgs) -> u8 {
    let Some(version) = args.runtime_version.filter(|_| !args.schema) else {
        print!("{}", drift::json_schema());
        return exit_code::SUCCESS;
    };
    let cassette_root = match crate::record::absolute_cassette_root(args.cassette_root) {
        Ok(root) => root,
        Err(message) => {
            eprintln!("error: {message}");
            return exit_code::USAGE;
        }
    };
    let options = DriftOptions {
        suite: SuiteOptions {
            build: args.packages.build_options(),
            filters: args.filters,
            jobs: args
                .jobs
                .map_or_else(copilot_eval_core::suite::default_jobs, usize::from),
            plain: args.plain,
            cassette_root,
            // `--trials 1` (the default) leaves each eval its attribute's `trials`.
            trials: (args.trials > 1).then_some(args.trials),
            ..SuiteOptions::new()
        },
        version,
        json: args.json,
    };
    drift::run_drift(&options)
}
