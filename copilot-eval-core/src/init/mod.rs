//! What `cargo copilot-eval init` does (the CLI is a thin face over [`init`]): add a starter eval
//! test to a package, ready to run offline.
//!
//! The package is the one of [`InitOptions::manifest_path`], else the nearest `Cargo.toml` in the
//! current folder or above it (as cargo finds it); when there is none, [`init`] creates a library
//! package in the current folder first (`cargo init --lib`). In that package it:
//! 1. creates `tests/evals.rs` (one eval test, `writes_a_greeting`) and its cassette
//!    `tests/cassettes/evals/writes_a_greeting.yaml`, so `cargo copilot-eval --replay` runs it at
//!    once with no account;
//! 2. adds the dev-dependency `copilot-eval-core` to `Cargo.toml` (unless the package already
//!    depends on it), editing the manifest in place (formatting and comments kept);
//! 3. sets `COPILOT_SKIP_CLI_DOWNLOAD = "1"` under `[env]` in the package's `.cargo/config.toml`
//!    (the SDK's build script would otherwise download a CLI that copilot-eval never uses);
//! 4. adds `results/` to the package's `.gitignore`.
//!
//! It never overwrites a file: when `tests/evals.rs` or the cassette exists it stops before
//! changing anything, naming the file; except that with `--core-git URL` in a package that has
//! the whole scaffold, it only rewrites the copilot-eval-core dependency to git (a path
//! dependency's commit as its `rev`, `pin::rewrite_to_git`) and keeps the files. Everything is checked (and the TOML files parsed) before
//! the first write.
//!
//! `init --ci github` writes a GitHub Actions workflow instead ([`ci`]); it too refuses to
//! overwrite its file, unless `--force`.
//!
//! `init --skill PATH` ([`InitOptions::skill`]) writes, instead of the starter test and its
//! cassette, an eval test file for the skill's own `evals/evals.json`: `tests/<skill>_evals.rs`,
//! one `#[copilot_eval(skill_evals = "<PATH relative to the package root>")]` function with a
//! failing `ctx.expect` placeholder per expectation (module `skill`). Steps 2 to 4 are the same;
//! the package must exist (the skill folder inside it). Errors, before anything is written: the
//! folder is missing, has no `SKILL.md` (or one that does not load), has no `evals/evals.json`
//! or an invalid one (the parser's message), lies outside the package, or the test file exists.

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, InlineTable, Item, Table, value};

pub mod ci;
pub mod pin;
mod skill;

