//! `cargo copilot-eval init`: the command-line face of `copilot_eval_core::init`.

use std::path::PathBuf;

use copilot_eval_core::init::{InitOptions, init};

/// Arguments of `init`.
#[derive(clap::Args)]
pub(crate) struct InitArgs {
    /// The package's Cargo.toml (default: the nearest Cargo.toml in this folder or above; with
    /// none, a library package is created here first).
    #[arg(long, value_name = "PATH")]
    manifest_path: Option<PathBuf>,
    /// Depend on copilot-eval-core at this folder (default: the copilot-eval-core this command
    /// was built with, when its folder still exists; else the git repository).
    #[arg(long, value_name = "PATH", conflicts_with = "core_git")]
    core_path: Option<PathBuf>,
    /// Depend on copilot-eval-core from this git repository.
    #[arg(long, value_name = "URL")]
    core_git: Option<String>,
}

/// Run `init`: print each change on stdout, errors on stderr. Returns the exit status: 0 done,
/// 1 nothing was changed because of an error (a file that would be overwritten, an unreadable
/// or invalid manifest or config).
pub(crate) fn run(args: InitArgs) -> u8 {
    let options = InitOptions {
        manifest_path: args.manifest_path,
        cwd: None,
        core_path: args.core_path,
        core_git: args.core_git,
    };
    match init(&options) {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            0
        }
        Err(message) => {
            eprintln!("error: {message}");
            1
        }
    }
}
