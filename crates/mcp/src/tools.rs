//! The two tools: their `tools/list` entries (JSON Schemas, annotations) and their arguments
//! (spec 13: `shell {command: [string] | string, workdir?, timeout_ms?, justification?,
//! sandbox_permissions?}` and `apply_patch {input}`).

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;
use serde_json::json;

/// The `shell` tool's name.
pub const SHELL: &str = "shell";
/// The `apply_patch` tool's name.
pub const APPLY_PATCH: &str = "apply_patch";

/// `command`: an argv, or one shell script run as `bash -lc SCRIPT`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum CommandArg {
    /// The argv.
    Argv(Vec<String>),
    /// A script.
    Script(String),
}

impl CommandArg {
    /// The argv the session runs.
    #[must_use]
    pub fn into_argv(self) -> Vec<String> {
        match self {
            Self::Argv(argv) => argv,
            Self::Script(script) => vec!["bash".to_owned(), "-lc".to_owned(), script],
        }
    }
}

/// `sandbox_permissions` values the tool accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxArg {
    /// Run in the profile's sandbox.
    #[default]
    UseDefault,
    /// Ask to run without the sandbox (always needs approval).
    RequireEscalated,
}

/// The `shell` tool's arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellArgs {
    /// What to run.
    pub command: CommandArg,
    /// Working directory; relative to the server's `-C` directory.
    #[serde(default)]
    pub workdir: Option<PathBuf>,
    /// Kill the call after this many milliseconds (time waiting for a person excluded).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Why, shown to reviewers.
    #[serde(default)]
    pub justification: Option<String>,
    /// Sandbox override.
    #[serde(default)]
    pub sandbox_permissions: SandboxArg,
}

/// The `apply_patch` tool's arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchArgs {
    /// The patch (`*** Begin Patch` ... `*** End Patch`).
    pub input: String,
}

/// The `structuredContent` schema both tools declare.
fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "exit_code": {"type": ["integer", "null"], "description": "The command's exit status (128+N for signal N); null when nothing ran."},
            "stdout": {"type": "string"},
            "stderr": {"type": "string"},
            "sandbox": {"type": ["string", "null"], "description": "The sandbox of the last attempt (`linux_seccomp`, `none`, ...); null when nothing ran."},
            "decision": {
                "type": "object",
                "description": "What Airlock decided: `requirement` (skip / needs_approval / forbidden), the last approval's `decision` and its `source` (config, user, hook, auto_review, session_cache).",
                "properties": {
                    "requirement": {"type": ["string", "null"]},
                    "decision": {},
                    "source": {"type": ["string", "null"]}
                }
            },
            "reason": {"type": "string", "description": "Why Airlock refused, when it did."}
        },
        "required": ["exit_code", "stdout", "stderr", "sandbox", "decision"]
    })
}

/// The `tools/list` result.
#[must_use]
pub fn list() -> Value {
    json!({"tools": [
        {
            "name": SHELL,
            "title": "Run a command (Airlock: policy, approval, sandbox)",
            "description": "Runs a command through Airlock: the exec policy decides, a reviewer approves when it must, and the command runs in the sandbox of the configured permission profile. `command` is an argv (preferred) or one shell script (run as `bash -lc`). A refusal comes back as an error result with the reason.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "command": {
                        "description": "The argv, e.g. [\"cargo\", \"test\"], or a shell script string.",
                        "anyOf": [
                            {"type": "array", "items": {"type": "string"}, "minItems": 1},
                            {"type": "string", "minLength": 1}
                        ]
                    },
                    "workdir": {"type": "string", "description": "Working directory (relative to the server's workspace)."},
                    "timeout_ms": {"type": "integer", "minimum": 1, "description": "Stop the call (and kill its command) after this many milliseconds; time spent waiting for the user's approval does not count."},
                    "justification": {"type": "string", "description": "Why the command should run; shown to the person approving it."},
                    "sandbox_permissions": {"type": "string", "enum": ["use_default", "require_escalated"], "description": "`require_escalated` asks to run without the sandbox (always needs approval)."}
                },
                "required": ["command"],
                "additionalProperties": false
            },
            "outputSchema": output_schema(),
            "annotations": {
                "title": "Run a command",
                "readOnlyHint": false,
                "destructiveHint": true,
                "idempotentHint": false,
                "openWorldHint": true
            }
        },
        {
            "name": APPLY_PATCH,
            "title": "Apply a patch (Airlock: approval, sandbox)",
            "description": "Applies an apply_patch patch (`*** Begin Patch` ... `*** End Patch`, with `*** Add File:`, `*** Update File:`, `*** Delete File:` sections) atomically, after checking it against the permission profile and asking for approval when it must.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "input": {"type": "string", "minLength": 1, "description": "The whole patch text."}
                },
                "required": ["input"],
                "additionalProperties": false
            },
            "outputSchema": output_schema(),
            "annotations": {
                "title": "Apply a patch",
                "readOnlyHint": false,
                "destructiveHint": true,
                "idempotentHint": false,
                "openWorldHint": true
            }
        }
    ]})
}

