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
use airlock_permissions::PolicyLocation;
use airlock_permissions::ReadDenyMatcher;
use airlock_permissions::ResolveContext;
use airlock_permissions::is_writable_under;
use airlock_permissions::policy_locations_from_env;
use airlock_permissions::to_legacy_sandbox_policy;
use airlock_protocol::AskForApproval;
use airlock_protocol::ExecApprovalRequirement;
use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemSandboxKind;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::PermissionProfile;
use airlock_protocol::SandboxPolicy;

use super::resolve::ResolvedTarget;
use super::resolve::resolve_folder;
use super::resolve::resolve_target;

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

/// The refusal for a patch that names protected metadata, a folder later runs read policy
/// from, or a path the profile denies reading, checked on the parsed patch before any file is
/// read (spec 11 §Verification; issue 11 finding F6).
///
/// Every path is judged as written *and* where it really leads ([`resolve_target`]: through
/// every symlink on the way, `..` in link targets included, as the kernel resolves it; the
/// last component is replaced by rename, never followed). Protected metadata: any `.git`
/// component (the repository's and every nested repository's `.git`), and `.codex`,
/// `.agents`, `.aws`, `.airlock` at the top of a writable root, a workspace root or the cwd
/// ([`ENFORCED_PROTECTED_NAMES`]). Policy folders: `$AIRLOCK_HOME`, `$CODEX_HOME` and the
/// `.airlock` of every trusted project ([`policy_locations_from_env`]), wherever they lie.
/// A refusal through a symlink names the link and where it leads. A path whose symlinks
/// cannot be resolved (a loop) is refused too.
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
    let real_roots: Vec<PathBuf> = roots.iter().map(|root| real_folder(root)).collect();
    let locations: Vec<(PolicyLocation, PathBuf)> = policy_locations_from_env(policy.policy_cwd)
        .into_iter()
        .map(|location| {
            let real = real_folder(&location.path);
            (location, real)
        })
        .collect();
    let denied = ReadDenyMatcher::new(policy.fs_policy, &ctx);
    for (display, path) in paths {
        let resolved = match resolve_target(path) {
            Ok(resolved) => resolved,
            Err(error) => return Some(format!("refusing to write {display}: {error}")),
        };
        let via = if resolved.link.is_some() {
            format!(" ({})", resolved.via())
        } else {
            String::new()
        };
        // Judged as written and where it really leads (`ws/innocent -> .git` must not make
        // `innocent/hooks/x` look harmless).
        let protected = protected_name(path, &roots)
            .or_else(|| protected_name(&resolved.real, &real_roots))
            .map(|name| format!("'{name}' is protected metadata that a patch never writes"))
            .or_else(|| {
                locations
                    .iter()
                    .find(|(location, real)| {
                        path.starts_with(&location.path) || resolved.real.starts_with(real)
                    })
                    .map(|(location, _)| {
                        format!(
                            "{} is a folder later runs read policy from ({}), which a patch never writes",
                            location.path.display(),
                            location.reason()
                        )
                    })
            });
        if let Some(what) = protected {
            return Some(format!(
                "refusing to write {display}{via}: {what} (it could make later commands run \
                 outside the sandbox); change it yourself outside the agent"
            ));
        }
        if denied.is_read_denied(path) || denied.is_read_denied(&resolved.real) {
            return Some(format!(
                "refusing {display}{via}: the permission profile denies reading it, so \
                 apply_patch neither reads nor shows it"
            ));
        }
    }
    None
}

/// `dir` resolved through its symlinks (as written when it cannot be).
fn real_folder(dir: &Path) -> PathBuf {
    resolve_folder(dir).unwrap_or_else(|_| dir.to_path_buf())
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
    // Paths that cross a symlink to somewhere not writable: the reviewer is told where.
    let mut leads_out: Vec<String> = Vec::new();
    for path in paths {
        // A path that cannot be resolved was refused before reading; here it is judged as
        // written and never counts as writable.
        let resolved = resolve_target(path).ok();
        let real = resolved
            .as_ref()
            .map_or(path.as_path(), |r| r.real.as_path());
        let writable_as_named = is_writable(policy.fs_policy, &ctx, path);
        let writable_really = resolved.is_some()
            && (real == path.as_path() || is_writable_under(policy.fs_policy, real, &ctx));
        if writable_as_named && !writable_really {
            leads_out.push(format!(
                "{} {}, outside the writable roots",
                path.display(),
                resolved
                    .as_ref()
                    .map(ResolvedTarget::via)
                    .unwrap_or_default()
            ));
        }
        if !(writable_as_named && writable_really)
            && let Some(dir) = nearest_existing_dir(real)
            && !extra_writable_dirs.contains(&dir)
        {
            extra_writable_dirs.push(dir);
        }
    }
    let links = (!leads_out.is_empty()).then(|| leads_out.join("; "));
    let rejects = match approval_policy {
        AskForApproval::Never => true,
        AskForApproval::Granular(granular) => !granular.allows_sandbox_approval(),
        AskForApproval::UnlessTrusted | AskForApproval::OnRequest => false,
    };
    // The reviewer sees the real paths in the action's changes and files (see `runtime`);
    // the first approval carries no reason (front ends tell a retry by its reason).
    let ask = ExecApprovalRequirement::NeedsApproval {
        reason: None,
        proposed_execpolicy_amendment: None,
    };
    let reject = || ExecApprovalRequirement::Forbidden {
        reason: match &links {
            Some(links) => format!("{PATCH_REJECTED_PREFIX}{} ({links})", reject_reason(policy)),
            None => format!("{PATCH_REJECTED_PREFIX}{}", reject_reason(policy)),
        },
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
