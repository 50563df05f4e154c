//! The repository's own commands work whether or not `cargo-copilot-eval` is installed, with no
//! cargo warning: the in-repository alias (`cargo xeval`) never shadows the installed subcommand.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::{cargo, command_path, workspace_root};

/// `cargo ARGS` in `cwd` with `bin` first on PATH.
fn cargo_in(cwd: &Path, bin: &Path, args: &[&str]) -> Output {
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    Command::new(cargo())
        .args(args)
        .current_dir(cwd)
        .env("PATH", path)
        .env_remove("COPILOT_EVAL_MODE")
        .output()
        .unwrap()
}

/// A folder holding an installed `cargo-copilot-eval` (a copy of the one built from this tree).
fn installed() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("copilot-eval-installed-")
        .tempdir()
        .unwrap();
    std::fs::copy(command_path(), dir.path().join("cargo-copilot-eval")).unwrap();
    dir
}

fn text(output: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn the_readme_commands_run_with_the_tool_installed_and_no_warning() {
    let bin = installed();
    let root = workspace_root();
    // The README's first command starts with `cargo xeval runtime install`; `runtime path`
    // goes through the same alias and the same binary without touching the network.
    for args in [
        &["xeval", "--version"][..],
        &["xeval", "runtime", "path"][..],
        &["copilot-eval", "--version"][..],
    ] {
        let output = cargo_in(&root, bin.path(), args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !stderr.contains("warning"),
            "`cargo {}` warned inside the repository:\n{}",
            args.join(" "),
            text(&output)
        );
        if args[1] == "--version" {
            assert!(output.status.success(), "{}", text(&output));
            assert!(
                String::from_utf8_lossy(&output.stdout).contains("cargo-copilot-eval"),
                "{}",
                text(&output)
            );
        }
    }
    // The README's first command itself, with the pinned runtime already installed: it says so,
    // and does not first announce an install it does not do.
    if copilot_eval_e2e::runtime_for(
        "the_readme_commands_run_with_the_tool_installed_and_no_warning",
    )
    .is_some()
    {
        let output = cargo_in(&root, bin.path(), &["xeval", "runtime", "install"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{}", text(&output));
        assert!(
            stderr.contains("is already installed") && !stderr.contains("installing"),
            "{}",
            text(&output)
        );
        assert!(!stderr.contains("warning"), "{}", text(&output));
    }
    // The README names the alias it tests.
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains("cargo xeval runtime install && cargo xeval -p quickstart"));
}

/// The control: an alias named like the installed subcommand is exactly what cargo warns about,
/// so the check above can fail.
#[test]
fn an_alias_named_like_the_subcommand_is_warned_about() {
    let bin = installed();
    let dir = tempfile::Builder::new()
        .prefix("copilot-eval-alias-")
        .tempdir()
        .unwrap();
    std::fs::create_dir(dir.path().join(".cargo")).unwrap();
    std::fs::write(
        dir.path().join(".cargo/config.toml"),
        "[alias]\ncopilot-eval = \"version\"\n",
    )
    .unwrap();
    let output = cargo_in(dir.path(), bin.path(), &["copilot-eval"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("warning") && stderr.contains("shadowing"),
        "{}",
        text(&output)
    );
}
