//! Building the test binaries and listing their eval tests: the test list is data before
//! anything runs.
//!
//! 1. `cargo test --no-run --message-format json-render-diagnostics` (with the package selection)
//!    builds every test target; its JSON messages name each test executable
//!    ([`build_test_binaries`]); `cargo metadata`, run while the build runs, maps them to
//!    package names and roots.
//! 2. Each binary is asked for its tests with `--list --format terse` (listing never runs a
//!    test; the binaries are listed at the same time, each in a thread), and only names ending
//!    in `::__copilot_eval` (the marker `#[copilot_eval]` emits) are kept ([`parse_terse_list`],
//!    [`select`]); ordinary and ignored tests are never selected.
//! 3. User filters select by substring of the test path, like libtest's.
//!
//! Test binaries are listed and run with the library path cargo gives the binaries it runs
//! ([`library_path`]): a proc-macro crate's unit-test binary links the toolchain's `libstd`
//! dynamically and does not start without it.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cargo_metadata::{Message, TargetKind};

use super::SuiteError;
use crate::harness::TEST_MARKER;

/// Which packages to build and search.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum PackageSelection {
    /// Cargo's default: the package in the current directory, or the workspace's default members.
    #[default]
    Default,
    /// `--workspace`: every workspace member.
    Workspace,
    /// `-p NAME` (repeatable).
    Packages(Vec<String>),
}

/// How to build the test binaries.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The cargo executable (`$CARGO`, else `cargo`).
    pub cargo: PathBuf,
    /// `--manifest-path`, when given.
    pub manifest_path: Option<PathBuf>,
    /// The packages.
    pub packages: PackageSelection,
    /// `--test NAME` (repeatable): only these integration test targets are built and searched,
    /// as `cargo test --test NAME` selects them (cargo refuses a name no selected package has,
    /// listing the targets it has). Empty: every test target.
    pub test_targets: Vec<String>,
}

impl BuildOptions {
    /// Build options with cargo from `$CARGO` (set when run through cargo), else `cargo` on the
    /// `PATH`.
    pub fn new(manifest_path: Option<PathBuf>, packages: PackageSelection) -> Self {
        Self {
            cargo: std::env::var_os("CARGO")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("cargo")),
            manifest_path,
            packages,
            test_targets: Vec::new(),
        }
    }

    fn apply(&self, command: &mut Command) {
        if let Some(path) = &self.manifest_path {
            command.arg("--manifest-path").arg(path);
        }
        match &self.packages {
            PackageSelection::Default => {}
            PackageSelection::Workspace => {
                command.arg("--workspace");
            }
            PackageSelection::Packages(names) => {
                for name in names {
                    command.arg("-p").arg(name);
                }
            }
        }
        for target in &self.test_targets {
            command.arg("--test").arg(target);
        }
    }
}

/// One test executable built by cargo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestBinary {
    /// `package` for a library's unit tests, `package::target` for an integration test,
    /// `package::bin/target` (or `example/`, `bench/`) for the others.
    pub id: String,
    /// The package name.
    pub package: String,
    /// The target name.
    pub target: String,
    /// The executable.
    pub path: PathBuf,
    /// The package root, where cargo runs the binary and where the tests run.
    pub cwd: PathBuf,
}

/// One eval test of a binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalTest {
    /// Index into [`TestList::binaries`].
    pub binary: usize,
    /// The libtest name (`path::__copilot_eval`).
    pub test_id: String,
    /// The test path shown to users (`path`).
    pub name: String,
}

/// The eval tests to run, binary by binary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestList {
    /// Every test binary that was built (with or without eval tests).
    pub binaries: Vec<TestBinary>,
    /// The selected eval tests, in binary order then libtest's order (alphabetical).
    pub tests: Vec<EvalTest>,
    /// Eval tests that the filters left out.
    pub filtered_out: usize,
    /// The test paths of the eval tests the filters left out, in list order.
    pub unselected: Vec<String>,
    /// Tests of these binaries that are not eval tests (never run).
    pub other_tests: usize,
}

