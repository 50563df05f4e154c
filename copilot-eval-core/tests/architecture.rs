//! The shape rules of ARCHITECTURE.md, checked on the source tree of `copilot-eval-core`:
//! - no import cycle between the crate's top-level modules (a module is a top-level file or
//!   folder of `src/`; a reference is `crate::NAME` in a line of code; comment lines and files
//!   named `tests.rs` do not count);
//! - no source file other than a `tests.rs` over 800 lines;
//! - the layering rules that ARCHITECTURE.md states (which module may import which).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Longest a non-test source file may be, in lines.
const MAX_LINES: usize = 800;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Top-level module name -> the files it holds.
fn modules(src: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let name = name.strip_suffix(".rs").unwrap_or(&name).to_owned();
        if name == "lib" || name == "main" {
            continue;
        }
        let mut files = Vec::new();
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        } else {
            continue;
        }
        modules.entry(name).or_insert_with(Vec::new).extend(files);
    }
    modules
}

/// The top-level modules named by `crate::NAME` (or `crate::{NAME::..., ...}`) in the code
/// lines of `text`.
fn references(text: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        let boundary = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        rest = &rest[at + "crate::".len()..];
        if !boundary {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // A grouped import: the first name of each item at the group's own depth.
            let mut depth = 0usize;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        item_start = false;
                        let name = ident(&group[i..]);
                        if !name.is_empty() {
                            found.insert(name);
                        }
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

/// Module -> the other top-level modules its non-test files reference.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules(src);
    let mut graph = BTreeMap::new();
    for (name, files) in &modules {
        let mut uses = BTreeSet::new();
        for file in files {
            if file.file_name().is_some_and(|f| f == "tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(file).unwrap();
            uses.extend(
                references(&text)
                    .into_iter()
                    .filter(|m| m != name && modules.contains_key(m)),
            );
        }
        graph.insert(name.clone(), uses);
    }
    graph
}

/// The strongly connected components with more than one module (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a str) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        w.on_stack.insert(v);
        for next in &w.graph[v] {
            let next = next.as_str();
            if !w.index.contains_key(next) {
                visit(w, next);
                let low = w.low[v].min(w.low[next]);
                w.low.insert(v, low);
            } else if w.on_stack.contains(next) {
                let low = w.low[v].min(w.index[next]);
                w.low.insert(v, low);
            }
        }
        if w.low[v] == w.index[v] {
            let mut component = Vec::new();
            loop {
                let m = w.stack.pop().unwrap();
                w.on_stack.remove(m);
                component.push(m.to_owned());
                if m == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                w.found.push(component);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            visit(&mut walk, v);
        }
    }
    walk.found
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let graph = graph(&src());
    let cycles = cycles(&graph);
    assert!(
        cycles.is_empty(),
        "import cycles between copilot-eval-core's top-level modules: {cycles:?}\n\
         graph: {graph:#?}\nsee ARCHITECTURE.md for which module may import which"
    );
}

#[test]
fn no_source_file_over_the_limit() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let long: Vec<String> = files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n != "tests.rs"))
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).unwrap().lines().count();
            let shown = f.strip_prefix(src()).unwrap_or(f).display().to_string();
            (lines > MAX_LINES).then(|| format!("src/{shown} ({lines} lines)"))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split them along their seams): {long:?}"
    );
}

/// Layering rules: the stages below `run` never reach up into it or into the runner side.
#[test]
fn lower_stages_do_not_import_higher_ones() {
    let graph = graph(&src());
    let rules: &[(&str, &[&str])] = &[
        (
            "eval",
            &[
                "run", "cassette", "harness", "suite", "report", "evidence", "result",
            ],
        ),
        (
            "evidence",
            &[
                "run", "cassette", "harness", "suite", "report", "result", "cost",
            ],
        ),
        ("run", &["cassette", "harness", "suite", "report"]),
        (
            "model_server",
            &["run", "cassette", "harness", "suite", "report"],
        ),
        (
            "customization",
            &["run", "cassette", "harness", "suite", "report", "evidence"],
        ),
    ];
    let mut broken = Vec::new();
    for (module, forbidden) in rules {
        let Some(uses) = graph.get(*module) else {
            continue;
        };
        for f in *forbidden {
            if uses.contains(*f) {
                broken.push(format!("{module} imports {f}"));
            }
        }
    }
    assert!(broken.is_empty(), "layering rules broken: {broken:?}");
}

#[test]
fn the_reference_scan_sees_grouped_and_inline_paths() {
    let text = "use crate::{a::X, b::{Y, Z},\n    c};\nlet x = crate::run::go();\n\
                // crate::hidden\nmy_crate::no;";
    let found = references(text);
    let expected: BTreeSet<String> = ["a", "b", "c", "run"].map(String::from).into();
    assert_eq!(found, expected);
}

/// A user's test binary links core without the `runner` feature: none of the runner's own
/// dependencies reach the quick-start example (a crate written as a user writes one).
#[test]
fn users_test_binaries_do_not_link_the_runner_dependencies() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args([
            "tree",
            "-p",
            "quickstart",
            "-e",
            "normal,dev",
            "--prefix",
            "none",
        ])
        .args(["--offline"])
        .current_dir(workspace)
        .output()
        .unwrap();
    let tree = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && tree.contains("copilot-eval-core"),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let runner_only = [
        "indicatif ",
        "cargo_metadata ",
        "quick-junit ",
        "toml_edit ",
    ];
    let linked: Vec<&str> = tree
        .lines()
        .filter(|line| runner_only.iter().any(|dep| line.starts_with(dep)))
        .collect();
    assert!(
        linked.is_empty(),
        "the quick-start example links {linked:?}"
    );
}
