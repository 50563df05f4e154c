//! The command reference (docs/command.md) against the command itself: every subcommand and
//! flag that `--help` shows, every environment variable the code reads, every exit status and
//! every outcome must appear in the reference, so the two cannot drift apart.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use copilot_eval_core::report::Outcome;
use copilot_eval_core::suite::exit_code;

const BIN: &str = env!("CARGO_BIN_EXE_cargo-copilot-eval");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn reference() -> String {
    std::fs::read_to_string(root().join("docs/command.md")).unwrap()
}

fn help(args: &[&str]) -> String {
    let output = Command::new(BIN)
        .arg("copilot-eval")
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?} --help failed");
    String::from_utf8(output.stdout).unwrap()
}

/// The subcommand names listed under `Commands:` in a help text (`help` itself left out).
fn subcommands(help: &str) -> Vec<String> {
    let Some((_, rest)) = help.split_once("Commands:\n") else {
        return Vec::new();
    };
    rest.lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("      "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// The long flags (`--name`) in a help text's option lines (`--help`/`--version` left out).
fn flags(help: &str) -> BTreeSet<String> {
    help.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .flat_map(|l| {
            l.split(|c: char| c.is_whitespace() || c == ',' || c == '=' || c == '[' || c == '<')
                .filter(|w| w.starts_with("--") && w.len() > 2)
                .map(|w| w.trim_end_matches(']').to_owned())
                .collect::<Vec<_>>()
        })
        .filter(|f| f != "--help" && f != "--version")
        .collect()
}

/// Every `(command path, help text)`, recursively.
fn all_helps() -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    let mut todo = vec![Vec::<String>::new()];
    while let Some(path) = todo.pop() {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let text = help(&args);
        for sub in subcommands(&text) {
            let mut next = path.clone();
            next.push(sub);
            todo.push(next);
        }
        out.push((path, text));
    }
    out
}

#[test]
fn every_subcommand_and_flag_is_in_the_reference() {
    let doc = reference();
    let mut missing = Vec::new();
    for (path, text) in all_helps() {
        if !path.is_empty() {
            let command = format!("cargo copilot-eval {}", path.join(" "));
            // `runtime install` may be written `runtime install | path | list` in the synopsis.
            let named = doc.contains(&command)
                || (path.len() == 2
                    && doc.contains(&format!("cargo copilot-eval {}", path[0]))
                    && doc.contains(&format!("`{}`", path[1])));
            if !named {
                missing.push(command);
            }
        }
        for flag in flags(&text) {
            if !doc.contains(&format!("`{flag}")) && !doc.contains(&format!("[{flag}")) {
                missing.push(format!("{} {flag}", path.join(" ")));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/command.md does not mention: {missing:?}"
    );
}

#[test]
fn the_flag_reader_sees_every_kind_of_option_line() {
    let text = "Options:\n  -j, --jobs <N>  Run\n      --record[=<WHEN>]  Rec\n      --plain\n  -h, --help\n";
    let found: Vec<String> = flags(text).into_iter().collect();
    assert_eq!(found, ["--jobs", "--plain", "--record"]);
    let text = "Commands:\n  runtime  Install\n  lint     Check\n  help     Print\n\nOptions:\n";
    assert_eq!(subcommands(text), ["runtime", "lint"]);
}

/// Every `"COPILOT_EVAL_..."` (and the SDK's `COPILOT_CLI_PATH`) the code names.
fn env_vars() -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut files = Vec::new();
    for dir in ["copilot-eval-core/src", "cargo-copilot-eval/src"] {
        collect(&root().join(dir), &mut files);
    }
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("\"COPILOT_") {
            rest = &rest[at + 1..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if rest[name.len()..].starts_with('"') {
                found.insert(name);
            }
        }
    }
    found
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(path);
        }
    }
}

#[test]
fn every_environment_variable_is_in_the_reference() {
    let doc = reference();
    let vars = env_vars();
    assert!(
        vars.contains("COPILOT_EVAL_MODE"),
        "the scan works: {vars:?}"
    );
    let missing: Vec<&String> = vars
        .iter()
        .filter(|v| !doc.contains(&format!("`{v}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/command.md does not mention the environment variables {missing:?}"
    );
}

#[test]
fn every_exit_status_and_outcome_is_in_the_reference() {
    let doc = reference();
    for status in [
        exit_code::SUCCESS,
        exit_code::TEST_FAILURES,
        exit_code::USAGE,
        exit_code::INFRASTRUCTURE,
        exit_code::NO_TESTS,
        exit_code::SUITE_ERROR,
    ] {
        assert!(
            doc.contains(&format!("| `{status}` |")),
            "exit status {status} is not in the reference's table"
        );
    }
    // An exhaustive match: a new outcome does not compile until it is listed here.
    let all = [
        Outcome::Passed,
        Outcome::Failed,
        Outcome::Error,
        Outcome::NotRun,
    ];
    for outcome in all {
        match outcome {
            Outcome::Passed | Outcome::Failed | Outcome::Error | Outcome::NotRun => {}
        }
        let name = serde_json::to_value(outcome).unwrap();
        let name = name.as_str().unwrap();
        assert!(
            doc.contains(&format!("| `{name}` |")),
            "outcome {name} is not in the reference's table"
        );
    }
}
