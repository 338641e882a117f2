//! `--print-config`: the settings snippet that installs the hook (spec 13), to merge into
//! the harness's `settings.json` (Claude Code: `~/.claude/settings.json` or the project's
//! `.claude/settings.json`; Gemini CLI: `~/.gemini/settings.json` or `.gemini/settings.json`).
//!
//! Claude Code's hook timeout is in seconds, Gemini CLI's in milliseconds (reference
//! `adapters.md` §C1, §C2); Airlock decides without running anything, so 30 s is ample.

use crate::event::Harness;

/// The snippet for `harness`, pretty-printed with a trailing newline. `command` is the argv
/// of the hook command (the airlock executable and its options), quoted for the shell the
/// harness runs hook commands with. Written from a template so the keys come in the order the
/// harnesses' documentation uses (`matcher` before `hooks`); the command is JSON-escaped.
#[must_use]
pub fn print_config(harness: Harness, command: &[String]) -> String {
    let line =
        shlex::try_join(command.iter().map(String::as_str)).unwrap_or_else(|_| command.join(" "));
    let line = serde_json::Value::String(line).to_string();
    match harness {
        Harness::ClaudeCode => {
            let entry = format!(
                "[\n      {{\n        \"matcher\": \"Bash\",\n        \"hooks\": [\n          {{ \"type\": \"command\", \"command\": {line}, \"timeout\": 30 }}\n        ]\n      }}\n    ]"
            );
            format!(
                "{{\n  \"hooks\": {{\n    \"PreToolUse\": {entry},\n    \"PermissionRequest\": {entry}\n  }}\n}}\n"
            )
        }
        Harness::Gemini => format!(
            "{{\n  \"hooks\": {{\n    \"BeforeTool\": [\n      {{\n        \"matcher\": \"run_shell_command\",\n        \"hooks\": [\n          {{\n            \"name\": \"airlock\",\n            \"type\": \"command\",\n            \"command\": {line},\n            \"timeout\": 30000,\n            \"description\": \"Airlock policy check of shell commands\"\n          }}\n        ]\n      }}\n    ]\n  }}\n}}\n"
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn claude_snippet_installs_both_events_with_a_quoted_command() {
        let text = print_config(
            Harness::ClaudeCode,
            &[
                "/opt/air lock/airlock".to_owned(),
                "hook".to_owned(),
                "claude-code".to_owned(),
            ],
        );
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        for event in ["PreToolUse", "PermissionRequest"] {
            let hook = &value["hooks"][event][0];
            assert_eq!(hook["matcher"], "Bash");
            assert_eq!(
                hook["hooks"][0]["command"],
                "'/opt/air lock/airlock' hook claude-code"
            );
        }
    }

    #[test]
    fn gemini_snippet_uses_milliseconds() {
        let text = print_config(Harness::Gemini, &["airlock".to_owned()]);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let hook = &value["hooks"]["BeforeTool"][0];
        assert_eq!(hook["matcher"], "run_shell_command");
        assert_eq!(hook["hooks"][0]["timeout"], 30000);
    }
}
