//! The closed-set options of an eval: [`SystemMessageMode`], [`ReasoningEffort`], [`ClientMode`],
//! [`ImageDetail`] and [`SandboxMode`], each with the values written in configuration (and the
//! sandbox's declarations, [`SandboxSettings`], checked by `sandbox_settings`); and the session settings
//! that `client_mode = "empty"` forces (`check_empty_mode`, used both by the builder's
//! validation and by the run's session configuration).

use github_copilot_sdk::SessionConfig;

use crate::error::ConfigError;

/// How `instructions` combine with the runtime's built-in system prompt.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SystemMessageMode {
    /// Add the instructions after the runtime's system prompt (default).
    #[default]
    Append,
    /// Replace the runtime's whole system prompt, including its guardrails, with the instructions.
    Replace,
    /// Keep the runtime's system prompt and edit named sections of it
    /// ([`CopilotEvalBuilder::system_message_section`](crate::eval::CopilotEvalBuilder::system_message_section));
    /// `instructions`, if given, are added after all sections (the message's `content`).
    Customize,
}

impl SystemMessageMode {
    const ALLOWED: &'static [&'static str] = &["append", "replace", "customize"];

    /// The value as written in configuration: `append`, `replace` or `customize`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Append => "append",
            Self::Replace => "replace",
            Self::Customize => "customize",
        }
    }

    pub(crate) fn parse(value: &str) -> Result<Self, ConfigError> {
        match value {
            "append" => Ok(Self::Append),
            "replace" => Ok(Self::Replace),
            "customize" => Ok(Self::Customize),
            other => Err(ConfigError::not_one_of(
                "system_message_mode",
                other,
                Self::ALLOWED,
            )),
        }
    }
}

/// The sections of the runtime's system prompt that `customize` mode can edit, as the pinned
/// runtime names them (its bundled SDK's `SystemMessageSection` type; a test compares the two).
pub const SYSTEM_PROMPT_SECTIONS: &[&str] = &[
    "preamble",
    "identity",
    "tone",
    "tool_efficiency",
    "environment_context",
    "code_change_rules",
    "guidelines",
    "safety",
    "tool_instructions",
    "custom_instructions",
    "runtime_instructions",
    "last_instructions",
];

/// What `customize` mode does to one section of the runtime's system prompt (sent as the
/// session's `systemMessage.sections.<id>`: `action` and `content`).
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(tag = "action", content = "content", rename_all = "snake_case")]
pub enum SectionAction {
    /// Replace the section's text with this text.
    Replace(String),
    /// Add this text after the section's text.
    Append(String),
    /// Add this text before the section's text.
    Prepend(String),
    /// Leave the section out.
    Remove,
    /// Keep the section when a group it belongs to is removed (e.g. `tone` when removing
    /// `identity`).
    Preserve,
}

impl SectionAction {
    /// The action as the runtime names it: `replace`, `append`, `prepend`, `remove`, `preserve`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Replace(_) => "replace",
            Self::Append(_) => "append",
            Self::Prepend(_) => "prepend",
            Self::Remove => "remove",
            Self::Preserve => "preserve",
        }
    }

    /// The text of a `replace`, `append` or `prepend`.
    pub fn content(&self) -> Option<&str> {
        match self {
            Self::Replace(text) | Self::Append(text) | Self::Prepend(text) => Some(text),
            Self::Remove | Self::Preserve => None,
        }
    }
}

/// Reasoning effort requested from the model (sent as the session's `reasoningEffort`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningEffort {
    /// `low`
    Low,
    /// `medium`
    Medium,
    /// `high`
    High,
    /// `xhigh`
    Xhigh,
    /// `max`
    Max,
}

impl ReasoningEffort {
    /// The values accepted by the SDK's session configuration.
    pub const ALLOWED: &'static [&'static str] = &["low", "medium", "high", "xhigh", "max"];

    /// The value as sent to the runtime.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
            Self::Max => "max",
        }
    }

    pub(crate) fn parse(value: &str) -> Result<Self, ConfigError> {
        match value {
            "low" => Ok(Self::Low),
            "medium" => Ok(Self::Medium),
            "high" => Ok(Self::High),
            "xhigh" => Ok(Self::Xhigh),
            "max" => Ok(Self::Max),
            other => Err(ConfigError::not_one_of(
                "reasoning_effort",
                other,
                Self::ALLOWED,
            )),
        }
    }
}

