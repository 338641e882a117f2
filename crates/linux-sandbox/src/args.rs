//! The helper's command-line contract: what `SandboxManager::transform` writes after
//! `airlock linux-sandbox` and what both stages read back.
//!
//! ```text
//! airlock linux-sandbox --sandbox-policy-cwd DIR --command-cwd DIR
//!     --permission-profile JSON [--use-legacy-landlock] [--no-proc]
//!     [--apply-seccomp-then-exec] [--bwrap PATH] [--status-fd N]
//!     [--protected-home DIR]... [--user-home DIR]... -- COMMAND...
//! ```
//! `--protected-home` names the launcher's `$AIRLOCK_HOME`/`$CODEX_HOME`, `--user-home` its
//! `$HOME`: the helper may run with the command's filtered environment, which need not hold
//! them; they are added to the homes the helper finds in its own environment (never fewer).
//! `--bwrap` is `[sandbox] bwrap_path` (see [`crate::bwrap_path`]); `--status-fd` names
//! the write end of the launcher's status pipe (see [`crate::status`]).
//! The profile is the *effective* `PermissionProfile` (additional permissions already
//! merged), as Codex passes it to `codex-linux-sandbox`.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use airlock_permissions::network::ManagedNetwork;
use airlock_protocol::PermissionProfile;

/// Parsed helper arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct HelperArgs {
    /// Directory that relative and symbolic profile entries resolve against.
    pub sandbox_policy_cwd: PathBuf,
    /// Working directory of the command.
    pub command_cwd: PathBuf,
    /// The effective permission profile.
    pub permission_profile: PermissionProfile,
    /// Use in-process Landlock instead of bubblewrap (legacy mode).
    pub use_legacy_landlock: bool,
    /// Do not mount a fresh `/proc` (for kernels that refuse it).
    pub no_proc: bool,
    /// Inner stage: install seccomp and exec (set by the outer stage for bwrap's payload).
    pub apply_seccomp_then_exec: bool,
    /// `[sandbox] bwrap_path`: the configured bubblewrap executable (absolute), if any.
    pub bwrap_path: Option<PathBuf>,
    /// Inherited descriptor on which the helper reports set-up failures and bubblewrap
    /// its JSON status (so the launcher can tell a set-up failure from the command's own).
    pub status_fd: Option<i32>,
    /// Extra folders kept read-only like `$AIRLOCK_HOME` (the launcher's policy folders:
    /// its homes and its trusted projects' `.airlock`, see
    /// `airlock_permissions::policy_locations_from_env`).
    pub protected_homes: Vec<PathBuf>,
    /// Extra user homes whose startup entries stay read-only when inside a writable root
    /// (the launcher's `$HOME`; see `airlock_permissions::ResolveContext::user_homes`).
    pub user_homes: Vec<PathBuf>,
    /// The managed network (spec 12): the command runs in its own network namespace
    /// behind the in-sandbox bridge to the proxy (`--managed-network JSON`).
    pub managed_network: Option<ManagedNetwork>,
    /// The socket directory of a proxy that already runs for this session (the launcher's,
    /// which can hold requests for approval); without it the helper starts its own proxy.
    pub network_proxy_dir: Option<PathBuf>,
    /// The command, at least one element.
    pub command: Vec<OsString>,
}

