//! Front matter: split a Markdown file into its YAML front matter and its body, parse the YAML
//! with line numbers, and check fields against their documented types.

use std::fmt;
use std::path::Path;

use github_copilot_sdk::IndexMap;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_saphyr::{MessageFormatter, Spanned};

use super::Problem;

/// A Markdown file split at its front matter.
#[derive(Debug, Clone)]
pub(crate) struct Document {
    /// The front-matter fields in file order; `None` when the file has no front matter.
    pub fields: Option<Vec<Field>>,
    /// Everything after the closing `---` line (the whole file without front matter), as written.
    pub body: String,
    /// 1-based line on which the body starts.
    pub body_line: u32,
    /// Problems of the front matter that did not stop reading it (a repeated key: the first
    /// value is kept).
    pub problems: Vec<Problem>,
}

/// One top-level front-matter entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    /// The key as written.
    pub key: String,
    /// The value, as JSON (YAML mappings become objects, sequences arrays).
    pub value: Value,
    /// 1-based line of the key in the file.
    pub line: Option<u32>,
}

/// Whether `line` is a front-matter delimiter: `---` with optional trailing spaces or tabs.
fn is_delimiter(line: &str) -> bool {
    let line = line.strip_suffix('\r').unwrap_or(line);
    line.trim_end_matches([' ', '\t']) == "---"
}

/// Split and parse `text` (the contents of `path`).
///
/// Errors: `front-matter-unclosed`, `front-matter-yaml` (with the YAML error's line),
/// `front-matter-not-mapping`.
pub(crate) fn parse(path: &Path, text: &str) -> Result<Document, Problem> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else {
        return Ok(Document {
            fields: None,
            body: String::new(),
            body_line: 1,
            problems: Vec::new(),
        });
    };
    if !is_delimiter(first.trim_end_matches('\n')) {
        return Ok(Document {
            fields: None,
            body: text.to_owned(),
            body_line: 1,
            problems: Vec::new(),
        });
    }
    let mut yaml = String::new();
    let mut line_no: u32 = 1;
    let mut closed = false;
    let mut consumed = first.len();
    for line in lines {
        line_no += 1;
        consumed += line.len();
        if is_delimiter(line.trim_end_matches('\n')) {
            closed = true;
            break;
        }
        yaml.push_str(line);
    }
    if !closed {
        return Err(Problem::error(
            path,
            "front-matter-unclosed",
            "the front matter opened by `---` on line 1 has no closing `---` line",
        )
        .at(Some(1)));
    }
    let (fields, problems) = parse_yaml(path, &yaml)?;
    Ok(Document {
        fields: Some(fields),
        body: text[consumed..].to_owned(),
        body_line: line_no + 1,
        problems,
    })
}

/// Parse the YAML between the delimiters (which starts on file line 2). A repeated key is a
/// `front-matter-duplicate-key` problem (the first value is kept) that does not stop the parse,
/// so the file's other problems are found too.
fn parse_yaml(path: &Path, yaml: &str) -> Result<(Vec<Field>, Vec<Problem>), Problem> {
    const OFFSET: u32 = 1;
    let blank = yaml
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
    if blank {
        return Ok((Vec::new(), Vec::new()));
    }
    let to_line = |l: u64| (l > 0).then(|| l as u32 + OFFSET);
    let mut options = serde_saphyr::Options::default();
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::PassThrough;
    match serde_saphyr::from_str_with_options::<Mapping>(yaml, options) {
        Ok(Mapping(entries)) => {
            let mut fields: Vec<Field> = Vec::new();
            let mut problems = Vec::new();
            for (key, value) in entries {
                let line = to_line(key.referenced.line());
                if let Some(first) = fields.iter().find(|f| f.key == key.value) {
                    let first_line = first
                        .line
                        .map(|l| format!(" on line {l}"))
                        .unwrap_or_default();
                    problems.push(
                        Problem::error(
                            path,
                            "front-matter-duplicate-key",
                            format!(
                                "appears twice (first{first_line}); a key may appear once in the front matter: keep one of them"
                            ),
                        )
                        .at(line)
                        .field(key.value),
                    );
                    continue;
                }
                fields.push(Field {
                    line,
                    key: key.value,
                    value,
                });
            }
            Ok((fields, problems))
        }
        Err(e) => {
            let line = e.location().and_then(|l| to_line(l.line()));
            let message = serde_saphyr::DefaultMessageFormatter
                .format_message(e.without_snippet())
                .to_string();
            // Valid YAML that is not a mapping (a list, a scalar) is its own rule.
            let not_a_mapping =
                serde_saphyr::from_str::<Value>(yaml).is_ok_and(|v| !v.is_object() && !v.is_null());
            if not_a_mapping {
                // Read as no keys: each kind decides whether that stops the file.
                let problem = Problem::error(
                    path,
                    "front-matter-not-mapping",
                    "must be a mapping of keys to values (`key: value` lines)",
                )
                .at(line.or(Some(2)));
                return Ok((Vec::new(), vec![problem]));
            }
            let advice = line
                .and_then(|l| yaml.lines().nth((l - 1 - OFFSET) as usize))
                .and_then(yaml_advice);
            let message = match advice {
                Some(advice) => format!("is not valid YAML: {advice} (parser: {})", message.trim()),
                None => format!("is not valid YAML: {}", message.trim()),
            };
            Err(Problem::error(path, "front-matter-yaml", message).at(line))
        }
    }
}