/// Which runtime client mode a run uses.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ClientMode {
    /// The runtime as a user runs it: ambient configuration, instructions and tools (default).
    #[default]
    CopilotCli,
    /// Framework-owned storage, no ambient configuration, no tools unless listed.
    Empty,
}

impl ClientMode {
    const ALLOWED: &'static [&'static str] = &["copilot-cli", "empty"];

    /// The value as written in configuration: `copilot-cli` or `empty`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CopilotCli => "copilot-cli",
            Self::Empty => "empty",
        }
    }

    pub(crate) fn parse(value: &str) -> Result<Self, ConfigError> {
        match value {
            "copilot-cli" => Ok(Self::CopilotCli),
            "empty" => Ok(Self::Empty),
            other => Err(ConfigError::not_one_of("client_mode", other, Self::ALLOWED)),
        }
    }
}

/// The `detail` written into every outgoing OpenAI image part.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ImageDetail {
    /// `auto`
    Auto,
    /// `low`
    Low,
    /// `high`
    High,
}

impl ImageDetail {
    const ALLOWED: &'static [&'static str] = &["auto", "low", "high"];

    /// The value as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Low => "low",
            Self::High => "high",
        }
    }

    pub(crate) fn parse(value: &str) -> Result<Self, ConfigError> {
        match value {
            "auto" => Ok(Self::Auto),
            "low" => Ok(Self::Low),
            "high" => Ok(Self::High),
            other => Err(ConfigError::not_one_of(
                "image_detail",
                other,
                Self::ALLOWED,
            )),
        }
    }
}

/// The session settings empty mode forces: (name, required value, setter). The SDK's own empty
/// mode adds more defaults on top (telemetry, memory, session store, host git, experimental
/// features off; custom agents local only; no runtime-bundled skills).
pub(crate) type EmptyModeSetting = (&'static str, bool, fn(&mut SessionConfig));
pub(crate) const EMPTY_MODE_SETTINGS: [EmptyModeSetting; 5] = [
    ("enable_config_discovery", false, |c| {
        c.enable_config_discovery = Some(false)
    }),
    ("enable_file_hooks", false, |c| {
        c.enable_file_hooks = Some(false)
    }),
    ("enable_on_demand_instruction_discovery", false, |c| {
        c.enable_on_demand_instruction_discovery = Some(false)
    }),
    ("skip_custom_instructions", true, |c| {
        c.skip_custom_instructions = Some(true)
    }),
    ("enable_managed_settings", false, |c| {
        c.enable_managed_settings = Some(false)
    }),
];

/// Empty mode's settings may be left unset or set to the value empty mode needs; anything else
/// is a contradiction.
pub(crate) fn check_empty_mode(config: &SessionConfig) -> Result<(), ConfigError> {
    let values = [
        config.enable_config_discovery,
        config.enable_file_hooks,
        config.enable_on_demand_instruction_discovery,
        config.skip_custom_instructions,
        config.enable_managed_settings,
    ];
    for ((name, required, _), value) in EMPTY_MODE_SETTINGS.iter().zip(values) {
        if let Some(value) = value
            && value != *required
        {
            return Err(ConfigError::new(
                "extra_session_config",
                format!(
                    "sets {name} = {value}, which contradicts client_mode = \"empty\" (it needs {name} = {required}); remove the setting or use client_mode = \"copilot-cli\""
                ),
            ));
        }
    }
    Ok(())
}

/// A kind of input an ablated run goes without (`cargo copilot-eval --ablate skills`; the
/// test process gets [`ENV_ABLATE`](crate::harness::ENV_ABLATE)): the eval runs the same prompt
/// as a real session with none of these inputs, in a runtime home that holds no copy of them
/// ([`CopilotEval::without`](super::CopilotEval::without)).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Ablate {
    /// Skills: the eval's skill directories, and `skills/` of the runtime home.
    Skills,
    /// Custom agents: the eval's custom agents (and its active agent), and `agents/` of the
    /// runtime home.
    Agents,
    /// Instructions: the eval's `instructions` (where a repository's `copilot-instructions.md`
    /// goes), and the runtime home's `copilot-instructions.md` and `instructions/`.
    Instructions,
    /// MCP servers: the eval's MCP servers, and the runtime home's `mcp-config.json`.
    Mcp,
}

