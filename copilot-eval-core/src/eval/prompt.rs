//! [`Prompt`]: one prompt of a run with its per-prompt options, the attachments (a file, a
//! directory, a selection of lines, a GitHub reference) and the agent mode.
//!
//! A `&str` or `String` converts into a prompt without options, so
//! `ctx.run(&eval, "Say hello.")` and `ctx.run(&eval, Prompt::new("Say hello."))` are the same
//! run. Attachment paths are relative to the eval's working directory (an absolute path is taken
//! as it is); the run resolves them before anything starts, and a missing file or folder ends
//! the run with `execution_error` and an error naming the path
//! ([`Prompt::resolve`]).

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One prompt of a run: the text, its attachments and its agent mode.
///
/// ```
/// use copilot_eval_core::eval::{AgentMode, Prompt};
///
/// let prompt = Prompt::new("Summarise the notes.")
///     .attach_file("notes.md")
///     .attach_selection("src/lib.rs", 3, 5)
///     .mode(AgentMode::Plan);
/// assert_eq!(prompt.attachments().len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Prompt {
    /// The text sent as the user message.
    pub text: String,
    /// The attachments, in the order they were added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    /// The agent mode of this prompt (`None`: the session's current mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<AgentMode>,
}

/// The agent mode a prompt is sent in (the SDK's `MessageOptions::agent_mode`, wire values
/// `interactive`, `plan`, `autopilot`, `shell`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AgentMode {
    /// The agent responds interactively (the runtime's default).
    Interactive,
    /// The agent prepares a plan before making changes.
    Plan,
    /// The agent works autonomously toward completing the task.
    Autopilot,
    /// The shell-focused mode.
    Shell,
}

impl AgentMode {
    /// The wire value: `interactive`, `plan`, `autopilot` or `shell`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Interactive => "interactive",
            Self::Plan => "plan",
            Self::Autopilot => "autopilot",
            Self::Shell => "shell",
        }
    }

    /// The SDK's value.
    pub(crate) fn to_sdk(self) -> github_copilot_sdk::AgentMode {
        match self {
            Self::Interactive => github_copilot_sdk::AgentMode::Interactive,
            Self::Plan => github_copilot_sdk::AgentMode::Plan,
            Self::Autopilot => github_copilot_sdk::AgentMode::Autopilot,
            Self::Shell => github_copilot_sdk::AgentMode::Shell,
        }
    }
}

/// The kind of a [`GitHubReference`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GitHubReferenceKind {
    /// An issue.
    Issue,
    /// A pull request.
    Pr,
    /// A discussion.
    Discussion,
}

/// A GitHub issue, pull request or discussion attached to a prompt. The runtime is given these
/// fields as they are (nothing is fetched from GitHub).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GitHubReference {
    /// Issue, pull request or discussion.
    pub kind: GitHubReferenceKind,
    /// Its number.
    pub number: u64,
    /// Its title.
    pub title: String,
    /// Its state, e.g. `open` or `closed`.
    pub state: String,
    /// Its URL.
    pub url: String,
}

/// One attachment of a [`Prompt`]. `path` is as the test gave it (relative to the eval's
/// working directory, or absolute).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Attachment {
    /// A file. Runtime 1.0.102 lists it in the prompt (its path and line count) for the model
    /// to read with its tools; it does not put the file's content in the model request.
    File {
        /// The file.
        path: PathBuf,
    },
    /// A folder.
    Directory {
        /// The folder.
        path: PathBuf,
    },
    /// Lines `start_line..=end_line` (1-based) of a file, sent as a selection with their text.
    Selection {
        /// The file.
        path: PathBuf,
        /// First selected line (1-based).
        start_line: u32,
        /// Last selected line (1-based, inclusive).
        end_line: u32,
        /// The selected text, read from the file when the run resolves the prompt (`None`
        /// before).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// A GitHub issue, pull request or discussion.
    GithubReference(GitHubReference),
}

