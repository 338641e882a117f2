//! Which write entries may really become writable roots (issue 11 item 7): a root is judged
//! by where it resolves to, not by how it is spelled.
//!
//! Refused, whatever the entry: a root inside (or equal to) a protected home
//! (`$AIRLOCK_HOME`, `$CODEX_HOME`: configuration, rules and audit log later runs trust).
//! Refused when the root comes only from `$TMPDIR` or is reached through a symlink: a
//! resolved path at the filesystem root, inside a read-only subpath of another root (`.git`,
//! a git directory, `.codex`, ...), or under a deny entry or deny glob. Refused when the
//! symlink lies inside another writable root (a sandboxed command could have planted it) and
//! the target is not writable through another root anyway; or when the symlink is the host's
//! own and the target is read-only under an entry that does not also cover the spelled path
//! (a `:root = read` entry covers both, so `/tmp -> /private/tmp` stays writable).
//!
//! A refused root is left out of the writable roots, so it stays read-only (or denied) as the
//! rest of the profile says; [`RefusedWritableRoot`] says why, for warnings and
//! `permissions show`.

use std::path::Path;
use std::path::PathBuf;

use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemPath;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::FileSystemSpecialPath;

use crate::builtins::ENFORCED_PROTECTED_NAMES;
use crate::context::ResolveContext;
use crate::context::Resolved;
use crate::context::resolve;
use crate::paths::canonical_or_lexical;
use crate::paths::depth;
use crate::paths::normalize_lexically;
use crate::queries::WritableRoot;
use crate::read_deny::glob_matches_path_or_ancestor;
use crate::resolution_memo::first_symlink;

/// A write entry that does not become a writable root, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedWritableRoot {
    /// The root as its entry spells it.
    pub root: PathBuf,
    /// Where it resolves to (symlinks followed).
    pub resolved: PathBuf,
    /// Only `:tmpdir` (the process's `$TMPDIR`) names it.
    pub from_tmpdir: bool,
    /// Why, in words.
    pub reason: String,
}

impl std::fmt::Display for RefusedWritableRoot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.from_tmpdir {
            write!(
                f,
                "ignoring TMPDIR={}: {}; the sandbox does not make it writable (set TMPDIR to an ordinary temporary directory)",
                self.root.display(),
                self.reason
            )
        } else {
            write!(
                f,
                "writable root {} is kept read-only: {}",
                self.root.display(),
                self.reason
            )
        }
    }
}

/// One resolved non-glob entry with whether `:tmpdir` produced it.
pub(crate) struct ResolvedEntry {
    pub path: PathBuf,
    pub access: FileSystemAccessMode,
    pub tmpdir: bool,
}

pub(crate) fn resolved_entries(
    policy: &FileSystemSandboxPolicy,
    ctx: &ResolveContext,
) -> Vec<ResolvedEntry> {
    policy
        .entries
        .iter()
        .filter_map(|entry| match resolve(&entry.path, ctx) {
            Resolved::Path(path) => Some(ResolvedEntry {
                path,
                access: entry.access,
                tmpdir: matches!(
                    &entry.path,
                    FileSystemPath::Special {
                        value: FileSystemSpecialPath::Tmpdir
                    }
                ),
            }),
            Resolved::Glob(_) | Resolved::Nothing => None,
        })
        .collect()
}

/// `path` normalised lexically, with its longest existing prefix canonicalised (missing
/// rest appended lexically).
pub(crate) fn canonical_prefix(path: &Path) -> PathBuf {
    crate::resolution_memo::canonical_prefix(&normalize_lexically(path))
}

/// "`target` is `outer`" or "`target` lies inside `outer`".
fn lies_in(target: &Path, outer: &Path) -> String {
    if canonical_prefix(outer) == *target {
        format!("it resolves to {}", outer.display())
    } else {
        format!("{} lies inside {}", target.display(), outer.display())
    }
}

