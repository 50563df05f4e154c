//! `cargo copilot-eval merge IN.json... --json OUT --junit OUT --html OUT`: one report from the JSON
//! results of several shards (`copilot_eval_core::report::merge`).

use std::path::PathBuf;

use copilot_eval_core::report::{Redactor, merge};
use copilot_eval_core::suite::artifacts::{ArtifactPaths, write_artifacts};
use copilot_eval_core::suite::{display, exit_code, exit_status};

/// Arguments of `merge`.
#[derive(clap::Args)]
pub(crate) struct MergeArgs {
    /// The JSON results of the shards (each shard's --json file).
    #[arg(value_name = "IN.json", required = true)]
    inputs: Vec<PathBuf>,
    /// Write the merged JSON results here.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Write the merged JUnit XML here.
    #[arg(long, value_name = "PATH")]
    junit: Option<PathBuf>,
    /// Write the merged HTML report here.
    #[arg(long, value_name = "PATH")]
    html: Option<PathBuf>,
    /// Merge shards whose results record no runtime version (no runtime resolved for them);
    /// without it such a shard is refused, as it may have run on another runtime.
    #[arg(long)]
    allow_unknown_runtime: bool,
}

/// Merge, print the summary, write the artifacts; return the exit status: the merged suite's
/// (0, 1 or 3; 4 when it holds no test), or 5 when an input cannot be read or merged (another
/// schema version, overlapping or missing shards, a mixed set, a shard with no runtime version
/// without `--allow-unknown-runtime`) or an artifact cannot be written.
pub(crate) fn run(args: MergeArgs) -> u8 {
    let options = merge::MergeOptions {
        allow_unknown_runtime: args.allow_unknown_runtime,
    };
    let merged = match merge::merge_files(&args.inputs, options) {
        Ok(merged) => merged,
        Err(e) => {
            eprintln!("error: {e}");
            return exit_code::SUITE_ERROR;
        }
    };
    eprintln!(
        "merged {} shard results: {} tests",
        args.inputs.len(),
        merged.tests.len()
    );
    eprint!("{}", display::summary_with_messages(&merged));
    let mut status = if merged.tests.is_empty() {
        exit_code::NO_TESTS
    } else {
        exit_status(&merged)
    };
    let paths = ArtifactPaths {
        json: args.json,
        junit: args.junit,
        html: args.html,
        grading: None,
        benchmark: None,
    };
    if !write_artifacts(&merged, &paths, &Redactor::from_env()) {
        status = exit_code::SUITE_ERROR;
    }
    status
}
