//! Values a recording could not normalise: after the normalisers ran, a cassette should hold
//! nothing that depends on the machine, the directory, the time or randomness. What is left of
//! three kinds is found here, with the cassette line it is on, so that recording can warn
//! (and `--record --strict` refuse to write): an absolute path under a temporary folder, a
//! UUID, a timestamp (ISO 8601 date and time, or milliseconds since 1970 of the years 2020 to
//! 2033). Only what a replay compares or hands to the runtime is searched: prompts (user
//! messages), tool results and tool-call arguments; the system prompt is `${system}` and the
//! model's own text is served back as recorded.

use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;

use super::format::{Cassette, CassetteError, Role};

/// What kind of value could not be normalised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VolatileKind {
    /// An absolute path under a temporary folder (the system's, `/tmp`, `/var/folders`).
    TempPath,
    /// A UUID (`8-4-4-4-12` hexadecimal digits).
    Uuid,
    /// An ISO 8601 date and time, or a 13-digit count of milliseconds since 1970.
    Timestamp,
}

impl VolatileKind {
    /// How a warning names it: `a path under a temporary folder`, `a uuid`, `a timestamp`.
    pub fn describe(self) -> &'static str {
        match self {
            VolatileKind::TempPath => "a path under a temporary folder",
            VolatileKind::Uuid => "a uuid",
            VolatileKind::Timestamp => "a timestamp",
        }
    }
}

/// One value a cassette holds literally that will likely differ on another machine or run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolatileValue {
    /// The cassette file.
    pub path: std::path::PathBuf,
    /// The 1-based line of the cassette text the value is on (the line of its message when the
    /// value is written escaped).
    pub line: u32,
    /// What it is.
    pub kind: VolatileKind,
    /// The value as found.
    pub value: String,
    /// Where: `a prompt`, `a tool result` or `tool-call arguments`.
    pub place: &'static str,
}

impl std::fmt::Display for VolatileValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: {} `{}` in {} is stored literally (no normaliser covers it), so a replay on another machine or in another run will likely not match it",
            self.path.display(),
            self.line,
            self.kind.describe(),
            self.value,
            self.place
        )
    }
}

fn uuid() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
        )
        .expect("valid")
    })
}

fn timestamp() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?|\b1[6-9]\d{11}\b",
        )
        .expect("valid")
    })
}

/// The temporary folders a path may start with: `temp` (the system's, as given and canonical)
/// and, on Unix, `/tmp`, `/var/tmp` and `/var/folders` (macOS).
pub fn temp_folders(temp: &Path) -> Vec<String> {
    let mut folders = super::normalize::spellings(temp);
    if cfg!(unix) {
        for folder in ["/tmp", "/var/tmp", "/var/folders", "/private/var/folders"] {
            if !folders.iter().any(|f| f == folder) {
                folders.push(folder.to_owned());
            }
        }
    }
    folders.retain(|f| f.len() > 1);
    folders
}

