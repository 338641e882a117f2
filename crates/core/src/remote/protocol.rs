//! The exec-server wire shapes (spec 09 §Methods), shared by the client in this crate and the
//! server in `airlock-exec-server` so both sides read and write the same camelCase JSON.

use std::collections::BTreeMap;
use std::path::PathBuf;

use airlock_protocol::PermissionProfile;
use airlock_sandbox::SandboxType;
use airlock_sandbox::WindowsSandboxLevel;
use serde::Deserialize;
use serde::Deserializer;
use serde::Serialize;
use serde::Serializer;

/// Method names (spec 09 §Methods).
pub mod method {
    /// `initialize`.
    pub const INITIALIZE: &str = "initialize";
    /// `initialized` (notification).
    pub const INITIALIZED: &str = "initialized";
    /// `process/start`.
    pub const PROCESS_START: &str = "process/start";
    /// `process/read`.
    pub const PROCESS_READ: &str = "process/read";
    /// `process/write`.
    pub const PROCESS_WRITE: &str = "process/write";
    /// `process/terminate`.
    pub const PROCESS_TERMINATE: &str = "process/terminate";
    /// `process/output` (notification).
    pub const PROCESS_OUTPUT: &str = "process/output";
    /// `process/exited` (notification).
    pub const PROCESS_EXITED: &str = "process/exited";
    /// `process/closed` (notification).
    pub const PROCESS_CLOSED: &str = "process/closed";
    /// `fs/readFile`.
    pub const FS_READ_FILE: &str = "fs/readFile";
    /// `fs/writeFile`.
    pub const FS_WRITE_FILE: &str = "fs/writeFile";
    /// `fs/createDirectory`.
    pub const FS_CREATE_DIRECTORY: &str = "fs/createDirectory";
    /// `fs/getMetadata`.
    pub const FS_GET_METADATA: &str = "fs/getMetadata";
    /// `fs/readDirectory`.
    pub const FS_READ_DIRECTORY: &str = "fs/readDirectory";
    /// `fs/remove`.
    pub const FS_REMOVE: &str = "fs/remove";
    /// `fs/copy`.
    pub const FS_COPY: &str = "fs/copy";
}

/// An absolute path on the wire: a plain absolute path or a `file://` URI (spec 09: both are
/// accepted). Written back as a plain absolute path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WirePath(pub PathBuf);

impl WirePath {
    /// Parses `text`.
    ///
    /// # Errors
    /// A message saying what is wrong: not absolute, another URI scheme, a bad `%` escape.
    pub fn parse(text: &str) -> Result<Self, String> {
        let raw = if let Some(rest) = text.strip_prefix("file://") {
            // `file:///abs` (empty authority) or `file://localhost/abs`.
            let rest = rest.strip_prefix("localhost").unwrap_or(rest);
            percent_decode(rest)?
        } else if text.contains("://") {
            return Err(format!(
                "invalid path {text:?}: only absolute paths and file:// URIs are accepted"
            ));
        } else {
            text.to_owned()
        };
        let path = PathBuf::from(&raw);
        if !path.is_absolute() {
            return Err(format!(
                "invalid path {text:?}: must be an absolute path or a file:// URI"
            ));
        }
        Ok(Self(path))
    }
}

fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("invalid URI {text:?}: bad % escape"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("invalid URI {text:?}: not UTF-8 after decoding"))
}

impl<'de> Deserialize<'de> for WirePath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl Serialize for WirePath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0.to_string_lossy())
    }
}

/// `initialize` params.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// Who is connecting (for logs).
    pub client_name: String,
}

/// `initialize` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    /// This connection's session id.
    pub session_id: String,
    /// What the executor's host looks like.
    pub environment_info: EnvironmentInfo,
}

/// The executor's host (spec 09 `environmentInfo`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentInfo {
    /// The user's shell.
    pub shell: ShellInfo,
    /// The server's working directory.
    pub cwd: WirePath,
    /// `linux`, `macos`, `windows`.
    pub platform_os: String,
    /// What this executor supports.
    pub capabilities: BTreeMap<String, bool>,
}

/// A shell on the executor's host.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShellInfo {
    /// `bash`, `zsh`, `sh`.
    pub name: String,
    /// Absolute path.
    pub path: String,
}

/// `FileSystemSandboxContext` (spec 09): the profile stays symbolic; the server materialises
/// it against `workspaceRoots` (or `cwd`) in its own filesystem.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileSystemSandboxContext {
    /// The profile (symbolic roots allowed).
    pub permissions: PermissionProfile,
    /// The directory symbolic entries resolve against; the command's cwd when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<WirePath>,
    /// The roots `:project_roots` entries materialise against; `[cwd]` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_roots: Option<Vec<WirePath>>,
    /// Windows sandbox level (required, as in Codex).
    pub windows_sandbox_level: WindowsSandboxLevel,
    /// Windows private desktop.
    #[serde(default)]
    pub windows_sandbox_private_desktop: bool,
    /// Legacy Landlock instead of bubblewrap.
    #[serde(default)]
    pub use_legacy_landlock: bool,
}

