//! The shape rules of ARCHITECTURE.md, checked on the source trees of the workspace's crates:
//! - no import cycle between copilot-eval-core's top-level modules;
//! - no file circle inside a folder: two sibling modules (files or folders of one folder) that
//!   use each other, in every crate;
//! - no source file other than a `tests.rs` over 800 lines;
//! - no function of core's non-test code over 150 lines, and each over 100 says in a comment
//!   why it is one piece;
//! - the layering rules that ARCHITECTURE.md states (which module may import which);
//! - every module of every crate has its place in ARCHITECTURE.md's module tables;
//! - a user's test binary compiles none of the runner's modules and links none of its
//!   dependencies.
//!
//! A module is what a `mod NAME;` declares, from the crate root down (a file `NAME.rs` or
//! `NAME/mod.rs`, with its own children); modules declared under `#[cfg(test)]` are tests and do
//! not count. A reference is a `crate::...` or `super::...` path (grouped imports included) in a
//! line of code of a non-test module; comment lines and inline `#[cfg(test)] mod ... { }`
//! blocks do not count. A reference through a re-export of a folder's `mod.rs` counts for the
//! folder, not for the sibling it re-exports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod support;
use support::code_lines;

/// Longest a non-test source file may be, in lines.
const MAX_LINES: usize = 800;

/// Longest a function of core's non-test code may be, in lines (from its `fn` line to its
/// closing brace).
const MAX_FN_LINES: usize = 150;

/// Over this many lines, a function of core says why it is one piece: a comment holding the
/// words `one piece`, above it or in its body.
const EXPLAINED_FN_LINES: usize = 100;

/// The workspace's library and command crates: directory, crate root file, and the heading of
/// their module table in ARCHITECTURE.md.
const CRATES: &[(&str, &str, &str)] = &[
    (
        "copilot-eval-core",
        "lib.rs",
        "## Core's modules (`copilot-eval-core/src`)",
    ),
    (
        "copilot-eval-macros",
        "lib.rs",
        "## The attribute's modules (`copilot-eval-macros/src`)",
    ),
    (
        "cargo-copilot-eval",
        "main.rs",
        "## The command's modules (`cargo-copilot-eval/src`)",
    ),
];

/// Core's modules that only the `cargo copilot-eval` command uses: declared under
/// `#[cfg(feature = "runner")]`, so a user's test binary never compiles them.
const RUNNER_ONLY: &[&str] = &[
    "suite",
    "init",
    "lint",
    "doctor",
    "cassette::split",
    "report::html",
    "report::junit",
    "report::merge",
    "run::pool::control",
];

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `path` relative to the workspace, for messages.
fn shown(path: &Path) -> String {
    path.strip_prefix(workspace())
        .unwrap_or(path)
        .display()
        .to_string()
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

/// One module of a crate, as its crate root declares it.
#[derive(Debug, Clone)]
struct Module {
    /// Its path below the crate root: `["cassette", "normalize"]`; empty for the root.
    path: Vec<String>,
    /// Its file.
    file: PathBuf,
    /// Declared under `#[cfg(feature = "runner")]`, itself or an ancestor.
    runner: bool,
}

impl Module {
    fn name(&self) -> String {
        self.path.join("::")
    }
}

/// The `mod NAME;` declarations of a file's text: (line index, name, its attributes).
fn declarations(text: &str) -> Vec<(usize, String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let mut rest = line.trim();
        if let Some(after) = rest.strip_prefix("pub") {
            rest = after.trim_start();
            if rest.starts_with('(') {
                let Some(close) = rest.find(')') else {
                    continue;
                };
                rest = rest[close + 1..].trim_start();
            }
        }
        let Some(decl) = rest.strip_prefix("mod ") else {
            continue;
        };
        let Some(name) = decl.trim().strip_suffix(';') else {
            continue; // an inline module
        };
        let mut attributes = String::new();
        for above in lines[..i].iter().rev() {
            let above = above.trim();
            if above.starts_with("#[") || above.starts_with("///") {
                attributes.push_str(above);
                attributes.push('\n');
            } else {
                break;
            }
        }
        found.push((i, name.trim().to_owned(), attributes));
    }
    found
}