/// Every value of `text` (the whole cassette file, comment lines included, as it is or would
/// be written at `path`) that no normaliser turned into a placeholder: absolute paths under a
/// temporary folder, uuids and timestamps. `temp` lists the temporary folders ([`temp_folders`]).
///
/// Errors: the text is not a cassette ([`Cassette::parse`]).
pub fn volatile_values(
    text: &str,
    path: &Path,
    temp: &[String],
) -> Result<Vec<VolatileValue>, CassetteError> {
    let cassette = Cassette::parse(text, path)?;
    let lines: Vec<&str> = text.lines().collect();
    let temp_path = (!temp.is_empty()).then(|| {
        let folders: Vec<String> = temp.iter().map(|f| regex::escape(f)).collect();
        Regex::new(&format!(
            r#"(?:{})[/\\][^\s"'`<>|,;)\]]*"#,
            folders.join("|")
        ))
        .expect("valid")
    });
    let mut found: Vec<VolatileValue> = Vec::new();
    for message in cassette.conversations.iter().flat_map(|c| &c.messages) {
        let mut texts: Vec<(&str, &'static str)> = Vec::new();
        match message.role {
            Role::User => texts.extend(message.content.as_deref().map(|t| (t, "a prompt"))),
            Role::Tool => texts.extend(message.content.as_deref().map(|t| (t, "a tool result"))),
            Role::Assistant => texts.extend(
                message
                    .tool_calls
                    .iter()
                    .map(|c| (c.arguments.as_str(), "tool-call arguments")),
            ),
            Role::System => {}
        }
        for (text, place) in texts {
            let mut hits: Vec<(VolatileKind, &str)> = Vec::new();
            if let Some(re) = &temp_path {
                hits.extend(
                    re.find_iter(text)
                        .map(|m| (VolatileKind::TempPath, m.as_str())),
                );
            }
            hits.extend(
                uuid()
                    .find_iter(text)
                    .map(|m| (VolatileKind::Uuid, m.as_str())),
            );
            hits.extend(
                timestamp()
                    .find_iter(text)
                    .map(|m| (VolatileKind::Timestamp, m.as_str())),
            );
            for (kind, value) in hits {
                let from = message.line.saturating_sub(1) as usize;
                let line = lines
                    .iter()
                    .enumerate()
                    .skip(from)
                    .find(|(_, l)| l.contains(value))
                    .map_or(message.line, |(i, _)| i as u32 + 1);
                let value = VolatileValue {
                    path: path.to_path_buf(),
                    line,
                    kind,
                    value: value.to_owned(),
                    place,
                };
                if !found.contains(&value) {
                    found.push(value);
                }
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cassette whose tool call reads `STRAY` (replaced by a path under the system's temporary
    /// folder, built at run time).
    const CASSETTE: &str = "# comment line\nconversations:\n  - messages:\n      - role: system\n        content: ${system}\n      - role: user\n        content: Read ${workdir}/a.txt.\n      - role: assistant\n        tool_calls:\n          - id: toolcall_0\n            type: function\n            function:\n              name: view\n              arguments: '{\"path\":\"STRAY\"}'\n      - role: tool\n        tool_call_id: toolcall_0\n        content: |-\n          first line\n          request id 5f45b499-74b4-411b-9969-a2fc1daca794\n          at 2026-12-01T01:37:00.699+00:00 (1796089073561)\n      - role: assistant\n        content: Session 5f45b499-74b4-411b-9969-a2fc1daca794 is fine.\n";

    #[test]
    fn each_kind_is_found_on_its_line_and_placeholders_are_not() {
        let temp = std::env::temp_dir();
        let stray = temp.join("other-7").join("b.txt").display().to_string();
        let found = volatile_values(
            &CASSETTE.replace("STRAY", &stray),
            Path::new("c.yaml"),
            &temp_folders(&temp),
        )
        .unwrap();
        let seen: Vec<(u32, VolatileKind, &str, &str)> = found
            .iter()
            .map(|v| (v.line, v.kind, v.value.as_str(), v.place))
            .collect();
        assert_eq!(
            seen,
            [
                (
                    14,
                    VolatileKind::TempPath,
                    stray.as_str(),
                    "tool-call arguments"
                ),
                (
                    19,
                    VolatileKind::Uuid,
                    "5f45b499-74b4-411b-9969-a2fc1daca794",
                    "a tool result"
                ),
                (
                    20,
                    VolatileKind::Timestamp,
                    "2026-12-01T01:37:00.699+00:00",
                    "a tool result"
                ),
                (
                    20,
                    VolatileKind::Timestamp,
                    "1796089073561",
                    "a tool result"
                ),
            ]
        );
        let text = found[1].to_string();
        assert!(text.starts_with("c.yaml:19: a uuid `5f45b499"), "{text}");
    }

    #[test]
    fn a_normalised_cassette_has_nothing_to_report() {
        let clean = "conversations:\n  - messages:\n      - role: system\n        content: ${system}\n      - role: user\n        content: Read ${workdir}/a.txt, all 2026 lines of it.\n      - role: tool\n        tool_call_id: toolcall_0\n        content: 'Saved to: ${tool_output_file}'\n      - role: assistant\n        content: Done.\n";
        let found = volatile_values(
            clean,
            Path::new("c.yaml"),
            &temp_folders(&std::env::temp_dir()),
        )
        .unwrap();
        assert!(found.is_empty(), "{found:?}");
    }
}
