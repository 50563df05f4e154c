//! `cargo copilot-eval init`: the command-line face of `copilot_eval_core::init`.

use std::path::PathBuf;

use copilot_eval_core::init::ci::{Ci, CiOptions, init_ci};
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
    /// Depend on copilot-eval-core from this git repository. In a package that has the starter
    /// scaffold, only rewrite its copilot-eval-core dependency to it (a path dependency's
    /// commit as `rev`). With --ci github: rewrite a copilot-eval-core path dependency outside
    /// the repository to `{ git = URL, rev = <its commit> }`, and install the command from it.
    #[arg(long, value_name = "URL")]
    core_git: Option<String>,
    /// Write a CI workflow instead of the starter eval: `github` writes
    /// .github/workflows/copilot-eval.yml at the git repository's root (install Rust, Node.js,
    /// the command pinned to the revision of the package's copilot-eval-core, and the cached
    /// runtime; replay the evals with `--profile ci` sharded over a matrix, merge the shards,
    /// upload JSON, JUnit and HTML), and the profile `ci` in .config/copilot-eval.toml.
    #[arg(long, value_name = "CI", value_parser = ["github"], conflicts_with = "core_path")]
    ci: Option<String>,
    /// Write an eval test file for this skill folder's own evals/evals.json instead of the
    /// starter eval: `tests/<skill>_evals.rs` in the package, one `skill_evals` test per entry,
    /// with a failing `ctx.expect` placeholder per expectation until you write its check (and a
    /// `skill_triggers` test when the skill has evals/triggers.json).
    #[arg(long, value_name = "PATH", conflicts_with = "ci")]
    skill: Option<PathBuf>,
    /// Replace an existing workflow file (only with --ci github).
    #[arg(long, requires = "ci")]
    force: bool,
}

/// Run `init` (or, with `--ci`, write the workflow; with `--skill`, the skill's eval tests): print each change on stdout, errors on
/// stderr. Returns the exit status: 0 done, 1 nothing was changed because of an error (a file
/// that would be overwritten, an unreadable or invalid manifest or config, a skill folder
/// without a valid evals/evals.json).
pub(crate) fn run(args: InitArgs) -> u8 {
    let done = if args.ci.is_some() {
        let options = CiOptions {
            manifest_path: args.manifest_path,
            cwd: None,
            force: args.force,
            core_git: args.core_git,
        };
        init_ci(Ci::Github, &options)
    } else {
        let options = InitOptions {
            manifest_path: args.manifest_path,
            cwd: None,
            core_path: args.core_path,
            core_git: args.core_git,
            skill: args.skill,
        };
        init(&options)
    };
    match done {
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