/// Every non-test module of the crate whose root file is `root` (the root first).
fn module_tree(root: &Path) -> Vec<Module> {
    let mut modules = Vec::new();
    let mut pending = vec![Module {
        path: Vec::new(),
        file: root.to_path_buf(),
        runner: false,
    }];
    while let Some(module) = pending.pop() {
        let text = std::fs::read_to_string(&module.file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", module.file.display()));
        let file_name = module.file.file_name().unwrap().to_string_lossy();
        let dir = if matches!(file_name.as_ref(), "lib.rs" | "main.rs" | "mod.rs") {
            module.file.parent().unwrap().to_path_buf()
        } else {
            module.file.with_extension("")
        };
        for (line, name, attributes) in declarations(&text) {
            assert!(
                !attributes.contains("#[path"),
                "{}:{}: `#[path]` on `mod {name};`: the architecture test finds a module's \
                 file by its name; drop the attribute and move the file",
                shown(&module.file),
                line + 1
            );
            if attributes.contains("cfg(test)") || attributes.contains("cfg(all(test") {
                continue;
            }
            let file = [
                dir.join(format!("{name}.rs")),
                dir.join(&name).join("mod.rs"),
            ]
            .into_iter()
            .find(|f| f.is_file())
            .unwrap_or_else(|| {
                panic!(
                    "{}:{}: `mod {name};` has no file {name}.rs or {name}/mod.rs in {}",
                    shown(&module.file),
                    line + 1,
                    shown(&dir)
                )
            });
            let mut path = module.path.clone();
            path.push(name);
            pending.push(Module {
                path,
                file,
                runner: module.runner || attributes.contains("feature = \"runner\""),
            });
        }
        modules.push(module);
    }
    modules.sort_by(|a, b| a.path.cmp(&b.path));
    modules
}

/// The paths of a use tree starting at `s` (what follows `crate::` or `super::`): `a::b::X` is
/// `[a, b, X]`; `{a::X, b::{Y, Z}}` is `[a, X]`, `[b, Y]`, `[b, Z]`. Returns the paths and the
/// bytes read.
fn use_tree(s: &str) -> (Vec<Vec<String>>, usize) {
    let bytes = s.as_bytes();
    let skip_ws = |mut i: usize| {
        while i < bytes.len() && (bytes[i] as char).is_whitespace() {
            i += 1;
        }
        i
    };
    let mut i = skip_ws(0);
    if i < bytes.len() && bytes[i] == b'{' {
        i += 1;
        let mut paths = Vec::new();
        loop {
            i = skip_ws(i);
            if i >= bytes.len() {
                return (paths, i);
            }
            if bytes[i] == b'}' {
                return (paths, i + 1);
            }
            let (sub, read) = use_tree(&s[i..]);
            paths.extend(sub);
            i = skip_ws(i + read);
            match bytes.get(i) {
                Some(b',') => i += 1,
                Some(b'}') => return (paths, i + 1),
                _ => return (paths, i),
            }
        }
    }
    let start = i;
    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
        i += 1;
    }
    if i == start {
        return (vec![Vec::new()], i);
    }
    let ident = s[start..i].to_owned();
    if s[i..].starts_with("::") {
        let (subs, read) = use_tree(&s[i + 2..]);
        let paths = subs
            .into_iter()
            .map(|mut sub| {
                sub.insert(0, ident.clone());
                sub
            })
            .collect();
        return (paths, i + 2 + read);
    }
    (vec![vec![ident]], i)
}

/// The absolute paths (below the crate root) that the code of the module at `module` (its
/// path) names with `crate::` and `super::`, each with the line (1-based) it is on.
fn references(text: &str, module: &[String]) -> Vec<(Vec<String>, usize)> {
    let code = code_lines(text);
    let mut found = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let Some(next) = [rest.find("crate::"), rest.find("super::")]
            .into_iter()
            .flatten()
            .min()
        else {
            break;
        };
        let start = at + next;
        let boundary = code[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if !boundary {
            at = start + 1;
            continue;
        }
        let mut base: Vec<String>;
        let mut cursor = start;
        if code[cursor..].starts_with("crate::") {
            base = Vec::new();
            cursor += "crate::".len();
        } else {
            base = module.to_vec();
            while code[cursor..].starts_with("super::") {
                base.pop();
                cursor += "super::".len();
            }
        }
        let (paths, read) = use_tree(&code[cursor..]);
        let line = code[..start].matches('\n').count() + 1;
        for path in paths {
            let mut absolute = base.clone();
            absolute.extend(path);
            found.push((absolute, line));
        }
        at = cursor + read.max(1);
    }
    found
}

