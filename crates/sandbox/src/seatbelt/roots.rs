//! Which roots a Seatbelt policy opens for reading and for writing, and what it carves out of
//! each (reference `seatbelt.md` §2.2–2.3).

use std::path::Path;
use std::path::PathBuf;

use airlock_permissions::FileSystemPolicyQueries;
use airlock_permissions::ResolveContext;
use airlock_protocol::FileSystemSandboxKind;
use airlock_protocol::FileSystemSandboxPolicy;

use super::paths::canonicalize_for_seatbelt;
use super::paths::exclusion_spellings;

/// One root of an access rule: everything under `root` except the `excluded` subtrees.
/// All paths are canonical spellings (see [`canonicalize_for_seatbelt`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AccessRoot {
    pub(crate) root: PathBuf,
    pub(crate) excluded: Vec<PathBuf>,
}

/// What an access rule covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AccessScope {
    /// Every path, with nothing carved out.
    Everything,
    /// Only these roots (none: the section is empty).
    Roots(Vec<AccessRoot>),
}

/// Reads (reference §2.2): everything when the root is readable and nothing is denied by path;
/// `/` minus the deny roots when the root is readable and some are denied (plus readable
/// entries nested inside a deny root, which the most specific entry makes readable again);
/// otherwise each readable entry minus the deny roots beneath it. A readable entry already
/// covered by another one, with no deny root in between, is left out. Deny globs are handled by
/// the glob section.
pub(crate) fn read_scope(policy: &FileSystemSandboxPolicy, ctx: &ResolveContext) -> AccessScope {
    if policy.kind != FileSystemSandboxKind::Restricted {
        return AccessScope::Everything;
    }
    let denied = policy.get_unreadable_roots(ctx);
    let mut readable = policy.get_readable_roots(ctx);
    if root_is_readable(policy, ctx) {
        if denied.is_empty() {
            return AccessScope::Everything;
        }
        readable.retain(|path| path.parent().is_some());
        readable.insert(0, PathBuf::from("/"));
    }
    AccessScope::Roots(with_exclusions(prune_covered(readable, &denied), &denied))
}

/// Whether the filesystem root itself is readable under the policy.
pub(crate) fn root_is_readable(policy: &FileSystemSandboxPolicy, ctx: &ResolveContext) -> bool {
    policy.resolve_access(Path::new("/"), ctx).can_read()
}

/// `roots` without those inside another root with no deny root between the two.
fn prune_covered(roots: Vec<PathBuf>, denied: &[PathBuf]) -> Vec<PathBuf> {
    let covered = |path: &PathBuf| {
        roots.iter().any(|outer| {
            is_strictly_under(path, outer)
                && !denied
                    .iter()
                    .any(|deny| is_strictly_under(deny, outer) && path.starts_with(deny))
        })
    };
    roots
        .iter()
        .filter(|path| !covered(path))
        .cloned()
        .collect()
}

/// Writes (reference §2.3): everything for unrestricted policies and full-disk write without
/// narrowing entries; otherwise each writable root minus its read-only subpaths (protected
/// metadata, also when missing, and narrower non-write entries).
///
/// Seatbelt allows a path when *any* root allows it, so a carve-out listed for one root is
/// applied to every root that contains it (a writable root nested in another keeps its `.git`
/// read-only instead of being reopened by the outer root).
pub(crate) fn write_scope(policy: &FileSystemSandboxPolicy, ctx: &ResolveContext) -> AccessScope {
    if policy.kind != FileSystemSandboxKind::Restricted || policy.has_full_disk_write_access() {
        return AccessScope::Everything;
    }
    let writable = policy.get_writable_roots(ctx);
    let protected: Vec<PathBuf> = writable
        .iter()
        .flat_map(|root| root.read_only_subpaths.iter().cloned())
        .collect();
    let roots = writable.into_iter().map(|root| root.root).collect();
    AccessScope::Roots(with_exclusions(roots, &protected))
}

/// Canonical roots (first spelling wins on duplicates), each with every spelling of the
/// `protected` paths that lies strictly beneath it, in `protected` order.
fn with_exclusions(roots: Vec<PathBuf>, protected: &[PathBuf]) -> Vec<AccessRoot> {
    let mut spellings: Vec<PathBuf> = Vec::new();
    for spelling in protected.iter().flat_map(|path| exclusion_spellings(path)) {
        if !spellings.contains(&spelling) {
            spellings.push(spelling);
        }
    }
    let mut out: Vec<AccessRoot> = Vec::new();
    for root in roots {
        let root = canonicalize_for_seatbelt(&root);
        if out.iter().any(|existing| existing.root == root) {
            continue;
        }
        let excluded = spellings
            .iter()
            .filter(|spelling| is_strictly_under(spelling, &root))
            .cloned()
            .collect();
        out.push(AccessRoot { root, excluded });
    }
    out
}

fn is_strictly_under(path: &Path, ancestor: &Path) -> bool {
    path != ancestor && path.starts_with(ancestor)
}
