//! Unit tests of the resume configuration: every field the SDK's [`SessionConfig`] and
//! [`ResumeSessionConfig`] have in common is carried (read from the SDK's source), and a
//! configuration with every common field set comes back field by field.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use github_copilot_sdk::canvas::{CanvasHandler, CanvasResult};
use github_copilot_sdk::handler::{
    AutoModeSwitchHandler, ElicitationHandler, ExitPlanModeHandler, McpAuthHandler, McpAuthRequest,
    McpAuthResult, PermissionHandler, PermissionResult, UserInputHandler,
};
use github_copilot_sdk::hooks::SessionHooks;
use github_copilot_sdk::session_fs::SessionFsProvider;
use github_copilot_sdk::transforms::{SystemMessageTransform, TransformContext};
use github_copilot_sdk::{
    GitHubTokenProvider, GitHubTokenProviderArgs, GitHubTokenProviderResult, SkillProvider,
    SkillProviderDescriptor,
};

use super::*;

/// The named struct's fields in the SDK's `types.rs`: (public fields, crate-private fields).
fn sdk_fields(file: &syn::File, name: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let item = file
        .items
        .iter()
        .find_map(|item| match item {
            syn::Item::Struct(s) if s.ident == name => Some(s),
            _ => None,
        })
        .unwrap_or_else(|| panic!("the SDK's types.rs has no struct {name}"));
    let (mut public, mut private) = (BTreeSet::new(), BTreeSet::new());
    for field in &item.fields {
        let ident = field.ident.as_ref().expect("named fields").to_string();
        match field.vis {
            syn::Visibility::Public(_) => public.insert(ident),
            _ => private.insert(ident),
        };
    }
    (public, private)
}

/// The SDK's `types.rs`: the version in the workspace's `Cargo.lock`, in Cargo's registry
/// sources (`$CARGO_HOME/registry/src/<index>/github-copilot-sdk-<version>`).
fn sdk_types_source() -> syn::File {
    let lock_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock");
    let lock = std::fs::read_to_string(lock_path).expect("the workspace's Cargo.lock");
    let version = lock
        .split("[[package]]")
        .find(|package| package.contains("name = \"github-copilot-sdk\"\n"))
        .and_then(|package| {
            package
                .lines()
                .find_map(|line| line.strip_prefix("version = \""))
                .map(|v| v.trim_end_matches('"').to_owned())
        })
        .expect("github-copilot-sdk in Cargo.lock");
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| dirs::home_dir().expect("a home folder").join(".cargo"));
    let sources = cargo_home.join("registry").join("src");
    let path = std::fs::read_dir(&sources)
        .unwrap_or_else(|e| panic!("reading {}: {e}", sources.display()))
        .filter_map(Result::ok)
        .map(|index| {
            index
                .path()
                .join(format!("github-copilot-sdk-{version}"))
                .join("src")
                .join("types.rs")
        })
        .find(|path| path.is_file())
        .unwrap_or_else(|| {
            panic!(
                "github-copilot-sdk {version}'s source is not under {}",
                sources.display()
            )
        });
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

fn names(list: &[(&str, &str)]) -> BTreeSet<String> {
    list.iter().map(|(name, _)| (*name).to_owned()).collect()
}

#[test]
fn every_field_both_sdk_configurations_have_is_carried_and_every_other_is_listed() {
    let file = sdk_types_source();
    let (session, session_private) = sdk_fields(&file, "SessionConfig");
    let (resume, resume_private) = sdk_fields(&file, "ResumeSessionConfig");
    let mut common: BTreeSet<String> = session.intersection(&resume).cloned().collect();
    // The session id is common by name but not by meaning (the resumed session's id).
    common.remove("session_id");
    let carried: BTreeSet<String> = CARRIED.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(
        carried.len(),
        CARRIED.len(),
        "a field is carried twice: {CARRIED:?}"
    );
    assert_eq!(
        carried, common,
        "resume_config must carry every public field SessionConfig and ResumeSessionConfig have in common"
    );
    // Fields only SessionConfig has, and its crate-private ones, are each listed with a reason.
    let session_only: BTreeSet<String> = session
        .difference(&resume)
        .chain(session_private.iter())
        .chain(std::iter::once(&"session_id".to_owned()))
        .cloned()
        .collect();
    assert_eq!(names(NOT_CARRIED), session_only);
    // Fields only ResumeSessionConfig has are each listed with why they keep the default.
    let resume_only: BTreeSet<String> = resume
        .difference(&session)
        .chain(std::iter::once(&"session_id".to_owned()))
        .cloned()
        .collect();
    assert_eq!(names(RESUME_ONLY), resume_only);
    // Crate-private fields on the resume side are the same (the permission policy).
    assert_eq!(resume_private, session_private);
    for (name, reason) in NOT_CARRIED.iter().chain(RESUME_ONLY) {
        assert!(!reason.trim().is_empty(), "{name} needs a reason");
    }
}

/// One object that implements every handler trait of the session configuration, so each
/// handler field can be set and compared by identity (`Arc::ptr_eq`): the handlers are trait
/// objects that cannot be compared by value.
struct Stub;

