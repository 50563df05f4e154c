//! Resuming an earlier session in a fresh runtime process: the run's home (given by the caller
//! and kept after the run, [`RunHome`]) and the SDK's resume configuration built from the
//! session configuration the eval maps to ([`resume_config`]).
//!
//! The runtime stores a session's state (its conversation) under its home (`COPILOT_HOME`;
//! runtime 1.0.102: `session-state/<session id>/events.jsonl` and a `session-store.db`). A
//! run given [`RunOptions::home`](super::RunOptions::home) uses that folder as its home and
//! leaves it in place, so a later run seeded with a copy of it
//! ([`RunOptions::home_seed`](super::RunOptions::home_seed)) and given
//! [`RunOptions::resume`](super::RunOptions::resume) can resume the session by its id
//! (`session.resume`): the model then sees the earlier conversation as history.

use std::path::{Path, PathBuf};

use github_copilot_sdk::{ResumeSessionConfig, SessionConfig, SessionId};

/// The private runtime home of one run: a temporary folder removed after the run, or a folder
/// the caller gave ([`RunOptions::home`](super::RunOptions::home)), left in place.
pub(super) enum RunHome {
    /// Created for the run, removed after it.
    Temporary(tempfile::TempDir),
    /// Given by the caller, kept after the run.
    Kept(PathBuf),
}

impl RunHome {
    /// The folder.
    pub(super) fn path(&self) -> &Path {
        match self {
            RunHome::Temporary(dir) => dir.path(),
            RunHome::Kept(path) => path,
        }
    }

    /// Remove a temporary home; a kept home stays.
    pub(super) fn close(self) -> std::io::Result<()> {
        match self {
            RunHome::Temporary(dir) => dir.close(),
            RunHome::Kept(_) => Ok(()),
        }
    }
}

/// The SDK's resume configuration for session `session_id`, carrying every field of `config`
/// (the eval's mapped session configuration, credentials included) that a resume accepts, so a
/// resumed session has the same model, tools, hooks, handlers, instructions and working
/// directory as a created one.
pub(super) fn resume_config(config: SessionConfig, session_id: &str) -> ResumeSessionConfig {
    let mut resume = ResumeSessionConfig::new(SessionId::from(session_id));
    macro_rules! carry {
        ($($field:ident),* $(,)?) => { $( resume.$field = config.$field; )* };
    }
    carry!(
        model,
        client_name,
        reasoning_effort,
        streaming,
        system_message,
        tools,
        available_tools,
        excluded_tools,
        mcp_servers,
        enable_config_discovery,
        enable_on_demand_instruction_discovery,
        enable_file_hooks,
        enable_skills,
        skill_directories,
        disabled_skills,
        custom_agents,
        agent,
        working_directory,
        config_directory,
        github_token,
        enable_managed_settings,
        skip_custom_instructions,
        hooks_handler,
        permission_handler,
        event_buffer_capacity,
    );
    resume
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resume_configuration_carries_the_mapped_fields() {
        let config = SessionConfig::default()
            .with_model("gpt-test")
            .with_working_directory(PathBuf::from("/w"))
            .with_available_tools(vec!["view".to_owned()])
            .with_github_token("t");
        let resume = resume_config(config, "abc-123");
        assert_eq!(resume.session_id, SessionId::from("abc-123"));
        assert_eq!(resume.model.as_deref(), Some("gpt-test"));
        assert_eq!(resume.working_directory, Some(PathBuf::from("/w")));
        assert_eq!(resume.available_tools, Some(vec!["view".to_owned()]));
        assert_eq!(resume.github_token.as_deref(), Some("t"));
    }

    #[test]
    fn a_kept_home_stays_and_a_temporary_one_goes() {
        let kept = tempfile::tempdir().unwrap();
        RunHome::Kept(kept.path().to_path_buf()).close().unwrap();
        assert!(kept.path().is_dir());
        let temporary = tempfile::tempdir().unwrap();
        let path = temporary.path().to_path_buf();
        RunHome::Temporary(temporary).close().unwrap();
        assert!(!path.exists());
    }
}
