//! Why a Seatbelt command could not be built (spec 05 §Types: errors before spawn, never a
//! silent fallback).

use std::path::PathBuf;

use thiserror::Error;

/// A failure while generating the `sandbox-exec` invocation. Every variant means "do not run":
/// the caller must surface it instead of launching the command unconfined.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SeatbeltError {
    /// The argv to confine is empty.
    #[error("cannot build a Seatbelt command: the command to run is empty")]
    EmptyCommand,
    /// The policy cwd is relative, so relative entries could not be resolved safely.
    #[error(
        "cannot build a Seatbelt policy: the sandbox policy cwd {} is not absolute; pass an absolute directory",
        path.display()
    )]
    RelativeCwd {
        /// The cwd as given.
        path: PathBuf,
    },
    /// A deny glob the in-process matcher rejects; enforcing a different reading of it here
    /// could leave matching files readable.
    #[error("cannot build a Seatbelt policy: {message}")]
    InvalidGlob {
        /// The permissions crate's description of the bad glob.
        message: String,
    },
    /// A path the policy needs is not UTF-8; `sandbox-exec -D` parameters are text, and a lossy
    /// conversion would confine a different path than the profile names.
    #[error(
        "cannot build a Seatbelt policy: path {} is not valid UTF-8; rename it or leave it out of the profile",
        path.display()
    )]
    NonUtf8Path {
        /// The offending path (lossy display).
        path: PathBuf,
    },
}

/// Result alias of the Seatbelt generator.
pub type Result<T> = std::result::Result<T, SeatbeltError>;
