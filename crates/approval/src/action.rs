//! `ApprovalAction`: the one description of a request that every reviewer sees (spec 06
//! §`ApprovalAction`).
//!
//! The same value feeds the permission-request hook payload ([`crate::hook_payload`]), the
//! automatic reviewer's request ([`crate::auto_review`]), the user event ([`crate::events`]) and
//! the session cache keys ([`crate::cache`]), so all reviewers decide on the same facts.

use std::collections::BTreeMap;
use std::path::PathBuf;

use airlock_protocol::AdditionalPermissionProfile;
use airlock_protocol::ExecPolicyAmendment;
use airlock_protocol::SandboxPermissions;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

/// What a reviewer is asked to approve (spec 06 §`ApprovalAction`).
///
/// JSON (the automatic reviewer's `action` field): internally tagged by `"tool"`, snake_case:
/// `{"tool":"shell", ...CommandAction}`, `{"tool":"exec_command", ...CommandAction, "tty":bool}`,
/// `{"tool":"apply_patch", ...PatchAction}`. `hook_command` and `changes` are not serialised
/// (the first is only the hook projection, the second repeats `patch`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "tool", rename_all = "snake_case")]
pub enum ApprovalAction {
    /// A `shell` tool call: one argv run to completion.
    Shell(CommandAction),
    /// A unified-exec (`exec_command`) call: like `Shell`, possibly on a terminal.
    ExecCommand(ExecCommandAction),
    /// An `apply_patch` call.
    ApplyPatch(PatchAction),
}

/// The facts of a command request, shared by [`ApprovalAction::Shell`] and
/// [`ApprovalAction::ExecCommand`] (spec 06 §`ApprovalAction`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandAction {
    /// The tool call id (`call_id`).
    pub id: String,
    /// The environment the command runs in; `None` = the local host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment_id: Option<String>,
    /// The argv as proposed, before any canonicalisation.
    pub command: Vec<String>,
    /// The command as one string for hooks (`tool_input.command`); see [`hook_command_for`].
    #[serde(skip)]
    pub hook_command: String,
    /// Absolute working directory of the command.
    pub cwd: PathBuf,
    /// The sandbox override the call asks for.
    pub sandbox_permissions: SandboxPermissions,
    /// Extra permissions requested with `with_additional_permissions`, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_permissions: Option<AdditionalPermissionProfile>,
    /// The model's justification, if it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub justification: Option<String>,
    /// A prefix rule the reviewer may accept (`approved_execpolicy_amendment`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposed_execpolicy_amendment: Option<ExecPolicyAmendment>,
}

impl CommandAction {
    /// A request for `command` in `cwd` with call id `id`, default sandbox permissions and no
    /// extras; `hook_command` is derived with [`hook_command_for`].
    #[must_use]
    pub fn new(id: impl Into<String>, command: Vec<String>, cwd: impl Into<PathBuf>) -> Self {
        let hook_command = hook_command_for(&command);
        Self {
            id: id.into(),
            environment_id: None,
            command,
            hook_command,
            cwd: cwd.into(),
            sandbox_permissions: SandboxPermissions::UseDefault,
            additional_permissions: None,
            justification: None,
            proposed_execpolicy_amendment: None,
        }
    }
}

/// A unified-exec request: a [`CommandAction`] plus whether it runs on a terminal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExecCommandAction {
    /// The command facts.
    #[serde(flatten)]
    pub command: CommandAction,
    /// `true` when the process gets a pseudo-terminal (part of the cache key).
    pub tty: bool,
}

/// The facts of an `apply_patch` request (spec 06 §`ApprovalAction`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PatchAction {
    /// The tool call id (`call_id`).
    pub id: String,
    /// The environment the patch applies in; `None` = the local host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment_id: Option<String>,
    /// Absolute working directory the patch paths are resolved against.
    pub cwd: PathBuf,
    /// Every absolute path the patch touches (sources and move destinations); one cache key each.
    pub files: Vec<PathBuf>,
    /// The patch text as the model wrote it.
    pub patch: String,
    /// The parsed changes per absolute path, shown in the user event.
    #[serde(skip)]
    pub changes: BTreeMap<PathBuf, FileChange>,
    /// `true` when sticky permission grants already cover every write of this patch.
    pub permissions_preapproved: bool,
}

/// One file's change in a patch (reference `protocol.md` §11; spec 01 `FileChange`).
///
/// JSON, tagged by `"type"`: `{"type":"add","content":"..."}`, `{"type":"delete","content":"..."}`,
/// `{"type":"update","unified_diff":"...","move_path":"/abs"|null}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FileChange {
    /// A new file with this content.
    Add {
        /// The whole new content.
        content: String,
    },
    /// A removed file; `content` is what it held.
    Delete {
        /// The content being removed.
        content: String,
    },
    /// An edited (and possibly moved) file.
    Update {
        /// The edit as a unified diff.
        unified_diff: String,
        /// The new path when the file is also moved.
        move_path: Option<PathBuf>,
    },
}

impl ApprovalAction {
    /// The tool call id of the request.
    #[must_use]
    pub fn id(&self) -> &str {
        match self {
            Self::Shell(action) => &action.id,
            Self::ExecCommand(action) => &action.command.id,
            Self::ApplyPatch(action) => &action.id,
        }
    }

    /// The command facts of a `Shell` or `ExecCommand` action; `None` for a patch.
    #[must_use]
    pub const fn command_action(&self) -> Option<&CommandAction> {
        match self {
            Self::Shell(action) => Some(action),
            Self::ExecCommand(action) => Some(&action.command),
            Self::ApplyPatch(_) => None,
        }
    }

    /// The working directory of the request.
    #[must_use]
    pub fn cwd(&self) -> &std::path::Path {
        match self {
            Self::Shell(action) => &action.cwd,
            Self::ExecCommand(action) => &action.command.cwd,
            Self::ApplyPatch(action) => &action.cwd,
        }
    }

    /// The environment id of the request (`None` = local host).
    #[must_use]
    pub fn environment_id(&self) -> Option<&str> {
        match self {
            Self::Shell(action) => action.environment_id.as_deref(),
            Self::ExecCommand(action) => action.command.environment_id.as_deref(),
            Self::ApplyPatch(action) => action.environment_id.as_deref(),
        }
    }

    /// A short tool label for logs: `shell`, `exec_command` or `apply_patch`.
    #[must_use]
    pub const fn tool_label(&self) -> &'static str {
        match self {
            Self::Shell(_) => "shell",
            Self::ExecCommand(_) => "exec_command",
            Self::ApplyPatch(_) => "apply_patch",
        }
    }
}

/// The string hooks see as `tool_input.command` for an argv (Airlock decision, spec 06 leaves the
/// exact spelling open): the script of an exact shell wrapper (`bash -lc "git push"` →
/// `git push`, as a `Bash` tool command would be written), otherwise the argv joined with POSIX
/// shell quoting (`["ls", "a b"]` → `ls 'a b'`). Tokens that cannot be quoted (NUL bytes) fall
/// back to a plain space join.
#[must_use]
pub fn hook_command_for(command: &[String]) -> String {
    if let Some(wrapper) = airlock_shell::extract_shell_wrapper(command)
        && wrapper.form == airlock_shell::WrapperForm::Exact
    {
        return wrapper.script.to_owned();
    }
    shlex::try_join(command.iter().map(String::as_str)).unwrap_or_else(|_| command.join(" "))
}
