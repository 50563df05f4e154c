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

use github_copilot_sdk::{ResumeSessionConfig, SessionConfig, SessionId, WorkingDirectoryTrust};

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

/// Declares the carried fields once: [`carry`] moves each of them from the session
/// configuration to the resume configuration, and `CARRIED` names them for the test that
/// reads both structs' fields from the SDK's source.
macro_rules! carried_fields {
    ($($field:ident),* $(,)?) => {
        /// Every field [`SessionConfig`] and [`ResumeSessionConfig`] have in common (SDK 1.0.28),
        /// by name. A test lists both structs' fields from the SDK's source and fails when a
        /// common field is missing here, so a new field of a later SDK cannot be dropped silently.
        #[cfg(test)]
        pub(super) const CARRIED: &[&str] = &[$(stringify!($field)),*];

        /// Move every common field of `config` into `resume`.
        fn carry(config: SessionConfig, resume: &mut ResumeSessionConfig) {
            $( resume.$field = config.$field; )*
        }
    };
}

carried_fields!(
    model,
    allowed_models,
    client_name,
    reasoning_effort,
    reasoning_summary,
    context_tier,
    streaming,
    system_message,
    ask_user_variant,
    tools,
    canvases,
    canvas_handler,
    request_canvas_renderer,
    request_extensions,
    extension_sdk_path,
    extension_info,
    canvas_provider,
    available_tools,
    excluded_tools,
    excluded_builtin_agents,
    included_builtin_skills,
    mcp_servers,
    diagnostics,
    mcp_oauth_token_storage,
    auth_client_id_metadata_url,
    enable_config_discovery,
    skip_embedding_retrieval,
    embedding_cache_storage,
    organization_custom_instructions,
    enable_on_demand_instruction_discovery,
    enable_file_hooks,
    enable_host_git_operations,
    enable_session_store,
    enable_skills,
    skill_provider,
    enable_mcp_apps,
    github_mcp_tool_config,
    skill_directories,
    agent_directories,
    hook_directories,
    instruction_directories,
    plugin_directories,
    large_output,
    tool_search,
    image_generation,
    disabled_skills,
    disabled_mcp_servers,
    sandbox_config,
    hooks,
    custom_agents,
    default_agent,
    agent,
    infinite_sessions,
    provider,
    capi,
    providers,
    models,
    enable_session_telemetry,
    enable_citations,
    enable_file_change_tracking,
    session_limits,
    autopilot,
    model_capabilities,
    memory,
    config_directory,
    working_directory,
    additional_directories,
    github_token,
    github_token_provider,
    remote_session,
    include_sub_agent_streaming_events,
    commands,
    feature_flags,
    exp_assignments,
    enable_managed_settings,
    excluded_managed_settings,
    enforce_managed_model_defaults,
    interactive_user,
    managed_settings,
    session_fs_provider,
    permission_handler,
    elicitation_handler,
    mcp_auth_handler,
    user_input_handler,
    exit_plan_mode_handler,
    auto_mode_switch_handler,
    hooks_handler,
    system_message_transform,
    skip_custom_instructions,
    custom_agents_local_only,
    enable_experimental_mode,
    coauthor_enabled,
    manage_schedule_enabled,
    event_buffer_capacity,
);

/// The fields only [`SessionConfig`] has (SDK 1.0.28, its crate-private ones included), and why
/// a resume does not carry them. The test that reads the SDK's source checks the list is complete.
pub(super) const NOT_CARRIED: &[(&str, &str)] = &[
    (
        "session_id",
        "the resume names the session by the id of the run it resumes (ResumeSessionConfig::session_id), which is the first run's session id",
    ),
    (
        "name",
        "names a new session at creation; the runtime stores the name with the session, so the resumed session keeps it",
    ),
    (
        "refresh_custom_instructions",
        "invalidates the runtime process's instruction cache before a session is created; a resume starts a fresh runtime process, whose cache is empty",
    ),
    (
        "trust_working_directory",
        "the SDK's resume cannot grant folder trust: `user` trust is stored in the runtime home, which a resume is seeded from; `session` trust cannot be re-applied, so a resume refuses it",
    ),
    (
        "cloud",
        "creates a remote cloud session, which a local resume cannot continue; a resume refuses it",
    ),
    (
        "permission_policy",
        "crate-private in the SDK (set by SessionConfig::approve_all_permissions, deny_all_permissions or approve_permissions_if), so it cannot be read to be carried; give a permission handler instead (CopilotEval's permission_handler, or github_copilot_sdk::permission::approve_if)",
    ),
];

/// The fields only [`ResumeSessionConfig`] has (SDK 1.0.28), left at the SDK's default, and
/// why. The test that reads the SDK's source checks the list is complete.
#[cfg_attr(not(test), allow(dead_code))]
pub(super) const RESUME_ONLY: &[(&str, &str)] = &[
    ("session_id", "set to the session being resumed"),
    (
        "open_canvases",
        "the canvases open before the resume are not known to the run",
    ),
    (
        "suppress_resume_event",
        "left unset: the runtime's `session.resume` event is part of the evidence",
    ),
    (
        "continue_pending_work",
        "set from RunOptions::continue_pending_work; unset by default: work still pending when the earlier run ended is treated as interrupted",
    ),
    (
        "allow_transcript_recovery",
        "left unset: the runtime's default (recovery allowed)",
    ),
];

/// The session a run resumes ([`RunOptions::resume`](super::RunOptions::resume)) and how.
#[derive(Debug, Clone, Copy)]
pub(super) struct Resume<'a> {
    /// The id of the session to resume.
    pub(super) session_id: &'a str,
    /// The SDK's `continue_pending_work`
    /// ([`RunOptions::continue_pending_work`](super::RunOptions::continue_pending_work)).
    pub(super) continue_pending_work: Option<bool>,
    /// With `continue_pending_work` `true`: the calls pending in the seeded session's state,
    /// or why they could not be read (`run/pending.rs`).
    pub(super) pending: &'a Result<Vec<super::pending::PendingCall>, String>,
}

/// The SDK's resume configuration for the session `resume` names, with its
/// `continue_pending_work`, carrying every field of `config`
/// (the eval's mapped session configuration, credentials and `extra_session_config` settings
/// included) that [`ResumeSessionConfig`] also has, so a resumed session has the same settings
/// as a created one. The fields a resume cannot take are listed in [`NOT_CARRIED`] with the
/// reason.
///
/// Errors: `config` sets a field that a resume cannot re-apply and whose loss would change the
/// session (`cloud`, or `trust_working_directory` other than `user`), named in the message.
pub(super) fn resume_config(
    config: SessionConfig,
    resume: Resume<'_>,
) -> Result<ResumeSessionConfig, String> {
    let refused = if config.cloud.is_some() {
        Some("cloud")
    } else if config
        .trust_working_directory
        .is_some_and(|trust| trust != WorkingDirectoryTrust::User)
    {
        Some("trust_working_directory")
    } else {
        None
    };
    if let Some(field) = refused {
        let reason = NOT_CARRIED
            .iter()
            .find(|(name, _)| *name == field)
            .map_or("", |(_, reason)| reason);
        return Err(format!(
            "resuming the session failed: the session configuration sets `{field}` (through extra_session_config), which a resumed session cannot take: {reason}; remove it from the eval that is resumed"
        ));
    }
    let mut resumed = ResumeSessionConfig::new(SessionId::from(resume.session_id));
    resumed.continue_pending_work = resume.continue_pending_work;
    carry(config, &mut resumed);
    Ok(resumed)
}

#[cfg(test)]
mod tests;
