//! The hook events Airlock reads on stdin (reference `adapters.md` §C1, §C2).
//!
//! Claude Code: `{hook_event_name: "PreToolUse" | "PermissionRequest", tool_name: "Bash",
//! tool_input: {command, ...}, cwd, ...}`. Gemini CLI: `{hook_event_name: "BeforeTool",
//! tool_name: "run_shell_command", tool_input: {command, dir_path? (older: directory)}, cwd,
//! ...}`. Unknown fields are ignored (harnesses add fields between versions); the fields
//! Airlock needs are checked strictly, and a payload that lacks them is a [`PayloadError`]
//! (the caller then gives no decision).

use std::path::Path;
use std::path::PathBuf;

use serde_json::Map;
use serde_json::Value;

/// Which harness sent the event (`airlock hook claude-code` / `airlock hook gemini`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Harness {
    /// Claude Code (`PreToolUse`, `PermissionRequest`; shell tool `Bash`).
    ClaudeCode,
    /// Gemini CLI (`BeforeTool`; shell tool `run_shell_command`).
    Gemini,
}

impl Harness {
    /// The name of the harness's shell tool.
    #[must_use]
    pub const fn shell_tool(self) -> &'static str {
        match self {
            Self::ClaudeCode => "Bash",
            Self::Gemini => "run_shell_command",
        }
    }

    /// The `hook_event_name`s this adapter answers.
    #[must_use]
    pub const fn events(self) -> &'static [&'static str] {
        match self {
            Self::ClaudeCode => &["PreToolUse", "PermissionRequest"],
            Self::Gemini => &["BeforeTool"],
        }
    }
}

/// The hook event kinds Airlock answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEventKind {
    /// Claude Code, before a tool runs.
    PreToolUse,
    /// Claude Code, when its permission dialog would be shown.
    PermissionRequest,
    /// Gemini CLI, before a tool runs.
    BeforeTool,
}

impl HookEventKind {
    fn from_name(name: &str) -> Option<Self> {
        match name {
            "PreToolUse" => Some(Self::PreToolUse),
            "PermissionRequest" => Some(Self::PermissionRequest),
            "BeforeTool" => Some(Self::BeforeTool),
            _ => None,
        }
    }
}

/// One event, as far as Airlock cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookEvent {
    /// The harness's shell tool is about to run `command` in `cwd`.
    Shell {
        /// The event.
        kind: HookEventKind,
        /// The shell script the tool will run (`tool_input.command`).
        command: String,
        /// The absolute directory it runs in (`cwd`, or Gemini's `dir_path` against it).
        cwd: PathBuf,
    },
    /// Another tool: Airlock has no opinion (no decision).
    OtherTool {
        /// The event.
        kind: HookEventKind,
        /// The tool's name.
        tool_name: String,
    },
}

/// Why a payload cannot be used (the caller answers with no decision and prints this).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    /// Not JSON at all.
    #[error(
        "the hook payload on stdin is not JSON ({0}); expected the harness's hook event object"
    )]
    NotJson(String),
    /// JSON, but not an object.
    #[error("the hook payload is not a JSON object; expected the harness's hook event object")]
    NotObject,
    /// A required field is missing or has the wrong type.
    #[error("the hook payload's `{field}` {problem}")]
    Field {
        /// The dotted field name (`tool_input.command`).
        field: &'static str,
        /// What is wrong (`is missing`, `is not a string`, ...).
        problem: &'static str,
    },
    /// An event this adapter does not answer (for example `PostToolUse`).
    #[error(
        "`airlock hook {adapter}` answers {expected}, not `{name}`; remove it from that hook event in the harness's settings"
    )]
    UnsupportedEvent {
        /// The adapter (`claude-code` / `gemini`).
        adapter: &'static str,
        /// The events it answers.
        expected: String,
        /// The event it got.
        name: String,
    },
}

