//! The `-D<KEY>=<path>` parameters of a Seatbelt invocation (reference `seatbelt.md` §1: paths
//! never enter the policy text; the text says `(param "KEY")`).

use std::path::Path;

use super::error::Result;
use super::error::SeatbeltError;

/// Parameters in the order they are defined; the order of the `-D` arguments follows it
/// (readable roots, writable roots, `DARWIN_USER_CACHE_DIR`, unix sockets — reference §1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SeatbeltParams {
    entries: Vec<(String, String)>,
}

impl SeatbeltParams {
    /// Defines `key` as `path` and returns the SBPL expression that reads it,
    /// `(param "KEY")`. Errors when the path is not UTF-8.
    pub(crate) fn define(&mut self, key: String, path: &Path) -> Result<String> {
        let value = path.to_str().ok_or_else(|| SeatbeltError::NonUtf8Path {
            path: path.to_path_buf(),
        })?;
        let reference = format!("(param \"{key}\")");
        self.entries.push((key, value.to_owned()));
        Ok(reference)
    }

    /// The `-DKEY=value` arguments.
    pub(crate) fn into_args(self) -> Vec<String> {
        self.entries
            .into_iter()
            .map(|(key, value)| format!("-D{key}={value}"))
            .collect()
    }
}