/// A malformed helper command line.
#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    /// A required option is missing.
    #[error("airlock linux-sandbox: missing required option {0}")]
    Missing(&'static str),
    /// An option is missing its value.
    #[error("airlock linux-sandbox: option {0} needs a value")]
    NoValue(String),
    /// An unknown option.
    #[error(
        "airlock linux-sandbox: unknown option {0:?} (this is an internal helper; run `airlock sandbox` instead)"
    )]
    Unknown(OsString),
    /// No command after `--`.
    #[error("airlock linux-sandbox: no command given after `--`")]
    NoCommand,
    /// The profile JSON does not parse.
    #[error("airlock linux-sandbox: --permission-profile is not a valid permission profile: {0}")]
    Profile(#[from] serde_json::Error),
    /// The managed network JSON does not parse.
    #[error("airlock linux-sandbox: --managed-network is not a valid managed network: {0}")]
    ManagedNetwork(serde_json::Error),
    /// A descriptor number does not parse.
    #[error("airlock linux-sandbox: --status-fd needs a descriptor number, not {0:?}")]
    BadFd(OsString),
    /// A value is not UTF-8 where text is required.
    #[error("airlock linux-sandbox: value of {0} is not valid UTF-8")]
    NotUtf8(&'static str),
}

impl HelperArgs {
    /// Parses the arguments that follow `linux-sandbox`.
    ///
    /// # Errors
    /// [`ArgsError`] naming the offending option.
    pub fn parse<I: IntoIterator<Item = OsString>>(args: I) -> Result<Self, ArgsError> {
        let mut args = args.into_iter();
        let (mut policy_cwd, mut command_cwd, mut profile) = (None, None, None);
        let (mut legacy, mut no_proc, mut inner) = (false, false, false);
        let (mut bwrap_path, mut status_fd) = (None, None);
        let mut protected_homes = Vec::new();
        let mut user_homes = Vec::new();
        let mut managed_network = None;
        let mut network_proxy_dir = None;
        let mut command = Vec::new();
        while let Some(arg) = args.next() {
            let mut value = |name: &str| {
                args.next()
                    .ok_or_else(|| ArgsError::NoValue(name.to_string()))
            };
            match arg.to_str() {
                Some("--sandbox-policy-cwd") => {
                    policy_cwd = Some(PathBuf::from(value("--sandbox-policy-cwd")?))
                }
                Some("--command-cwd") => command_cwd = Some(PathBuf::from(value("--command-cwd")?)),
                Some("--permission-profile") => {
                    let raw = value("--permission-profile")?;
                    let text = raw
                        .to_str()
                        .ok_or(ArgsError::NotUtf8("--permission-profile"))?;
                    profile = Some(serde_json::from_str(text)?);
                }
                Some("--managed-network") => {
                    let raw = value("--managed-network")?;
                    let text = raw
                        .to_str()
                        .ok_or(ArgsError::NotUtf8("--managed-network"))?;
                    managed_network =
                        Some(serde_json::from_str(text).map_err(ArgsError::ManagedNetwork)?);
                }
                Some("--network-proxy-dir") => {
                    network_proxy_dir = Some(PathBuf::from(value("--network-proxy-dir")?));
                }
                Some("--use-legacy-landlock") => legacy = true,
                Some("--no-proc") => no_proc = true,
                Some("--apply-seccomp-then-exec") => inner = true,
                Some("--bwrap") => bwrap_path = Some(PathBuf::from(value("--bwrap")?)),
                Some("--protected-home") => {
                    protected_homes.push(PathBuf::from(value("--protected-home")?));
                }
                Some("--user-home") => user_homes.push(PathBuf::from(value("--user-home")?)),
                Some("--status-fd") => {
                    let raw = value("--status-fd")?;
                    let fd = raw
                        .to_str()
                        .and_then(|text| text.parse::<i32>().ok())
                        .filter(|fd| *fd > 2)
                        .ok_or_else(|| ArgsError::BadFd(raw.clone()))?;
                    status_fd = Some(fd);
                }
                Some("--") => {
                    command.extend(args.by_ref());
                    break;
                }
                _ => return Err(ArgsError::Unknown(arg)),
            }
        }
        if command.is_empty() {
            return Err(ArgsError::NoCommand);
        }
        Ok(Self {
            sandbox_policy_cwd: policy_cwd.ok_or(ArgsError::Missing("--sandbox-policy-cwd"))?,
            command_cwd: command_cwd.ok_or(ArgsError::Missing("--command-cwd"))?,
            permission_profile: profile.ok_or(ArgsError::Missing("--permission-profile"))?,
            use_legacy_landlock: legacy,
            no_proc,
            apply_seccomp_then_exec: inner,
            bwrap_path,
            status_fd,
            protected_homes,
            user_homes,
            managed_network,
            network_proxy_dir,
            command,
        })
    }

    /// The arguments that reproduce `self` (without the leading `linux-sandbox`).
    pub fn to_args(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = vec![
            "--sandbox-policy-cwd".into(),
            self.sandbox_policy_cwd.clone().into(),
            "--command-cwd".into(),
            self.command_cwd.clone().into(),
            "--permission-profile".into(),
            // Serialising a plain data type cannot fail; an empty object would be
            // rejected by the helper rather than widen anything.
            serde_json::to_string(&self.permission_profile)
                .unwrap_or_default()
                .into(),
        ];
        for (flag, on) in [
            ("--use-legacy-landlock", self.use_legacy_landlock),
            ("--no-proc", self.no_proc),
            ("--apply-seccomp-then-exec", self.apply_seccomp_then_exec),
        ] {
            if on {
                out.push(flag.into());
            }
        }
        if let Some(path) = &self.bwrap_path {
            out.push("--bwrap".into());
            out.push(path.clone().into());
        }
        if let Some(fd) = self.status_fd {
            out.push("--status-fd".into());
            out.push(fd.to_string().into());
        }
        for home in &self.protected_homes {
            out.push("--protected-home".into());
            out.push(home.clone().into());
        }
        for home in &self.user_homes {
            out.push("--user-home".into());
            out.push(home.clone().into());
        }
        if let Some(network) = &self.managed_network {
            out.push("--managed-network".into());
            out.push(serde_json::to_string(network).unwrap_or_default().into());
        }
        if let Some(dir) = &self.network_proxy_dir {
            out.push("--network-proxy-dir".into());
            out.push(dir.clone().into());
        }
        out.push("--".into());
        out.extend(self.command.iter().cloned());
        out
    }
}

/// The hidden subcommand name of the `airlock` binary that runs the helper.
pub const HELPER_SUBCOMMAND: &str = "linux-sandbox";

/// Whether `arg` spells the helper subcommand.
pub fn is_helper_subcommand(arg: &OsStr) -> bool {
    arg == HELPER_SUBCOMMAND
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let args = HelperArgs {
            sandbox_policy_cwd: "/w".into(),
            command_cwd: "/w/sub".into(),
            permission_profile: serde_json::from_str(r#"{"type":"disabled"}"#).unwrap(),
            use_legacy_landlock: false,
            no_proc: true,
            apply_seccomp_then_exec: true,
            bwrap_path: Some("/opt/bwrap".into()),
            status_fd: Some(7),
            protected_homes: vec!["/h/.airlock".into(), "/h/.codex".into()],
            user_homes: vec!["/h".into()],
            managed_network: Some(Default::default()),
            network_proxy_dir: Some("/run/airlock-net-x".into()),
            command: vec!["ls".into(), "--".into(), "-la".into()],
        };
        assert_eq!(HelperArgs::parse(args.to_args()).unwrap(), args);
    }

    #[test]
    fn errors_name_the_problem() {
        let parse = |list: &[&str]| {
            HelperArgs::parse(list.iter().map(OsString::from))
                .unwrap_err()
                .to_string()
        };
        assert!(parse(&["--command-cwd"]).contains("needs a value"));
        assert!(parse(&["--bogus"]).contains("unknown option"));
        assert!(parse(&["--sandbox-policy-cwd", "/w", "--"]).contains("no command"));
        assert!(
            parse(&[
                "--sandbox-policy-cwd",
                "/w",
                "--command-cwd",
                "/w",
                "--",
                "ls"
            ])
            .contains("--permission-profile")
        );
        assert!(
            parse(&["--permission-profile", "{", "--", "ls"])
                .contains("not a valid permission profile")
        );
    }
}