/// A tool call's arguments, checked.
#[derive(Debug, Clone)]
pub enum ToolCall {
    /// `shell`.
    Shell(ShellArgs),
    /// `apply_patch`.
    ApplyPatch(ApplyPatchArgs),
}

/// Parses `tools/call` `{name, arguments}`.
///
/// # Errors
/// The -32602 message: unknown tool, or the argument that is wrong.
pub fn parse_call(name: &str, arguments: Option<Value>) -> Result<ToolCall, String> {
    let arguments = arguments.unwrap_or_else(|| json!({}));
    let problem = |error: serde_json::Error| format!("invalid arguments for `{name}`: {error}");
    match name {
        SHELL => {
            let args: ShellArgs = serde_json::from_value(arguments).map_err(problem)?;
            match &args.command {
                CommandArg::Argv(argv) if argv.is_empty() => {
                    return Err("invalid arguments for `shell`: `command` is an empty array; pass the argv, e.g. [\"ls\", \"-la\"]".to_owned());
                }
                CommandArg::Script(script) if script.trim().is_empty() => {
                    return Err(
                        "invalid arguments for `shell`: `command` is an empty string".to_owned(),
                    );
                }
                _ => {}
            }
            if args.timeout_ms == Some(0) {
                return Err(
                    "invalid arguments for `shell`: `timeout_ms` must be at least 1".to_owned(),
                );
            }
            Ok(ToolCall::Shell(args))
        }
        APPLY_PATCH => Ok(ToolCall::ApplyPatch(
            serde_json::from_value(arguments).map_err(problem)?,
        )),
        other => Err(format!(
            "unknown tool `{other}`; this server has `{SHELL}` and `{APPLY_PATCH}`"
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn arguments_are_checked() {
        let ToolCall::Shell(args) =
            parse_call(SHELL, Some(json!({"command": "ls | wc -l"}))).unwrap()
        else {
            panic!("not shell");
        };
        assert_eq!(args.command.into_argv(), ["bash", "-lc", "ls | wc -l"]);
        for (arguments, expected) in [
            (json!({}), "missing field `command`"),
            (json!({"command": []}), "empty array"),
            (json!({"command": 5}), "did not match any variant"),
            (
                json!({"command": ["ls"], "cwd": "/"}),
                "unknown field `cwd`",
            ),
            (
                json!({"command": ["ls"], "sandbox_permissions": "yolo"}),
                "unknown variant `yolo`",
            ),
            (json!({"command": ["ls"], "timeout_ms": 0}), "at least 1"),
        ] {
            let error = parse_call(SHELL, Some(arguments)).unwrap_err();
            assert!(error.contains(expected), "{error}");
        }
        assert!(
            parse_call("rm", None)
                .unwrap_err()
                .contains("unknown tool `rm`")
        );
        assert!(
            parse_call(APPLY_PATCH, None)
                .unwrap_err()
                .contains("missing field `input`")
        );
    }
}
