//! Profiles: a suite run's settings kept in a file, like nextest's, `.config/copilot-eval.toml`
//! ([`PROFILE_FILE`]), found in the folder the run starts from or the nearest one above it
//! ([`find`]).
//!
//! ```toml
//! [profile.default]        # applies to every run
//! jobs = 2
//!
//! [profile.ci]             # `--profile ci` (or COPILOT_EVAL_PROFILE=ci): default, then this
//! replay = true
//! trials = 3
//! min-pass-rate = 66.7
//! ```
//!
//! Each key is a run option's name without its dashes ([`KEYS`]); a profile is read into those
//! options ([`profile_args`]), placed before the command line's, so an option given on the
//! command line wins. A relative path is relative to the folder holding `.config/`. An unknown
//! key, a value of the wrong type or an unknown profile is an error naming the file, the line and
//! the valid keys.

use std::path::{Path, PathBuf};

use toml_edit::{Table, Value};

/// The profiles file, relative to the folder it configures.
pub const PROFILE_FILE: &str = ".config/copilot-eval.toml";
/// The environment variable naming the profile when `--profile` is not given.
pub const PROFILE_ENV: &str = "COPILOT_EVAL_PROFILE";
/// The profile every run applies first.
pub const DEFAULT_PROFILE: &str = "default";
/// The `ci` profile `init --ci github` writes (the workflow runs `--profile ci`).
pub const CI_PROFILE: &str = "# Settings of `cargo copilot-eval --profile ci` (docs/command.md, \"Profiles\"); an option\n# given on the command line wins.\n[profile.ci]\n# Offline: every eval replays its cassette (a missing cassette is an error, never a live call).\nreplay = true\n# Launch every eval even after an infrastructure error, so the report lists them all.\nno-fail-fast = true\n";

/// How a key's value is written, and the option it becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `true` passes the flag (`false`: nothing).
    Flag,
    /// A whole number.
    Count,
    /// A number.
    Number,
    /// A string.
    Text,
    /// A path: relative ones are relative to the folder holding `.config/`.
    Path,
    /// An array (or one string), passed comma-separated.
    List,
}

/// Every key a profile may hold: the run option `--KEY`, and how its value is written.
pub const KEYS: &[(&str, Kind)] = &[
    ("replay", Kind::Flag),
    ("trials", Kind::Count),
    ("min-pass-rate", Kind::Number),
    ("pass-k", Kind::List),
    ("models", Kind::List),
    ("jobs", Kind::Count),
    ("max-cost", Kind::Number),
    ("max-premium-requests", Kind::Number),
    ("pricing", Kind::Path),
    ("json", Kind::Path),
    ("junit", Kind::Path),
    ("html", Kind::Path),
    ("grading", Kind::Path),
    ("benchmark", Kind::Path),
    ("baseline", Kind::Path),
    ("fail-on-regression", Kind::Flag),
    ("no-fail-fast", Kind::Flag),
    ("stop-early", Kind::Flag),
    ("fresh-runtime", Kind::Flag),
    ("sandbox", Kind::Text),
    ("runtime-version", Kind::Text),
    ("ablate", Kind::List),
    ("cleanup-bound-s", Kind::Number),
    ("plain", Kind::Flag),
];

/// The profiles file in `start` or the nearest folder above it that has one.
pub fn find(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|d| d.join(PROFILE_FILE))
        .find(|p| p.is_file())
}

/// The run options of profile `name` in `file` (whose text is `text`): `[profile.default]`'s,
/// then `name`'s (a key in both: `name`'s value), in [`KEYS`] order, each `--KEY` followed by
/// its value unless a flag. `name` may be `default`, or missing from the file when it is
/// `default`.
///
/// Errors, each naming the file and line: the text is not TOML; a top-level key other than
/// `profile`; a profile that is not a table; an unknown key (listing the valid ones); a value of
/// the wrong type; no `[profile.NAME]` (listing the profiles).
pub fn profile_args(file: &Path, text: &str, name: &str) -> Result<Vec<String>, ProfileError> {
    read_profile(file, text, name).map_err(ProfileError::Invalid)
}