/// Why `init` or `init --ci` did not finish ([`init`], [`ci::init_ci`]).
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The process's current folder cannot be read.
    #[error("cannot read the current folder: {0}")]
    CurrentDir(#[source] std::io::Error),
    /// Init refused before writing its files: a file it would overwrite, an unreadable or
    /// invalid manifest, `.cargo/config.toml` or skill, a virtual workspace manifest, no
    /// package, `cargo init` failing (a package `cargo init` created stays). The message names
    /// the file and the fix.
    #[error("{0}")]
    Refused(String),
    /// Writing a file failed (the files written before it stay).
    #[error("writing {} failed: {source}", path.display())]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// What to initialise, and where the `copilot-eval-core` dependency comes from.
#[derive(Debug, Clone, Default)]
pub struct InitOptions {
    /// The package's `Cargo.toml`; `None`: the nearest `Cargo.toml` in [`Self::cwd`] or above,
    /// else a new library package created in [`Self::cwd`].
    pub manifest_path: Option<PathBuf>,
    /// The folder to start from (default: the process's current folder).
    pub cwd: Option<PathBuf>,
    /// Depend on copilot-eval-core at this folder (default: the copilot-eval-core this program
    /// was built from, when its folder still exists; else the git repository).
    pub core_path: Option<PathBuf>,
    /// Depend on copilot-eval-core from this git repository.
    pub core_git: Option<String>,
    /// A skill folder (relative to [`Self::cwd`] unless absolute) holding `evals/evals.json`:
    /// write `tests/<skill>_evals.rs` for its entries instead of the starter eval.
    pub skill: Option<PathBuf>,
}

/// The starter test's text.
const STARTER_TEST: &str = include_str!("templates/starter_eval.rs");
/// The starter test's cassette.
const STARTER_CASSETTE: &str = include_str!("templates/starter_cassette.yaml");
/// Where the starter test goes, relative to the package root.
const TEST_PATH: &str = "tests/evals.rs";
/// Where its cassette goes, relative to the package root.
const CASSETTE_PATH: &str = "tests/cassettes/evals/writes_a_greeting.yaml";
/// The dependency added.
const CORE: &str = "copilot-eval-core";
/// The comment at the top of a `.cargo/config.toml` that init creates.
const NEW_CONFIG_HEADER: &str = "# The SDK's build script would download a Copilot CLI from the internet; copilot-eval\n# uses the runtime installed by `cargo copilot-eval runtime install` instead.\n";

/// Where the dependency comes from.
enum CoreSource {
    Path(PathBuf),
    Git(String),
}

impl CoreSource {
    fn from_options(args: &InitOptions) -> Result<Self, String> {
        if let Some(url) = &args.core_git {
            return Ok(Self::Git(url.clone()));
        }
        let path = match &args.core_path {
            Some(path) => path.clone(),
            None => {
                let built_from = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
                if !built_from.join("Cargo.toml").is_file() {
                    return Ok(Self::Git(env!("CARGO_PKG_REPOSITORY").to_owned()));
                }
                built_from
            }
        };
        let path = path
            .canonicalize()
            .map_err(|e| format!("--core-path {}: {e}", path.display()))?;
        if !path.join("Cargo.toml").is_file() {
            return Err(format!(
                "--core-path {}: no Cargo.toml there (give the folder of copilot-eval-core)",
                path.display()
            ));
        }
        Ok(Self::Path(path))
    }

    fn describe(&self) -> String {
        match self {
            Self::Path(p) => format!("path {}", p.display()),
            Self::Git(url) => format!("git {url}"),
        }
    }

    fn item(&self) -> Item {
        let mut table = InlineTable::new();
        match self {
            Self::Path(p) => table.insert("path", p.display().to_string().into()),
            Self::Git(url) => table.insert("git", url.as_str().into()),
        };
        value(table)
    }
}

/// A file init creates: its path relative to the package root, its text, and how to proceed
/// when it already exists.
struct NewFile {
    path: String,
    contents: String,
    when_present: &'static str,
}

/// What init will write, decided before anything is written.
struct Plan {
    root: PathBuf,
    files: Vec<NewFile>,
    /// The command the last line names (without the runtime install).
    next: String,
    manifest: Option<String>,
    config: Option<(PathBuf, String)>,
    gitignore: Option<String>,
    notes: Vec<String>,
}

/// Add the starter eval to the package (see the module documentation); returns the lines to show
/// the user, one per change or kept file, ending with the next command to run.
///
/// Errors (a message naming the file and the fix; nothing was changed when `init` returns an
/// error before its first write): a file that would be overwritten, an unreadable or invalid
/// manifest or `.cargo/config.toml`, a virtual workspace manifest, `cargo init` failing.
pub fn init(args: &InitOptions) -> Result<Vec<String>, InitError> {
    let cwd = match &args.cwd {
        Some(cwd) => cwd.clone(),
        None => std::env::current_dir().map_err(InitError::CurrentDir)?,
    };
    let (mut lines, plan, manifest) = plan(args, cwd).map_err(InitError::Refused)?;
    lines.extend(write(&plan, &manifest)?);
    Ok(lines)
}

/// What [`init`] will do, and what it did before (`cargo init`'s lines): the lines so far, the
/// plan and the manifest. Errors: as [`init`]'s, a message naming the file and the fix.
fn plan(args: &InitOptions, cwd: PathBuf) -> Result<(Vec<String>, Plan, PathBuf), String> {
    // The skill is read first: its errors need no package.
    let skill = match &args.skill {
        Some(path) => Some(skill::read(path, &cwd)?),
        None => None,
    };
    let (manifest, created) = locate_manifest(args, &cwd, skill.is_some())?;
    let text = std::fs::read_to_string(&manifest).map_err(|e| {
        format!(
            "cannot read {}: {e} (give the package's manifest with --manifest-path, or run init in the package's folder)",
            manifest.display()
        )
    })?;
    let root = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
    let (files, next) = new_files(skill.as_ref(), &manifest, &root, &cwd)?;
    // The scaffold is there and `--core-git` is given: only the dependency is rewritten.
    if let Some(url) = &args.core_git
        && !files.is_empty()
        && files.iter().all(|f| root.join(&f.path).exists())
    {
        let plan = rewrite_only(&text, &manifest, &root, url, next)?;
        return Ok((created, plan, manifest));
    }
    // 1. Never overwrite: check the new files first.
    for file in &files {
        let path = root.join(&file.path);
        if path.exists() {
            return Err(format!(
                "{} already exists; init never overwrites a file (nothing was changed). {}",
                path.display(),
                file.when_present
            ));
        }
    }
    let core = CoreSource::from_options(args)?;
    let mut plan = Plan {
        root: root.clone(),
        files,
        next,
        manifest: None,
        config: None,
        gitignore: None,
        notes: Vec::new(),
    };
    plan_dependency(&mut plan, &text, &manifest, &core)?;
    plan_config(&mut plan, &root)?;
    plan_gitignore(&mut plan, &root)?;
    Ok((created, plan, manifest))
}

/// The plan of `init --core-git URL` in a package that has its scaffold: the manifest's
/// copilot-eval-core dependency rewritten to `{ git = URL, rev = REV }` (REV the commit of a
/// path dependency's checkout; no `rev` otherwise), formatting kept; nothing else. Errors: the
/// manifest has no such dependency or does not parse.
fn rewrite_only(
    text: &str,
    manifest: &Path,
    root: &Path,
    url: &str,
    next: String,
) -> Result<Plan, String> {
    let rev = match pin::declared(manifest).map(|d| d.source) {
        Some(pin::CoreDependency::Path { folder }) => pin::head_commit(&folder).ok(),
        _ => None,
    };
    let rewritten = pin::rewrite_to_git(text, url, rev.as_deref())
        .map_err(|e| format!("{}: {e}; run init without --core-git", manifest.display()))?;
    let mut notes = vec![format!(
        "rewrote the dependency {CORE} in {} to git {url}{}; kept the scaffold that is there",
        manifest.display(),
        rev.map(|r| format!(" at {r}")).unwrap_or_default()
    )];
    notes.push(format!(
        "kept the files of the scaffold in {}",
        root.display()
    ));
    Ok(Plan {
        root: root.to_path_buf(),
        files: Vec::new(),
        next,
        manifest: Some(rewritten),
        config: None,
        gitignore: None,
        notes,
    })
}

/// The package's manifest: `--manifest-path`, else the nearest `Cargo.toml` from `cwd` up, else
/// (not for a skill, whose tests go in the package holding it) a package `cargo init` creates in
/// `cwd`; with `cargo init`'s line when it ran.
fn locate_manifest(
    args: &InitOptions,
    cwd: &Path,
    for_skill: bool,
) -> Result<(PathBuf, Vec<String>), String> {
    let mut created = Vec::new();
    if let Some(path) = &args.manifest_path {
        return Ok((path.clone(), created));
    }
    let found = match find_manifest(cwd) {
        Some(found) => found,
        None if for_skill => {
            return Err(format!(
                "no Cargo.toml in {} or above: the skill's eval tests go in the package that holds the skill; run init --skill in that package, or give its Cargo.toml with --manifest-path",
                cwd.display()
            ));
        }
        None => {
            created.push(create_package(cwd)?);
            cwd.join("Cargo.toml")
        }
    };
    // In the process's own folder, keep paths short in what is shown ("tests/evals.rs").
    let manifest = if args.cwd.is_none() && found.parent() == Some(cwd) {
        PathBuf::from("Cargo.toml")
    } else {
        found
    };
    Ok((manifest, created))
}

/// The files `init` writes (the skill's test file, or the starter eval and its cassette) and the
/// next command to name.
fn new_files(
    skill: Option<&skill::SkillEvals>,
    manifest: &Path,
    root: &Path,
    cwd: &Path,
) -> Result<(Vec<NewFile>, String), String> {
    let shown_manifest = if root == Path::new("") || root == Path::new(".") {
        String::new()
    } else {
        format!(" --manifest-path {}", manifest.display())
    };
    let Some(skill) = skill else {
        let starter = |path: &str, contents: &str| NewFile {
            path: path.to_owned(),
            contents: contents.to_owned(),
            when_present: "Move it away or add your eval next to it.",
        };
        return Ok((
            vec![
                starter(TEST_PATH, STARTER_TEST),
                starter(CASSETTE_PATH, STARTER_CASSETTE),
            ],
            format!("`cargo copilot-eval --replay{shown_manifest}` runs the starter eval offline"),
        ));
    };
    let package_root = if root.as_os_str().is_empty() {
        cwd.to_path_buf()
    } else {
        cwd.join(root)
    };
    let folder = skill.relative_to(&package_root)?;
    let path = skill.test_path();
    let next = format!(
        "`cargo copilot-eval{shown_manifest} {function}` runs the entries offline now, the model scripted with `ctx.offline(..)` (each fails until you write the check of each expectation in {path}); to measure the skill on a real model, delete the `ctx.offline(..)` lines and `cargo copilot-eval --record{shown_manifest} {function}` runs the entries live and records their cassettes",
        function = skill.function()
    );
    let file = NewFile {
        path,
        contents: skill.render(&folder),
        when_present: "Move it away, or add the `skill_evals` function to it by hand (docs/skills-and-agents.md shows one).",
    };
    Ok((vec![file], next))
}

/// Step 2 of the plan: the dev-dependency on copilot-eval-core in the manifest (`text`), unless
/// the package already depends on it.
fn plan_dependency(
    plan: &mut Plan,
    text: &str,
    manifest: &Path,
    core: &CoreSource,
) -> Result<(), String> {
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e| format!("{} is not valid TOML: {e}", manifest.display()))?;
    if !doc.contains_key("package") {
        return Err(format!(
            "{} has no [package] (a virtual workspace manifest?); point --manifest-path at the package that will hold the evals",
            manifest.display()
        ));
    }
    let present = ["dev-dependencies", "dependencies"].iter().any(|section| {
        doc.get(section)
            .and_then(Item::as_table_like)
            .is_some_and(|t| t.contains_key(CORE))
    });
    if present {
        plan.notes.push(format!(
            "kept {}: it already depends on {CORE}",
            manifest.display()
        ));
        return Ok(());
    }
    let section = doc
        .entry("dev-dependencies")
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| format!("{}: [dev-dependencies] is not a table", manifest.display()))?;
    section.insert(CORE, core.item());
    plan.manifest = Some(doc.to_string());
    plan.notes.push(format!(
        "added the dev-dependency {CORE} ({}) to {}",
        core.describe(),
        manifest.display()
    ));
    Ok(())
}