/// Where one sibling uses another: the file, the line number and the line's text.
type Evidence = (PathBuf, usize, String);

/// For the folder of module `parent` (its path): each child -> the other children its non-test
/// code uses, with the first place each use is made.
fn folder_graph(
    modules: &[Module],
    parent: &[String],
) -> BTreeMap<String, BTreeMap<String, Evidence>> {
    let children: BTreeSet<String> = modules
        .iter()
        .filter(|m| m.path.len() == parent.len() + 1 && m.path.starts_with(parent))
        .map(|m| m.path[parent.len()].clone())
        .collect();
    let mut graph: BTreeMap<String, BTreeMap<String, Evidence>> = children
        .iter()
        .map(|c| (c.clone(), BTreeMap::new()))
        .collect();
    for module in modules
        .iter()
        .filter(|m| m.path.len() > parent.len() && m.path.starts_with(parent))
    {
        let from = &module.path[parent.len()];
        let text = std::fs::read_to_string(&module.file).unwrap();
        for (path, line) in references(&text, &module.path) {
            if path.len() <= parent.len() || !path.starts_with(parent) {
                continue;
            }
            let to = &path[parent.len()];
            if to != from && children.contains(to) {
                graph
                    .get_mut(from)
                    .unwrap()
                    .entry(to.clone())
                    .or_insert_with(|| {
                        let shown_line = text.lines().nth(line - 1).unwrap_or("").trim().to_owned();
                        (module.file.clone(), line, shown_line)
                    });
            }
        }
    }
    graph
}

/// Top-level module -> the other top-level modules its non-test code uses (core).
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let modules = module_tree(&src.join("lib.rs"));
    folder_graph(&modules, &[])
        .into_iter()
        .map(|(m, uses)| (m, uses.into_keys().collect()))
        .collect()
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

/// Inside every folder of every crate (the crate root's own folder included), no two sibling
/// modules use each other, directly or around a circle.
#[test]
fn no_file_circle_inside_a_folder() {
    let mut circles = Vec::new();
    for (dir, root, _) in CRATES {
        let modules = module_tree(&workspace().join(dir).join("src").join(root));
        for parent in &modules {
            let graph = folder_graph(&modules, &parent.path);
            let plain: BTreeMap<String, BTreeSet<String>> = graph
                .iter()
                .map(|(m, uses)| (m.clone(), uses.keys().cloned().collect()))
                .collect();
            for circle in cycles(&plain) {
                let uses: Vec<String> = circle
                    .iter()
                    .flat_map(|from| {
                        graph[from]
                            .iter()
                            .filter(|(to, _)| circle.contains(to))
                            .map(move |(to, (file, line, text))| {
                                format!("  {from} uses {to}: {}:{line}: `{text}`", shown(file))
                            })
                    })
                    .collect();
                let folder = parent.file.parent().unwrap();
                circles.push(format!(
                    "file circle in {}/ (module `{}`) between {}:\n{}",
                    shown(folder),
                    if parent.path.is_empty() {
                        "crate".to_owned()
                    } else {
                        parent.name()
                    },
                    circle.join(", "),
                    uses.join("\n")
                ));
            }
        }
    }
    assert!(
        circles.is_empty(),
        "{}\nfix: move the piece both sides need to the file that owns it, or to a small new \
         module of the folder named after what it holds, so that the use runs one way only",
        circles.join("\n")
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

/// One function of a source file, as [`functions`] measures it.
#[derive(Debug, PartialEq)]
struct Function {
    name: String,
    /// The 1-based line of its `fn`.
    line: usize,
    /// Lines from its `fn` line to its closing brace, both counted.
    lines: usize,
    /// A comment above it (its doc comment, attributes and comments up to the item before) or
    /// in its body holds the words `one piece`.
    explained: bool,
}

/// The functions with a body in `text` (a Rust source file; test modules and comments left
/// out), measured on its code with strings blanked, so a brace in a string or a comment does
/// not count.
fn functions(text: &str) -> Vec<Function> {
    let code = support::lex(&code_lines(text)).bare;
    let original: Vec<&str> = text.lines().collect();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let head = regex::Regex::new(r"\bfn\s+(\w+)").unwrap();
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    for m in head.captures_iter(&code) {
        let start = m.get(0).unwrap().start();
        // The body opens at the first `{` after the signature, unless a `;` ends it first (a
        // trait's declaration). Brackets in the signature (generics, closures' types) hold no
        // braces except a where clause's, which Rust does not allow before the body.
        let mut at = m.get(0).unwrap().end();
        while at < bytes.len() && bytes[at] != b'{' && bytes[at] != b';' {
            at += 1;
        }
        if at >= bytes.len() || bytes[at] == b';' {
            continue;
        }
        let mut depth = 0i64;
        let mut end = at;
        for (offset, &b) in bytes[at..].iter().enumerate() {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = at + offset;
                        break;
                    }
                }
                _ => {}
            }
        }
        let (first, last) = (line_of(start), line_of(end));
        let mut above = first - 1;
        while above > 0 {
            let line = original[above - 1].trim_start();
            if line.starts_with("//") || line.starts_with("#[") || line.starts_with("#!") {
                above -= 1;
            } else {
                break;
            }
        }
        let explained = original[above..last.min(original.len())]
            .iter()
            .any(|l| l.contains("//") && l.to_lowercase().contains("one piece"));
        found.push(Function {
            name: m[1].to_owned(),
            line: first,
            lines: last - first + 1,
            explained,
        });
    }
    found
}

