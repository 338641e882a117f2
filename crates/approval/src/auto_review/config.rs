//! `[auto_review]` configuration (spec 10 §Configuration).

use std::time::Duration;

use serde_json::Value;

use super::endpoint::EndpointConfig;
use crate::error::ConfigError;

/// The automatic reviewer's deadline when `timeout_secs` is not set: 90 s (spec 06, reference
/// `orchestrator-and-approvals.md` §11).
pub const DEFAULT_AUTO_REVIEW_TIMEOUT: Duration = Duration::from_secs(90);

/// A configured automatic reviewer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoReviewConfig {
    /// Which reviewer answers.
    pub reviewer: AutoReviewer,
    /// Deadline for one review (whole seconds ≥ 1; default [`DEFAULT_AUTO_REVIEW_TIMEOUT`]).
    /// Passing it yields `timed_out`.
    pub timeout: Duration,
}

/// The two reviewer kinds of spec 10.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AutoReviewer {
    /// `command = ["prog", "arg"...]`: an executable that reads the request JSON on stdin and
    /// prints `{"outcome":"allow"|"deny","rationale":...}` on stdout.
    Command {
        /// Program and arguments (the program is looked up in `PATH` when it has no slash).
        argv: Vec<String>,
    },
    /// `endpoint` + `model`: an OpenAI-compatible chat-completions API.
    Endpoint(EndpointConfig),
}

/// Reads `[auto_review]`: `command = [...]` **or** `endpoint = "http://..."` with `model` (and
/// optionally `api_key_env`, the name of an environment variable holding a bearer token), plus
/// `timeout_secs`. Returns `None` when neither `command` nor `endpoint` is set.
///
/// # Errors
/// [`ConfigError::Invalid`] for wrong types, an empty `command`, both `command` and `endpoint`,
/// an `endpoint` without `model`, a `timeout_secs` below 1, or an endpoint URL this build cannot
/// use (see [`EndpointConfig::parse`]).
pub(crate) fn auto_review_from_toml(
    value: &toml::Value,
    origin: &str,
    warnings: &mut Vec<String>,
) -> Result<Option<AutoReviewConfig>, ConfigError> {
    let json = serde_json::to_value(value)
        .map_err(|error| ConfigError::invalid(origin, "auto_review", error.to_string()))?;
    let Value::Object(table) = json else {
        return Err(ConfigError::invalid(
            origin,
            "auto_review",
            "expected a table",
        ));
    };
    for key in table.keys() {
        if ![
            "command",
            "endpoint",
            "model",
            "api_key_env",
            "timeout_secs",
        ]
        .contains(&key.as_str())
        {
            warnings.push(format!("{origin}: unknown key `auto_review.{key}` ignored"));
        }
    }
    let timeout = match table.get("timeout_secs") {
        None => DEFAULT_AUTO_REVIEW_TIMEOUT,
        Some(value) => match value.as_u64() {
            Some(seconds) if seconds >= 1 => Duration::from_secs(seconds),
            _ => {
                return Err(ConfigError::invalid(
                    origin,
                    "auto_review.timeout_secs",
                    format!("expected a whole number of seconds ≥ 1, found {value}"),
                ));
            }
        },
    };
    let string = |key: &str| -> Result<Option<String>, ConfigError> {
        match table.get(key) {
            None => Ok(None),
            Some(Value::String(text)) if !text.trim().is_empty() => Ok(Some(text.clone())),
            Some(other) => Err(ConfigError::invalid(
                origin,
                format!("auto_review.{key}"),
                format!("expected a non-empty string, found {other}"),
            )),
        }
    };
    let command = match table.get("command") {
        None => None,
        Some(Value::Array(items)) if !items.is_empty() => {
            let argv: Option<Vec<String>> = items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect();
            match argv {
                Some(argv)
                    if argv
                        .first()
                        .is_some_and(|program| !program.trim().is_empty()) =>
                {
                    Some(argv)
                }
                _ => return Err(command_error(origin, &Value::Array(items.clone()))),
            }
        }
        Some(other) => return Err(command_error(origin, other)),
    };
    let endpoint = string("endpoint")?;
    let model = string("model")?;
    let api_key_env = string("api_key_env")?;
    let reviewer = match (command, endpoint) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::invalid(
                origin,
                "auto_review",
                "set either `command` or `endpoint`, not both",
            ));
        }
        (Some(argv), None) => AutoReviewer::Command { argv },
        (None, Some(url)) => {
            let model = model.ok_or_else(|| {
                ConfigError::invalid(
                    origin,
                    "auto_review.model",
                    "required with `endpoint`: the model name to ask",
                )
            })?;
            let endpoint = EndpointConfig::parse(&url, model, api_key_env)
                .map_err(|problem| ConfigError::invalid(origin, "auto_review.endpoint", problem))?;
            if endpoint.api_key_env.is_some() && !endpoint.is_loopback() {
                warnings.push(format!(
                    "{origin}: `auto_review.endpoint` {:?} is plain http on a non-loopback host: \
                     the key named by `auto_review.api_key_env` is sent unencrypted",
                    endpoint.url
                ));
            }
            AutoReviewer::Endpoint(endpoint)
        }
        (None, None) => return Ok(None),
    };
    Ok(Some(AutoReviewConfig { reviewer, timeout }))
}

fn command_error(origin: &str, found: &Value) -> ConfigError {
    ConfigError::invalid(
        origin,
        "auto_review.command",
        format!("expected a non-empty array of strings (program first), found {found}"),
    )
}
