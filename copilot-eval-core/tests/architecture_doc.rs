//! ARCHITECTURE.md names only what exists: every path it writes in backticks (a file or folder
//! of the workspace, written from the root or from a crate's `src`) is in the tree, and every
//! Rust name it writes in backticks (`CopilotResult`, `StopReason::PRECEDENCE`,
//! `ctx.expect_trigger`, `COPILOT_EVAL_PHASES`) is a name the workspace's code uses (an
//! identifier of its code, or a one-word string literal such as an environment variable's name). A page
//! that names a moved file or a replaced constant fails here.

use std::collections::BTreeSet;
use std::path::Path;

mod support;

/// Words of ARCHITECTURE.md's recipes that stand for a name rather than being one (the notation
/// of the attribute's key table: `key: Kind => Target.method;`).
const PLACEHOLDERS: &[&str] = &["Kind", "Target", "Attribute"];

/// The workspace's files and folders, `/`-separated and relative to its root (build output and
/// dot folders left out).
fn tree(dir: &Path, root: &Path, out: &mut BTreeSet<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "target" || name.starts_with('.') {
            continue;
        }
        let relative = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        out.insert(relative);
        if path.is_dir() {
            tree(&path, root, out);
        }
    }
}

/// Every identifier in the code (not the comments) of the workspace's Rust files, and the text
/// of every string literal that is one word (an environment variable's name is a string).
fn identifiers(root: &Path) -> BTreeSet<String> {
    let mut files = Vec::new();
    support::rust_files(root, &mut files);
    assert!(files.len() > 200, "only {} Rust files found", files.len());
    let word = regex::Regex::new(r"\b[A-Za-z_][A-Za-z0-9_]*\b").unwrap();
    let mut found = BTreeSet::new();
    for file in files {
        let source = support::lex(&std::fs::read_to_string(&file).unwrap());
        found.extend(word.find_iter(&source.bare).map(|m| m.as_str().to_owned()));
        found.extend(
            source
                .literals
                .into_iter()
                .filter(|l| word.find(&l.text).is_some_and(|m| m.len() == l.text.len()))
                .map(|l| l.text),
        );
    }
    found
}

/// The backticked spans of `doc`, each with its 1-based line.
fn backticked(doc: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (index, line) in doc.lines().enumerate() {
        let parts: Vec<&str> = line.split('`').collect();
        // Odd parts are inside backticks (a span does not cross lines on this page).
        for part in parts.iter().skip(1).step_by(2) {
            found.push((index + 1, (*part).to_owned()));
        }
    }
    found
}

/// Whether `span` is written as a path of the workspace: a file with an extension or
/// something with a `/`, and nothing that is a command, a URL path, a pattern or a placeholder.
fn is_path(span: &str) -> bool {
    let plain = regex::Regex::new(r"^[A-Za-z0-9_][A-Za-z0-9_.\-/]*$").unwrap();
    let file = regex::Regex::new(r"\.(rs|md|toml|json|stderr|yaml)$").unwrap();
    plain.is_match(span) && (span.contains('/') || file.is_match(span))
}

/// Whether some file or folder of `tree` is `span` or ends with it (a module path may leave out
/// its `.rs`).
fn exists(span: &str, tree: &BTreeSet<String>) -> bool {
    let span = span.trim_end_matches('/');
    let candidates = [span.to_owned(), format!("{span}.rs")];
    tree.iter().any(|entry| {
        candidates
            .iter()
            .any(|c| entry == c || entry.ends_with(&format!("/{c}")))
    })
}

/// The Rust names `span` writes, when it is written as Rust names: `Type`, `CONSTANT`,
/// `a::b::Item`, `Type::method()`, `ctx.method`. Lower-case single words are module names,
/// checked by the architecture test's module tables.
fn names(span: &str) -> Vec<String> {
    let rust = regex::Regex::new(
        r"^(ctx\.)?[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*(\(\)|\(reason, error\))?$",
    )
    .unwrap();
    if !rust.is_match(span) {
        return Vec::new();
    }
    let bare = span
        .trim_start_matches("ctx.")
        .split('(')
        .next()
        .unwrap_or_default();
    let checked = span.starts_with("ctx.")
        || bare.contains("::")
        || bare.starts_with(|c: char| c.is_ascii_uppercase());
    if !checked || PLACEHOLDERS.contains(&bare) {
        return Vec::new();
    }
    bare.split("::").map(str::to_owned).collect()
}

/// What ARCHITECTURE.md names that does not exist.
fn missing(doc: &str, tree: &BTreeSet<String>, identifiers: &BTreeSet<String>) -> Vec<String> {
    let mut found = Vec::new();
    for (line, span) in backticked(doc) {
        if is_path(&span) {
            if !exists(&span, tree) {
                found.push(format!(
                    "ARCHITECTURE.md:{line}: no file or folder `{span}`"
                ));
            }
            continue;
        }
        for name in names(&span) {
            if !identifiers.contains(&name) {
                found.push(format!(
                    "ARCHITECTURE.md:{line}: `{span}`: no code of the workspace uses the name `{name}`"
                ));
            }
        }
    }
    found
}

#[test]
fn architecture_md_names_only_what_exists() {
    let root = support::root();
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut files = BTreeSet::new();
    tree(&root, &root, &mut files);
    let identifiers = identifiers(&root);
    let spans = backticked(&doc);
    let paths = spans.iter().filter(|(_, s)| is_path(s)).count();
    let named = spans.iter().filter(|(_, s)| !names(s).is_empty()).count();
    assert!(
        paths > 50 && named > 50,
        "only {paths} paths and {named} Rust names found in ARCHITECTURE.md"
    );
    let missing = missing(&doc, &files, &identifiers);
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what is not there (update the page where the code moved):\n{}",
        missing.join("\n")
    );
}

/// The check finds a stale path and a stale name, and accepts real ones.
#[test]
fn the_check_finds_stale_paths_and_names() {
    let tree: BTreeSet<String> = [
        "copilot-eval-core/src/result",
        "copilot-eval-core/src/result/stop.rs",
        "copilot-eval-core/src/run/pool/wire.rs",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    let identifiers: BTreeSet<String> = ["StopReason", "class", "PRECEDENCE", "expect_stop"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    let doc = "`result/stop.rs` `copilot-eval-core/src/result.rs` `run/pool/wire` `result/`\n\
               `StopReason::class` `INFRASTRUCTURE_STOPS` `ctx.expect_stop` `ctx.gone`\n\
               `cargo test -p x` `Kind` `run`";
    assert_eq!(
        missing(doc, &tree, &identifiers),
        vec![
            "ARCHITECTURE.md:1: no file or folder `copilot-eval-core/src/result.rs`",
            "ARCHITECTURE.md:2: `INFRASTRUCTURE_STOPS`: no code of the workspace uses the name \
             `INFRASTRUCTURE_STOPS`",
            "ARCHITECTURE.md:2: `ctx.gone`: no code of the workspace uses the name `gone`",
        ]
    );
}
