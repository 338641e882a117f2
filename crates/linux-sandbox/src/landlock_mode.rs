//! Legacy Landlock mode (spec 05 §Linux "Legacy mode"): no bubblewrap; the helper
//! restricts itself with Landlock (read everywhere, write only to the writable roots
//! and `/dev/null`) and then applies the same seccomp filter.
//!
//! Current limitations, stated up front: Landlock is allow-list only, so it cannot
//! express restricted read, deny-read entries, or read-only carve-outs inside a
//! writable root (such as the protected `.git`/`.codex`/`.agents`/`.aws` of every
//! writable root). Such policies are refused with an explanation instead of being
//! enforced partially; in practice legacy mode fits read-only profiles. It has no
//! namespaces and cannot drop capabilities, so a launcher holding capabilities (root)
//! is refused too: Landlock does not cover `chmod`/`chown`, signals to host processes
//! or `sethostname`, which capabilities would open. Signals and abstract Unix sockets
//! outside the sandbox are scoped away where the kernel supports it (ABI 6).

use std::path::{Path, PathBuf};

use airlock_permissions::{FileSystemPolicyQueries, ResolveContext};
use airlock_protocol::FileSystemSandboxPolicy;
use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope, path_beneath_rules,
};

/// Why legacy Landlock mode refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum LandlockModeError {
    /// The policy needs something Landlock cannot express.
    #[error(
        "the legacy Landlock sandbox cannot enforce this profile: {0}; use the default bubblewrap sandbox (drop `use_legacy_landlock`)"
    )]
    Unsupported(String),
    /// The kernel rejected or does not support the ruleset.
    #[error("Landlock could not be applied: {0}")]
    Ruleset(#[from] landlock::RulesetError),
    /// The kernel accepted the call but enforces nothing (Landlock disabled).
    #[error(
        "Landlock is not enforced by this kernel (is `landlock` in the `lsm=` boot parameter?); refusing to run the command without it"
    )]
    NotEnforced,
    /// The kernel enforces only part of the ruleset (an older Landlock ABI): some access
    /// rights the profile restricts (e.g. truncating or renaming files outside the
    /// writable roots, signals to host processes) would stay open.
    #[error(
        "Landlock is only partially enforced by this kernel (its Landlock ABI lacks access rights the profile needs), so writes outside the writable roots could still succeed; refusing to run the command. Use the default bubblewrap sandbox (drop `use_legacy_landlock`) or a newer kernel"
    )]
    PartiallyEnforced,
}

/// The writable roots Landlock would grant, after checking the policy is expressible.
///
/// # Errors
/// [`LandlockModeError::Unsupported`] naming the first inexpressible part.
pub fn expressible_writable_roots(
    policy: &FileSystemSandboxPolicy,
    cwd: &Path,
) -> Result<Vec<PathBuf>, LandlockModeError> {
    let ctx = ResolveContext::new(cwd);
    if !policy
        .get_readable_roots(&ctx)
        .iter()
        .any(|p| p.parent().is_none())
    {
        return Err(LandlockModeError::Unsupported(
            "restricted read access is not supported".into(),
        ));
    }
    if !policy.get_unreadable_roots(&ctx).is_empty()
        || !policy.get_unreadable_globs_with_cwd(cwd).is_empty()
    {
        return Err(LandlockModeError::Unsupported(
            "deny-read entries are not supported".into(),
        ));
    }
    let mut roots = Vec::new();
    for root in policy.get_writable_roots(&ctx) {
        if let Some(sub) = root.read_only_subpaths.first() {
            return Err(LandlockModeError::Unsupported(format!(
                "read-only path {} inside writable root {} cannot be carved out",
                sub.display(),
                root.root.display()
            )));
        }
        roots.push(root.root);
    }
    Ok(roots)
}

/// Whether this process has any effective capability (`CapEff` of /proc/self/status).
/// Unreadable status counts as "yes": fail closed.
fn has_effective_capabilities() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:").map(|v| v.trim().to_string()))
        })
        .is_none_or(|hex| {
            u64::from_str_radix(&hex, 16).is_ok_and(|caps| caps != 0)
                || u64::from_str_radix(&hex, 16).is_err()
        })
}

/// Everything [`restrict`] checks before touching the kernel: the policy is expressible
/// and the launcher holds no capabilities. Returns the writable roots to grant.
///
/// # Errors
/// [`LandlockModeError::Unsupported`] explaining why legacy mode cannot be used.
pub fn precheck(
    policy: &FileSystemSandboxPolicy,
    cwd: &Path,
) -> Result<Vec<PathBuf>, LandlockModeError> {
    let writable = expressible_writable_roots(policy, cwd)?;
    if has_effective_capabilities() {
        return Err(LandlockModeError::Unsupported(
            "the launcher holds capabilities (running as root?), which Landlock cannot take away"
                .into(),
        ));
    }
    Ok(writable)
}

/// Restricts the calling process (irreversibly) to the policy.
///
/// # Errors
/// [`LandlockModeError`]; on error nothing has been restricted only if the policy was
/// refused — a kernel failure after `restrict_self` started still fails closed
/// because the caller does not run the command.
pub fn restrict(policy: &FileSystemSandboxPolicy, cwd: &Path) -> Result<(), LandlockModeError> {
    let writable = expressible_writable_roots(policy, cwd)?;
    if has_effective_capabilities() {
        return Err(LandlockModeError::Unsupported(
            "the launcher holds capabilities (running as root?), which Landlock cannot take away"
                .into(),
        ));
    }
    let abi = ABI::V5;
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))?
        .scope(Scope::Signal | Scope::AbstractUnixSocket)?
        .create()?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))?
        .add_rules(path_beneath_rules(["/dev/null"], AccessFs::from_all(abi)))?
        .add_rules(path_beneath_rules(&writable, AccessFs::from_all(abi)))?
        .restrict_self()?;
    // Spec 05: legacy mode errors when Landlock is not enforced; a partial enforcement
    // is refused too rather than accepted silently (fail closed).
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok(()),
        RulesetStatus::PartiallyEnforced => Err(LandlockModeError::PartiallyEnforced),
        RulesetStatus::NotEnforced => Err(LandlockModeError::NotEnforced),
    }
}