/// Functions of core read in one go: none over [`MAX_FN_LINES`] lines, and each over
/// [`EXPLAINED_FN_LINES`] says in a comment why it is one piece (split the others along their
/// real steps).
#[test]
fn no_function_a_reader_must_scroll() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut long = Vec::new();
    let mut unexplained = Vec::new();
    let mut measured = 0;
    for file in files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n != "tests.rs"))
    {
        let shown = format!("src/{}", file.strip_prefix(src()).unwrap_or(file).display());
        for f in functions(&std::fs::read_to_string(file).unwrap()) {
            measured += 1;
            let at = format!("{shown}:{} {} ({} lines)", f.line, f.name, f.lines);
            if f.lines > MAX_FN_LINES {
                long.push(at);
            } else if f.lines > EXPLAINED_FN_LINES && !f.explained {
                unexplained.push(at);
            }
        }
    }
    assert!(measured > 1000, "only {measured} functions measured");
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines (split them along their real steps):\n{}",
        long.join("\n")
    );
    assert!(
        unexplained.is_empty(),
        "functions over {EXPLAINED_FN_LINES} lines without a comment saying why they are one \
         piece (`// One piece: ...`), or split them:\n{}",
        unexplained.join("\n")
    );
}

/// The function measure counts a body's lines, skips declarations without a body, test modules,
/// and braces in strings and comments, and sees the `one piece` comment.
#[test]
fn the_function_measure_counts_what_it_should() {
    let text = r#"
/// Doc.
fn short() {
    let s = "}}}";
    // }
}

trait T {
    fn declared(&self);
}

// One piece: a sequence of steps that share every local.
fn explained() {
    if true {
        let c = '{';
    }
}

#[cfg(test)]
mod tests {
    fn in_a_test() {}
}
"#;
    let found = functions(text);
    assert_eq!(
        found,
        vec![
            Function {
                name: "short".into(),
                line: 3,
                lines: 4,
                explained: false
            },
            Function {
                name: "explained".into(),
                line: 13,
                lines: 5,
                explained: true
            },
        ]
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
        ("cost", &["run", "cassette", "harness", "suite", "report"]),
        ("cassette", &["harness", "suite", "report"]),
        (
            "mcp",
            &[
                "run", "cassette", "harness", "suite", "report", "evidence", "result", "eval",
            ],
        ),
        (
            "artifact",
            &[
                "run", "cassette", "harness", "suite", "report", "evidence", "result", "cost",
            ],
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
fn the_reference_scan_sees_grouped_inline_and_relative_paths() {
    let text = "use crate::{a::X, b::{Y, Z},\n    c};\nlet x = crate::run::go();\n\
                // crate::hidden\nmy_crate::no;\nuse super::{sibling::S, other};\n\
                super::super::up::f();\n#[cfg(test)]\nmod tests {\n    use crate::tested;\n}\n";
    let module = ["top".to_owned(), "here".to_owned()];
    let found: BTreeSet<(String, usize)> = references(text, &module)
        .into_iter()
        .map(|(path, line)| (path.join("::"), line))
        .collect();
    let expected: BTreeSet<(String, usize)> = [
        ("a::X", 1),
        ("b::Y", 1),
        ("b::Z", 1),
        ("c", 1),
        ("run::go", 3),
        ("top::sibling::S", 6),
        ("top::other", 6),
        ("up::f", 7),
    ]
    .map(|(p, l)| (p.to_owned(), l))
    .into();
    assert_eq!(found, expected);
}

#[test]
fn the_module_tree_follows_the_declarations() {
    let modules = module_tree(&src().join("lib.rs"));
    let find = |name: &str| modules.iter().find(|m| m.name() == name);
    // A folder module, a file under a file module (`skill.rs` + `skill/links.rs`), a runner
    // module, and no test module.
    assert!(find("run::pool::router").is_some());
    assert!(find("customization::skill::links").is_some());
    assert!(find("suite::drift::classify").is_some_and(|m| m.runner));
    assert!(find("run").is_some_and(|m| !m.runner));
    assert!(find("eval::tests").is_none());
}

/// One row of a module table: the names of its first cell and the names of its last.
struct Row {
    names: Vec<String>,
    holds: Vec<String>,
}

/// The texts between pairs of backticks.
fn backticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(|s| s.trim().to_owned())
        .collect()
}

/// The rows of the first table after the line `heading` (`None` when there is no such line).
fn table_after(doc: &str, heading: &str) -> Option<Vec<Row>> {
    let mut lines = doc.lines().skip_while(|l| l.trim() != heading);
    lines.next()?;
    let rows = lines
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|line| {
            let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
            Row {
                names: backticked(cells[0]),
                holds: backticked(cells[cells.len() - 1]),
            }
        })
        .collect();
    Some(rows)
}

/// Every module of every crate has its place in ARCHITECTURE.md's module table of its crate:
/// a top-level module has a row (`name`, or `name/` for a folder); a folder module has a row
/// `path/to/folder/` whose last cell names each of its modules (`name` or `name/`). A row names
/// only modules that exist, or files (`name.rs`, an `include!`d file) that exist.
#[test]
fn every_module_has_its_place_in_architecture_md() {
    let doc_path = workspace().join("ARCHITECTURE.md");
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    let mut missing = Vec::new();
    for (dir, root, heading) in CRATES {
        let modules = module_tree(&workspace().join(dir).join("src").join(root));
        let Some(rows) = table_after(&doc, heading) else {
            missing.push(format!(
                "ARCHITECTURE.md has no heading `{heading}`: add it, with a table `| module | \
                 stage | holds |` of {dir}/src's modules"
            ));
            continue;
        };
        let spelled = |path: &[String]| path.join("/");
        let has = |tokens: &[String], name: &str| {
            tokens
                .iter()
                .any(|t| t == name || t.strip_suffix('/') == Some(name))
        };
        for module in modules.iter().filter(|m| !m.path.is_empty()) {
            let name = module.path.last().unwrap();
            let parent = &module.path[..module.path.len() - 1];
            if parent.is_empty() {
                if !rows.iter().any(|r| has(&r.names, name)) {
                    missing.push(format!(
                        "{} (module `{}`) has no row in the table under {heading}: add the row \
                         | `{name}` | <stage> | <what it holds> |",
                        shown(&module.file),
                        module.name()
                    ));
                }
                continue;
            }
            let folder = format!("{}/", spelled(parent));
            match rows.iter().find(|r| r.names.contains(&folder)) {
                None => {
                    let siblings: Vec<&str> = modules
                        .iter()
                        .filter(|m| m.path.len() == module.path.len() && m.path.starts_with(parent))
                        .map(|m| m.path.last().unwrap().as_str())
                        .collect();
                    let text = format!(
                        "{dir}/src/{folder} (module `{}`) has no row in the table under \
                         {heading}: add the row | `{folder}` | <stage> | <what it holds, naming \
                         each of its modules: {}> |",
                        parent.join("::"),
                        siblings.join(", ")
                    );
                    if !missing.contains(&text) {
                        missing.push(text);
                    }
                }
                Some(row) if !has(&row.holds, name) => missing.push(format!(
                    "{} (module `{}`) is missing from the row `{folder}` of the table under \
                     {heading}: name it there (`{name}`) with what it holds",
                    shown(&module.file),
                    module.name()
                )),
                Some(_) => {}
            }
        }
        for row in &rows {
            for name in &row.names {
                if name.ends_with(".rs") {
                    // A file that is no module (an `include!`d one): it must exist.
                    if !workspace().join(dir).join("src").join(name).is_file() {
                        missing.push(format!(
                            "the table under {heading} has a row `{name}`, which is no file of \
                             {dir}/src: rename or remove the row"
                        ));
                    }
                    continue;
                }
                let path: Vec<String> = name
                    .trim_end_matches('/')
                    .split('/')
                    .map(str::to_owned)
                    .collect();
                if !modules.iter().any(|m| m.path == path) {
                    missing.push(format!(
                        "the table under {heading} has a row `{name}`, which is no module of \
                         {dir}/src: rename or remove the row"
                    ));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{}:\n{}",
        shown(&doc_path),
        missing.join("\n")
    );
}

/// The list of runner-only modules is what the `#[cfg(feature = "runner")]` declarations say.
#[test]
fn the_runner_only_list_is_what_the_declarations_gate() {
    let modules = module_tree(&src().join("lib.rs"));
    // The outermost gated modules (a gated module's children are gated with it).
    let gated: BTreeSet<String> = modules
        .iter()
        .filter(|m| m.runner)
        .filter(|m| {
            !modules
                .iter()
                .any(|p| p.runner && p.path.len() < m.path.len() && m.path.starts_with(&p.path))
        })
        .map(Module::name)
        .collect();
    let listed: BTreeSet<String> = RUNNER_ONLY.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        gated, listed,
        "copilot-eval-core's modules declared under #[cfg(feature = \"runner\")] (left) differ \
         from RUNNER_ONLY in copilot-eval-core/tests/architecture.rs (right): gate the module \
         where its parent declares it, or update the list (and ARCHITECTURE.md's sentence on \
         the feature)"
    );
}

/// A user's test binary compiles none of the runner-only modules: the copilot-eval-core that
/// `cargo build -p quickstart --tests` builds for the quick-start example (a crate written as
/// a user writes one) holds none of their source files. The compiled library records every
/// source file it was built from (for its spans and line tables), so this is what was compiled,
/// not what the declarations say.
#[test]
fn users_test_binaries_do_not_compile_the_runner_only_modules() {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args(["build", "-p", "quickstart", "--tests", "--offline"])
        .args(["--message-format=json"])
        .current_dir(workspace())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo build -p quickstart --tests failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let artifact = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "copilot_eval_core")
        .expect("cargo build -p quickstart --tests reported no copilot_eval_core artifact");
    let features = artifact["features"].to_string();
    let rlib = artifact["filenames"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(serde_json::Value::as_str)
        .find(|f| f.ends_with(".rlib"))
        .unwrap_or_else(|| panic!("no .rlib among the artifact's files: {artifact}"));
    let bytes = std::fs::read(rlib).unwrap();
    let compiled = |file: &Path| {
        let name = format!(
            "copilot-eval-core/src/{}",
            file.strip_prefix(src()).unwrap().display()
        );
        bytes
            .windows(name.len())
            .any(|window| window == name.as_bytes())
    };
    assert!(
        compiled(&src().join("lib.rs")) && compiled(&src().join("run/mod.rs")),
        "{rlib} names neither src/lib.rs nor src/run/mod.rs: this check cannot see which \
         source files the library was compiled from"
    );
    let modules = module_tree(&src().join("lib.rs"));
    let mut found = Vec::new();
    for name in RUNNER_ONLY {
        let path: Vec<String> = name.split("::").map(str::to_owned).collect();
        assert!(
            modules.iter().any(|m| m.path == path),
            "RUNNER_ONLY names `{name}`, which is no module of copilot-eval-core"
        );
        for module in modules.iter().filter(|m| m.path.starts_with(&path)) {
            if compiled(&module.file) {
                found.push(format!("{} (module `{name}`)", shown(&module.file)));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a user's test binary compiles runner-only modules: {found:?} (the quick-start \
         example's copilot-eval-core, features {features}: {rlib}).\nfix: declare each under \
         `#[cfg(feature = \"runner\")]` where its parent declares it (e.g. \
         `#[cfg(feature = \"runner\")] pub mod lint;` in copilot-eval-core/src/lib.rs), and \
         move what the rest of core uses of it out of it"
    );
}

/// A user's test binary links core without the `runner` feature: none of the runner's own
/// dependencies reach the quick-start example (a crate written as a user writes one).
#[test]
fn users_test_binaries_do_not_link_the_runner_dependencies() {
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
        .current_dir(workspace())
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
        "minijinja ",
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