impl Prompt {
    /// A prompt of `text` without attachments, in the session's current mode.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            attachments: Vec::new(),
            mode: None,
        }
    }

    /// Attach a file (relative to the eval's working directory, or absolute).
    pub fn attach_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.attachments
            .push(Attachment::File { path: path.into() });
        self
    }

    /// Attach a folder (relative to the eval's working directory, or absolute).
    pub fn attach_directory(mut self, path: impl Into<PathBuf>) -> Self {
        self.attachments
            .push(Attachment::Directory { path: path.into() });
        self
    }

    /// Attach lines `start_line..=end_line` (1-based, inclusive) of a file as a selection; the
    /// run reads their text from the file.
    pub fn attach_selection(
        mut self,
        path: impl Into<PathBuf>,
        start_line: u32,
        end_line: u32,
    ) -> Self {
        self.attachments.push(Attachment::Selection {
            path: path.into(),
            start_line,
            end_line,
            text: None,
        });
        self
    }

    /// Attach a GitHub issue, pull request or discussion.
    pub fn attach_github_reference(mut self, reference: GitHubReference) -> Self {
        self.attachments
            .push(Attachment::GithubReference(reference));
        self
    }

    /// Send this prompt in `mode` (e.g. [`AgentMode::Plan`]).
    pub fn mode(mut self, mode: AgentMode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// The attachments, in order.
    pub fn attachments(&self) -> &[Attachment] {
        &self.attachments
    }

    /// Whether the prompt has an attachment or a mode (a prompt without either is sent as
    /// plain text).
    pub fn has_options(&self) -> bool {
        !self.attachments.is_empty() || self.mode.is_some()
    }

    /// Check every attachment against `working_directory` (where relative paths point) and fill
    /// each selection's `text` from its file. `number` is the prompt's number in the run (from
    /// 1), used in errors.
    ///
    /// Errors, naming the prompt, the attachment and the absolute path: a file attachment or a
    /// selection whose file does not exist (or is a folder), a directory attachment that is not
    /// a folder, a selection whose lines are not `1 <= start_line <= end_line <= lines in the
    /// file`, a file that cannot be read as UTF-8 text for a selection.
    pub fn resolve(
        &self,
        number: usize,
        working_directory: &Path,
    ) -> Result<Prompt, AttachmentError> {
        let mut resolved = self.clone();
        for (index, attachment) in resolved.attachments.iter_mut().enumerate() {
            let name = |path: &Path| AttachmentAt {
                prompt: number,
                attachment: index + 1,
                path: path.to_path_buf(),
                absolute: absolute(working_directory, path),
            };
            match attachment {
                Attachment::File { path } => {
                    if !absolute(working_directory, path).is_file() {
                        return Err(AttachmentError::NotAFile { at: name(path) });
                    }
                }
                Attachment::Directory { path } => {
                    if !absolute(working_directory, path).is_dir() {
                        return Err(AttachmentError::NotAFolder { at: name(path) });
                    }
                }
                Attachment::Selection {
                    path,
                    start_line,
                    end_line,
                    text,
                } => {
                    let content = std::fs::read_to_string(absolute(working_directory, path))
                        .map_err(|source| AttachmentError::Unreadable {
                            at: name(path),
                            source,
                        })?;
                    let lines: Vec<&str> = content.lines().collect();
                    let (start, end) = (*start_line as usize, *end_line as usize);
                    if start == 0 || start > end || end > lines.len() {
                        return Err(AttachmentError::Lines {
                            at: name(path),
                            start_line: *start_line,
                            end_line: *end_line,
                            lines: lines.len(),
                        });
                    }
                    *text = Some(lines[start - 1..end].join("\n"));
                }
                Attachment::GithubReference(_) => {}
            }
        }
        Ok(resolved)
    }

    /// The SDK's message options for this prompt, attachment paths made absolute against
    /// `working_directory`. Call on a [`resolved`](Self::resolve) prompt (a selection needs its
    /// text).
    pub(crate) fn message_options(
        &self,
        working_directory: &Path,
    ) -> github_copilot_sdk::MessageOptions {
        use github_copilot_sdk::{
            Attachment as Sdk, AttachmentSelectionPosition, AttachmentSelectionRange,
        };
        let mut options = github_copilot_sdk::MessageOptions::new(self.text.clone());
        if let Some(mode) = self.mode {
            options = options.with_agent_mode(mode.to_sdk());
        }
        if self.attachments.is_empty() {
            return options;
        }
        let attachments = self
            .attachments
            .iter()
            .map(|attachment| match attachment {
                Attachment::File { path } => Sdk::File {
                    path: absolute(working_directory, path),
                    display_name: None,
                    line_range: None,
                },
                Attachment::Directory { path } => Sdk::Directory {
                    path: absolute(working_directory, path),
                    display_name: None,
                },
                Attachment::Selection {
                    path,
                    start_line,
                    end_line,
                    text,
                } => {
                    let text = text.clone().unwrap_or_default();
                    let last = text.lines().last().unwrap_or_default();
                    Sdk::Selection {
                        file_path: absolute(working_directory, path),
                        display_name: None,
                        selection: AttachmentSelectionRange {
                            start: AttachmentSelectionPosition {
                                line: start_line.saturating_sub(1),
                                character: 0,
                            },
                            end: AttachmentSelectionPosition {
                                line: end_line.saturating_sub(1),
                                character: u32::try_from(last.chars().count()).unwrap_or(u32::MAX),
                            },
                        },
                        text,
                    }
                }
                Attachment::GithubReference(reference) => Sdk::GitHubReference {
                    number: reference.number,
                    title: reference.title.clone(),
                    reference_type: match reference.kind {
                        GitHubReferenceKind::Issue => {
                            github_copilot_sdk::GitHubReferenceType::Issue
                        }
                        GitHubReferenceKind::Pr => github_copilot_sdk::GitHubReferenceType::Pr,
                        GitHubReferenceKind::Discussion => {
                            github_copilot_sdk::GitHubReferenceType::Discussion
                        }
                    },
                    state: reference.state.clone(),
                    url: reference.url.clone(),
                },
            })
            .collect();
        options.with_attachments(attachments)
    }
}

