//! Permission-request hook configuration: `[hooks] permission_request = [{matcher, command,
//! timeout}]` in `config.toml`, and Codex's `hooks.json` format (spec 10 §Configuration;
//! reference `orchestrator-and-approvals.md` §8).

use std::path::Path;
use std::time::Duration;

use regex::Regex;
use serde_json::Value;

use crate::error::ConfigError;

/// A hook's timeout when none is configured: 600 s (reference §8).
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(600);

/// One configured permission-request hook.
#[derive(Debug, Clone)]
pub struct PermissionRequestHook {
    /// Which tool names the hook runs for.
    pub matcher: HookMatcher,
    /// The shell command, run as `/bin/sh -c <command>` with the request JSON on stdin.
    pub command: String,
    /// Deadline for one run (whole seconds ≥ 1; default [`DEFAULT_HOOK_TIMEOUT`]).
    pub timeout: Duration,
    /// Where the hook was configured, for messages (`config.toml` or `hooks.json` path).
    pub origin: String,
}

/// A hook `matcher`: a regular expression searched in the tool name and its aliases; empty or
/// `*` matches every tool (reference §8).
#[derive(Debug, Clone)]
pub struct HookMatcher {
    regex: Option<Regex>,
}

impl HookMatcher {
    /// Matches every tool.
    #[must_use]
    pub const fn any() -> Self {
        Self { regex: None }
    }

    /// Compiles a matcher; `None`, `""` and `"*"` match every tool.
    ///
    /// # Errors
    /// The regex error text for an invalid pattern.
    pub fn new(pattern: Option<&str>) -> Result<Self, String> {
        match pattern.map(str::trim) {
            None | Some("" | "*") => Ok(Self::any()),
            Some(pattern) => Regex::new(pattern)
                .map(|regex| Self { regex: Some(regex) })
                .map_err(|error| error.to_string()),
        }
    }

    /// Whether any of `names` matches.
    #[must_use]
    pub fn matches(&self, names: &[&str]) -> bool {
        self.regex
            .as_ref()
            .is_none_or(|regex| names.iter().any(|name| regex.is_match(name)))
    }
}

/// Hooks plus warnings (skipped entries, unknown fields) found while reading them.
#[derive(Debug, Default)]
pub(crate) struct ParsedHooks {
    pub hooks: Vec<PermissionRequestHook>,
    /// `PreToolUse` hooks (issue 18 item 7): same entry shape, run before every call.
    pub pre_tool_use: Vec<PermissionRequestHook>,
    pub warnings: Vec<String>,
}

/// Which event a configured hook list belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    PermissionRequest,
    PreToolUse,
}

impl ParsedHooks {
    fn list(&mut self, event: Event) -> &mut Vec<PermissionRequestHook> {
        match event {
            Event::PermissionRequest => &mut self.hooks,
            Event::PreToolUse => &mut self.pre_tool_use,
        }
    }
}

/// Reads `[hooks]` from config.toml: `permission_request = [{matcher, command, timeout}]` and
/// `pre_tool_use = [...]` of the same shape, and also Codex-style `PermissionRequest` /
/// `PreToolUse = [{matcher, hooks = [...]}]` lists.
pub(crate) fn hooks_from_toml(
    value: &toml::Value,
    origin: &str,
) -> Result<ParsedHooks, ConfigError> {
    let json = serde_json::to_value(value)
        .map_err(|error| ConfigError::invalid(origin, "hooks", error.to_string()))?;
    let Value::Object(table) = json else {
        return Err(ConfigError::invalid(origin, "hooks", "expected a table"));
    };
    let mut parsed = ParsedHooks::default();
    for (key, value) in &table {
        let (flat, event) = match key.as_str() {
            "permission_request" => (true, Event::PermissionRequest),
            "pre_tool_use" => (true, Event::PreToolUse),
            "PermissionRequest" => (false, Event::PermissionRequest),
            "PreToolUse" => (false, Event::PreToolUse),
            _ => (false, Event::PermissionRequest),
        };
        match key.as_str() {
            "permission_request" | "pre_tool_use" if flat => {
                let entries = expect_array(value, origin, &format!("hooks.{key}"))?;
                for (index, entry) in entries.iter().enumerate() {
                    let key = format!("hooks.{key}[{index}]");
                    let object = expect_object(entry, origin, &key)?;
                    warn_unknown(object, &["matcher", "command", "timeout", "timeoutSec"], origin, &key, &mut parsed.warnings);
                    let matcher = optional_string(object, "matcher", origin, &key)?;
                    let hook = handler(object, matcher, origin, &key, &mut parsed.warnings)?;
                    parsed.list(event).extend(hook);
                }
            }
            "PermissionRequest" | "PreToolUse" => {
                groups(value, origin, &format!("hooks.{key}"), event, &mut parsed)?;
            }
            other => parsed.warnings.push(format!(
                "{origin}: unknown key `hooks.{other}` ignored (Airlock reads `permission_request` and `pre_tool_use`)"
            )),
        }
    }
    Ok(parsed)
}