impl TestList {
    /// The binary of `test`.
    pub fn binary(&self, test: &EvalTest) -> &TestBinary {
        &self.binaries[test.binary]
    }
}

/// Build the test targets and return their executables, sorted by id. Cargo's own progress
/// and diagnostics go to stderr. `cargo metadata` (the package names) runs in a thread while
/// the build runs.
///
/// Errors: cargo cannot be started, the build fails, or `cargo metadata` fails (its error
/// first when both failed).
pub fn build_test_binaries(options: &BuildOptions) -> Result<Vec<TestBinary>, SuiteError> {
    std::thread::scope(|scope| {
        let names = scope.spawn(|| package_names(options));
        let built = build(options);
        let names = names.join().expect("the cargo metadata thread panicked")?;
        let (built, status) = built?;
        if !status.success() {
            return Err(SuiteError::Build(format!(
                "`cargo test --no-run` failed ({status}); see cargo's messages above"
            )));
        }
        let mut binaries: Vec<TestBinary> = built
            .into_iter()
            .map(|built| {
                let package = names
                    .get(&built.package_id)
                    .cloned()
                    .unwrap_or_else(|| built.target.clone());
                TestBinary {
                    id: binary_id(&package, &built.target, built.kind),
                    package,
                    target: built.target,
                    path: built.path,
                    cwd: built.cwd,
                }
            })
            .collect();
        // Cargo reports artifacts in build order, which varies; the list is sorted by binary id.
        binaries.sort_by(|a, b| a.id.cmp(&b.id));
        binaries.dedup_by(|a, b| a.path == b.path);
        Ok(binaries)
    })
}

/// Each workspace package's name by its package id (`cargo metadata --no-deps`).
fn package_names(options: &BuildOptions) -> Result<HashMap<String, String>, SuiteError> {
    let mut metadata = cargo_metadata::MetadataCommand::new();
    metadata.cargo_path(&options.cargo).no_deps();
    if let Some(path) = &options.manifest_path {
        metadata.manifest_path(path);
    }
    let metadata = metadata
        .exec()
        .map_err(|e| SuiteError::Build(format!("cargo metadata failed: {e}")))?;
    super::phases::mark("cargo metadata read");
    Ok(metadata
        .packages
        .iter()
        .map(|p| (p.id.repr.clone(), p.name.to_string()))
        .collect())
}

/// One test executable as cargo's build reported it, before its package is named.
struct Built {
    /// Cargo's package id (`cargo metadata` names it).
    package_id: String,
    /// The target's kind: `lib` (also rlib and proc-macro), `test`, `bin`, `example`,
    /// `bench`, or `other`.
    kind: &'static str,
    target: String,
    path: PathBuf,
    cwd: PathBuf,
}

/// The id of a binary of `package`'s target `target` of kind `kind` ([`Built::kind`]); see
/// [`TestBinary::id`].
fn binary_id(package: &str, target: &str, kind: &str) -> String {
    match kind {
        "lib" => package.to_owned(),
        "bin" | "example" | "bench" => format!("{package}::{kind}/{target}"),
        _ => format!("{package}::{target}"),
    }
}