/// Judges every root of a first pass (`roots`, built without refusals); see the module docs.
pub(crate) fn judge_roots(
    policy: &FileSystemSandboxPolicy,
    ctx: &ResolveContext,
    entries: &[ResolvedEntry],
    roots: &[WritableRoot],
) -> Vec<RefusedWritableRoot> {
    let canonical: Vec<PathBuf> = roots
        .iter()
        .map(|r| canonical_or_lexical(&r.root))
        .collect();
    let sub_canonical: Vec<Vec<PathBuf>> = roots
        .iter()
        .map(|r| {
            r.read_only_subpaths
                .iter()
                .map(|s| canonical_prefix(s))
                .collect()
        })
        .collect();
    let homes: Vec<(PathBuf, PathBuf)> = ctx
        .protected_homes
        .iter()
        .map(|h| (h.clone(), canonical_prefix(h)))
        .collect();
    let deny_globs: Vec<String> = policy
        .entries
        .iter()
        .filter(|e| e.access == FileSystemAccessMode::Deny)
        .filter_map(|e| match resolve(&e.path, ctx) {
            Resolved::Glob(pattern) => Some(pattern),
            _ => None,
        })
        .collect();
    let mut refused = Vec::new();
    for (index, root) in roots.iter().enumerate() {
        let target = &canonical[index];
        let lexical = normalize_lexically(&root.root);
        let own: Vec<&ResolvedEntry> = entries
            .iter()
            .filter(|e| {
                e.access == FileSystemAccessMode::Write && canonical_or_lexical(&e.path) == *target
            })
            .collect();
        let from_tmpdir = !own.is_empty() && own.iter().all(|e| e.tmpdir);
        let symlinked = *target != lexical;
        let refuse = |reason: String| RefusedWritableRoot {
            root: root.root.clone(),
            resolved: target.clone(),
            from_tmpdir,
            reason,
        };
        if let Some((home, _)) = homes
            .iter()
            .find(|(home, real)| target.starts_with(real) || lexical.starts_with(home))
        {
            refused.push(refuse(format!(
                "it lies inside {}, which holds Airlock's or Codex's configuration, rules or audit log and is always read-only",
                home.display()
            )));
            continue;
        }
        if !(from_tmpdir || symlinked) {
            continue;
        }
        if target.parent().is_none() {
            refused.push(refuse(
                "it resolves to the filesystem root; the whole disk would become writable"
                    .to_owned(),
            ));
            continue;
        }
        // Protected metadata anywhere on the way (a nested repository's `.git`, whose
        // protection the mount plan adds later, included).
        if let Some(name) = target.components().find_map(|c| match c {
            std::path::Component::Normal(name) => ENFORCED_PROTECTED_NAMES
                .iter()
                .find(|protected| name == **protected),
            _ => None,
        }) {
            refused.push(refuse(format!(
                "{} lies inside a `{name}` directory, which is protected metadata",
                target.display()
            )));
            continue;
        }
        let canonical = &canonical;
        let others = || (0..roots.len()).filter(move |other| canonical[*other] != *target);
        if let Some((other, sub)) = others().find_map(|other| {
            sub_canonical[other]
                .iter()
                .position(|sub| target.starts_with(sub))
                .map(|at| (other, at))
        }) {
            refused.push(refuse(format!(
                "{}, which is protected (read-only) under the writable root {}",
                lies_in(target, &roots[other].read_only_subpaths[sub]),
                roots[other].root.display()
            )));
            continue;
        }
        if let Some(denied) = entries.iter().find(|e| {
            e.access == FileSystemAccessMode::Deny
                && target.starts_with(canonical_or_lexical(&e.path))
        }) {
            refused.push(refuse(format!(
                "{}, which the profile denies",
                lies_in(target, &denied.path)
            )));
            continue;
        }
        if let Some(pattern) = deny_globs
            .iter()
            .find(|p| glob_matches_path_or_ancestor(p, target))
        {
            refused.push(refuse(format!(
                "{} matches the profile's deny glob {pattern}",
                target.display()
            )));
            continue;
        }
        if !symlinked {
            continue;
        }
        let link = first_symlink(&lexical).unwrap_or_else(|| lexical.clone());
        let link_parent = link.parent().unwrap_or(Path::new("/")).to_path_buf();
        let plantable = others().find(|other| link_parent.starts_with(&canonical[*other]));
        if let Some(holder) = plantable {
            let writable_otherwise = others().any(|other| {
                target.starts_with(&canonical[other])
                    && !sub_canonical[other]
                        .iter()
                        .any(|sub| target.starts_with(sub))
            });
            if !writable_otherwise {
                refused.push(refuse(format!(
                    "it is reached through the symlink {} inside the writable root {} (a sandboxed command could have made it), and its target {} is not writable otherwise",
                    link.display(),
                    roots[holder].root.display(),
                    target.display()
                )));
            }
            continue;
        }
        // The host's own symlink: the target's access is the profile's, unless the entry
        // that decides it also covers the spelled path (the write entry then overrides it).
        let decider = entries
            .iter()
            .filter(|e| {
                !(e.access == FileSystemAccessMode::Write
                    && canonical_or_lexical(&e.path) == *target)
            })
            .map(|e| (canonical_or_lexical(&e.path), e))
            .filter(|(path, _)| target.starts_with(path))
            .max_by_key(|(path, e)| (depth(path), e.access));
        if let Some((path, entry)) = decider
            && entry.access != FileSystemAccessMode::Write
            && !lexical.starts_with(&entry.path)
            && !lexical.starts_with(&path)
        {
            refused.push(refuse(format!(
                "it is a symlink to {}, which the profile's entry {} makes {}",
                target.display(),
                entry.path.display(),
                if entry.access == FileSystemAccessMode::Deny {
                    "unreadable"
                } else {
                    "read-only"
                }
            )));
        }
    }
    refused
}

#[cfg(test)]
#[path = "root_judge_tests.rs"]
mod tests;