impl Ablate {
    /// Every kind, in the order the runner lists them.
    pub const ALL: [Ablate; 4] = [Self::Skills, Self::Agents, Self::Instructions, Self::Mcp];
    const ALLOWED: &'static [&'static str] = &["skills", "agents", "instructions", "mcp"];

    /// The value as written: `skills`, `agents`, `instructions` or `mcp`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Skills => "skills",
            Self::Agents => "agents",
            Self::Instructions => "instructions",
            Self::Mcp => "mcp",
        }
    }

    /// Parse one value of `--ablate` (or of [`ENV_ABLATE`](crate::harness::ENV_ABLATE)).
    ///
    /// Errors: a value other than `skills`, `agents`, `instructions`, `mcp`, naming them.
    pub fn parse(value: &str) -> Result<Self, ConfigError> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.as_str() == value.trim())
            .ok_or_else(|| ConfigError::not_one_of("ablate", value, Self::ALLOWED))
    }

    /// Parse a list separated by commas (`skills,mcp`), sorted, each kind once; an empty text
    /// is an empty list.
    ///
    /// Errors: as [`parse`](Self::parse), for the first unknown entry.
    pub fn parse_list(text: &str) -> Result<Vec<Self>, ConfigError> {
        let mut kinds = text
            .split(',')
            .filter(|entry| !entry.trim().is_empty())
            .map(Self::parse)
            .collect::<Result<Vec<_>, _>>()?;
        kinds.sort();
        kinds.dedup();
        Ok(kinds)
    }

    /// A list as written in a name, a variable or a cassette: the kinds joined by `-`
    /// (`skills-mcp`).
    pub fn join(kinds: &[Ablate]) -> String {
        kinds
            .iter()
            .map(|kind| kind.as_str())
            .collect::<Vec<_>>()
            .join("-")
    }
}

/// Whether a run's runtime (and everything it starts) runs confined by Landlock
/// (docs/sandbox.md).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SandboxMode {
    /// Confined where the kernel allows it; elsewhere the run goes on unconfined with the
    /// warning `unsandboxed: <why>` (default).
    #[default]
    On,
    /// Never confined (`sandbox = false`, the runner's `--no-sandbox`).
    Off,
    /// Confined, or an error before the session starts (`sandbox = "required"`, the runner's
    /// `--sandbox required`).
    Required,
}

impl SandboxMode {
    const ALLOWED: &'static [&'static str] = &["on", "off", "required"];

    /// The value as written in configuration: `on`, `off` or `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::On => "on",
            Self::Off => "off",
            Self::Required => "required",
        }
    }

    /// Parse `on`, `off`, `required` (also `true` and `false`, as `sandbox = false` writes).
    ///
    /// # Errors
    /// Any other text: a [`ConfigError`] naming `sandbox` and the values allowed.
    pub fn parse(value: &str) -> Result<Self, ConfigError> {
        match value {
            "on" | "true" => Ok(Self::On),
            "off" | "false" => Ok(Self::Off),
            "required" => Ok(Self::Required),
            other => Err(ConfigError::not_one_of("sandbox", other, Self::ALLOWED)),
        }
    }

    /// The mode of a run whose eval asked for `self` under a runner that asked for `runner`
    /// (`--no-sandbox`: `Off`; `--sandbox required`: `Required`): the runner's `Off` turns every
    /// eval's sandbox off, its `Required` makes the default `On` required; an eval's own `Off`
    /// or `Required` stays.
    pub fn under_runner(self, runner: Option<SandboxMode>) -> SandboxMode {
        match (runner, self) {
            (Some(Self::Off), _) => Self::Off,
            (Some(Self::Required), Self::On) => Self::Required,
            (_, mode) => mode,
        }
    }
}

/// What the eval declares to its sandbox besides its mode: folders its session may also read,
/// folders it may also write, TCP ports it may also connect to. Paths are absolute (resolved
/// against the package root by `build()`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxSettings {
    /// `sandbox`: on (default), off or required.
    pub mode: SandboxMode,
    /// `sandbox_allow_read`: folders or files the session may read besides the defaults.
    pub allow_read: Vec<std::path::PathBuf>,
    /// `sandbox_allow_write`: folders or files the session may write besides the defaults.
    pub allow_write: Vec<std::path::PathBuf>,
    /// `sandbox_allow_connect`: TCP ports the session may connect to besides the defaults.
    pub allow_connect: Vec<u16>,
    /// The package the eval belongs to (its base folder: skills, agents, instructions,
    /// fixtures), readable by the session.
    pub package: std::path::PathBuf,
}

