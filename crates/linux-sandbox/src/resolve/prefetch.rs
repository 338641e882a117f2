//! The nested-repository queries of a launch's plan, sent to the index daemon ahead of the
//! plan ([`prefetch_nested_queries`]) so that it works on them meanwhile, and the scan
//! options each writable root is scanned with.

use std::path::{Path, PathBuf};

use airlock_permissions::{FileSystemPolicyQueries, ResolveContext};
use airlock_protocol::FileSystemSandboxPolicy;

use super::{canonical, scans_nested};
use crate::nested_scan::ScanOptions;
use crate::scan_cache::{RECENT_CHANGE_MARGIN, default_cache_dir, usable_cache_dir};

/// Sends the index daemon the nested-repository queries of the plan that
/// [`resolve_mount_inputs_in`] will make for `policy` in `ctx`, so that it works on them
/// while the launcher does something else (inside a
/// [`crate::nested_index::client::Batch`], which the plan must join; a query already sent
/// is not sent again). Does nothing where the plan would not ask the daemon.
pub fn prefetch_nested_queries(policy: &FileSystemSandboxPolicy, ctx: &ResolveContext) {
    let (roots, _) = policy.get_writable_roots_judged(ctx);
    let canonical_roots: Vec<PathBuf> = roots.iter().filter_map(|w| canonical(&w.root)).collect();
    let cache_dir = default_cache_dir().and_then(|dir| usable_cache_dir(&dir, &canonical_roots));
    prefetch_each(&canonical_roots, cache_dir.as_ref());
}

pub(super) fn prefetch_each(canonical_roots: &[PathBuf], cache_dir: Option<&PathBuf>) {
    for root in canonical_roots {
        if scans_nested(root) {
            crate::nested_index::prefetch(
                root,
                &scan_options_for(root, canonical_roots, cache_dir),
            );
        }
    }
}

/// How `root` is scanned: deeper writable roots are scanned as roots of their own.
pub(super) fn scan_options_for(
    root: &Path,
    canonical_roots: &[PathBuf],
    cache_dir: Option<&PathBuf>,
) -> ScanOptions {
    ScanOptions {
        skip: canonical_roots
            .iter()
            .filter(|r| *r != root && r.starts_with(root))
            .cloned()
            .collect(),
        cache_dir: cache_dir.cloned(),
        recent: RECENT_CHANGE_MARGIN,
    }
}