#[async_trait]
impl CanvasHandler for Stub {
    async fn on_open(
        &self,
        _ctx: github_copilot_sdk::rpc::CanvasProviderOpenRequest,
    ) -> CanvasResult<github_copilot_sdk::rpc::CanvasProviderOpenResult> {
        unreachable!()
    }
}
#[async_trait]
impl SkillProvider for Stub {
    async fn list_skills(&self) -> Result<Vec<SkillProviderDescriptor>, github_copilot_sdk::Error> {
        unreachable!()
    }
    async fn read_skill(&self, _name: &str) -> Result<Option<String>, github_copilot_sdk::Error> {
        unreachable!()
    }
}
#[async_trait]
impl GitHubTokenProvider for Stub {
    async fn get_token(
        &self,
        _args: GitHubTokenProviderArgs,
    ) -> Result<GitHubTokenProviderResult, github_copilot_sdk::Error> {
        unreachable!()
    }
}
impl SessionFsProvider for Stub {}
#[async_trait]
impl PermissionHandler for Stub {
    async fn handle(
        &self,
        _session_id: SessionId,
        _request_id: github_copilot_sdk::RequestId,
        _data: github_copilot_sdk::PermissionRequestData,
    ) -> PermissionResult {
        unreachable!()
    }
}
#[async_trait]
impl ElicitationHandler for Stub {
    async fn handle(
        &self,
        _session_id: SessionId,
        _request_id: github_copilot_sdk::RequestId,
        _request: github_copilot_sdk::ElicitationRequest,
    ) -> github_copilot_sdk::ElicitationResult {
        unreachable!()
    }
}
#[async_trait]
impl McpAuthHandler for Stub {
    async fn handle(
        &self,
        _session_id: SessionId,
        _request_id: github_copilot_sdk::RequestId,
        _request: McpAuthRequest,
    ) -> McpAuthResult {
        unreachable!()
    }
}
#[async_trait]
impl UserInputHandler for Stub {
    async fn handle(
        &self,
        _session_id: SessionId,
        _question: String,
        _choices: Option<Vec<String>>,
        _allow_freeform: Option<bool>,
    ) -> Option<github_copilot_sdk::handler::UserInputResponse> {
        unreachable!()
    }
}
#[async_trait]
impl ExitPlanModeHandler for Stub {
    async fn handle(
        &self,
        _session_id: SessionId,
        _data: github_copilot_sdk::ExitPlanModeData,
    ) -> github_copilot_sdk::handler::ExitPlanModeResult {
        unreachable!()
    }
}
#[async_trait]
impl AutoModeSwitchHandler for Stub {
    async fn handle(
        &self,
        _session_id: SessionId,
        _error_code: Option<String>,
        _retry_after_seconds: Option<f64>,
    ) -> github_copilot_sdk::handler::AutoModeSwitchResponse {
        unreachable!()
    }
}
impl SessionHooks for Stub {}
#[async_trait]
impl SystemMessageTransform for Stub {
    fn section_ids(&self) -> Vec<String> {
        unreachable!()
    }
    async fn transform_section(
        &self,
        _section_id: &str,
        _content: &str,
        _ctx: TransformContext,
    ) -> Option<String> {
        unreachable!()
    }
}

/// Set every field named, then resume, then compare each field of the resumed configuration
/// with the first's: values by their `Debug` text (every value type has one; a dropped field
/// reads `None`), handlers by identity. Returns the names compared.
macro_rules! set_resume_compare {
    (
        defaults: [$($d:ident),* $(,)?],
        values: [$($v:ident = $ve:expr),* $(,)?],
        handlers: [$($h:ident),* $(,)?] $(,)?
    ) => {{
        let stub = Arc::new(Stub);
        let mut config = SessionConfig::default();
        $( config.$d = Some(Default::default()); )*
        $( config.$v = Some($ve); )*
        $( config.$h = Some(stub.clone()); )*
        let first = config.clone();
        let resume = resume_config(config, id("abc-123")).expect("a resumable configuration");
        assert_eq!(resume.session_id, SessionId::from("abc-123"));
        let mut compared: Vec<&str> = Vec::new();
        $(
            assert!(first.$d.is_some());
            assert_eq!(format!("{:?}", resume.$d), format!("{:?}", first.$d), "field {}", stringify!($d));
            compared.push(stringify!($d));
        )*
        $(
            assert!(first.$v.is_some());
            assert_eq!(format!("{:?}", resume.$v), format!("{:?}", first.$v), "field {}", stringify!($v));
            compared.push(stringify!($v));
        )*
        $(
            let carried = resume.$h.as_ref().unwrap_or_else(|| panic!("field {} was dropped", stringify!($h)));
            assert!(Arc::ptr_eq(first.$h.as_ref().unwrap(), carried), "field {}", stringify!($h));
            compared.push(stringify!($h));
        )*
        compared
    }};
}