/// Why a profile's options could not be read ([`profile_args`]).
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file is not TOML, holds an unknown key or a value of the wrong type, or lacks the
    /// profile: the message names the file, the line and the fix.
    #[error("{0}")]
    Invalid(String),
}

/// The work of [`profile_args`], its error the message.
fn read_profile(file: &Path, text: &str, name: &str) -> Result<Vec<String>, String> {
    let shown = file.display();
    let doc =
        toml_edit::Document::parse(text).map_err(|e| format!("{shown} is not valid TOML: {e}"))?;
    let line_of = |span: Option<std::ops::Range<usize>>| {
        span.map_or(1, |s| text[..s.start].matches('\n').count() + 1)
    };
    for (key, _) in doc.iter() {
        if key != "profile" {
            let span = doc.as_table().key(key).and_then(|k| k.span());
            return Err(format!(
                "{shown}:{}: unknown key `{key}`: the file holds only [profile.NAME] tables",
                line_of(span)
            ));
        }
    }
    let profiles = match doc.get("profile") {
        None => None,
        Some(item) => Some(item.as_table().ok_or_else(|| {
            format!(
                "{shown}:{}: `profile` must be a table of profiles ([profile.NAME])",
                line_of(item.span())
            )
        })?),
    };
    let table = |profile: &str| -> Result<Option<&Table>, String> {
        let Some(item) = profiles.and_then(|p| p.get(profile)) else {
            return Ok(None);
        };
        item.as_table().map(Some).ok_or_else(|| {
            format!(
                "{shown}:{}: [profile.{profile}] must be a table",
                line_of(item.span())
            )
        })
    };
    let selected = table(name)?;
    if selected.is_none() && name != DEFAULT_PROFILE {
        let names: Vec<&str> = profiles
            .map(|p| p.iter().map(|(k, _)| k).collect())
            .unwrap_or_default();
        return Err(format!(
            "{shown}: no [profile.{name}]; the profiles there: {}",
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        ));
    }
    let root = file
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."));
    let mut values: Vec<Option<String>> = vec![None; KEYS.len()];
    let mut flags = vec![false; KEYS.len()];
    let layers = [(DEFAULT_PROFILE, table(DEFAULT_PROFILE)?), (name, selected)];
    for (profile, layer) in layers.iter().filter_map(|(n, t)| Some((*n, (*t)?))) {
        for (key, item) in layer.iter() {
            let line = line_of(layer.key(key).and_then(|k| k.span()));
            let Some(index) = KEYS.iter().position(|(k, _)| *k == key) else {
                let valid: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
                return Err(format!(
                    "{shown}:{line}: unknown key `{key}` in [profile.{profile}]; the valid keys: {}",
                    valid.join(", ")
                ));
            };
            let kind = KEYS[index].1;
            let value = item
                .as_value()
                .and_then(|v| read(v, kind, root))
                .ok_or_else(|| {
                    format!(
                        "{shown}:{line}: `{key}` in [profile.{profile}] takes {}, got `{}`",
                        describe(kind),
                        item.to_string().trim()
                    )
                })?;
            match value {
                Read::Flag(on) => flags[index] = on,
                Read::Value(v) => values[index] = Some(v),
            }
        }
    }
    let mut args = Vec::new();
    for (index, (key, _)) in KEYS.iter().enumerate() {
        if flags[index] {
            args.push(format!("--{key}"));
        }
        if let Some(value) = values[index].take() {
            args.push(format!("--{key}"));
            args.push(value);
        }
    }
    Ok(args)
}

/// A key's value read.
enum Read {
    Flag(bool),
    Value(String),
}