/// Step 3 of the plan: `COPILOT_SKIP_CLI_DOWNLOAD` under `[env]` in the package's
/// `.cargo/config.toml`, unless it is set there.
fn plan_config(plan: &mut Plan, root: &Path) -> Result<(), String> {
    let config_path = root.join(".cargo/config.toml");
    let (mut config, existed) = match std::fs::read_to_string(&config_path) {
        Ok(text) => (
            text.parse::<DocumentMut>()
                .map_err(|e| format!("{} is not valid TOML: {e}", config_path.display()))?,
            true,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (DocumentMut::new(), false),
        Err(e) => return Err(format!("cannot read {}: {e}", config_path.display())),
    };
    let env = config
        .entry("env")
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| format!("{}: [env] is not a table", config_path.display()))?;
    if env.contains_key("COPILOT_SKIP_CLI_DOWNLOAD") {
        plan.notes.push(format!(
            "kept {}: it already sets COPILOT_SKIP_CLI_DOWNLOAD",
            config_path.display()
        ));
        return Ok(());
    }
    env.insert("COPILOT_SKIP_CLI_DOWNLOAD", value("1"));
    plan.notes.push(format!(
        "{} {}: COPILOT_SKIP_CLI_DOWNLOAD = \"1\" under [env]",
        if existed { "updated" } else { "created" },
        config_path.display()
    ));
    let text = if existed {
        config.to_string()
    } else {
        format!("{NEW_CONFIG_HEADER}{config}")
    };
    plan.config = Some((config_path, text));
    Ok(())
}

