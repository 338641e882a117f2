//! The `sandbox-exec` invocation (reference `seatbelt.md` §1).

use std::collections::BTreeMap;
use std::path::Path;

use airlock_permissions::FileSystemPolicyQueries;
use airlock_permissions::ReadDenyMatcher;
use airlock_permissions::ResolveContext;
use airlock_protocol::FileSystemSandboxKind;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::NetworkSandboxPolicy;

use super::access::read_section;
use super::access::write_section;
use super::error::Result;
use super::error::SeatbeltError;
use super::glob::deny_glob_section;
use super::network::network_section;
use super::options::SeatbeltOptions;
use super::params::SeatbeltParams;
use super::policy::PolicySections;
use super::roots::read_scope;
use super::roots::root_is_readable;
use super::roots::write_scope;

/// The only `sandbox-exec` ever run: an absolute system path, never looked up in `PATH`, so a
/// planted `sandbox-exec` earlier in `PATH` cannot replace the sandbox.
pub const SANDBOX_EXEC_PATH: &str = "/usr/bin/sandbox-exec";

/// A ready-to-spawn Seatbelt launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatbeltCommand {
    /// `[SANDBOX_EXEC_PATH, "-p", <policy>, "-D<KEY>=<path>"…, "--", <command>…]`.
    pub argv: Vec<String>,
    /// Variables to add to the command's environment (see [`seatbelt_env`]).
    pub env: BTreeMap<String, String>,
}

impl SeatbeltCommand {
    /// The SBPL policy text (the argument after `-p`).
    #[must_use]
    pub fn policy(&self) -> &str {
        self.argv.get(2).map_or("", String::as_str)
    }
}

/// Builds the Seatbelt launch of `command` under the effective policies (additional
/// permissions already merged by the caller), resolving entries against
/// `sandbox_policy_cwd` and `options.tmpdir`.
///
/// Reference `seatbelt.md` §1–§6, with these Airlock choices: Docker denials close the policy
/// instead of opening it; a carve-out applies to every writable root containing it; deny globs
/// also deny writes and cover the subtree of a match; `-DDARWIN_USER_CACHE_DIR` is passed only
/// when the policy uses it.
///
/// # Errors
/// [`SeatbeltError::EmptyCommand`], [`SeatbeltError::RelativeCwd`],
/// [`SeatbeltError::InvalidGlob`] (a deny glob the in-process matcher rejects: the profile
/// cannot be enforced as written), [`SeatbeltError::NonUtf8Path`].
pub fn create_seatbelt_command_args(
    command: Vec<String>,
    fs_policy: &FileSystemSandboxPolicy,
    network: NetworkSandboxPolicy,
    sandbox_policy_cwd: &Path,
    options: &SeatbeltOptions,
) -> Result<SeatbeltCommand> {
    if command.is_empty() {
        return Err(SeatbeltError::EmptyCommand);
    }
    if !sandbox_policy_cwd.is_absolute() {
        return Err(SeatbeltError::RelativeCwd {
            path: sandbox_policy_cwd.to_path_buf(),
        });
    }
    let ctx = ResolveContext::with_tmpdir(sandbox_policy_cwd, options.tmpdir.clone())
        .with_protected_homes(options.protected_homes.clone())
        .with_user_homes(options.user_homes.clone());
    ReadDenyMatcher::try_new(fs_policy, &ctx).map_err(|error| SeatbeltError::InvalidGlob {
        message: error.to_string(),
    })?;

    let mut params = SeatbeltParams::default();
    let sections = PolicySections {
        read: read_section(&read_scope(fs_policy, &ctx), &mut params)?,
        write: write_section(&write_scope(fs_policy, &ctx), &mut params)?,
        deny_globs: deny_glob_section(&fs_policy.get_unreadable_globs_with_cwd(sandbox_policy_cwd)),
        network: network_section(network, options, &mut params)?,
        platform_defaults: fs_policy.kind == FileSystemSandboxKind::Restricted
            && fs_policy.include_platform_defaults()
            && !root_is_readable(fs_policy, &ctx),
    };

    let mut argv = vec![
        SANDBOX_EXEC_PATH.to_owned(),
        "-p".to_owned(),
        sections.render(),
    ];
    argv.extend(params.into_args());
    argv.push("--".to_owned());
    argv.extend(command);
    Ok(SeatbeltCommand {
        argv,
        env: seatbelt_env(network),
    })
}

/// Variables that tell the command it runs under Seatbelt (reference §1): `AIRLOCK_SANDBOX`
/// and `CODEX_SANDBOX` = `seatbelt`; when the network is restricted also
/// `AIRLOCK_SANDBOX_NETWORK_DISABLED` and `CODEX_SANDBOX_NETWORK_DISABLED` = `1` (the Codex
/// names are kept for tools that already look for them).
#[must_use]
pub fn seatbelt_env(network: NetworkSandboxPolicy) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    env.insert("AIRLOCK_SANDBOX".to_owned(), "seatbelt".to_owned());
    env.insert("CODEX_SANDBOX".to_owned(), "seatbelt".to_owned());
    if !network.is_enabled() {
        env.insert(
            "AIRLOCK_SANDBOX_NETWORK_DISABLED".to_owned(),
            "1".to_owned(),
        );
        env.insert("CODEX_SANDBOX_NETWORK_DISABLED".to_owned(), "1".to_owned());
    }
    env
}