/// The value `value` as `kind` reads it; `None` when it is of another type.
fn read(value: &Value, kind: Kind, root: &Path) -> Option<Read> {
    let scalar = |v: &Value| match v {
        Value::String(s) => Some(s.value().clone()),
        Value::Integer(i) => Some(i.value().to_string()),
        _ => None,
    };
    Some(match (kind, value) {
        (Kind::Flag, Value::Boolean(b)) => Read::Flag(*b.value()),
        (Kind::Count, Value::Integer(i)) if *i.value() >= 0 => Read::Value(i.value().to_string()),
        (Kind::Number, Value::Integer(i)) => Read::Value(i.value().to_string()),
        (Kind::Number, Value::Float(f)) => Read::Value(f.value().to_string()),
        (Kind::Text, Value::String(s)) => Read::Value(s.value().clone()),
        (Kind::Path, Value::String(s)) => Read::Value(root.join(s.value()).display().to_string()),
        (Kind::List, Value::String(s)) => Read::Value(s.value().clone()),
        (Kind::List, Value::Array(items)) => {
            let items: Option<Vec<String>> = items.iter().map(scalar).collect();
            Read::Value(items?.join(","))
        }
        _ => return None,
    })
}

/// What a kind of key takes, for messages.
fn describe(kind: Kind) -> &'static str {
    match kind {
        Kind::Flag => "true or false",
        Kind::Count => "a whole number",
        Kind::Number => "a number",
        Kind::Text => "a string",
        Kind::Path => "a path (a string)",
        Kind::List => "an array (or a comma-separated string)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "/repo/.config/copilot-eval.toml";

    fn args(text: &str, name: &str) -> Result<Vec<String>, String> {
        read_profile(Path::new(FILE), text, name)
    }

    /// The default profile applies first, the selected one over it, in the keys' order; a
    /// relative path is relative to the folder holding `.config/`.
    #[test]
    fn a_profile_reads_into_run_options_over_the_default() {
        let text = "[profile.default]\njobs = 2\ntrials = 1\n\n[profile.ci]\nreplay = true\ntrials = 3\nmodels = [\"a\", \"b\"]\njson = \"results/ci.json\"\nmin-pass-rate = 66.5\nstop-early = false\n";
        assert_eq!(
            args(text, "ci").unwrap(),
            [
                "--replay",
                "--trials",
                "3",
                "--min-pass-rate",
                "66.5",
                "--models",
                "a,b",
                "--jobs",
                "2",
                "--json",
                "/repo/results/ci.json"
            ]
        );
        assert_eq!(
            args(text, "default").unwrap(),
            ["--trials", "1", "--jobs", "2"]
        );
        assert_eq!(args("", "default").unwrap(), Vec::<String>::new());
    }

    /// Errors name the file, the line, and what is valid.
    #[test]
    fn an_unknown_key_names_the_file_line_and_the_valid_keys() {
        let text = "[profile.ci]\nreplay = true\n# a comment\nretries = 2\n";
        let error = args(text, "ci").unwrap_err();
        assert!(
            error.starts_with(&format!("{FILE}:4: unknown key `retries` in [profile.ci]; the valid keys: replay, trials, min-pass-rate,")),
            "{error}"
        );
        let error = args("[profile.ci]\ntrials = \"3\"\n", "ci").unwrap_err();
        assert_eq!(
            error,
            format!("{FILE}:2: `trials` in [profile.ci] takes a whole number, got `\"3\"`")
        );
        let error = args("[profile.ci]\nreplay = true\n", "nightly").unwrap_err();
        assert_eq!(
            error,
            format!("{FILE}: no [profile.nightly]; the profiles there: ci")
        );
        let error = args("jobs = 2\n", "default").unwrap_err();
        assert!(
            error.starts_with(&format!("{FILE}:1: unknown key `jobs`")),
            "{error}"
        );
    }

    /// The `ci` profile `init` writes reads.
    #[test]
    fn the_ci_profile_reads() {
        assert_eq!(
            args(CI_PROFILE, "ci").unwrap(),
            ["--replay", "--no-fail-fast"]
        );
    }
}