/// Step 4 of the plan: `results/` in the package's `.gitignore`, unless it is ignored there.
fn plan_gitignore(plan: &mut Plan, root: &Path) -> Result<(), String> {
    let gitignore_path = root.join(".gitignore");
    let ignore = match std::fs::read_to_string(&gitignore_path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", gitignore_path.display())),
    };
    let ignored = ignore
        .lines()
        .map(str::trim)
        .any(|l| matches!(l, "results" | "results/" | "/results" | "/results/"));
    if ignored {
        plan.notes.push(format!(
            "kept {}: it already ignores results/",
            gitignore_path.display()
        ));
        return Ok(());
    }
    let mut text = ignore;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# copilot-eval artifacts (cargo copilot-eval --json/--junit)\nresults/\n");
    plan.gitignore = Some(text);
    plan.notes
        .push(format!("added results/ to {}", gitignore_path.display()));
    Ok(())
}

/// The nearest `Cargo.toml` in `dir` or a folder above it.
pub(crate) fn find_manifest(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .map(|d| d.join("Cargo.toml"))
        .find(|m| m.is_file())
}

/// Create a library package in `dir` with `cargo init --lib` (no version control change); the
/// line to show.
fn create_package(dir: &Path) -> Result<String, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(&cargo)
        .args(["init", "--lib", "--vcs", "none", "--quiet"])
        .current_dir(dir)
        .output()
        .map_err(|e| {
            format!(
                "no Cargo.toml in {} or above, and running `cargo init --lib` failed: {e}",
                dir.display()
            )
        })?;
    if !output.status.success() {
        return Err(format!(
            "no Cargo.toml in {} or above, and `cargo init --lib` failed: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(format!(
        "created a library package in {} (`cargo init --lib`): no Cargo.toml was found there or above",
        dir.display()
    ))
}

fn write(plan: &Plan, manifest: &Path) -> Result<Vec<String>, InitError> {
    let io = |path: &Path, source: std::io::Error| InitError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut lines = Vec::new();
    for file in &plan.files {
        let (path, contents) = (plan.root.join(&file.path), &file.contents);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        // create_new: a file that appeared since the check is still never overwritten.
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, contents.as_bytes()))
            .map_err(|e| io(&path, e))?;
        lines.push(format!("created {}", path.display()));
    }
    if let Some(text) = &plan.manifest {
        std::fs::write(manifest, text).map_err(|e| io(manifest, e))?;
    }
    if let Some((path, text)) = &plan.config {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        std::fs::write(path, text).map_err(|e| io(path, e))?;
    }
    if let Some(text) = &plan.gitignore {
        let path = plan.root.join(".gitignore");
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
    }
    lines.extend(plan.notes.iter().cloned());
    let next = &plan.next;
    // The install is named only when no runtime resolves yet.
    lines.push(if crate::runtime::resolve().is_ok() {
        format!("next: {next}")
    } else {
        format!("next: `cargo copilot-eval runtime install` (once), then {next}")
    });
    Ok(lines)
}
