//! `cargo copilot-eval`: the command-line face of copilot-eval. Thin: it parses arguments and
//! calls `copilot-eval-core`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use copilot_eval_core::runtime;

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
    about = "Test GitHub Copilot skills, custom agents, MCP servers and instructions with real Copilot runtime sessions."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Install or locate the pinned Copilot runtime (the Copilot CLI from npm).
    Runtime {
        #[command(subcommand)]
        action: RuntimeAction,
    },
}

#[derive(Subcommand)]
enum RuntimeAction {
    /// Install the pinned runtime with npm into the per-user cache (idempotent); print its path
    /// and version.
    Install,
    /// Print the runtime that resolves (COPILOT_EVAL_RUNTIME_PATH, COPILOT_CLI_PATH, then the
    /// installed pinned runtime) and where it came from.
    Path,
}

fn main() -> ExitCode {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Invoked directly as `cargo-copilot-eval ...`: insert the subcommand name cargo would pass.
    if args.get(1).is_none_or(|a| a != "copilot-eval") {
        args.insert(1, "copilot-eval".into());
    }
    let Cargo::CopilotEval(cli) = Cargo::parse_from(args);
    match cli.command {
        Command::Runtime { action } => match runtime_command(action) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("error: {message}");
                ExitCode::FAILURE
            }
        },
    }
}

fn runtime_command(action: RuntimeAction) -> Result<(), String> {
    match action {
        RuntimeAction::Install => {
            eprintln!(
                "installing {}@{} into {}",
                runtime::RUNTIME_PACKAGE,
                runtime::PINNED_RUNTIME_VERSION,
                runtime::install_dir(runtime::PINNED_RUNTIME_VERSION).display()
            );
            let installed = runtime::install().map_err(|e| e.to_string())?;
            if !installed.changed {
                eprintln!("already installed");
            }
            println!("{}", installed.path.display());
            println!("{}", installed.version);
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
