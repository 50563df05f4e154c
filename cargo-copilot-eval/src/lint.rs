//! `cargo copilot-eval lint [PATH...]`: the command-line face of `copilot_eval_core::lint`.

use std::path::PathBuf;

use copilot_eval_core::customization::Severity;
use copilot_eval_core::lint;

/// Arguments of `lint`.
#[derive(clap::Args)]
pub(crate) struct LintArgs {
    /// Files or folders to check (folders recursively). Default: the current folder.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Exit 1 on warnings too.
    #[arg(long)]
    deny_warnings: bool,
    /// Print the summary only, not one line per problem.
    #[arg(long, short = 'q', conflicts_with = "verbose")]
    quiet: bool,
    /// Print the notes too: facts that ask for no change (`agent-id`: the agent's id comes from
    /// its `name`, not its file name). Notes are never warnings.
    #[arg(long, short = 'v')]
    verbose: bool,
}

/// Run the lint: one line per problem on stdout (`FILE:LINE: error[RULE] `FIELD`: MESSAGE`;
/// notes only with `--verbose`), then the summary on stderr. Returns the exit status: 0 no error (and no warning with
/// `--deny-warnings`), 1 otherwise.
pub(crate) fn run(args: LintArgs) -> u8 {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths
    };
    let report = lint::lint(&paths);
    if !args.quiet {
        for problem in &report.problems {
            if args.verbose || problem.severity != Severity::Note {
                println!("{problem}");
            }
        }
    }
    let summary = report.summary();
    eprintln!("lint: {summary}");
    let failed = !report.is_clean() || (args.deny_warnings && summary.warnings > 0);
    u8::from(failed)
}