/// Run `cargo test --no-run` and collect its test executables, with cargo's exit status.
fn build(options: &BuildOptions) -> Result<(Vec<Built>, std::process::ExitStatus), SuiteError> {
    let mut command = Command::new(&options.cargo);
    command
        .args([
            "test",
            "--no-run",
            "--message-format",
            "json-render-diagnostics",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    options.apply(&mut command);
    let mut child = command
        .spawn()
        .map_err(|e| SuiteError::Build(format!("cannot start {}: {e}", options.cargo.display())))?;
    let stdout = child.stdout.take().expect("piped stdout");
    let mut binaries = Vec::new();
    for message in Message::parse_stream(BufReader::new(stdout)) {
        let message =
            message.map_err(|e| SuiteError::Build(format!("reading cargo's output: {e}")))?;
        if let Message::CompilerArtifact(artifact) = message {
            let Some(executable) = artifact.executable else {
                continue;
            };
            if !artifact.profile.test {
                continue;
            }
            let kind = match artifact.target.kind.first() {
                Some(TargetKind::Lib | TargetKind::RLib | TargetKind::ProcMacro) => "lib",
                Some(TargetKind::Test) => "test",
                Some(TargetKind::Bin) => "bin",
                Some(TargetKind::Example) => "example",
                Some(TargetKind::Bench) => "bench",
                _ => "other",
            };
            let target = artifact.target.name.clone();
            let cwd = artifact
                .manifest_path
                .parent()
                .map(|p| p.as_std_path().to_path_buf())
                .unwrap_or_else(|| PathBuf::from("."));
            binaries.push(Built {
                package_id: artifact.package_id.repr.clone(),
                kind,
                target,
                path: executable.into_std_path_buf(),
                cwd,
            });
        }
    }
    let status = child
        .wait()
        .map_err(|e| SuiteError::Build(format!("waiting for cargo: {e}")))?;
    Ok((binaries, status))
}

/// Every test name `binary` lists (`--list --format terse`), ignored ones included.
///
/// Errors: the binary cannot be started or exits unsuccessfully.
pub fn list_binary(binary: &TestBinary) -> Result<Vec<String>, SuiteError> {
    let (variable, value) = library_path(binary);
    let output = Command::new(&binary.path)
        .args(["--list", "--format", "terse"])
        .current_dir(&binary.cwd)
        .env(variable, value)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| SuiteError::List(format!("cannot run {}: {e}", binary.path.display())))?;
    if !output.status.success() {
        return Err(SuiteError::List(format!(
            "{} --list failed ({}): {}",
            binary.path.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    Ok(parse_terse_list(&String::from_utf8_lossy(&output.stdout)))
}

/// The variable and value of the library path `binary` runs with, as cargo sets it for the test
/// binaries it runs: the binary's own folder (`target/<profile>/deps`), the toolchain's target
/// library folder (`rustc --print target-libdir`: `<sysroot>/lib/rustlib/<host>/lib`, where the
/// `libstd` a proc-macro crate's test binary links lives) and `<sysroot>/lib` (`rustc --print
/// sysroot`; asked once per process), before what the environment already holds. The
/// variable is `LD_LIBRARY_PATH`, `DYLD_FALLBACK_LIBRARY_PATH` on macOS (with its default
/// folders when unset, as cargo adds them), `PATH` on Windows.
pub fn library_path(binary: &TestBinary) -> (&'static str, OsString) {
    let toolchain_libs = toolchain_libs(Some(&binary.cwd));
    let variable = if cfg!(windows) {
        "PATH"
    } else if cfg!(target_os = "macos") {
        "DYLD_FALLBACK_LIBRARY_PATH"
    } else {
        "LD_LIBRARY_PATH"
    };
    let mut folders: Vec<PathBuf> = binary
        .path
        .parent()
        .map(Path::to_path_buf)
        .into_iter()
        .collect();
    folders.extend(toolchain_libs.iter().cloned());
    match std::env::var_os(variable).filter(|v| !v.is_empty()) {
        Some(existing) => folders.extend(std::env::split_paths(&existing)),
        None if cfg!(target_os = "macos") => {
            if let Some(home) = std::env::var_os("HOME") {
                folders.push(PathBuf::from(home).join("lib"));
            }
            folders.extend(["/usr/local/lib", "/usr/lib"].map(PathBuf::from));
        }
        None => {}
    }
    let value = std::env::join_paths(&folders).unwrap_or_default();
    (variable, value)
}

/// The toolchain's target library folder and `<sysroot>/lib` (`<sysroot>/bin` on Windows):
/// `$RUSTC` (else `rustc`) `--print target-libdir --print sysroot`, asked once per process, in
/// `cwd` (where a rustup toolchain file or override applies) by whichever caller asks first;
/// empty when rustc cannot tell. [`discover`] asks while the tests are built.
fn toolchain_libs(cwd: Option<&Path>) -> &'static [PathBuf] {
    static TOOLCHAIN_LIBS: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    TOOLCHAIN_LIBS.get_or_init(|| {
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let mut command = Command::new(rustc);
        command
            .args(["--print", "target-libdir", "--print", "sysroot"])
            .stdin(Stdio::null());
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        let Some(output) = command.output().ok().filter(|o| o.status.success()) else {
            return Vec::new();
        };
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let target_libdir = lines.next().map(PathBuf::from);
        let sysroot_lib = lines
            .next()
            .map(|sysroot| PathBuf::from(sysroot).join(if cfg!(windows) { "bin" } else { "lib" }));
        target_libdir.into_iter().chain(sysroot_lib).collect()
    })
}

/// The warning for a selection where no eval test matched. With eval tests that the filters
/// left out, it says what filters match (eval test paths, `module::function`, not file names;
/// `--test NAME` selects a test file) and names the three test paths most similar to what was
/// typed ([`similarity`]); with none at all, it says how to mark an eval test.
pub fn no_match_warning(list: &TestList, filters: &[String]) -> String {
    let counts = format!(
        "{}, {} filtered out",
        super::display::count(list.other_tests as u64, "other test", "other tests"),
        super::display::count(list.filtered_out as u64, "eval test", "eval tests")
    );
    if list.unselected.is_empty() || filters.is_empty() {
        return format!(
            "warning: no eval test matched ({counts}); mark a test with #[copilot_eval]"
        );
    }
    let mut ranked: Vec<(f64, &str)> = list
        .unselected
        .iter()
        .map(|name| {
            let best = filters
                .iter()
                .map(|f| similarity(f, name))
                .fold(0.0, f64::max);
            (best, name.as_str())
        })
        .collect();
    // Most similar first; equally similar paths in list order.
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    ranked.dedup_by(|a, b| a.1 == b.1);
    let nearest: Vec<&str> = ranked.iter().take(3).map(|(_, name)| *name).collect();
    format!(
        "warning: no eval test matched the filters ({counts}); filters match eval test paths (`module::function`, as --list shows them), not file names, by substring (whole paths with --exact; `--test NAME` selects one test file, as cargo test's); nearest: {}, ...",
        nearest.join(", ")
    )
}

/// How similar a typed filter is to an eval test path, from 0 (nothing alike) to 1 (equal):
/// the highest Jaro-Winkler similarity (`strsim`) between a form of the filter (as typed, or
/// its last segment after `::` or `/` without `.rs`) and a form of the path (whole, or its
/// last segment), so `passes_in_modul` is nearest to `nested::passes_in_a_module`.
pub fn similarity(filter: &str, path: &str) -> f64 {
    let path_forms = [path, path.rsplit("::").next().unwrap_or(path)];
    filter_forms(filter)
        .iter()
        .flat_map(|form| path_forms.map(|p| strsim::jaro_winkler(form, p)))
        .fold(0.0, f64::max)
}

/// A filter as typed and its last segment (after `::` or `/`, a `.rs` removed), the forms
/// compared with test paths.
fn filter_forms(filter: &str) -> Vec<String> {
    let last = filter
        .rsplit(['/', ':'])
        .find(|s| !s.is_empty())
        .unwrap_or(filter);
    let last = last.strip_suffix(".rs").unwrap_or(last);
    vec![filter.to_owned(), last.to_owned()]
}

/// The test names in libtest's `--list --format terse` output (`name: test` lines; benchmarks
/// and other lines are skipped).
pub fn parse_terse_list(output: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect()
}

/// Whether a libtest name is an eval test (ends in `::__copilot_eval`); returns its test path.
pub fn eval_test_path(test_id: &str) -> Option<&str> {
    test_id
        .strip_suffix(TEST_MARKER)
        .and_then(|rest| rest.strip_suffix("::"))
        .filter(|path| !path.is_empty())
}

/// Whether `name` is selected by `filters`: no filter selects everything; otherwise any filter
/// that is a substring of `name` selects it, or with `exact` (`--exact`, as libtest's) any filter
/// equal to `name`.
pub fn matches_filters(name: &str, filters: &[String], exact: bool) -> bool {
    filters.is_empty()
        || filters.iter().any(|f| {
            if exact {
                name == f
            } else {
                name.contains(f.as_str())
            }
        })
}

/// Build the test list from each binary's test names (`names[i]` belongs to `binaries[i]`),
/// keeping only eval tests that `filters` select ([`matches_filters`]).
pub fn select(
    binaries: Vec<TestBinary>,
    names: &[Vec<String>],
    filters: &[String],
    exact: bool,
) -> TestList {
    let mut list = TestList {
        binaries,
        ..Default::default()
    };
    for (index, names) in names.iter().enumerate() {
        for test_id in names {
            match eval_test_path(test_id) {
                Some(path) if matches_filters(path, filters, exact) => list.tests.push(EvalTest {
                    binary: index,
                    test_id: test_id.clone(),
                    name: path.to_owned(),
                }),
                Some(path) => {
                    list.filtered_out += 1;
                    list.unselected.push(path.to_owned());
                }
                None => list.other_tests += 1,
            }
        }
    }
    list
}

/// Build, list and select: the whole discovery. While the tests are built, the toolchain's
/// library folders are asked (`rustc --print`, in the folder of `--manifest-path`, else the
/// current one); the binaries are then listed at the same time, each in a thread.
///
/// Errors: as [`build_test_binaries`] and [`list_binary`] (the first binary's error, in list
/// order, when several fail).
pub fn discover(
    options: &BuildOptions,
    filters: &[String],
    exact: bool,
) -> Result<TestList, SuiteError> {
    std::thread::scope(|scope| {
        let manifest_dir = options
            .manifest_path
            .as_deref()
            .and_then(Path::parent)
            .filter(|dir| !dir.as_os_str().is_empty());
        scope.spawn(move || toolchain_libs(manifest_dir));
        let binaries = build_test_binaries(options)?;
        super::phases::mark("cargo test --no-run done");
        let names = std::thread::scope(|listing| {
            let listed: Vec<_> = binaries
                .iter()
                .map(|binary| listing.spawn(move || list_binary(binary)))
                .collect();
            listed
                .into_iter()
                .map(|thread| thread.join().expect("a listing thread panicked"))
                .collect::<Result<Vec<_>, _>>()
        })?;
        Ok(select(binaries, &names, filters, exact))
    })
}

/// The path of `path` relative to `base` when it is inside it, for display.
pub fn display_path(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binary(id: &str) -> TestBinary {
        TestBinary {
            id: id.to_owned(),
            package: "p".to_owned(),
            target: "t".to_owned(),
            path: PathBuf::from("/bin/true"),
            cwd: PathBuf::from("/"),
        }
    }

    #[test]
    fn binary_ids_name_the_package_and_the_target_by_kind() {
        assert_eq!(binary_id("quickstart", "quickstart", "lib"), "quickstart");
        assert_eq!(
            binary_id("quickstart", "evals", "test"),
            "quickstart::evals"
        );
        assert_eq!(binary_id("p", "tool", "bin"), "p::bin/tool");
        assert_eq!(binary_id("p", "demo", "example"), "p::example/demo");
        assert_eq!(binary_id("p", "speed", "bench"), "p::bench/speed");
        assert_eq!(binary_id("p", "t", "other"), "p::t");
    }

    #[test]
    fn terse_lists_keep_tests_only() {
        let out = "a::b: test\nc::__copilot_eval: test\nbench_x: bench\n\nnoise\n";
        assert_eq!(parse_terse_list(out), ["a::b", "c::__copilot_eval"]);
    }

    #[test]
    fn only_marked_tests_are_selected_and_filters_apply() {
        let names = vec![
            vec![
                "ordinary".to_owned(),
                "ignored_one".to_owned(),
                "creates_file::__copilot_eval".to_owned(),
                "m::uses_tool::__copilot_eval".to_owned(),
                "__copilot_eval".to_owned(),
                "x::__copilot_evaluation".to_owned(),
            ],
            vec!["skill::__copilot_eval".to_owned()],
        ];
        let list = select(vec![binary("a"), binary("b")], &names, &[], false);
        let got: Vec<_> = list
            .tests
            .iter()
            .map(|t| (t.binary, t.name.as_str()))
            .collect();
        assert_eq!(
            got,
            [(0, "creates_file"), (0, "m::uses_tool"), (1, "skill")]
        );
        assert_eq!(list.other_tests, 4);

        let list = select(
            vec![binary("a"), binary("b")],
            &names,
            &["tool".to_owned(), "skill".to_owned()],
            false,
        );
        let got: Vec<_> = list.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(got, ["m::uses_tool", "skill"]);
        assert_eq!(list.filtered_out, 1);
    }

    #[test]
    fn the_warning_names_the_nearest_paths() {
        let names = vec![vec![
            "passes::__copilot_eval".to_owned(),
            "panics::__copilot_eval".to_owned(),
            "nested::passes_in_a_module::__copilot_eval".to_owned(),
            "times_out::__copilot_eval".to_owned(),
        ]];
        let filters = ["tests/evals.rs::passes".to_owned()];
        let list = select(vec![binary("a")], &names, &filters, false);
        let warning = no_match_warning(&list, &filters);
        assert!(
            warning.contains("nearest: passes, nested::passes_in_a_module, panics, "),
            "{warning}"
        );
        let list = select(vec![binary("a")], &[vec![]], &filters, false);
        assert!(no_match_warning(&list, &filters).ends_with("mark a test with #[copilot_eval]"));
    }

    /// The hint ranks by similarity to what was typed, not by raw edit distance (which put the
    /// short `passes` before the long path the user nearly typed), and counts take their noun in
    /// the number: `1 other test`, `1 eval test filtered out`.
    #[test]
    fn the_nearest_hint_ranks_by_similarity_and_counts_read_in_the_singular() {
        let names = vec![vec![
            "ordinary_test".to_owned(),
            "passes::__copilot_eval".to_owned(),
            "nested::passes_in_a_module::__copilot_eval".to_owned(),
            "times_out::__copilot_eval".to_owned(),
        ]];
        let filters = ["passes_in_modul".to_owned()];
        let list = select(vec![binary("a")], &names, &filters, false);
        let warning = no_match_warning(&list, &filters);
        assert!(
            warning.contains("nearest: nested::passes_in_a_module, passes, "),
            "{warning}"
        );
        assert!(
            warning.contains("(1 other test, 3 eval tests filtered out)"),
            "{warning}"
        );
        assert!(similarity("passes_in_modul", "nested::passes_in_a_module") > 0.9);
        assert!(similarity("zzz", "passes") < 0.5);
        let none = select(
            vec![binary("a")],
            &[names[0][..2].to_vec()],
            &filters,
            false,
        );
        assert!(
            no_match_warning(&none, &filters).contains("(1 other test, 1 eval test filtered out)"),
            "{}",
            no_match_warning(&none, &filters)
        );
    }

    /// `--test NAME` reaches cargo as `cargo test --test NAME`: only that test file is built
    /// and searched.
    #[test]
    fn test_targets_are_passed_to_cargo_as_cargo_test_takes_them() {
        let mut options = BuildOptions::new(None, PackageSelection::Packages(vec!["p".into()]));
        options.test_targets = vec!["evals".into(), "more".into()];
        let mut command = Command::new("cargo");
        options.apply(&mut command);
        let args: Vec<_> = command.get_args().map(|a| a.to_string_lossy()).collect();
        assert_eq!(args, ["-p", "p", "--test", "evals", "--test", "more"]);
    }

    #[test]
    fn exact_filters_match_whole_paths_only() {
        assert!(matches_filters("greets", &["greets".to_owned()], true));
        assert!(!matches_filters(
            "greets_twice",
            &["greets".to_owned()],
            true
        ));
        assert!(matches_filters(
            "greets_twice",
            &["greets".to_owned()],
            false
        ));
        assert!(!matches_filters("m::greets", &["greets".to_owned()], true));
        assert!(
            matches_filters("anything", &[], true),
            "no filter selects all"
        );
    }
}
