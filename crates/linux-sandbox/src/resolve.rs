//! From a filesystem policy to [`MountInputs`]: resolve entries against the host,
//! follow symlinks, expand deny globs, find nested repositories and decide how each
//! missing path is protected (spec 05 §Linux step 1, reference `linux-sandbox.md` §3–4).

use std::path::{Path, PathBuf};

use airlock_permissions::{
    ENFORCED_PROTECTED_NAMES, FileSystemPolicyQueries, GitMetadataError, HomeEntryKind,
    RefusedWritableRoot, ResolveContext, git_metadata, startup_name,
};
use airlock_protocol::{FileSystemPath, FileSystemSandboxPolicy, FileSystemSpecialPath};

use crate::dangling::{canonical_prefix, dangling_target};
pub(crate) use crate::empty_dir::is_empty_dir;
use crate::gitdir::{GitProtection, protect_enclosing, protect_git_entry};
use crate::globs::{GlobExpandError, expand_deny_globs};
use crate::mounts::{DenyMask, MountInputs, WritableMount};
use crate::placeholders::is_placeholder_file;
use crate::scan_cache::{default_cache_dir, usable_cache_dir};

mod prefetch;
pub use prefetch::prefetch_nested_queries;
use prefetch::{prefetch_each, scan_options_for};

/// The system directories `:minimal` makes readable on Linux (those that exist).
pub const LINUX_PLATFORM_DEFAULTS: [&str; 8] = [
    "/bin",
    "/sbin",
    "/usr",
    "/etc",
    "/lib",
    "/lib64",
    "/nix/store",
    "/run/current-system/sw",
];

/// A policy that cannot be enforced as written.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// A read-only path is reached through a symlink the command could re-point.
    #[error(
        "cannot enforce sandbox read-only path {path} because it crosses writable symlink {symlink}; replace the symlink with the real directory or remove the entry"
    )]
    ReadOnlyCrossesSymlink {
        /// The protected path.
        path: PathBuf,
        /// The symlink inside a writable root.
        symlink: PathBuf,
    },
    /// A top-level dot entry of a `$HOME` inside a writable root is a symlink: no mount can
    /// keep the command from replacing the link with a startup file of its own.
    #[error(
        "cannot protect {path}: it is a symlink in the home directory {home}, which lies inside a writable root, and a confined command could replace the link with a startup file of its own; start the agent in a project directory so that $HOME stays outside the writable roots, or replace the symlink with the file or directory it points to"
    )]
    HomeEntryIsSymlink {
        /// The symlink.
        path: PathBuf,
        /// The home directory holding it.
        home: PathBuf,
    },
    /// A deny path is reached through a symlink the command could re-point.
    #[error(
        "cannot enforce sandbox deny-read path {path} because it crosses writable symlink {symlink}; deny the symlink's target instead"
    )]
    DenyCrossesSymlink {
        /// The denied path.
        path: PathBuf,
        /// The symlink inside a writable root.
        symlink: PathBuf,
    },
    /// A directory under a writable root cannot be inspected.
    #[error(
        "cannot inspect {dir} under a writable root ({source}); Airlock must see every nested repository before it starts the sandbox — make the directory readable or remove it"
    )]
    Unreadable {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Deny globs could not be expanded.
    #[error(transparent)]
    Glob(#[from] GlobExpandError),
    /// A `.git` pointer or `commondir` file cannot be read.
    #[error(transparent)]
    Git(#[from] GitMetadataError),
    /// A repository's git directory contains a writable root: the command could write the
    /// repository's configuration or hooks through that root.
    #[error(
        "cannot protect the repository of {dot_git}: its git directory {git_dir} contains the writable root {root}; point the `.git` file at a directory outside the writable roots, or remove it"
    )]
    GitDirContainsWritableRoot {
        /// The `.git` entry.
        dot_git: PathBuf,
        /// Where git reads that repository from.
        git_dir: PathBuf,
        /// The writable root inside it.
        root: PathBuf,
    },
}

pub(crate) use airlock_permissions::resolution_memo::first_symlink;

/// The first component of `path` below `root` that does not exist.
fn first_missing(root: &Path, path: &Path) -> Option<PathBuf> {
    let rest = path.strip_prefix(root).ok()?;
    let mut current = root.to_path_buf();
    for component in rest.components() {
        current.push(component);
        if std::fs::symlink_metadata(&current).is_err() {
            return Some(current);
        }
    }
    None
}

