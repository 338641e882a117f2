//! Projection of a `PermissionProfile` onto what the model is told (spec 08 §Projection of a
//! profile).
//!
//! Every fact here comes from the same queries enforcement uses (`file_system_sandbox_policy` and
//! `FileSystemPolicyQueries` of `airlock-permissions`, spec README invariant 13): the text is
//! derived from the profile, never written separately, so it cannot drift from what is enforced.

use std::path::PathBuf;

use airlock_permissions::FileSystemPolicyQueries;
use airlock_permissions::ResolveContext;
use airlock_permissions::WritableRoot;
use airlock_permissions::file_system_sandbox_policy;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::PermissionProfile;
use airlock_protocol::SandboxMode;

/// The profile facts the instructions describe, resolved against one cwd.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileProjection {
    /// `danger-full-access` when the filesystem policy grants full-disk write (disabled, external
    /// or unrestricted profiles included); `read-only` when it has no writable root; otherwise
    /// `workspace-write`.
    pub sandbox_mode: SandboxMode,
    /// `enabled` when the network policy is enabled, else `restricted`.
    pub network_access: NetworkSandboxPolicy,
    /// Writable roots with their read-only subpaths, sorted by root (empty unless
    /// `workspace-write`).
    pub writable_roots: Vec<WritableRoot>,
    /// Exact paths that cannot be read, sorted.
    pub denied_paths: Vec<PathBuf>,
    /// Glob patterns (absolute) that cannot be read, sorted.
    pub denied_globs: Vec<String>,
    /// Whether any command may run without the filesystem sandbox at all (false as soon as one
    /// deny-read entry exists: spec README invariant 2).
    pub unsandboxed_execution_allowed: bool,
    /// Whether the cwd itself is inside a writable root (and not in a read-only subpath).
    pub cwd_writable: bool,
}

impl ProfileProjection {
    /// Projects `profile` (already materialised) for `ctx.cwd`.
    #[must_use]
    pub fn new(profile: &PermissionProfile, ctx: &ResolveContext) -> Self {
        let policy = file_system_sandbox_policy(profile);
        let network_access = profile.network();
        let full_write = policy.has_full_disk_write_access();
        let mut writable_roots = if full_write {
            Vec::new()
        } else {
            policy.get_writable_roots(ctx)
        };
        writable_roots.sort_by(|left, right| left.root.cmp(&right.root));
        let sandbox_mode = if full_write {
            SandboxMode::DangerFullAccess
        } else if writable_roots.is_empty() {
            SandboxMode::ReadOnly
        } else {
            SandboxMode::WorkspaceWrite
        };
        let mut denied_paths = policy.get_unreadable_roots(ctx);
        denied_paths.sort();
        denied_paths.dedup();
        let denied_globs = policy.get_unreadable_globs_with_cwd(&ctx.cwd);
        let cwd_writable = full_write
            || writable_roots
                .iter()
                .any(|root| root.is_path_writable(&ctx.cwd));
        Self {
            sandbox_mode,
            network_access,
            writable_roots,
            denied_paths,
            denied_globs,
            unsandboxed_execution_allowed: policy.unsandboxed_execution_allowed(),
            cwd_writable,
        }
    }

    /// Whether commands run inside a filesystem sandbox at all.
    #[must_use]
    pub const fn filesystem_sandboxed(&self) -> bool {
        !matches!(self.sandbox_mode, SandboxMode::DangerFullAccess)
    }

    /// Whether there is anything a command could gain by leaving the sandbox: a sandboxed
    /// filesystem or a restricted network.
    #[must_use]
    pub const fn anything_to_escalate(&self) -> bool {
        self.filesystem_sandboxed() || !self.network_access.is_enabled()
    }
}