/// Characters that cannot start a plain (unquoted) YAML value.
const YAML_INDICATORS: &[char] = &['*', '[', '{', '&', '!', '|', '>', '%', '@', '`'];

/// How to fix the common YAML mistakes on `line` (the line the parser stopped at), in our words.
pub(crate) fn yaml_advice(line: &str) -> Option<String> {
    if line.starts_with('\t') || line.trim_start_matches(' ').starts_with('\t') {
        return Some("the line is indented with a tab; YAML indents with spaces only".to_owned());
    }
    let (key, value) = line.split_once(':')?;
    let key = key.trim();
    let value = value.trim();
    let first = value.chars().next()?;
    if YAML_INDICATORS.contains(&first) {
        return Some(format!(
            "the value of `{key}` starts with `{first}`, which YAML reads as syntax; quote the value: {key}: \"{}\"",
            value.replace('"', "\\\"")
        ));
    }
    if value.contains(": ") || value.ends_with(':') {
        return Some(format!(
            "the value of `{key}` contains `: `, which YAML reads as a new key; quote the value: {key}: \"{}\"",
            value.replace('"', "\\\"")
        ));
    }
    None
}

/// A top-level mapping with the location of each key, in order.
struct Mapping(Vec<(Spanned<String>, Value)>);

impl<'de> Deserialize<'de> for Mapping {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MappingVisitor;
        impl<'de> Visitor<'de> for MappingVisitor {
            type Value = Mapping;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping of front-matter keys to values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Mapping, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    let value: Value = map.next_value()?;
                    entries.push((key, value));
                }
                Ok(Mapping(entries))
            }
        }
        deserializer.deserialize_map(MappingVisitor)
    }
}

/// Checks the fields of one front matter against their documented types, collecting problems.
pub(crate) struct Checker<'a> {
    path: &'a Path,
    fields: IndexMap<String, Field>,
    /// Problems found so far, in the order the checks ran.
    pub problems: Vec<Problem>,
}

impl<'a> Checker<'a> {
    /// The front matter of the file `path` (its `text`) read into a checker holding the
    /// reading's own problems, with the document (its body). Errors: a front matter that
    /// cannot be read, or none (`front-matter-missing`: "must start with a `---` front matter
    /// block holding `holding`").
    pub fn of_text(path: &'a Path, text: &str, holding: &str) -> Result<(Self, Document), Problem> {
        let document = parse(path, text)?;
        let Some(fields) = &document.fields else {
            return Err(Problem::error(
                path,
                "front-matter-missing",
                format!("must start with a `---` front matter block holding {holding}"),
            )
            .at(Some(1)));
        };
        let mut checker = Checker::new(path, fields);
        checker.problems.extend(document.problems.iter().cloned());
        Ok((checker, document))
    }

    /// The problems found so far, taken out; when the front matter is not a mapping, without
    /// the `required` ones (said once: no key can be read from such a front matter).
    pub fn take_problems(&mut self) -> Vec<Problem> {
        let mut problems = std::mem::take(&mut self.problems);
        if problems
            .iter()
            .any(|p| p.rule == "front-matter-not-mapping")
        {
            problems.retain(|p| p.rule != "required");
        }
        problems
    }

    /// A checker over `fields` of the file `path`.
    pub fn new(path: &'a Path, fields: &[Field]) -> Self {
        Self {
            path,
            fields: fields.iter().map(|f| (f.key.clone(), f.clone())).collect(),
            problems: Vec::new(),
        }
    }

    /// The file being checked.
    pub fn file(&self) -> &Path {
        self.path
    }

    /// The field, when present.
    pub fn get(&self, key: &str) -> Option<&Field> {
        self.fields.get(key)
    }

    /// The line of `key`, when present.
    pub fn line(&self, key: &str) -> Option<u32> {
        self.fields.get(key).and_then(|f| f.line)
    }

    /// Every field as one JSON object (the front matter as written).
    pub fn as_object(&self) -> serde_json::Map<String, Value> {
        self.fields
            .iter()
            .map(|(k, f)| (k.clone(), f.value.clone()))
            .collect()
    }

    /// Record an error about `key`.
    pub fn error(&mut self, key: &str, rule: &'static str, message: impl Into<String>) {
        let line = self.line(key);
        self.problems
            .push(Problem::error(self.path, rule, message).at(line).field(key));
    }

    /// Record a warning about `key`.
    pub fn warn(&mut self, key: &str, rule: &'static str, message: impl Into<String>) {
        let line = self.line(key);
        self.problems.push(
            Problem::warning(self.path, rule, message)
                .at(line)
                .field(key),
        );
    }

