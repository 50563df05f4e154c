//! `cargo copilot-eval cassette split FILE [--out DIR] [--session N,N,...]... [--force]`: the
//! command-line face of `copilot_eval_core::cassette::split`.

use std::path::PathBuf;

use copilot_eval_core::cassette::split::{SplitError, SplitOptions, describe, split_file};
use copilot_eval_core::suite::exit_code;

/// The `cassette` subcommands.
#[derive(clap::Subcommand)]
pub(crate) enum CassetteAction {
    /// Split a cassette that holds several recorded sessions into one cassette per session: the
    /// first keeps FILE's name, the next are FILE-2.yaml, FILE-3.yaml, ... (the cassettes of a
    /// test's second, third, ... run); one line per file written.
    Split(SplitArgs),
}

/// Arguments of `cassette split`.
#[derive(clap::Args)]
pub(crate) struct SplitArgs {
    /// The cassette to split.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Write the pieces into this folder (created if needed) [default: FILE's folder].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// One session's conversations, 1-based as a replay failure numbers them, separated by
    /// commas (repeatable; the first --session keeps FILE's name). Every conversation must be in
    /// exactly one. Default: the sessions found from the conversations (same system prompt and
    /// prompt; sub-agent conversations with the session that dispatched them).
    #[arg(long = "session", value_name = "N,N,...")]
    sessions: Vec<String>,
    /// Replace files that exist, FILE itself included (splitting in place).
    #[arg(long)]
    force: bool,
}

/// Run `cassette ACTION`; returns the exit status: 0 done (or nothing to split), 1 the cassette
/// cannot be read or a piece cannot be written, 2 invalid command line (a bad --session, a file
/// that exists without --force).
pub(crate) fn run(action: CassetteAction) -> u8 {
    match action {
        CassetteAction::Split(args) => split(args),
    }
}

fn split(args: SplitArgs) -> u8 {
    let options = SplitOptions {
        out_dir: args.out,
        sessions: args.sessions,
        force: args.force,
    };
    match split_file(&args.file, &options) {
        Ok(outcome) if outcome.written.is_empty() => {
            eprintln!(
                "{} holds one session ({}): nothing to split; if it holds several, give each with --session N,N,...",
                args.file.display(),
                describe(&outcome.sessions.concat(), outcome.conversations)
            );
            exit_code::SUCCESS
        }
        Ok(outcome) => {
            for piece in &outcome.written {
                println!(
                    "{}: {}",
                    piece.cassette.path.display(),
                    describe(&piece.conversations, outcome.conversations)
                );
            }
            exit_code::SUCCESS
        }
        Err(error @ (SplitError::Grouping(_) | SplitError::Exists { .. })) => {
            eprintln!("error: {error}");
            exit_code::USAGE
        }
        Err(error) => {
            eprintln!("error: {error}");
            1
        }
    }
}
