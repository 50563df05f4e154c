//! `cargo copilot-eval drift`: the command-line face of `copilot_eval_core::suite::drift`.

use std::path::PathBuf;

use copilot_eval_core::suite::drift::{self, DriftOptions};
use copilot_eval_core::suite::{SuiteOptions, exit_code, list};

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
    /// Package(s) to test (repeatable).
    #[arg(
        short = 'p',
        long = "package",
        value_name = "PKG",
        conflicts_with = "workspace"
    )]
    packages: Vec<String>,
    /// Test every package of the workspace.
    #[arg(long)]
    workspace: bool,
    /// Path to Cargo.toml.
    #[arg(long, value_name = "PATH")]
    manifest_path: Option<PathBuf>,
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
    let cassette_root = match args.cassette_root {
        Some(dir) if dir.is_relative() => match std::env::current_dir() {
            Ok(cwd) => Some(cwd.join(dir)),
            Err(e) => {
                eprintln!("error: --cassette-root: cannot read the current directory: {e}");
                return exit_code::USAGE;
            }
        },
        other => other,
    };
    let packages = if args.workspace {
        list::PackageSelection::Workspace
    } else if !args.packages.is_empty() {
        list::PackageSelection::Packages(args.packages)
    } else {
        list::PackageSelection::Default
    };
    let options = DriftOptions {
        suite: SuiteOptions {
            build: list::BuildOptions::new(args.manifest_path, packages),
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
