//! Airlock's Linux sandbox helper (spec `05-sandbox.md` §Linux).
//!
//! Owns the mechanism: building the bubblewrap argv from an effective permission
//! profile, the seccomp filter and `no_new_privs`, legacy Landlock, and the helper's
//! two stages (outer: exec `bwrap`; inner: filter, then exec the command).
//!
//! Must not: choose profiles, ask for approval, or run anything unconfined when the
//! profile asks for confinement — every failure is an error before the command runs.

#[cfg(target_os = "linux")]
pub mod seccomp;

pub mod mounts;
