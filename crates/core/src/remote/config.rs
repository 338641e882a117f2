//! `[environment]` in `config.toml` (spec 09 §Client side): `type = "local"` (the default) or
//! `type = "remote"` with `url`, an optional `token_file` and `request_timeout_ms`.
//!
//! ```toml
//! [environment]
//! type = "remote"
//! url = "ws://10.0.0.7:4500"          # or "unix:/run/airlock/exec.sock"
//! token_file = "/etc/airlock/exec-token"
//! request_timeout_ms = 30000
//! ```

use std::path::Path;
use std::time::Duration;

use airlock_permissions::AirlockConfig;

use super::client::DEFAULT_REQUEST_TIMEOUT;
use super::client::Endpoint;
use super::client::RemoteEnvironment;

/// An invalid `[environment]` table; names the file, the key and the fix.
#[derive(Debug, thiserror::Error)]
#[error("{origin}: invalid `environment.{key}`: {message}")]
pub struct EnvironmentConfigError {
    /// The config file (or `-c` overrides).
    pub origin: String,
    /// The key under `[environment]`.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

/// The remote environment the config selects, `None` for the local host.
///
/// # Errors
/// [`EnvironmentConfigError`]: an unknown `type` or key, a missing or unsupported `url`, an
/// unreadable or empty `token_file`, a zero or non-integer timeout.
pub fn remote_environment_from_config(
    config: &AirlockConfig,
) -> Result<Option<RemoteEnvironment>, EnvironmentConfigError> {
    let invalid = |key: &str, message: String| EnvironmentConfigError {
        origin: config.origin.clone(),
        key: key.to_owned(),
        message,
    };
    let Some(table) = config.table.get("environment") else {
        return Ok(None);
    };
    let Some(table) = table.as_table() else {
        return Err(invalid("", "must be a table".into()));
    };
    for key in table.keys() {
        if !["type", "url", "token_file", "request_timeout_ms"].contains(&key.as_str()) {
            return Err(invalid(
                key,
                "unknown key; allowed: type, url, token_file, request_timeout_ms".into(),
            ));
        }
    }
    match table.get("type").and_then(toml::Value::as_str) {
        None | Some("local") if !table.contains_key("url") => return Ok(None),
        Some("remote") => {}
        Some("local") | None => {
            return Err(invalid(
                "type",
                "a `url` is set, so set `type = \"remote\"` (or remove the url)".into(),
            ));
        }
        Some(other) => {
            return Err(invalid(
                "type",
                format!("{other:?} is not \"local\" or \"remote\""),
            ));
        }
    }
    let url = table
        .get("url")
        .and_then(toml::Value::as_str)
        .ok_or_else(|| {
            invalid(
                "url",
                "missing; use ws://HOST:PORT or unix:/absolute/path".into(),
            )
        })?;
    Endpoint::parse(url).map_err(|message| invalid("url", message))?;
    let token = match table.get("token_file") {
        None => None,
        Some(value) => {
            let path = value
                .as_str()
                .ok_or_else(|| invalid("token_file", "must be a path string".into()))?;
            Some(read_token(Path::new(path)).map_err(|message| invalid("token_file", message))?)
        }
    };
    let request_timeout = match table.get("request_timeout_ms") {
        None => DEFAULT_REQUEST_TIMEOUT,
        Some(value) => match value.as_integer().and_then(|ms| u64::try_from(ms).ok()) {
            Some(ms) if ms > 0 => Duration::from_millis(ms),
            _ => {
                return Err(invalid(
                    "request_timeout_ms",
                    format!("{value} is not a positive number of milliseconds"),
                ));
            }
        },
    };
    Ok(Some(RemoteEnvironment {
        url: url.to_owned(),
        token,
        request_timeout,
    }))
}

fn read_token(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(format!("{} is empty", path.display()));
    }
    Ok(token.to_owned())
}