fn canonical(path: &Path) -> Option<PathBuf> {
    airlock_permissions::resolution_memo::canonicalize(path).ok()
}

/// Whether the repositories nested below `root` are searched for. A writable `/` (a
/// full-disk-write profile) is not: the command can then rewrite every git configuration
/// (`/etc/gitconfig`, `~/.gitconfig`) and git itself, so a read-only nested `.git` protects
/// nothing, and a walk of the whole disk would cost seconds per launch. Every other root is
/// scanned whole, temporary directories included (a repository under `/tmp` is one the
/// user may use).
fn scans_nested(root: &Path) -> bool {
    root.parent().is_some()
}

/// The index of the mount whose bind is the last to cover `path` (the deepest root
/// containing it): a read-only mount made before that bind would be hidden by it.
fn owning_mount(writable: &[WritableMount], path: &Path) -> Option<usize> {
    writable
        .iter()
        .enumerate()
        .filter(|(_, w)| path.starts_with(&w.root))
        .max_by_key(|(_, w)| w.root.components().count())
        .map(|(index, _)| index)
}

/// Whether `path` lies strictly inside a read-only path made after the last writable bind
/// that covers it (then it is read-only already).
fn already_read_only(writable: &[WritableMount], path: &Path) -> bool {
    let owner = owning_mount(writable, path);
    writable
        .iter()
        .flat_map(|w| &w.read_only)
        .any(|ro| ro != path && path.starts_with(ro) && owning_mount(writable, ro) == owner)
}

/// Adds the mounts of one repository's git locations to the roots that own them. A
/// location that is a writable root itself (an explicit write entry) stays writable.
fn route_git_protection(writable: &mut [WritableMount], protection: GitProtection) {
    for path in protection.read_only {
        if already_read_only(writable, &path) || writable.iter().any(|w| w.root == path) {
            continue;
        }
        if let Some(index) = owning_mount(writable, &path)
            && !writable[index].read_only.contains(&path)
        {
            writable[index].read_only.push(path);
        }
    }
    for path in protection.placeholders {
        if already_read_only(writable, &path) {
            continue;
        }
        if let Some(index) = owning_mount(writable, &path)
            && !writable[index].placeholders.contains(&path)
        {
            writable[index].placeholders.push(path);
        }
    }
}

/// Resolves `policy` (restricted kind) for a launch from `cwd`.
///
/// # Errors
/// [`ResolveError`] when a protected or denied path crosses a symlink inside a
/// writable root, or deny globs cannot be expanded.
pub fn resolve_mount_inputs(
    policy: &FileSystemSandboxPolicy,
    cwd: &Path,
) -> Result<MountInputs, ResolveError> {
    resolve_mount_inputs_in(policy, &ResolveContext::new(cwd))
}

