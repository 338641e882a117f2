//! Persisting amendments: appending an allow `prefix_rule` or a `network_rule` to a
//! rules file (spec 02 §Amendments, reference `execpolicy.md` §7).
//!
//! Concurrency and crash safety: every append happens under an exclusive advisory
//! lock on the file itself and writes the whole line (with its leading newline, if
//! one is needed) in a single `write` on an `O_APPEND` descriptor, then `fsync`s. A
//! crash can therefore leave at most a truncated *last* line; the next append starts
//! with a newline whenever the file does not end with one, so earlier lines are never
//! merged with later ones. (A single small `write` to a local regular file is not
//! split by a signal in practice; the kill-loop test exercises exactly that.)

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::decision::Decision;
use crate::error::AmendError;
use crate::network::{NetworkRuleProtocol, normalize_network_host, validate_justification};

/// Appends `prefix_rule(pattern=[...], decision="allow")` for `prefix` to `path`,
/// creating the parent folder and the file as needed. Idempotent: nothing is written
/// if an identical line already exists. Blocks while another process holds the lock.
///
/// # Errors
/// [`AmendError::EmptyPrefix`] for an empty prefix; I/O failures name the file.
pub fn blocking_append_allow_prefix_rule(path: &Path, prefix: &[String]) -> Result<(), AmendError> {
    if prefix.is_empty() {
        return Err(AmendError::EmptyPrefix);
    }
    let tokens: Vec<String> = prefix.iter().map(|t| json_string(t)).collect();
    let line = format!(
        "prefix_rule(pattern=[{}], decision=\"allow\")",
        tokens.join(", ")
    );
    append_locked_line(path, &line)
}

/// Appends `network_rule(host="..", protocol="..", decision="..")` (plus
/// `justification=".."` when given) to `path`. The host is normalised like the
/// builtin does; `Forbidden` is written as `deny`.
///
/// # Errors
/// [`AmendError::InvalidNetworkRule`] for a bad host or blank justification; I/O
/// failures name the file.
pub fn blocking_append_network_rule(
    path: &Path,
    host: &str,
    protocol: NetworkRuleProtocol,
    decision: Decision,
    justification: Option<&str>,
) -> Result<(), AmendError> {
    let host = normalize_network_host(host)?;
    let justification = validate_justification(justification)?;
    let decision = match decision {
        Decision::Allow => "allow",
        Decision::Prompt => "prompt",
        Decision::Forbidden => "deny",
    };
    let mut line = format!(
        "network_rule(host={}, protocol=\"{}\", decision=\"{decision}\"",
        json_string(&host),
        protocol.as_str()
    );
    if let Some(text) = justification {
        line.push_str(&format!(", justification={}", json_string(&text)));
    }
    line.push(')');
    append_locked_line(path, &line)
}

/// JSON string escaping is valid Starlark string syntax (quotes, backslashes,
/// `\n`, `\uXXXX`), so tokens round-trip exactly.
fn json_string(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

fn append_locked_line(path: &Path, line: &str) -> Result<(), AmendError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .ok_or_else(|| AmendError::MissingParent {
            path: path.to_path_buf(),
        })?;
    std::fs::create_dir_all(dir).map_err(|source| AmendError::CreateDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let mut file = OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)
        .map_err(|source| AmendError::Open {
            path: path.to_path_buf(),
            source,
        })?;
    file.lock().map_err(|source| AmendError::Lock {
        path: path.to_path_buf(),
        source,
    })?;
    // The lock is released when `file` is dropped, on every path out of here.
    let write_err = |source| AmendError::Write {
        path: path.to_path_buf(),
        source,
    };
    let existing = read_all(&mut file).map_err(write_err)?;
    if existing
        .split(|&b| b == b'\n')
        .any(|l| l.strip_suffix(b"\r").unwrap_or(l) == line.as_bytes())
    {
        return Ok(());
    }
    let mut record = String::with_capacity(line.len() + 2);
    if existing.last().is_some_and(|&b| b != b'\n') {
        record.push('\n');
    }
    record.push_str(line);
    record.push('\n');
    file.write_all(record.as_bytes()).map_err(write_err)?;
    file.sync_all().map_err(write_err)
}

fn read_all(file: &mut File) -> std::io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(0))?;
    let mut buf = Vec::new();
    file.read_to_end(&mut buf)?;
    Ok(buf)
}
