//! Before anything is asked: protected-metadata and deny-read refusals, then the safety
//! assessment that gives the call its requirement (spec 11 §Verification and §Safety
//! assessment; reference `apply-patch.md` §A6, `orchestrator-and-approvals.md` §9).

use std::path::Path;
use std::path::PathBuf;

use airlock_patch::Hunk;
use airlock_patch::ParsedPatch;
use airlock_patch::normalize_lexically;
use airlock_permissions::ENFORCED_PROTECTED_NAMES;
use airlock_permissions::FileSystemPolicyQueries;
use airlock_permissions::ReadDenyMatcher;
use airlock_permissions::ResolveContext;
use airlock_permissions::to_legacy_sandbox_policy;
use airlock_protocol::AskForApproval;
use airlock_protocol::ExecApprovalRequirement;
use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemSandboxKind;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::PermissionProfile;
use airlock_protocol::SandboxPolicy;

/// Reject reason under a read-only profile (reference §A6).
pub const READ_ONLY_REJECT_REASON: &str =
    "writing is blocked by read-only sandbox; rejected by user approval settings";
/// Reject reason under every other profile (reference §A6).
pub const OUTSIDE_PROJECT_REJECT_REASON: &str =
    "writing outside of the project; rejected by user approval settings";
/// What the model sees before a patch reject reason (reference §A6).
pub const PATCH_REJECTED_PREFIX: &str = "patch rejected: ";

/// The policy facts the checks need: the materialised profile, its filesystem policy, the
/// directory its entries resolve against, and the workspace roots.
#[derive(Debug, Clone, Copy)]
pub struct PatchPolicy<'a> {
    /// The profile materialised against the workspace roots.
    pub permissions: &'a PermissionProfile,
    /// Its filesystem policy.
    pub fs_policy: &'a FileSystemSandboxPolicy,
    /// The environment's cwd (symbolic entries resolve against it).
    pub policy_cwd: &'a Path,
    /// The workspace roots.
    pub workspace_roots: &'a [PathBuf],
}

/// Every absolute path a parsed patch names (sources and move destinations), as written and
/// resolved against `cwd`.
#[must_use]
pub fn named_paths(parsed: &ParsedPatch, cwd: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for hunk in &parsed.hunks {
        out.push((
            hunk.path().display().to_string(),
            normalize_lexically(cwd, hunk.path()),
        ));
        if let Hunk::UpdateFile {
            move_path: Some(dest),
            ..
        } = hunk
        {
            out.push((dest.display().to_string(), normalize_lexically(cwd, dest)));
        }
    }
    out
}

/// The refusal for a patch that names protected metadata or a path the profile denies
/// reading, checked on the parsed patch before any file is read (spec 11 §Verification).
///
/// Protected metadata: any `.git` component (the repository's and every nested repository's
/// `.git`), and `.codex`, `.agents`, `.aws`, `.airlock` at the top of a writable root, a
/// workspace root or the cwd ([`ENFORCED_PROTECTED_NAMES`]).
#[must_use]
pub fn refusal_before_reading(
    paths: &[(String, PathBuf)],
    policy: &PatchPolicy<'_>,
) -> Option<String> {
    let ctx = ResolveContext::new(policy.policy_cwd);
    let mut roots: Vec<PathBuf> = policy
        .fs_policy
        .get_writable_roots(&ctx)
        .into_iter()
        .map(|root| root.root)
        .collect();
    roots.extend(policy.workspace_roots.iter().cloned());
    roots.push(policy.policy_cwd.to_path_buf());
    let real_roots: Vec<PathBuf> = roots.iter().map(|root| resolve_existing(root)).collect();
    let denied = ReadDenyMatcher::new(policy.fs_policy, &ctx);
    for (display, path) in paths {
        // Judged as written and through the folders' symlinks (`ws/innocent -> .git` must not
        // make `innocent/hooks/x` look harmless); the last component is replaced by rename,
        // never followed.
        let protected = protected_name(path, &roots)
            .or_else(|| protected_name(&resolve_existing(path), &real_roots));
        if let Some(name) = protected {
            return Some(format!(
                "refusing to write {display}: '{name}' is protected metadata that a patch never \
                 writes (it could make later commands run outside the sandbox); change it yourself \
                 outside the agent"
            ));
        }
        if denied.is_read_denied(path) {
            return Some(format!(
                "refusing {display}: the permission profile denies reading it, so apply_patch \
                 neither reads nor shows it"
            ));
        }
    }
    None
}

/// `path` with its existing folders resolved through symlinks: the canonical form of the
/// parent (or the nearest existing ancestor) joined with the rest. The filesystem is read.
fn resolve_existing(path: &Path) -> PathBuf {
    let mut ancestors = path.ancestors();
    if path.parent().is_some() {
        ancestors.next();
    }
    for ancestor in ancestors {
        if let Ok(real) = std::fs::canonicalize(ancestor) {
            let rest = path.strip_prefix(ancestor).unwrap_or(Path::new(""));
            return real.join(rest);
        }
    }
    path.to_path_buf()
}

