// A skill's own eval file (see the doc comment on `pub mod evals_file` in ../skill.rs).
// This file is compiled twice: as `copilot_eval_core::customization::skill::evals_file` and,
// by `include!`, inside the `#[copilot_eval]` attribute (copilot-eval-macros/src/skill_evals.rs),
// so it holds no inner attributes or docs, and uses only `std`, `serde_json` and `thiserror`.

/// The file's path inside a skill folder.
pub const EVALS_FILE: &str = "evals/evals.json";

/// The keys of the file's top-level object; any other is kept in [`EvalsFile::unknown`].
pub const FILE_KEYS: &[&str] = &["skill_name", "evals"];

/// The keys of an entry of `evals[]`; any other is kept in [`EvalEntry::unknown`].
pub const ENTRY_KEYS: &[&str] = &["id", "prompt", "expected_output", "files", "expectations"];

/// A parsed `evals/evals.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalsFile {
    /// `skill_name`, when given.
    pub skill_name: Option<String>,
    /// The entries, in file order.
    pub evals: Vec<EvalEntry>,
    /// Keys of the top-level object that the format does not define, in file order.
    pub unknown: Vec<String>,
}

/// One entry of `evals[]`.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalEntry {
    /// Its position in `evals[]` (0-based), for messages.
    pub index: usize,
    /// `id`, written as text (`7`, or the string given).
    pub id: String,
    /// `prompt`.
    pub prompt: String,
    /// `expected_output`, when given.
    pub expected_output: Option<String>,
    /// `files`: paths relative to the skill folder, as written.
    pub files: Vec<String>,
    /// `expectations`: the statements a test checks, in order.
    pub expectations: Vec<String>,
    /// Keys of the entry that the format does not define, in file order.
    pub unknown: Vec<String>,
}

impl EvalEntry {
    /// How messages name the entry: `evals[2] (id 3)`.
    pub fn describe(&self) -> String {
        format!("evals[{}] (id {})", self.index, self.id)
    }

    /// The label of the entry's eval test: `eval_<id>_<slug>`, where the slug is the prompt's
    /// first words (at most 5, lowercase ASCII letters and digits, joined by `_`, at most 40
    /// characters) and every character of the id other than an ASCII letter or digit becomes
    /// `_`. A Rust identifier, so the test's path is `function::eval_1_write_release_notes_for_the`.
    pub fn label(&self) -> String {
        let id = ident_chars(&self.id);
        let slug = prompt_slug(&self.prompt);
        if slug.is_empty() {
            format!("eval_{id}")
        } else {
            format!("eval_{id}_{slug}")
        }
    }
}

/// `text` as identifier characters: every ASCII letter lower-cased, every ASCII digit kept,
/// every other character `_` (`Release-Notes 2` -> `release_notes_2`).
pub fn ident_chars(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// The slug of a test label: the prompt's first words (at most 5, lowercase ASCII letters and
/// digits, joined by `_`, at most 40 characters); empty when the prompt has no such word.
pub fn prompt_slug(prompt: &str) -> String {
    let mut slug = String::new();
    for word in prompt
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(5)
    {
        let word = word.to_ascii_lowercase();
        if !slug.is_empty() && slug.len() + 1 + word.len() > 40 {
            break;
        }
        if !slug.is_empty() {
            slug.push('_');
        }
        slug.push_str(&word);
    }
    slug
}

/// Why an `evals/evals.json` cannot be read ([`parse_evals_file`], [`read_evals_file`]); each
/// message names the entry and the key and says what to write.
#[derive(Debug, thiserror::Error)]
pub enum EvalsFileError {
    /// The text is not JSON (serde_json's message, with line and column).
    #[error("not valid JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// The JSON does not follow the format: a missing or mistyped key, an empty `evals`.
    #[error("{0}")]
    Invalid(String),
    /// Two entries have the same id or the same test name (the first of [`clashes`]).
    #[error("{0}")]
    Clash(String),
}

/// Parse the text of an `evals/evals.json`.
///
/// Errors (one message each, naming the entry and the key and saying what to write): not JSON
/// (with line and column), not an object, `evals` missing, not an array or empty, an entry that
/// is not an object, `id` missing or of another type, an id given twice, `prompt` missing or
/// blank, `expected_output` not a string, `files` or `expectations` not an array of strings, a
/// blank expectation.
pub fn parse_evals_file(text: &str) -> Result<EvalsFile, EvalsFileError> {
    let file = read_evals_file(text)?;
    match clashes(&file.evals).into_iter().next() {
        Some(clash) => Err(EvalsFileError::Clash(clash)),
        None => Ok(file),
    }
}

/// Parse the text of an `evals/evals.json` as [`parse_evals_file`] does, but without checking
/// that the entries' ids and test names are unique: [`clashes`] lists those, every one (`lint`
/// reports each on its own).
pub fn read_evals_file(text: &str) -> Result<EvalsFile, EvalsFileError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(EvalsFileError::Json)?;
    evals_from_json(value).map_err(EvalsFileError::Invalid)
}