#[test]
fn a_resumed_configuration_has_every_setting_of_the_first_field_by_field() {
    let compared = set_resume_compare!(
        defaults: [
            allowed_models, client_name, reasoning_effort, context_tier, canvases,
            request_canvas_renderer, request_extensions, extension_sdk_path, available_tools, excluded_tools, excluded_builtin_agents,
            included_builtin_skills, mcp_servers, diagnostics, mcp_oauth_token_storage,
            auth_client_id_metadata_url, enable_config_discovery, skip_embedding_retrieval,
            embedding_cache_storage, organization_custom_instructions,
            enable_on_demand_instruction_discovery, enable_file_hooks, enable_host_git_operations,
            enable_session_store, enable_skills, enable_mcp_apps, github_mcp_tool_config,
            plugin_directories, large_output, tool_search, image_generation, disabled_skills,
            disabled_mcp_servers, sandbox_config, hooks, infinite_sessions, provider, capi,
            providers, models, enable_session_telemetry, enable_citations,
            enable_file_change_tracking, session_limits, autopilot, model_capabilities,
            config_directory, additional_directories, include_sub_agent_streaming_events,
            commands, feature_flags, exp_assignments, enable_managed_settings,
            excluded_managed_settings, enforce_managed_model_defaults, interactive_user,
            managed_settings, skip_custom_instructions, custom_agents_local_only,
            enable_experimental_mode, coauthor_enabled, manage_schedule_enabled,
        ],
        values: [
            model = "gpt-test".to_owned(),
            reasoning_summary = github_copilot_sdk::session_events::ReasoningSummary::None,
            streaming = true,
            system_message = github_copilot_sdk::SystemMessageConfig::new()
                .with_mode("append")
                .with_content("Be brief."),
            ask_user_variant = github_copilot_sdk::AskUserVariant::Legacy,
            tools = vec![github_copilot_sdk::Tool::new("lookup")],
            skill_directories = vec![PathBuf::from("/skills")],
            agent_directories = vec![PathBuf::from("/agents")],
            hook_directories = vec![PathBuf::from("/hooks")],
            instruction_directories = vec![PathBuf::from("/instructions")],
            custom_agents = vec![github_copilot_sdk::CustomAgentConfig::new("helper", "Help.")],
            default_agent = github_copilot_sdk::DefaultAgentConfig {
                excluded_tools: Some(vec!["view".to_owned()]),
            },
            agent = "helper".to_owned(),
            extension_info = github_copilot_sdk::ExtensionInfo::new("github-app", "evals"),
            canvas_provider = github_copilot_sdk::CanvasProviderIdentity::new("provider"),
            memory = github_copilot_sdk::MemoryConfiguration::enabled(),
            working_directory = PathBuf::from("/w"),
            github_token = "t".to_owned(),
            remote_session = github_copilot_sdk::rpc::RemoteSessionMode::Off,
            event_buffer_capacity = 4096,
        ],
        handlers: [
            canvas_handler, skill_provider, github_token_provider, session_fs_provider,
            permission_handler, elicitation_handler, mcp_auth_handler, user_input_handler,
            exit_plan_mode_handler, auto_mode_switch_handler, hooks_handler,
            system_message_transform,
        ],
    );
    // Every carried field was set and compared.
    let compared: BTreeSet<&str> = compared.into_iter().collect();
    let carried: BTreeSet<&str> = CARRIED.iter().copied().collect();
    assert_eq!(compared, carried);
}

#[test]
fn a_setting_a_resume_cannot_take_is_refused_by_name() {
    let mut config = SessionConfig::default();
    config.trust_working_directory = Some(WorkingDirectoryTrust::Session);
    let err = resume_config(config, id("abc")).unwrap_err();
    assert!(err.contains("`trust_working_directory`"), "{err}");
    assert!(err.contains("extra_session_config"), "{err}");
    // Trust stored for the user lives in the runtime home the resume is seeded from.
    let mut config = SessionConfig::default();
    config.trust_working_directory = Some(WorkingDirectoryTrust::User);
    resume_config(config, id("abc")).unwrap();
    let mut config = SessionConfig::default();
    config.cloud = Some(Default::default());
    let err = resume_config(config, id("abc")).unwrap_err();
    assert!(err.contains("`cloud`"), "{err}");
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

/// No pending calls.
static NO_PENDING: Result<Vec<crate::run::pending::PendingCall>, String> = Ok(Vec::new());

/// A plain resume of the session `session_id` (no `continue_pending_work`).
fn id(session_id: &str) -> Resume<'_> {
    Resume {
        session_id,
        continue_pending_work: None,
        pending: &NO_PENDING,
    }
}

#[test]
fn continue_pending_work_reaches_the_resume_configuration() {
    assert_eq!(
        resume_config(SessionConfig::default(), id("abc"))
            .unwrap()
            .continue_pending_work,
        None
    );
    for value in [true, false] {
        let resume = Resume {
            session_id: "abc",
            continue_pending_work: Some(value),
            pending: &NO_PENDING,
        };
        let config = resume_config(SessionConfig::default(), resume).unwrap();
        assert_eq!(config.continue_pending_work, Some(value));
    }
}