/// Names compare without ASCII case: on a case-insensitive filesystem `.GIT` is `.git`.
fn protected_name(path: &Path, roots: &[PathBuf]) -> Option<String> {
    let is = |part: &std::ffi::OsStr, name: &str| {
        part.to_str()
            .is_some_and(|text| text.eq_ignore_ascii_case(name))
    };
    if path.components().any(|part| is(part.as_os_str(), ".git")) {
        return Some(".git".to_owned());
    }
    roots.iter().find_map(|root| {
        let first = path.strip_prefix(root).ok()?.components().next()?;
        ENFORCED_PROTECTED_NAMES
            .iter()
            .find(|name| is(first.as_os_str(), name))
            .map(|name| (*name).to_owned())
    })
}

/// The requirement of a verified patch and the directories an approved outside write adds
/// as writable (spec 11 §Safety assessment and §Enforcement).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchAssessment {
    /// `Skip { bypass_sandbox: false }`, `NeedsApproval` or `Forbidden` (reason prefixed with
    /// `patch rejected: `).
    pub requirement: ExecApprovalRequirement,
    /// For every target that is not writable under the profile, its parent directory (or the
    /// nearest existing ancestor), without repeats: added as writable for the (still
    /// sandboxed) attempt once approved.
    pub extra_writable_dirs: Vec<PathBuf>,
}

/// Reference §A6 `assess_patch_safety` for the affected absolute `paths` (never empty; an
/// empty patch fails verification earlier): `untrusted` → `NeedsApproval`; every path
/// writable and (the profile needs no sandbox, or `platform_sandbox`) → `Skip`; otherwise
/// `Forbidden` under `never` / granular `sandbox_approval = false`, else `NeedsApproval`.
#[must_use]
pub fn assess_patch_safety(
    paths: &[PathBuf],
    approval_policy: AskForApproval,
    policy: &PatchPolicy<'_>,
    platform_sandbox: bool,
) -> PatchAssessment {
    let ctx = ResolveContext::new(policy.policy_cwd);
    let mut extra_writable_dirs: Vec<PathBuf> = Vec::new();
    for path in paths {
        if !is_writable(policy.fs_policy, &ctx, path)
            && let Some(dir) = nearest_existing_dir(path)
            && !extra_writable_dirs.contains(&dir)
        {
            extra_writable_dirs.push(dir);
        }
    }
    let rejects = match approval_policy {
        AskForApproval::Never => true,
        AskForApproval::Granular(granular) => !granular.allows_sandbox_approval(),
        AskForApproval::UnlessTrusted | AskForApproval::OnRequest => false,
    };
    let ask = ExecApprovalRequirement::NeedsApproval {
        reason: None,
        proposed_execpolicy_amendment: None,
    };
    let reject = || ExecApprovalRequirement::Forbidden {
        reason: format!("{PATCH_REJECTED_PREFIX}{}", reject_reason(policy)),
    };
    let requirement = if approval_policy == AskForApproval::UnlessTrusted {
        ask
    } else if extra_writable_dirs.is_empty() {
        let unsandboxed = matches!(
            policy.permissions,
            PermissionProfile::Disabled | PermissionProfile::External { .. }
        );
        if unsandboxed || platform_sandbox {
            ExecApprovalRequirement::Skip {
                bypass_sandbox: false,
                proposed_execpolicy_amendment: None,
            }
        } else if rejects {
            reject()
        } else {
            ask
        }
    } else if rejects {
        reject()
    } else {
        ask
    };
    PatchAssessment {
        requirement,
        extra_writable_dirs,
    }
}

/// The directory the sandboxed child must be able to write for `path`: its parent, or the
/// nearest existing ancestor when the parent is still to be created (the sandbox can only
/// grant directories that exist; without this an approved Add in a new folder would be denied
/// and retried without any sandbox).
fn nearest_existing_dir(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|dir| dir.is_dir())
        .map(Path::to_path_buf)
}

/// Writable under the profile: everything for unrestricted / external filesystems; otherwise
/// the path resolves to `write` and lies in a writable root outside its read-only subpaths
/// (lexical, no symlink resolution: reference §A6; the sandbox judges links).
fn is_writable(fs_policy: &FileSystemSandboxPolicy, ctx: &ResolveContext, path: &Path) -> bool {
    if fs_policy.kind != FileSystemSandboxKind::Restricted {
        return true;
    }
    fs_policy.resolve_access(path, ctx) == FileSystemAccessMode::Write
        && fs_policy
            .get_writable_roots(ctx)
            .iter()
            .any(|root| root.is_path_writable(path))
}

fn reject_reason(policy: &PatchPolicy<'_>) -> &'static str {
    match to_legacy_sandbox_policy(policy.permissions, policy.policy_cwd) {
        Ok(SandboxPolicy::ReadOnly { .. }) => READ_ONLY_REJECT_REASON,
        _ => OUTSIDE_PROJECT_REJECT_REASON,
    }
}