/// [`read_evals_file`] after the JSON parse: the message of an [`EvalsFileError::Invalid`].
fn evals_from_json(value: serde_json::Value) -> Result<EvalsFile, String> {
    let serde_json::Value::Object(root) = value else {
        return Err(
            "the file must hold one JSON object: `{\"skill_name\": ..., \"evals\": [...]}`"
                .to_owned(),
        );
    };
    let skill_name = match root.get("skill_name") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(name)) => Some(name.clone()),
        Some(_) => return Err("`skill_name` must be a string: the skill's `name`".to_owned()),
    };
    let unknown = root
        .keys()
        .filter(|k| !FILE_KEYS.contains(&k.as_str()))
        .cloned()
        .collect();
    let entries = match root.get("evals") {
        Some(serde_json::Value::Array(entries)) if !entries.is_empty() => entries,
        Some(serde_json::Value::Array(_)) => {
            return Err(
                "`evals` is empty: add at least one entry `{\"id\": 1, \"prompt\": \"...\"}`"
                    .to_owned(),
            );
        }
        Some(_) => {
            return Err(
                "`evals` must be an array of entries `{\"id\": 1, \"prompt\": \"...\"}`".to_owned(),
            );
        }
        None => {
            return Err(
                "`evals` is missing: add `\"evals\": [{\"id\": 1, \"prompt\": \"...\"}]`"
                    .to_owned(),
            );
        }
    };
    let evals = entries
        .iter()
        .enumerate()
        .map(|(index, entry)| parse_entry(index, entry))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(EvalsFile {
        skill_name,
        evals,
        unknown,
    })
}

/// Every entry whose `id`, or whose test name ([`EvalEntry::label`]), is an earlier entry's:
/// one message each, in file order, naming both entries and the fix.
pub fn clashes(evals: &[EvalEntry]) -> Vec<String> {
    let mut found = Vec::new();
    for (i, entry) in evals.iter().enumerate() {
        let earlier = &evals[..i];
        if let Some(first) = earlier.iter().find(|e| e.id == entry.id) {
            found.push(format!(
                "evals[{}]: `id` {} is also the id of evals[{}]; give each entry its own id",
                entry.index, entry.id, first.index
            ));
        } else if let Some(first) = earlier.iter().find(|e| e.label() == entry.label()) {
            found.push(format!(
                "evals[{}]: its test would be named `{}` like evals[{}]'s; give the entries ids that differ in letters or digits",
                entry.index,
                entry.label(),
                first.index
            ));
        }
    }
    found
}

fn parse_entry(index: usize, entry: &serde_json::Value) -> Result<EvalEntry, String> {
    let serde_json::Value::Object(fields) = entry else {
        return Err(format!(
            "evals[{index}] must be an object `{{\"id\": {}, \"prompt\": \"...\"}}`",
            index + 1
        ));
    };
    let at = |key: &str| format!("evals[{index}]: `{key}`");
    let id = match fields.get("id") {
        Some(serde_json::Value::Number(n)) if n.is_u64() => n.to_string(),
        Some(serde_json::Value::String(s))
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
        {
            s.clone()
        }
        Some(_) => {
            return Err(format!(
                "{} must be a non-negative integer (or a string of letters, digits, `-` and `_`)",
                at("id")
            ));
        }
        None => {
            return Err(format!(
                "{} is missing: add `\"id\": {}`",
                at("id"),
                index + 1
            ));
        }
    };
    let name = format!("evals[{index}] (id {id})");
    let key = |key: &str| format!("{name}: `{key}`");
    let prompt = match fields.get("prompt") {
        Some(serde_json::Value::String(p)) if !p.trim().is_empty() => p.clone(),
        Some(serde_json::Value::String(_)) => {
            return Err(format!(
                "{} is blank: write the task the session gets",
                key("prompt")
            ));
        }
        Some(_) => {
            return Err(format!(
                "{} must be a string: the task the session gets",
                key("prompt")
            ));
        }
        None => {
            return Err(format!(
                "{} is missing: add the task the session gets",
                key("prompt")
            ));
        }
    };
    let expected_output = match fields.get("expected_output") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(format!("{} must be a string", key("expected_output"))),
    };
    let strings = |field: &str| -> Result<Vec<String>, String> {
        match fields.get(field) {
            None | Some(serde_json::Value::Null) => Ok(Vec::new()),
            Some(serde_json::Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    serde_json::Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
                    serde_json::Value::String(_) => Err(format!("{}[{i}] is blank", key(field))),
                    _ => Err(format!("{}[{i}] must be a string", key(field))),
                })
                .collect(),
            Some(_) => Err(format!("{} must be an array of strings", key(field))),
        }
    };
    let files = strings("files")?;
    let expectations = strings("expectations")?;
    let unknown = fields
        .keys()
        .filter(|k| !ENTRY_KEYS.contains(&k.as_str()))
        .cloned()
        .collect();
    Ok(EvalEntry {
        index,
        id,
        prompt,
        expected_output,
        files,
        expectations,
        unknown,
    })
}

/// Whether `file` (as written in `files`) is a relative path that stays inside the skill folder:
/// no root, no `..` component. Whether it exists is the caller's check.
pub fn stays_inside(file: &str) -> bool {
    let path = std::path::Path::new(file);
    path.is_relative()
        && path.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
}