/// [`resolve_mount_inputs`] against an explicit context (the helper adds the launcher's
/// protected homes to the process's).
///
/// # Errors
/// As [`resolve_mount_inputs`].
pub fn resolve_mount_inputs_in(
    policy: &FileSystemSandboxPolicy,
    ctx: &ResolveContext,
) -> Result<MountInputs, ResolveError> {
    let cwd = ctx.cwd.as_path();
    let ctx = ctx.clone();
    let (roots, refused) = policy.get_writable_roots_judged(&ctx);
    let canonical_roots: Vec<PathBuf> = roots.iter().filter_map(|w| canonical(&w.root)).collect();
    let cache_dir = default_cache_dir().and_then(|dir| usable_cache_dir(&dir, &canonical_roots));
    let scan_options = |root: &Path| scan_options_for(root, &canonical_roots, cache_dir.as_ref());
    // Every root's nested-repository query goes to the index daemon now (unless the
    // launcher sent them earlier, see `prefetch_nested_queries`): it answers while the
    // rest of the plan is worked out, and the scans below read those answers.
    prefetch_each(&canonical_roots, cache_dir.as_ref());
    let readable = policy.get_readable_roots(&ctx);
    let full_read = readable.iter().any(|p| p.parent().is_none());
    let mut readable_roots: Vec<PathBuf> = Vec::new();
    if !full_read {
        readable_roots.extend(readable.iter().filter_map(|p| canonical(p)));
        if policy.include_platform_defaults() {
            readable_roots.extend(
                LINUX_PLATFORM_DEFAULTS
                    .iter()
                    .filter_map(|p| canonical(Path::new(p))),
            );
        }
    }

    let mut warnings = launch_warnings(policy, &ctx, &refused);
    // Missing homes are kept from being created like missing protected names.
    let homes: Vec<PathBuf> = ctx
        .protected_homes
        .iter()
        .map(|h| canonical_prefix(h))
        .collect();
    // Users' homes: their top-level dot entries are protected startup entries, and a
    // missing home is kept from being created like a missing protected home.
    let user_homes: Vec<PathBuf> = ctx.user_homes.iter().map(|h| canonical_prefix(h)).collect();
    let home_of = |path: &Path| {
        path.parent()
            .filter(|parent| user_homes.iter().any(|h| h == parent))
            .filter(|_| {
                path.file_name()
                    .is_some_and(|n| n.as_encoded_bytes().starts_with(b"."))
            })
            .map(Path::to_path_buf)
    };
    let in_writable = |p: &Path| canonical_roots.iter().any(|r| p.starts_with(r));

    // Deny entries are read-only subpaths of the roots that hold them too; one that is a
    // symlink is enforced on its target by the deny masks below instead.
    let denied = policy.get_unreadable_roots(&ctx);
    let mut scanned: Vec<PathBuf> = Vec::new();
    let mut writable = Vec::new();
    // `.git` entries whose repositories' git directories are protected after the loop,
    // wherever those lie (see `gitdir`).
    let mut git_entries: Vec<PathBuf> = Vec::new();
    let mut linked_git_dirs: Vec<PathBuf> = Vec::new();
    for w in &roots {
        let Some(root) = canonical(&w.root) else {
            continue;
        }; // bind targets must exist
        let mut mount = WritableMount {
            root: root.clone(),
            read_only: Vec::new(),
            placeholders: Vec::new(),
            file_placeholders: Vec::new(),
            missing_read_only: Vec::new(),
        };
        // The queries list where `root/.git` points too, and the repository above the root;
        // those locations are handled with the other git entries below (an explicit entry
        // for `root/.git` turns its part off). Every subpath outside the root is one of them.
        let top_git = w.root.join(".git");
        let git_listed: Vec<PathBuf> = if w.read_only_subpaths.contains(&top_git) {
            git_entries.push(root.join(".git"));
            git_metadata(&top_git)?
                .protected_paths()
                .map(Path::to_path_buf)
                .collect()
        } else {
            Vec::new()
        };
        for sub in &w.read_only_subpaths {
            if git_listed.contains(sub) || !sub.starts_with(&w.root) {
                continue;
            }
            let remapped = match sub.strip_prefix(&w.root) {
                Ok(rel) => root.join(rel),
                Err(_) => continue, // git locations, above
            };
            // A deeper writable root's bind would cover whatever is mounted here first;
            // that root applies its own carve-outs after its bind.
            if canonical_roots
                .iter()
                .any(|r| r != &root && r.starts_with(&root) && remapped.starts_with(r))
            {
                continue;
            }
            let is_protected_name = remapped.parent() == Some(root.as_path())
                && remapped
                    .file_name()
                    .is_some_and(|n| ENFORCED_PROTECTED_NAMES.iter().any(|p| n == *p));
            let home = home_of(&remapped);
            // An empty protected directory looks the same as a placeholder, and may be
            // one of a concurrent launch that is about to remove it: mount a placeholder
            // instead of binding it, so this launch never depends on it existing. The
            // same for a home's startup file that looks like a placeholder file.
            if (is_protected_name || home.is_some()) && is_empty_dir(&remapped) {
                mount.placeholders.push(remapped);
                continue;
            }
            if home.is_some()
                && std::fs::symlink_metadata(&remapped).is_ok_and(|m| is_placeholder_file(&m))
            {
                mount.file_placeholders.push(remapped);
                continue;
            }
            if denied.contains(sub)
                && std::fs::symlink_metadata(&remapped).is_ok_and(|m| m.file_type().is_symlink())
            {
                continue;
            }
            if std::fs::symlink_metadata(&remapped).is_ok() {
                if let Some(link) = first_symlink(&remapped)
                    && in_writable(link.parent().unwrap_or(Path::new("/")))
                {
                    if let Some(home) = home.filter(|_| link == remapped) {
                        return Err(ResolveError::HomeEntryIsSymlink {
                            path: remapped,
                            home,
                        });
                    }
                    // Even `.git` itself being a symlink is refused: the command could
                    // re-point the name after launch.
                    return Err(ResolveError::ReadOnlyCrossesSymlink {
                        path: remapped,
                        symlink: link,
                    });
                }
                let target = canonical(&remapped).unwrap_or(remapped);
                if target.starts_with(&root) || in_writable(&target) {
                    mount.read_only.push(target);
                }
                continue;
            }
            // A missing policy folder (a trusted project's `.airlock`, a home) spelled
            // through a symlink the command could re-point: no mount can keep it from
            // pointing the name at a folder of its own, which later runs would trust, and
            // its stand-in would be created wherever the link points (issue 11, F5, F12).
            if ctx.protected_homes.contains(sub)
                && let Some(link) = first_symlink(&remapped)
                && in_writable(link.parent().unwrap_or(Path::new("/")))
            {
                return Err(ResolveError::ReadOnlyCrossesSymlink {
                    path: remapped,
                    symlink: link,
                });
            }
            let is_protected_name = remapped.parent() == Some(root.as_path())
                && remapped
                    .file_name()
                    .is_some_and(|n| ENFORCED_PROTECTED_NAMES.iter().any(|p| n == *p));
            if is_protected_name {
                mount.placeholders.push(remapped);
            } else if home.is_some() {
                // A missing startup name gets a stand-in of the type it would have.
                let kind = remapped
                    .file_name()
                    .and_then(startup_name)
                    .map_or(HomeEntryKind::File, |known| known.kind);
                if kind == HomeEntryKind::Directory {
                    mount.placeholders.push(remapped);
                } else {
                    mount.file_placeholders.push(remapped);
                }
            } else if (homes.contains(&remapped) || user_homes.contains(&remapped))
                && let Some(missing) = first_missing(&root, &remapped)
            {
                mount.placeholders.push(missing);
            } else if let Some(missing) = first_missing(&root, &remapped) {
                mount.missing_read_only.push(missing);
            }
        }
        let deeper: Vec<&PathBuf> = canonical_roots
            .iter()
            .filter(|r| **r != root && r.starts_with(&root))
            .collect();
        let nested = if scans_nested(&root) {
            crate::nested_index::scan(&root, &scan_options(&root))?.found
        } else {
            Vec::new()
        };
        for dot_git in nested
            .into_iter()
            .filter(|p| !deeper.iter().any(|r| p.starts_with(r)))
        {
            // Found by the scan: bound with `--ro-bind-try`, so that one removed before
            // bubblewrap starts (by a process outside this sandbox) does not fail the launch.
            scanned.push(dot_git.clone());
            if std::fs::symlink_metadata(&dot_git).is_ok_and(|m| m.file_type().is_symlink()) {
                // A `.git` symlink (trees managed by `repo`): git follows it, so its target
                // is kept read-only. The link itself stays replaceable, like any directory
                // the command could turn into a repository of its own.
                if let Some(target) = canonical(&dot_git)
                    && in_writable(&target)
                {
                    linked_git_dirs.push(target);
                }
            } else {
                mount.read_only.push(dot_git.clone());
            }
            git_entries.push(dot_git);
        }
        writable.push(mount);
    }
    scanned.sort();
    let mut vanishable = scanned.clone();
    route_git_protection(
        &mut writable,
        GitProtection {
            read_only: linked_git_dirs,
            placeholders: Vec::new(),
        },
    );
    let mut enclosing_entries: Vec<PathBuf> = Vec::new();
    for root in &canonical_roots {
        let (entries, enclosing) = protect_enclosing(root, &canonical_roots)?;
        enclosing_entries.extend(enclosing);
        route_git_protection(&mut writable, entries);
    }
    git_entries.sort();
    git_entries.dedup();
    for dot_git in &git_entries {
        // A nested repository removed since the scan has nothing left to protect.
        if scanned.binary_search(dot_git).is_ok() && std::fs::symlink_metadata(dot_git).is_err() {
            continue;
        }
        let protection = match protect_git_entry(dot_git, &canonical_roots) {
            Ok(protection) => protection,
            Err(ResolveError::Git(e))
                if scanned.binary_search(dot_git).is_ok()
                    && e.source.kind() == std::io::ErrorKind::NotFound
                    && std::fs::symlink_metadata(dot_git).is_err() =>
            {
                continue;
            }
            Err(e) => return Err(e),
        };
        if scanned.binary_search(dot_git).is_ok() {
            // Where a scanned repository's git locations are: as vanishable as it is.
            vanishable.extend(protection.read_only.iter().cloned());
        }
        route_git_protection(&mut writable, protection);
    }
    for dot_git in &enclosing_entries {
        match protect_git_entry(dot_git, &canonical_roots) {
            Ok(protection) => route_git_protection(&mut writable, protection),
            // A repository above the root that this user cannot read is one git run by
            // this user cannot use either.
            Err(ResolveError::Git(e))
                if e.source.kind() == std::io::ErrorKind::PermissionDenied
                    && !in_writable(dot_git) => {}
            Err(e) => return Err(e),
        }
    }

    let mut deny = Vec::new();
    let mut dangling: Vec<PathBuf> = Vec::new();
    let mut add_deny = |path: PathBuf| -> Result<(), ResolveError> {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) => {
                // A symlinked ancestor inside a writable root could be re-pointed after
                // launch; the path itself being a symlink is fine (its target is masked).
                if let Some(link) = path.parent().and_then(first_symlink)
                    && in_writable(link.parent().unwrap_or(Path::new("/")))
                {
                    return Err(ResolveError::DenyCrossesSymlink {
                        path,
                        symlink: link,
                    });
                }
                let target = match canonical(&path) {
                    Some(target) => target,
                    None if meta.file_type().is_symlink() => {
                        // A dangling symlink: what it names does not exist yet. Inside a
                        // writable root the command could create it, so its first missing
                        // component gets an empty read-only placeholder for the run (removed
                        // afterwards, so the host is left as it was); elsewhere the command
                        // cannot create it and bubblewrap cannot mount there.
                        let target = dangling_target(&path);
                        match canonical_roots.iter().find(|r| target.starts_with(r)) {
                            Some(root) => {
                                if let Some(missing) = first_missing(root, &target) {
                                    dangling.push(missing);
                                }
                            }
                            None => warnings.push(format!(
                                "deny entry {} is a symlink to the missing {}, outside every writable root: nothing to mask (the command cannot create it; if it appears while the command runs, it is readable)",
                                path.display(),
                                target.display()
                            )),
                        }
                        return Ok(());
                    }
                    None => path,
                };
                let is_dir = target.is_dir();
                deny.push(DenyMask {
                    path: target,
                    is_dir,
                });
            }
            Err(_) => {
                // A missing denied path inside a writable root must not be creatable.
                if let Some(root) = canonical_roots.iter().find(|r| path.starts_with(r))
                    && let Some(missing) = first_missing(root, &path)
                {
                    deny.push(DenyMask {
                        path: missing,
                        is_dir: false,
                    });
                }
            }
        }
        Ok(())
    };
    for path in denied {
        add_deny(path)?;
    }
    let globs = policy.get_unreadable_globs_with_cwd(cwd);
    if !globs.is_empty() {
        for path in expand_deny_globs(&globs, policy.glob_scan_max_depth)? {
            add_deny(path)?;
        }
    }
    route_git_protection(
        &mut writable,
        GitProtection {
            read_only: Vec::new(),
            placeholders: dangling,
        },
    );
    // The launcher decides about /proc (it depends on what the kernel allows).
    Ok(MountInputs {
        full_read,
        readable_roots,
        writable,
        deny,
        mount_proc: true,
        warnings,
        vanishable,
    })
}

/// What the user is told about a launch of `policy`: an ignored `$TMPDIR` (when the
/// profile uses `:tmpdir`) and every write entry kept read-only (`refused`, from
/// [`FileSystemPolicyQueries::get_writable_roots_judged`]).
#[must_use]
pub fn launch_warnings(
    policy: &FileSystemSandboxPolicy,
    ctx: &ResolveContext,
    refused: &[RefusedWritableRoot],
) -> Vec<String> {
    let mut out = Vec::new();
    let uses_tmpdir = policy.entries.iter().any(|e| {
        matches!(
            &e.path,
            FileSystemPath::Special {
                value: FileSystemSpecialPath::Tmpdir
            }
        )
    });
    if uses_tmpdir && let Some(ignored) = &ctx.ignored_tmpdir {
        out.push(ignored.to_string());
    }
    out.extend(refused.iter().map(ToString::to_string));
    out
}

#[cfg(test)]
#[path = "resolve_item7_tests.rs"]
mod item7_tests;

#[cfg(test)]
#[path = "resolve_home_tests.rs"]
mod home_tests;