/// A value [`CopilotEvalBuilder::sandbox`](crate::eval::CopilotEvalBuilder::sandbox) takes: a
/// `bool` (`false`: off, `true`: on) or a text (`"on"`, `"off"`, `"required"`).
pub trait SandboxValue {
    /// The value as configuration writes it.
    fn sandbox_text(self) -> String;
}

impl SandboxValue for bool {
    fn sandbox_text(self) -> String {
        if self { "on" } else { "off" }.to_owned()
    }
}

impl SandboxValue for &str {
    fn sandbox_text(self) -> String {
        self.to_owned()
    }
}

/// `build()`'s check of the sandbox settings: the `mode` (default `on`), each declared path of
/// `[allow_read, allow_write]` (not blank, resolved against `base`; one that does not exist
/// when the run starts grants nothing) and each port of `allow_connect` (1 to 65535).
pub(crate) fn sandbox_settings(
    mode: Option<&str>,
    [allow_read, allow_write]: [&[std::path::PathBuf]; 2],
    allow_connect: &[u32],
    base: &super::paths::Base,
) -> Result<SandboxSettings, ConfigError> {
    let mode = mode
        .map(SandboxMode::parse)
        .transpose()?
        .unwrap_or_default();
    let resolved = |field: &'static str, paths: &[std::path::PathBuf]| {
        paths
            .iter()
            .map(|path| {
                if path.as_os_str().to_string_lossy().trim().is_empty() {
                    Err(ConfigError::new(
                        field,
                        "an empty path allows nothing: give a folder or a file",
                    ))
                } else {
                    Ok(base.resolve(path))
                }
            })
            .collect::<Result<Vec<_>, _>>()
    };
    let allow_connect = allow_connect
        .iter()
        .map(|port| {
            u16::try_from(*port).ok().filter(|p| *p > 0).ok_or_else(|| {
                ConfigError::new(
                    "sandbox_allow_connect",
                    format!("{port} is not a TCP port: give a number from 1 to 65535"),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SandboxSettings {
        mode,
        allow_read: resolved("sandbox_allow_read", allow_read)?,
        allow_write: resolved("sandbox_allow_write", allow_write)?,
        allow_connect,
        package: base.dir().to_path_buf(),
    })
}

/// `customize` mode and its section edits agree: the mode has at least one edit and no
/// `instructions`; edits come only with the mode; each names a known section, once.
pub(super) fn check_sections(
    mode: SystemMessageMode,
    sections: &[(String, SectionAction)],
    instructions: Option<&str>,
) -> Result<(), ConfigError> {
    if mode != SystemMessageMode::Customize {
        if let Some((id, _)) = sections.first() {
            return Err(ConfigError::new(
                "system_message_sections",
                format!(
                    "an edit of section {id:?} needs system_message_mode(\"customize\") (the mode is {:?})",
                    mode.as_str()
                ),
            ));
        }
        return Ok(());
    }
    if sections.is_empty() && instructions.is_none_or(str::is_empty) {
        return Err(ConfigError::new(
            "system_message_mode",
            "\"customize\" keeps the runtime's system prompt and changes it by section edits or added instructions, and neither is given: add system_message_section(id, action) or instructions(..)",
        ));
    }
    for (i, (id, _)) in sections.iter().enumerate() {
        if !SYSTEM_PROMPT_SECTIONS.contains(&id.as_str()) {
            return Err(ConfigError::new(
                "system_message_sections",
                format!(
                    "{id:?} is not a section of the runtime's system prompt (known: {})",
                    SYSTEM_PROMPT_SECTIONS.join(", ")
                ),
            ));
        }
        if sections[..i].iter().any(|(earlier, _)| earlier == id) {
            return Err(ConfigError::new(
                "system_message_sections",
                format!("section {id:?} is edited twice; give one edit per section"),
            ));
        }
    }
    Ok(())
}