    /// A string field: `required` makes absence an error; a present value must be a non-blank
    /// string.
    pub fn string(&mut self, key: &str, required: bool) -> Option<String> {
        let Some(field) = self.fields.get(key) else {
            if required {
                self.problems.push(
                    Problem::error(
                        self.path,
                        "required",
                        "is required; add it to the front matter",
                    )
                    .field(key),
                );
            }
            return None;
        };
        match &field.value {
            Value::String(s) if s.trim().is_empty() => {
                let advice = if required {
                    "must not be empty; give it a text value (the key is required)"
                } else {
                    "must not be empty; give it a text value or remove the key"
                };
                self.error(key, "empty", advice);
                None
            }
            Value::String(s) => Some(s.clone()),
            Value::Null => {
                let advice = if required {
                    "has no value; give it a text value (the key is required)"
                } else {
                    "has no value; give it a text value or remove the key"
                };
                self.error(key, "empty", advice);
                None
            }
            other => {
                let kind = kind_of(other);
                self.error(
                    key,
                    "type",
                    format!("must be a text string, not {kind}{}", quote_hint(other)),
                );
                None
            }
        }
    }

    /// A boolean field (`true` or `false`).
    pub fn boolean(&mut self, key: &str) -> Option<bool> {
        let field = self.fields.get(key)?;
        match &field.value {
            Value::Bool(b) => Some(*b),
            other => {
                let kind = kind_of(other);
                self.error(key, "type", format!("must be true or false, not {kind}"));
                None
            }
        }
    }

    /// A list of non-blank strings, written as a YAML sequence or as one string split on
    /// `separators` (empty pieces dropped).
    pub fn string_list(&mut self, key: &str, separators: &[char]) -> Option<Vec<String>> {
        let field = self.fields.get(key)?.clone();
        let how = if separators.contains(&',') {
            "a list of strings or one comma-separated string"
        } else {
            "a list of strings or one space-separated string"
        };
        match &field.value {
            Value::String(s) => Some(
                s.split(|c: char| separators.contains(&c))
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ),
            Value::Array(items) => {
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) if !s.trim().is_empty() => out.push(s.trim().to_owned()),
                        Value::String(_) => {
                            self.error(key, "empty", format!("entry {} is empty", i + 1))
                        }
                        other => {
                            let kind = kind_of(other);
                            self.error(
                                key,
                                "type",
                                format!("entry {} must be a string, not {kind}", i + 1),
                            )
                        }
                    }
                }
                Some(out)
            }
            Value::Null => Some(Vec::new()),
            other => {
                let kind = kind_of(other);
                self.error(key, "type", format!("must be {how}, not {kind}"));
                None
            }
        }
    }

    /// A mapping of string keys to string values. A non-string value is a `metadata-value`
    /// warning (kept as its JSON text); anything but a mapping is a `type` error.
    pub fn string_map(&mut self, key: &str) -> Option<IndexMap<String, String>> {
        let field = self.fields.get(key)?.clone();
        match &field.value {
            Value::Object(map) => {
                let mut out = IndexMap::new();
                for (k, v) in map {
                    match v {
                        Value::String(s) => {
                            out.insert(k.clone(), s.clone());
                        }
                        other => {
                            let kind = kind_of(other);
                            self.warn(
                                key,
                                "metadata-value",
                                format!(
                                    "`{k}` is {kind}; the format expects text values{}",
                                    quote_hint(other)
                                ),
                            );
                            out.insert(k.clone(), other.to_string());
                        }
                    }
                }
                Some(out)
            }
            Value::Null => Some(IndexMap::new()),
            other => {
                let kind = kind_of(other);
                self.error(
                    key,
                    "type",
                    format!("must be a mapping of names to text values, not {kind}"),
                );
                None
            }
        }
    }

    /// Warn about every key not in `known`, in file order.
    pub fn unknown_keys(&mut self, known: &[&str], what: &str) {
        let unknown: Vec<(String, Option<u32>)> = self
            .fields
            .values()
            .filter(|f| !known.contains(&f.key.as_str()))
            .map(|f| (f.key.clone(), f.line))
            .collect();
        for (key, line) in unknown {
            self.problems.push(
                Problem::warning(
                    self.path,
                    "unknown-key",
                    format!(
                        "is not a {what} front-matter key (known: {}); the runtime ignores it",
                        known.join(", ")
                    ),
                )
                .at(line)
                .field(key),
            );
        }
    }
}

/// A short description of a JSON value's kind, for messages.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn quote_hint(value: &Value) -> &'static str {
    match value {
        Value::Bool(_) | Value::Number(_) => " (quote it to make it text)",
        _ => "",
    }
}

/// The length of `text` in UTF-16 code units: the unit the runtime counts its limits in
/// (measured with runtime 1.0.102: 600 emoji, 1,200 units, exceed the 1,024 limit of a skill's
/// `description`; 1,024 `é`, 2,048 bytes, do not).
pub(crate) fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// Make the errors `matches` selects warnings, appending `note` (what the runtime does
/// instead) to their message.
pub(crate) fn demote(problems: &mut [Problem], matches: impl Fn(&Problem) -> bool, note: &str) {
    for p in problems.iter_mut() {
        if p.is_error() && matches(p) {
            p.severity = super::Severity::Warning;
            p.message = format!("{}; {note}", p.message);
        }
    }
}