/// Parses one event of `harness` from the raw bytes on stdin.
///
/// # Errors
/// [`PayloadError`] naming the field that is missing or wrong.
pub fn parse_event(harness: Harness, input: &[u8]) -> Result<HookEvent, PayloadError> {
    let value: Value =
        serde_json::from_slice(input).map_err(|error| PayloadError::NotJson(error.to_string()))?;
    let Value::Object(object) = value else {
        return Err(PayloadError::NotObject);
    };
    let name = string_field(&object, "hook_event_name")?;
    let kind = HookEventKind::from_name(name)
        .filter(|_| harness.events().contains(&name))
        .ok_or_else(|| PayloadError::UnsupportedEvent {
            adapter: match harness {
                Harness::ClaudeCode => "claude-code",
                Harness::Gemini => "gemini",
            },
            expected: harness
                .events()
                .iter()
                .map(|event| format!("`{event}`"))
                .collect::<Vec<_>>()
                .join(" and "),
            name: name.to_owned(),
        })?;
    let tool_name = string_field(&object, "tool_name")?;
    if tool_name != harness.shell_tool() {
        return Ok(HookEvent::OtherTool {
            kind,
            tool_name: tool_name.to_owned(),
        });
    }
    let input = match object.get("tool_input") {
        Some(Value::Object(input)) => input,
        Some(_) => return Err(field("tool_input", "is not an object")),
        None => return Err(field("tool_input", "is missing")),
    };
    let command = match input.get("command") {
        Some(Value::String(command)) if !command.trim().is_empty() => command.clone(),
        Some(Value::String(_)) => return Err(field("tool_input.command", "is empty")),
        Some(_) => return Err(field("tool_input.command", "is not a string")),
        None => return Err(field("tool_input.command", "is missing")),
    };
    let base = Path::new(string_field(&object, "cwd")?);
    if !base.is_absolute() {
        return Err(field("cwd", "is not an absolute path"));
    }
    let cwd = match harness {
        Harness::ClaudeCode => base.to_path_buf(),
        Harness::Gemini => match gemini_dir(input)? {
            Some(dir) => airlock_permissions::normalize_lexically(&base.join(dir)),
            None => base.to_path_buf(),
        },
    };
    Ok(HookEvent::Shell { kind, command, cwd })
}

/// Gemini's `dir_path` (older versions: `directory`), if given.
fn gemini_dir(input: &Map<String, Value>) -> Result<Option<&str>, PayloadError> {
    for (key, name) in [
        ("dir_path", "tool_input.dir_path"),
        ("directory", "tool_input.directory"),
    ] {
        match input.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::String(dir)) if dir.is_empty() => {}
            Some(Value::String(dir)) => return Ok(Some(dir)),
            Some(_) => return Err(field(name, "is not a string")),
        }
    }
    Ok(None)
}

fn string_field<'a>(
    object: &'a Map<String, Value>,
    name: &'static str,
) -> Result<&'a str, PayloadError> {
    match object.get(name) {
        Some(Value::String(value)) => Ok(value),
        Some(_) => Err(field(name, "is not a string")),
        None => Err(field(name, "is missing")),
    }
}

const fn field(field: &'static str, problem: &'static str) -> PayloadError {
    PayloadError::Field { field, problem }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn claude_bash_event() {
        let event = parse_event(
            Harness::ClaudeCode,
            br#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash",
                "tool_input":{"command":"ls -la","description":"list"},"cwd":"/p","extra":1}"#,
        )
        .unwrap();
        assert_eq!(
            event,
            HookEvent::Shell {
                kind: HookEventKind::PreToolUse,
                command: "ls -la".to_owned(),
                cwd: PathBuf::from("/p"),
            }
        );
    }

    #[test]
    fn gemini_dir_path_resolves_against_cwd() {
        let event = parse_event(
            Harness::Gemini,
            br#"{"hook_event_name":"BeforeTool","tool_name":"run_shell_command",
                "tool_input":{"command":"make","dir_path":"sub/../web"},"cwd":"/p"}"#,
        )
        .unwrap();
        assert_eq!(
            event,
            HookEvent::Shell {
                kind: HookEventKind::BeforeTool,
                command: "make".to_owned(),
                cwd: PathBuf::from("/p/web"),
            }
        );
    }

    #[test]
    fn other_tools_and_bad_payloads() {
        let other = parse_event(
            Harness::ClaudeCode,
            br#"{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{}}"#,
        )
        .unwrap();
        assert!(matches!(other, HookEvent::OtherTool { .. }));
        let cases: [(&[u8], &str); 6] = [
            (b"not json", "not JSON"),
            (b"[1]", "not a JSON object"),
            (
                br#"{"hook_event_name":"PostToolUse","tool_name":"Bash"}"#,
                "not `PostToolUse`",
            ),
            (
                br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":5},"cwd":"/"}"#,
                "`tool_input.command` is not a string",
            ),
            (
                br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#,
                "`cwd` is missing",
            ),
            (
                br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"cwd":"rel"}"#,
                "`cwd` is not an absolute path",
            ),
        ];
        for (input, expected) in cases {
            let error = parse_event(Harness::ClaudeCode, input).unwrap_err();
            assert!(error.to_string().contains(expected), "{error}");
        }
        // Gemini's event name is not Claude's.
        let error = parse_event(
            Harness::Gemini,
            br#"{"hook_event_name":"PreToolUse","tool_name":"run_shell_command"}"#,
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("answers `BeforeTool`"),
            "{error}"
        );
    }
}
