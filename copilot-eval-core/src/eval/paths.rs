//! The relative paths of an eval, resolved once by
//! [`build`](super::CopilotEvalBuilder::build) against one base folder, before anything reaches
//! the runtime (which would resolve them against the session's working directory instead).
//!
//! The base is the package root for a builder from
//! [`EvalContext::eval`](crate::harness::EvalContext::eval), the folder given to
//! [`base_directory`](super::CopilotEvalBuilder::base_directory), else the process's current
//! directory (where cargo and `cargo copilot-eval` run a test binary: its package root). The
//! paths resolved: `working_directory`, `skill_directories`, and the `working_directory` of each
//! stdio MCP server (the eval's and its custom agents'). Attachments are not among them: their
//! paths are relative to the eval's working directory ([`Prompt`](super::Prompt)).

use std::path::{Path, PathBuf};

use github_copilot_sdk::{IndexMap, McpServerConfig};

use crate::error::ConfigError;

/// The folder relative paths are resolved against, and what it is (for messages).
#[derive(Debug, Clone)]
pub(crate) struct Base {
    dir: PathBuf,
    what: &'static str,
}

impl Base {
    /// `dir`, described as `what` ("the package root").
    pub(crate) fn new(dir: impl Into<PathBuf>, what: &'static str) -> Base {
        Base {
            dir: dir.into(),
            what,
        }
    }

    /// The folder itself.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The process's current directory (`.` when it cannot be read).
    pub(crate) fn current() -> Base {
        Base::new(
            std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            "the current directory",
        )
    }

    /// `path` made absolute against the base (an absolute `path` stays as it is).
    pub(crate) fn resolve(&self, path: &Path) -> PathBuf {
        if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.dir.join(path)
        }
    }

    /// The absolute path looked at, and for a relative `given` what it was relative to:
    /// `/pkg/skills ("skills" relative to the package root /pkg)`.
    pub(crate) fn describe(&self, given: &Path) -> String {
        let resolved = self.resolve(given);
        if given.is_absolute() {
            resolved.display().to_string()
        } else {
            format!(
                "{} ({:?} relative to {} {})",
                resolved.display(),
                given.display().to_string(),
                self.what,
                self.dir.display()
            )
        }
    }

    /// Resolve `dir` and check that it is a directory, else a [`ConfigError`] of `field` naming
    /// the absolute path, what it was relative to, and `hint`.
    pub(crate) fn existing_dir(
        &self,
        field: &'static str,
        dir: &Path,
        hint: &str,
    ) -> Result<PathBuf, ConfigError> {
        let resolved = self.resolve(dir);
        if resolved.is_dir() {
            Ok(resolved)
        } else {
            Err(ConfigError::new(
                field,
                format!(
                    "{} is not an existing directory{}; {hint}",
                    self.describe(dir),
                    crate::suggest::sibling_hint(dir, &resolved)
                ),
            ))
        }
    }

    /// Resolve the `working_directory` of each stdio MCP server in `servers` (`owner` names
    /// whose servers they are in messages), checking that each is a directory.
    pub(crate) fn mcp_servers(
        &self,
        field: &'static str,
        owner: &str,
        servers: &mut IndexMap<String, McpServerConfig>,
    ) -> Result<(), ConfigError> {
        for (name, server) in servers.iter_mut() {
            let McpServerConfig::Stdio(stdio) = server else {
                continue;
            };
            let Some(dir) = &stdio.working_directory else {
                continue;
            };
            let resolved = self.existing_dir(
                field,
                Path::new(dir),
                &format!("it is the working_directory of {owner}MCP server {name:?}: create it or fix the path"),
            )?;
            stdio.working_directory = Some(resolved.display().to_string());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use github_copilot_sdk::McpStdioServerConfig;

    #[test]
    fn relative_paths_are_resolved_and_named_with_their_base() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("skills")).unwrap();
        let base = Base::new(dir.path(), "the package root");
        assert_eq!(
            base.existing_dir("skill_directories", Path::new("skills"), "")
                .unwrap(),
            dir.path().join("skills")
        );
        let err = base
            .existing_dir("skill_directories", Path::new("nope"), "make it")
            .unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "{} (\"nope\" relative to the package root {}) is not an existing directory; make it",
                dir.path().join("nope").display(),
                dir.path().display()
            )
        );

        let mut servers = IndexMap::new();
        servers.insert(
            "files".to_owned(),
            McpServerConfig::Stdio(McpStdioServerConfig {
                command: "server".to_owned(),
                working_directory: Some("skills".to_owned()),
                ..Default::default()
            }),
        );
        base.mcp_servers("mcp_servers", "", &mut servers).unwrap();
        let McpServerConfig::Stdio(stdio) = &servers["files"] else {
            unreachable!()
        };
        assert_eq!(
            stdio.working_directory.as_deref(),
            Some(dir.path().join("skills").to_str().unwrap())
        );
    }
}
