//! The child side of `apply_patch`: the hidden `airlock __apply-patch` subcommand, run inside
//! the sandbox with the request on stdin (spec 11 §Enforcement).
//!
//! The child verifies the patch again against the files *as the sandbox shows them*, checks
//! that the result is exactly what was approved and that every path still leads where the
//! parent judged it to ([`HelperRequest::real_paths`]), and applies it atomically there
//! (see `write`).

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;
use std::path::PathBuf;

use airlock_patch::ReadFile;
use airlock_patch::VerifiedChange;
use airlock_patch::verify_patch;
use serde::Deserialize;
use serde::Serialize;

use super::resolve::resolve_target;
use super::write::RealWrite;
use super::write::write_resolved;

/// The hidden subcommand that applies a patch (dispatched before argument parsing).
pub const APPLY_PATCH_HELPER_SUBCOMMAND: &str = "__apply-patch";

/// Most bytes the child accepts on stdin: 64 MiB (a patch and its approved changes).
pub const MAX_HELPER_REQUEST_BYTES: u64 = 64 << 20;

/// What the parent sends on the child's stdin, as JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HelperRequest {
    /// The directory the patch's relative paths resolve against.
    pub cwd: PathBuf,
    /// The patch text.
    pub patch: String,
    /// The changes the reviewer saw; the child refuses to write anything else.
    pub changes: Vec<VerifiedChange>,
    /// Where the parent judged each path to be written (issue 11, finding F6): the path as
    /// the patch names it → its real path ([`real_paths_of`](super::real_paths_of)). The
    /// child resolves every path again and refuses to write when one differs or is missing,
    /// so a symlink swapped on the way after the check is never written through.
    #[serde(default)]
    pub real_paths: BTreeMap<PathBuf, PathBuf>,
}

/// Largest file a patch may read: 256 MiB (a bigger one is refused, not read).
pub const MAX_PATCHED_FILE_BYTES: u64 = 256 << 20;

/// Reads files from the host (in the child: through the sandbox's view). Only regular files
/// (after symlinks) of at most [`MAX_PATCHED_FILE_BYTES`]: a FIFO, a device such as
/// `/dev/zero` or a directory planted in the workspace is refused instead of blocking or
/// exhausting memory. The open is non-blocking and the type is checked on the opened file, so
/// swapping the path between check and read does not help.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostFiles;

impl ReadFile for HostFiles {
    fn read_file(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        read_regular_file(open_for_reading(path)?)
    }
}

/// Opens `path` for reading without blocking (a FIFO must not hang the reader).
pub(crate) fn open_for_reading(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// The bytes of an opened file that is a regular file of at most [`MAX_PATCHED_FILE_BYTES`].
pub(crate) fn read_regular_file(file: std::fs::File) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > MAX_PATCHED_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "file is larger than {} MiB",
            MAX_PATCHED_FILE_BYTES >> 20
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_PATCHED_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_PATCHED_FILE_BYTES {
        return Err(std::io::Error::other("file grew while being read"));
    }
    Ok(bytes)
}

/// What the child prints and exits with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelperOutcome {
    /// 0 applied, 1 failed (nothing changed unless the message says otherwise).
    pub exit_code: u8,
    /// The success summary (`Success. Updated the following files:` …).
    pub stdout: String,
    /// The error, one paragraph.
    pub stderr: String,
}

/// Runs the child with `input` as its stdin.
pub fn run_helper(input: &mut dyn std::io::Read) -> HelperOutcome {
    let mut bytes = Vec::new();
    if let Err(error) = input.take(MAX_HELPER_REQUEST_BYTES).read_to_end(&mut bytes) {
        return failed(format!("apply_patch: cannot read the request: {error}"));
    }
    let request: HelperRequest = match serde_json::from_slice(&bytes) {
        Ok(request) => request,
        Err(error) => return failed(format!("apply_patch: invalid request: {error}")),
    };
    apply_request(&request)
}

/// Verifies and applies one request (the body of [`run_helper`]).
#[must_use]
pub fn apply_request(request: &HelperRequest) -> HelperOutcome {
    let verified = match verify_patch(&request.patch, &request.cwd, &HostFiles) {
        Ok(verified) => verified,
        Err(error) => return failed(format!("apply_patch verification failed: {error}")),
    };
    if verified.changes != request.changes {
        return failed(
            "apply_patch: the files changed after the patch was verified; nothing was changed \
             (verify the patch again)"
                .to_owned(),
        );
    }
    let mut reals = Vec::with_capacity(verified.final_writes.len());
    for write in &verified.final_writes {
        let real = match resolve_target(&write.path) {
            Ok(resolved) => resolved.real,
            Err(error) => return failed(format!("apply_patch: {error}; nothing was changed")),
        };
        match request.real_paths.get(&write.path) {
            Some(checked) if *checked == real => reals.push(real),
            Some(checked) => {
                return failed(format!(
                    "apply_patch: {} now leads to {}, but the patch was checked and approved for {}: a symlink on the way changed after the check; nothing was changed (verify the patch again)",
                    write.path.display(),
                    real.display(),
                    checked.display()
                ));
            }
            None => {
                return failed(format!(
                    "apply_patch: {} was not checked before the write; nothing was changed",
                    write.path.display()
                ));
            }
        }
    }
    let writes: Vec<RealWrite<'_>> = verified
        .final_writes
        .iter()
        .zip(&reals)
        .map(|(write, real)| RealWrite { write, real })
        .collect();
    match write_resolved(&writes) {
        Ok(()) => HelperOutcome {
            exit_code: 0,
            stdout: verified.summary(),
            stderr: String::new(),
        },
        Err(error) => failed(format!("apply_patch: {error}")),
    }
}

fn failed(message: String) -> HelperOutcome {
    HelperOutcome {
        exit_code: 1,
        stdout: String::new(),
        stderr: format!("{message}\n"),
    }
}