/// `path` against `working_directory` (an absolute `path` stays as it is).
/// Which attachment an [`AttachmentError`] is about. Displayed as `prompt 2, attachment 1
/// (notes.md): /abs/notes.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentAt {
    /// The prompt's number in the run, from 1.
    pub prompt: usize,
    /// The attachment's number in the prompt, from 1.
    pub attachment: usize,
    /// Its path as given (relative to the eval's working directory, or absolute).
    pub path: PathBuf,
    /// The path made absolute against the working directory.
    pub absolute: PathBuf,
}

impl std::fmt::Display for AttachmentAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "prompt {}, attachment {} ({}): {}",
            self.prompt,
            self.attachment,
            self.path.display(),
            self.absolute.display()
        )
    }
}

/// A prompt's attachment cannot be sent ([`Prompt::resolve`]); each message names the prompt,
/// the attachment and its absolute path, and says what to fix.
#[derive(Debug, thiserror::Error)]
pub enum AttachmentError {
    /// A file attachment's path is not a file.
    #[error(
        "{at} is not a file (a file attachment's path is relative to the eval's working directory): create it before the run or fix the path"
    )]
    NotAFile {
        /// The attachment.
        at: AttachmentAt,
    },
    /// A directory attachment's path is not a folder.
    #[error(
        "{at} is not a folder (a directory attachment's path is relative to the eval's working directory): create it before the run or fix the path"
    )]
    NotAFolder {
        /// The attachment.
        at: AttachmentAt,
    },
    /// A selection's file cannot be read as UTF-8 text.
    #[error(
        "{at} cannot be read for the selection ({source}; the path is relative to the eval's working directory): create it before the run or fix the path"
    )]
    Unreadable {
        /// The attachment.
        at: AttachmentAt,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A selection's lines are not `1 <= start_line <= end_line <= lines in the file`.
    #[error(
        "{at}: the selection's lines {start_line}..={end_line} are not within the file's {lines} lines (lines count from 1, start <= end)"
    )]
    Lines {
        /// The attachment.
        at: AttachmentAt,
        /// The selection's first line, as given.
        start_line: u32,
        /// The selection's last line, as given.
        end_line: u32,
        /// The lines the file has.
        lines: usize,
    },
}

fn absolute(working_directory: &Path, path: &Path) -> PathBuf {
    working_directory.join(path)
}

impl From<&str> for Prompt {
    fn from(text: &str) -> Self {
        Prompt::new(text)
    }
}

impl From<String> for Prompt {
    fn from(text: String) -> Self {
        Prompt::new(text)
    }
}

impl From<&String> for Prompt {
    fn from(text: &String) -> Self {
        Prompt::new(text.clone())
    }
}

impl From<&Prompt> for Prompt {
    fn from(prompt: &Prompt) -> Self {
        prompt.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_fills_a_selection_and_names_a_missing_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
        let prompt = Prompt::new("x")
            .attach_file("a.txt")
            .attach_selection("a.txt", 2, 3);
        let resolved = prompt.resolve(1, dir.path()).unwrap();
        assert_eq!(
            resolved.attachments[1],
            Attachment::Selection {
                path: "a.txt".into(),
                start_line: 2,
                end_line: 3,
                text: Some("two\nthree".to_owned())
            }
        );
        let options = resolved.message_options(dir.path());
        let wire = serde_json::to_value(options.attachments.unwrap()).unwrap();
        assert_eq!(wire[0]["path"], dir.path().join("a.txt").to_str().unwrap());
        assert_eq!(wire[1]["selection"]["end"]["line"], 2);
        assert_eq!(wire[1]["selection"]["end"]["character"], 5);

        let err = Prompt::new("x")
            .attach_file("missing.md")
            .resolve(2, dir.path())
            .unwrap_err()
            .to_string();
        let missing = dir.path().join("missing.md");
        assert!(
            err.contains(&format!(
                "prompt 2, attachment 1 (missing.md): {}",
                missing.display()
            )),
            "{err}"
        );
        let err = Prompt::new("x")
            .attach_directory("a.txt")
            .resolve(1, dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not a folder"), "{err}");
        let err = Prompt::new("x")
            .attach_selection("a.txt", 3, 4)
            .resolve(1, dir.path())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("lines 3..=4 are not within the file's 3 lines"),
            "{err}"
        );
    }
}