/// Reads a Codex `hooks.json` file: `{"hooks":{"PermissionRequest":[{"matcher":"^Bash$",
/// "hooks":[{"type":"command","command":"...","timeout":600}]}]}}`, and `PreToolUse` groups
/// of the same shape. Other events are ignored.
/// A missing file yields no hooks.
pub(crate) fn hooks_from_json_file(path: &Path) -> Result<ParsedHooks, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(ParsedHooks::default());
        }
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let json: Value = serde_json::from_str(&text).map_err(|error| ConfigError::InvalidJson {
        path: path.to_path_buf(),
        message: error.to_string(),
    })?;
    let origin = path.display().to_string();
    let mut parsed = ParsedHooks::default();
    let top = expect_object(&json, &origin, "(top level)")?;
    let Some(events) = top.get("hooks") else {
        return Ok(parsed);
    };
    let events = expect_object(events, &origin, "hooks")?;
    for (name, event) in [
        ("PermissionRequest", Event::PermissionRequest),
        ("PreToolUse", Event::PreToolUse),
    ] {
        if let Some(groups_value) = events.get(name) {
            groups(
                groups_value,
                &origin,
                &format!("hooks.{name}"),
                event,
                &mut parsed,
            )?;
        }
    }
    Ok(parsed)
}

/// `[{matcher?, hooks: [handler...]}]`.
fn groups(
    value: &Value,
    origin: &str,
    key: &str,
    event: Event,
    parsed: &mut ParsedHooks,
) -> Result<(), ConfigError> {
    for (group_index, group) in expect_array(value, origin, key)?.iter().enumerate() {
        let group_key = format!("{key}[{group_index}]");
        let group = expect_object(group, origin, &group_key)?;
        warn_unknown(
            group,
            &["matcher", "hooks"],
            origin,
            &group_key,
            &mut parsed.warnings,
        );
        let matcher = optional_string(group, "matcher", origin, &group_key)?;
        let Some(handlers) = group.get("hooks") else {
            continue;
        };
        let handlers_key = format!("{group_key}.hooks");
        for (index, entry) in expect_array(handlers, origin, &handlers_key)?
            .iter()
            .enumerate()
        {
            let key = format!("{handlers_key}[{index}]");
            let object = expect_object(entry, origin, &key)?;
            warn_unknown(
                object,
                &[
                    "type",
                    "command",
                    "timeout",
                    "timeoutSec",
                    "async",
                    "statusMessage",
                ],
                origin,
                &key,
                &mut parsed.warnings,
            );
            let kind = optional_string(object, "type", origin, &key)?;
            if kind.as_deref().is_some_and(|kind| kind != "command") {
                parsed.warnings.push(format!(
                    "{origin}: `{key}`: hook type `{}` is not supported (only `command`); skipped",
                    kind.unwrap_or_default()
                ));
                continue;
            }
            if object.get("async").and_then(Value::as_bool) == Some(true) {
                parsed.warnings.push(format!(
                    "{origin}: `{key}`: an async hook cannot decide; skipped"
                ));
                continue;
            }
            let hook = handler(object, matcher.clone(), origin, &key, &mut parsed.warnings)?;
            parsed.list(event).extend(hook);
        }
    }
    Ok(())
}

/// One handler: `command` (required, non-empty), `timeout` / `timeoutSec` (whole seconds ≥ 1).
/// An invalid matcher skips the hook with a warning (reference §8).
fn handler(
    object: &serde_json::Map<String, Value>,
    matcher: Option<String>,
    origin: &str,
    key: &str,
    warnings: &mut Vec<String>,
) -> Result<Option<PermissionRequestHook>, ConfigError> {
    let command = optional_string(object, "command", origin, key)?
        .filter(|command| !command.trim().is_empty())
        .ok_or_else(|| {
            ConfigError::invalid(
                origin,
                format!("{key}.command"),
                "required: a non-empty shell command string",
            )
        })?;
    let timeout_value = object.get("timeout").or_else(|| object.get("timeoutSec"));
    let timeout = match timeout_value {
        None => DEFAULT_HOOK_TIMEOUT,
        Some(value) => match value.as_u64() {
            Some(seconds) if seconds >= 1 => Duration::from_secs(seconds),
            _ => {
                return Err(ConfigError::invalid(
                    origin,
                    format!("{key}.timeout"),
                    format!("expected a whole number of seconds ≥ 1, found {value}"),
                ));
            }
        },
    };
    match HookMatcher::new(matcher.as_deref()) {
        Ok(matcher) => Ok(Some(PermissionRequestHook {
            matcher,
            command,
            timeout,
            origin: origin.to_owned(),
        })),
        Err(error) => {
            warnings.push(format!(
                "{origin}: `{key}`: invalid matcher {:?}: {error}; hook skipped",
                matcher.unwrap_or_default()
            ));
            Ok(None)
        }
    }
}

fn expect_array<'a>(
    value: &'a Value,
    origin: &str,
    key: &str,
) -> Result<&'a Vec<Value>, ConfigError> {
    value.as_array().ok_or_else(|| {
        ConfigError::invalid(origin, key, format!("expected an array, found {value}"))
    })
}

fn expect_object<'a>(
    value: &'a Value,
    origin: &str,
    key: &str,
) -> Result<&'a serde_json::Map<String, Value>, ConfigError> {
    value.as_object().ok_or_else(|| {
        ConfigError::invalid(
            origin,
            key,
            format!("expected a table/object, found {value}"),
        )
    })
}

fn optional_string(
    object: &serde_json::Map<String, Value>,
    field: &str,
    origin: &str,
    key: &str,
) -> Result<Option<String>, ConfigError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(ConfigError::invalid(
            origin,
            format!("{key}.{field}"),
            format!("expected a string, found {other}"),
        )),
    }
}

fn warn_unknown(
    object: &serde_json::Map<String, Value>,
    known: &[&str],
    origin: &str,
    key: &str,
    warnings: &mut Vec<String>,
) {
    for field in object
        .keys()
        .filter(|field| !known.contains(&field.as_str()))
    {
        warnings.push(format!("{origin}: unknown key `{key}.{field}` ignored"));
    }
}
