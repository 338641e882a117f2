//! The permission-request hook's view of an action (spec 06 §Hook payload projection).

use serde::Serialize;
use serde_json::json;

use crate::action::ApprovalAction;

/// Tool name hooks see for `Shell` and `ExecCommand` (spec 06).
pub const BASH_TOOL_NAME: &str = "Bash";
/// Tool name hooks see for `ApplyPatch` (spec 06).
pub const APPLY_PATCH_TOOL_NAME: &str = "apply_patch";
/// Other names a hook `matcher` may use for `apply_patch` (reference
/// `orchestrator-and-approvals.md` §5).
pub const APPLY_PATCH_ALIASES: [&str; 2] = ["Write", "Edit"];

/// `{tool_name, tool_input}` as a hook receives them (spec 06 §Hook payload projection):
/// - `Shell` / `ExecCommand` → `Bash`, `{"command": hook_command, "description"?: justification}`;
/// - `ApplyPatch` → `apply_patch`, `{"command": patch}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PermissionRequestPayload {
    /// The tool name hooks match against.
    pub tool_name: String,
    /// The tool input object.
    pub tool_input: serde_json::Value,
}

impl PermissionRequestPayload {
    /// The names a hook `matcher` is tried against: the tool name, then its aliases.
    #[must_use]
    pub fn matcher_names(&self) -> Vec<&str> {
        let mut names = vec![self.tool_name.as_str()];
        if self.tool_name == APPLY_PATCH_TOOL_NAME {
            names.extend(APPLY_PATCH_ALIASES);
        }
        names
    }
}

impl ApprovalAction {
    /// The hook payload of this action (spec 06 §Hook payload projection).
    #[must_use]
    pub fn hook_payload(&self) -> PermissionRequestPayload {
        match self {
            Self::Shell(_) | Self::ExecCommand(_) => {
                let mut input = serde_json::Map::new();
                if let Some(action) = self.command_action() {
                    input.insert("command".to_owned(), json!(action.hook_command));
                    if let Some(justification) = &action.justification {
                        input.insert("description".to_owned(), json!(justification));
                    }
                }
                PermissionRequestPayload {
                    tool_name: BASH_TOOL_NAME.to_owned(),
                    tool_input: serde_json::Value::Object(input),
                }
            }
            Self::ApplyPatch(action) => PermissionRequestPayload {
                tool_name: APPLY_PATCH_TOOL_NAME.to_owned(),
                tool_input: json!({ "command": action.patch }),
            },
        }
    }
}