/// `process/start` params.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProcessStartParams {
    /// Client-chosen id, unique on the connection.
    pub process_id: String,
    /// Program and arguments (non-empty).
    pub argv: Vec<String>,
    /// Working directory.
    pub cwd: WirePath,
    /// The complete environment of the command (nothing of the server's is inherited).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Run on a pseudo-terminal (not supported by this executor: refused).
    #[serde(default)]
    pub tty: bool,
    /// Keep stdin writable through `process/write`.
    #[serde(default)]
    pub pipe_stdin: bool,
    /// `argv[0]` override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arg0: Option<String>,
    /// The sandbox to apply; absent → no sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<FileSystemSandboxContext>,
}

/// `process/start` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessStartResponse {
    /// The id.
    pub process_id: String,
    /// The mechanism the server applied.
    pub sandbox_type: SandboxType,
}

/// Which stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamKind {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
    /// A pseudo-terminal.
    Pty,
}

/// `process/output` notification.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessOutput {
    /// The process.
    pub process_id: String,
    /// Per-process sequence number, from 1, shared by all streams and the exit/close events.
    pub seq: u64,
    /// The stream.
    pub stream: StreamKind,
    /// The bytes, base64.
    pub chunk: String,
}

/// `process/exited` notification.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessExited {
    /// The process.
    pub process_id: String,
    /// Sequence number.
    pub seq: u64,
    /// Exit code (`128 + signal` for a signal death).
    pub exit_code: i32,
    /// Whether the sandbox most likely blocked it (spec 05 §Denial detection).
    pub sandbox_denied: bool,
    /// Set when the sandbox itself could not be set up and the command never ran (an
    /// Airlock addition: such a failure is never a denial and never retried unconfined).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_failure: Option<String>,
}

/// `process/closed` notification.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessClosed {
    /// The process.
    pub process_id: String,
    /// Sequence number.
    pub seq: u64,
}

/// `process/read` params.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProcessReadParams {
    /// The process.
    pub process_id: String,
    /// Only chunks with a larger seq.
    #[serde(default)]
    pub after_seq: Option<u64>,
    /// At most this many bytes of chunk data (at least one chunk is returned).
    #[serde(default)]
    pub max_bytes: Option<usize>,
    /// Wait up to this long for something new (milliseconds, capped at 30 000).
    #[serde(default)]
    pub wait_ms: Option<u64>,
}

/// One retained chunk.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadChunk {
    /// Sequence number.
    pub seq: u64,
    /// Stream.
    pub stream: StreamKind,
    /// Base64 bytes.
    pub chunk: String,
}

/// `process/read` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessReadResponse {
    /// Chunks after `afterSeq`, in seq order.
    pub chunks: Vec<ReadChunk>,
    /// The `afterSeq` for the next read.
    pub next_seq: u64,
    /// The process has exited.
    pub exited: bool,
    /// Its exit code once exited.
    pub exit_code: Option<i32>,
    /// Its output is closed.
    pub closed: bool,
    /// Why the server lost track of it, if it did.
    pub failure: Option<String>,
    /// Denial detection on the exit.
    pub sandbox_denied: bool,
    /// Output chunks after `afterSeq` that are no longer retained: the server keeps the
    /// newest 4 MiB of a process's output for `process/read` and drops the oldest first
    /// (every chunk was still sent as a `process/output` notification). Their seqs are the
    /// gap before the first returned chunk; absent when nothing was dropped.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_chunks: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `process/write` params.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProcessWriteParams {
    /// The process.
    pub process_id: String,
    /// Base64 bytes for stdin.
    pub chunk: String,
}

/// `process/write` result `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WriteStatus {
    /// Written.
    Accepted,
    /// No such process.
    UnknownProcess,
    /// Stdin is closed or was never piped.
    StdinClosed,
}

/// `process/write` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProcessWriteResponse {
    /// The outcome.
    pub status: WriteStatus,
}

/// `process/terminate` params.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProcessTerminateParams {
    /// The process.
    pub process_id: String,
}

/// `process/terminate` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProcessTerminateResponse {
    /// Whether it was still running (and has now been killed).
    pub running: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_paths_accept_absolute_paths_and_file_uris() {
        assert_eq!(WirePath::parse("/a/b").unwrap().0, PathBuf::from("/a/b"));
        assert_eq!(
            WirePath::parse("file:///a/b%20c").unwrap().0,
            PathBuf::from("/a/b c")
        );
        assert_eq!(
            WirePath::parse("file://localhost/x").unwrap().0,
            PathBuf::from("/x")
        );
        assert!(WirePath::parse("relative").is_err());
        assert!(WirePath::parse("http://host/x").is_err());
        assert!(WirePath::parse("file:///a%zz").is_err());
        assert!(WirePath::parse("file://rel").is_err());
    }

    #[test]
    fn sandbox_context_requires_the_windows_level_and_refuses_unknown_fields() {
        let profile = serde_json::json!({"type": "disabled"});
        let missing = serde_json::json!({"permissions": profile});
        let error = serde_json::from_value::<FileSystemSandboxContext>(missing).unwrap_err();
        assert!(error.to_string().contains("windowsSandboxLevel"), "{error}");
        let extra = serde_json::json!({"permissions": profile, "windowsSandboxLevel": "disabled", "widen": true});
        assert!(serde_json::from_value::<FileSystemSandboxContext>(extra).is_err());
    }
}
