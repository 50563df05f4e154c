//! The edit loop (issue 34): a user edits one eval and runs it again. In a standalone copy of
//! examples/quickstart (its own package, path dependencies on this checkout's crates, the
//! workspace's `Cargo.lock`, cargo's default dev profile with incremental compilation on, as a
//! user's package has), each run changes a string literal in `creates_a_greeting_file`, then
//! measures the rebuild (`cargo test --no-run`, what the runner's build step runs) and the run
//! (`cargo copilot-eval --replay --exact creates_a_greeting_file`, whose own build step then
//! finds nothing to do) apart; then changes it again and times the runner alone, whose build
//! step rebuilds (what a user types: one command, in which the runtime starts while the test
//! binary is rebuilt).
//!
//! The copy and its target folder live in the bench's target folder (`edit-loop/`), so only the
//! first bench on a machine builds the dependencies; the copy is refreshed from
//! examples/quickstart each time.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Sample, measure};

/// The eval that is edited and run.
const EVAL: &str = "creates_a_greeting_file";
/// The string literal that each run changes (it is the message of an `expect`, so the
/// replayed session is the same).
const LITERAL: &str = "greeting.txt was written";

/// One edit-and-rerun: the rebuild and the run; then another edit and the runner alone.
pub struct Round {
    /// `cargo test --no-run` after the edit.
    pub rebuild: Sample,
    /// The runner on the edited eval.
    pub run: Sample,
    /// The runner on the eval edited again, its build step rebuilding.
    pub one_command: Sample,
}

/// The standalone copy of examples/quickstart under `dir`, with a path dependency on the
/// copilot-eval-core folder `core`. Returns the package folder.
fn prepare(root: &Path, core: &Path, dir: &Path) -> PathBuf {
    let package = dir.join("quickstart");
    let example = root.join("examples/quickstart");
    for sub in ["src", "tests", "skills", "copilot-config"] {
        let to = package.join(sub);
        let _ = std::fs::remove_dir_all(&to);
        copy_dir(&example.join(sub), &to);
    }
    let core = core.canonicalize().expect("copilot-eval-core");
    std::fs::write(
        package.join("Cargo.toml"),
        format!(
            "[package]\nname = \"quickstart\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dev-dependencies]\ncopilot-eval-core = {{ path = {:?} }}\nserde_json = \"1\"\n\n\
             # Its own workspace: cargo's defaults, not this repository's profile.\n[workspace]\n",
            core.display().to_string()
        ),
    )
    .expect("write Cargo.toml");
    if !package.join("Cargo.lock").exists() {
        std::fs::copy(root.join("Cargo.lock"), package.join("Cargo.lock")).expect("Cargo.lock");
    }
    std::fs::create_dir_all(package.join(".cargo")).expect(".cargo");
    std::fs::write(
        package.join(".cargo/config.toml"),
        "[env]\nCOPILOT_SKIP_CLI_DOWNLOAD = \"1\"\n",
    )
    .expect("write .cargo/config.toml");
    package
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create folder");
    for entry in std::fs::read_dir(from).expect("read folder") {
        let entry = entry.expect("folder entry");
        let path = entry.path();
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy file");
        }
    }
}

/// A cargo or runner command in `package`, with the user's environment: incremental
/// compilation as cargo's default (the bench's own `CARGO_INCREMENTAL` removed) and the copy's
/// own target folder.
fn command(program: &Path, package: &Path, target: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .current_dir(package)
        .env_remove("CARGO_INCREMENTAL")
        .env_remove("RUSTFLAGS")
        .env("CARGO_TARGET_DIR", target);
    command
}

/// Change [`LITERAL`]'s message in the eval to one that names `round`.
fn edit(package: &Path, round: usize) {
    let path = package.join("tests/evals.rs");
    let text = std::fs::read_to_string(&path).expect("read tests/evals.rs");
    let start = text
        .find(LITERAL)
        .expect("the edited literal is in tests/evals.rs")
        + LITERAL.len();
    let end = start + text[start..].find('"').expect("the literal's end");
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let edited = format!("{} (edit {round}, {stamp}){}", &text[..start], &text[end..]);
    std::fs::write(&path, edited).expect("write tests/evals.rs");
}

/// Prepare the copy under `dir` (examples/quickstart of `root`, depending on the
/// copilot-eval-core folder `core`), build and run it once (not measured), then `runs` rounds
/// of edit, rebuild, run, and edit, run alone.
pub fn measure_rounds(
    root: &Path,
    core: &Path,
    dir: &Path,
    cargo: &Path,
    runner: &Path,
    runs: usize,
) -> Vec<Round> {
    let package = prepare(root, core, dir);
    let target = dir.join("target");
    let rebuild = || {
        let mut cargo = command(cargo, &package, &target);
        cargo.args(["test", "--no-run"]);
        cargo
    };
    let run = || {
        let mut runner = command(runner, &package, &target);
        runner.args(["copilot-eval", "--replay", "--plain", "--exact", EVAL]);
        runner
    };
    // Warm-up: the first build (the dependencies, once per machine) and a first run.
    measure("edit loop: first build", &mut rebuild());
    measure("edit loop: first run", &mut run());
    (0..runs)
        .map(|round| {
            edit(&package, 2 * round);
            let rebuild = measure("edit loop: rebuild", &mut rebuild());
            let run_after = measure("edit loop: run", &mut run());
            edit(&package, 2 * round + 1);
            Round {
                rebuild,
                run: run_after,
                one_command: measure("edit loop: run alone", &mut run()),
            }
        })
        .collect()
}
