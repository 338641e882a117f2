//! Policy queries used by enforcement and by the model-facing text
//! (reference `permissions-config.md` §5–6, spec 04 §Compilation and materialisation).

use std::path::Path;
use std::path::PathBuf;

use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemPath;
use airlock_protocol::FileSystemSandboxKind;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::FileSystemSpecialPath;

use crate::builtins::ENFORCED_PROTECTED_NAMES;
use crate::context::ResolveContext;
use crate::context::Resolved;
use crate::context::resolve;
use crate::git_metadata::enclosing_git_entries;
use crate::git_metadata::git_metadata;
use crate::home_dotfiles::home_protected_paths;
use crate::paths::absolutize;
use crate::paths::canonical_or_lexical;
use crate::paths::depth;
use crate::paths::normalize_lexically;
use crate::read_deny::glob_matches_path_or_ancestor;
use crate::resolution_memo::MemoCache;
pub use crate::root_judge::RefusedWritableRoot;
use crate::root_judge::ResolvedEntry;
use crate::root_judge::canonical_prefix;
use crate::root_judge::judge_roots;
use crate::root_judge::resolved_entries;

/// A writable directory and the paths under it that stay read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritableRoot {
    /// The root, as spelled by its entry (absolute).
    pub root: PathBuf,
    /// Protected metadata (`.git`, where git reads that repository from — the `gitdir:` target
    /// of a pointer file, the common directory of a linked worktree, symlinked `config`/`hooks`;
    /// see [`crate::git_metadata()`] —, `.agents`, `.codex`, `.aws`, `.airlock`), the
    /// protected homes, the startup entries of a user's home inside the root, and every
    /// narrower non-write entry under the root, in that order, without repeats. Git locations
    /// may lie outside the root, and may be missing (then the first missing component is
    /// listed: it must not be created).
    ///
    /// When a user's `$HOME` ([`ResolveContext::user_homes`]) lies in the root, its top-level
    /// dot entries and its missing well-known startup names follow the homes (see
    /// [`crate::home_protected_paths`]).
    ///
    /// The four names are listed whether or not they exist, at every writable root: Codex 0.169
    /// masks all four at each writable root (reference `linux-sandbox-observed.md` §3), which is
    /// stricter than the 0.125 existence rules the spec paraphrases (`.codex` "even when missing"
    /// for the cwd root is therefore included). An explicit entry for the exact path wins.
    pub read_only_subpaths: Vec<PathBuf>,
}

impl WritableRoot {
    /// `path` is under the root and under none of the read-only subpaths (lexical check).
    #[must_use]
    pub fn is_path_writable(&self, path: &Path) -> bool {
        path.starts_with(&self.root)
            && !self
                .read_only_subpaths
                .iter()
                .any(|subpath| path.starts_with(subpath))
    }
}

/// Queries over a [`FileSystemSandboxPolicy`]. Methods ending in `_with_cwd` read `$TMPDIR` from
/// the process; the others take an explicit [`ResolveContext`].
pub trait FileSystemPolicyQueries {
    /// Access to `path` (relative → against the cwd): unrestricted and external policies allow
    /// writes everywhere; a restricted policy takes, among the entries whose resolved path is a
    /// prefix of `path`, the most specific one (most components), ties deny > write > read; no
    /// entry → deny. A deny glob matching `path` or one of its ancestors makes it deny
    /// (Airlock: fail closed, globs are otherwise only read-deny rules).
    fn resolve_access(&self, path: &Path, ctx: &ResolveContext) -> FileSystemAccessMode;

    /// Restricted: a readable `:root` entry and no deny entry at all.
    fn has_full_disk_read_access(&self) -> bool;

    /// Restricted: `:root` write and no narrowing entry — a non-write path/special entry not
    /// matched by an equal write entry, any glob, or `:root` deny (`:minimal` and unknown
    /// tokens do not narrow).
    fn has_full_disk_write_access(&self) -> bool;

    /// Not full-read and a readable `:minimal` entry: the platform's default read roots apply.
    fn include_platform_defaults(&self) -> bool;

    /// `false` whenever any deny entry exists (spec README invariant 2: deny-read is sticky).
    fn unsandboxed_execution_allowed(&self) -> bool;

    /// Every write entry that is really writable, deduplicated by canonical path, each with its
    /// read-only subpaths. Empty for non-restricted policies (everything is writable).
    fn get_writable_roots(&self, ctx: &ResolveContext) -> Vec<WritableRoot>;

    /// Write entries that [`Self::get_writable_roots`] leaves out because of where they
    /// resolve to (see `root_judge`): inside `$AIRLOCK_HOME`/`$CODEX_HOME`, or a `$TMPDIR`
    /// or symlinked root landing in a protected, denied or read-only place. They stay
    /// read-only; each says why.
    fn get_refused_writable_roots(&self, ctx: &ResolveContext) -> Vec<RefusedWritableRoot>;

    /// [`Self::get_writable_roots`] and [`Self::get_refused_writable_roots`] in one pass.
    fn get_writable_roots_judged(
        &self,
        ctx: &ResolveContext,
    ) -> (Vec<WritableRoot>, Vec<RefusedWritableRoot>);

    /// [`Self::get_writable_roots`] with `$TMPDIR` from the process.
    fn get_writable_roots_with_cwd(&self, cwd: &Path) -> Vec<WritableRoot> {
        self.get_writable_roots(&ResolveContext::new(cwd))
    }

    /// Deny path/special entries that resolve to an unreadable path, except the filesystem root.
    fn get_unreadable_roots(&self, ctx: &ResolveContext) -> Vec<PathBuf>;

    /// [`Self::get_unreadable_roots`] with `$TMPDIR` from the process.
    fn get_unreadable_roots_with_cwd(&self, cwd: &Path) -> Vec<PathBuf> {
        self.get_unreadable_roots(&ResolveContext::new(cwd))
    }

    /// Deny glob patterns resolved against the cwd, sorted and deduplicated.
    fn get_unreadable_globs_with_cwd(&self, cwd: &Path) -> Vec<String>;

    /// Every resolved path entry that grants read (read or write) and is not denied by a
    /// more specific entry, deduplicated, in entry order. Contains the filesystem root
    /// when `:root` is readable. Empty for non-restricted policies (everything is
    /// readable). Platform defaults for `:minimal` are not included: they depend on the
    /// platform (see [`Self::include_platform_defaults`]).
    fn get_readable_roots(&self, ctx: &ResolveContext) -> Vec<PathBuf>;
}

/// The writable roots and the refused ones: a first pass builds every candidate, the judge
/// refuses some (see `root_judge`), and a second pass builds the rest without them (a refused
/// root no longer exempts its path from the others' carve-outs).
fn judged_writable_roots(
    policy: &FileSystemSandboxPolicy,
    ctx: &ResolveContext,
) -> (Vec<WritableRoot>, Vec<RefusedWritableRoot>) {
    if policy.kind != FileSystemSandboxKind::Restricted {
        return (Vec::new(), Vec::new());
    }
    let _memo = crate::resolution_memo::ResolutionMemo::begin();
    // One launch's plan asks for the same judgement more than once (the trusted `bwrap`
    // check, then the mount plan): within one memo, the same policy and context get the
    // answer computed from the same view of the file system.
    thread_local! {
        static JUDGED: MemoCache<(FileSystemSandboxPolicy, ResolveContext), Judged> =
            const { std::cell::RefCell::new(None) };
    }
    crate::resolution_memo::remember(&JUDGED, &(policy.clone(), ctx.clone()), || {
        Ok::<_, std::convert::Infallible>(judge_writable_roots(policy, ctx))
    })
    .unwrap_or_else(|never| match never {})
}

type Judged = (Vec<WritableRoot>, Vec<RefusedWritableRoot>);

fn judge_writable_roots(policy: &FileSystemSandboxPolicy, ctx: &ResolveContext) -> Judged {
    let entries = resolved_entries(policy, ctx);
    let first = build_roots(policy, ctx, &entries, &[]);
    let refused = judge_roots(policy, ctx, &entries, &first);
    if refused.is_empty() {
        return (first, refused);
    }
    let excluded: Vec<PathBuf> = refused.iter().map(|r| r.resolved.clone()).collect();
    (build_roots(policy, ctx, &entries, &excluded), refused)
}

/// Every write entry that is really writable and not `excluded` (canonical paths),
/// deduplicated by canonical path, with its read-only subpaths.
fn build_roots(
    policy: &FileSystemSandboxPolicy,
    ctx: &ResolveContext,
    entries: &[ResolvedEntry],
    excluded: &[PathBuf],
) -> Vec<WritableRoot> {
    let resolved: Vec<(PathBuf, FileSystemAccessMode)> =
        entries.iter().map(|e| (e.path.clone(), e.access)).collect();
    let is_root = |root: &PathBuf, access: &FileSystemAccessMode| {
        *access == FileSystemAccessMode::Write
            && policy.resolve_access(root, ctx) == FileSystemAccessMode::Write
            && !excluded.contains(&canonical_or_lexical(root))
    };
    // Judged once per entry: `resolve_access` resolves every entry of the policy.
    let rooted: Vec<bool> = resolved
        .iter()
        .map(|(root, access)| is_root(root, access))
        .collect();
    let all_roots: Vec<PathBuf> = resolved
        .iter()
        .zip(&rooted)
        .filter(|(_, rooted)| **rooted)
        .map(|((root, _), _)| canonical_or_lexical(root))
        .collect();
    // Roots the user chose by spelling them as they are: only those exempt a path from the
    // carve-outs of the others (a `$TMPDIR` or a symlink choosing `.git` does not).
    let chosen: Vec<PathBuf> = entries
        .iter()
        .zip(&rooted)
        .filter(|(e, rooted)| !e.tmpdir && **rooted)
        .filter(|(e, _)| canonical_or_lexical(&e.path) == normalize_lexically(&e.path))
        .map(|(e, _)| e.path.clone())
        .collect();
    let homes: Vec<(PathBuf, PathBuf)> = ctx
        .protected_homes
        .iter()
        .map(|h| (h.clone(), canonical_prefix(h)))
        .collect();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut roots = Vec::new();
    for ((root, _), _) in resolved.iter().zip(&rooted).filter(|(_, rooted)| **rooted) {
        let canonical = canonical_or_lexical(root);
        if seen.contains(&canonical) {
            continue;
        }
        seen.push(canonical.clone());
        let mut subpaths: Vec<PathBuf> = Vec::new();
        let mut add = |path: PathBuf| {
            if !subpaths.contains(&path) {
                subpaths.push(path);
            }
        };
        for name in ENFORCED_PROTECTED_NAMES {
            let candidate = root.join(name);
            // An explicit entry for exactly this path overrides the default carve-out.
            if entries.iter().any(|e| e.path == candidate && !e.tmpdir) {
                continue;
            }
            add(candidate);
        }
        // Airlock's and Codex's homes, wherever they lie under the root (spelled under it).
        for (home, real) in &homes {
            if let Ok(rest) = real.strip_prefix(&canonical)
                && !rest.as_os_str().is_empty()
            {
                add(root.join(rest));
            } else if home.starts_with(root) && home != root {
                add(home.clone());
            }
        }
        // The startup and configuration entries of a user's `$HOME` inside this root (see
        // `home_dotfiles`); an explicit entry for exactly one of those paths lifts it.
        for home in &ctx.user_homes {
            for (path, _) in home_protected_paths(root, &canonical, home) {
                if !entries.iter().any(|e| e.path == path && !e.tmpdir) {
                    add(path);
                }
            }
        }
        for (path, access) in &resolved {
            if *access != FileSystemAccessMode::Write && path.starts_with(root) && path != root {
                add(path.clone());
            }
        }
        // Where git really reads this repository from (pointer target, common
        // directory, symlinked config), right after a protected `.git` — whether the
        // built-in names or an explicit read entry (as in `:workspace`) protect it. An
        // unreadable pointer lists nothing more here; enforcement refuses to start on it.
        // A location that is itself an explicit write entry stays the user's choice.
        let dot_git = root.join(".git");
        if let Some(at) = subpaths.iter().position(|p| *p == dot_git)
            && let Ok(metadata) = git_metadata(&dot_git)
        {
            let extra: Vec<PathBuf> = metadata
                .protected_paths()
                .filter(|p| !subpaths.iter().any(|s| s == p) && !chosen.iter().any(|r| r == p))
                .map(Path::to_path_buf)
                .collect();
            subpaths.splice(at + 1..at + 1, extra);
        }
        // The repository git finds above the root, and the `.git` names on the way that
        // the command could create (see `enclosing_git_entries`).
        let enclosing = enclosing_git_entries(&canonical, &all_roots);
        let mut above: Vec<PathBuf> = enclosing.missing;
        above.extend(enclosing.skipped);
        if let Some(existing) = enclosing.existing {
            if all_roots.iter().any(|r| existing.starts_with(r)) {
                above.push(existing.clone());
            }
            if let Ok(metadata) = git_metadata(&existing) {
                above.extend(metadata.protected_paths().map(Path::to_path_buf));
            }
        }
        for path in above {
            if !subpaths.contains(&path) && !chosen.contains(&path) {
                subpaths.push(path);
            }
        }
        roots.push(WritableRoot {
            root: root.clone(),
            read_only_subpaths: subpaths,
        });
    }
    roots
}

/// Every path a write entry of `policy` names, resolved against `ctx`, as written
/// (normalised) and with symlinks resolved: a cheap superset of the roots of
/// [`FileSystemPolicyQueries::get_writable_roots`] (each of which is one of these, before
/// judging and carve-outs), for callers that only need to rule a path out. Empty for a
/// policy that is not restricted.
#[must_use]
pub fn write_entry_paths(policy: &FileSystemSandboxPolicy, ctx: &ResolveContext) -> Vec<PathBuf> {
    if policy.kind != FileSystemSandboxKind::Restricted {
        return Vec::new();
    }
    resolved_paths(policy, ctx)
        .filter(|(_, access)| *access == FileSystemAccessMode::Write)
        .flat_map(|(path, _)| {
            let (lexical, canonical) = (normalize_lexically(&path), canonical_or_lexical(&path));
            [path, lexical, canonical]
        })
        .collect()
}

/// Resolved non-glob entries of a restricted policy.
fn resolved_paths<'a>(
    policy: &'a FileSystemSandboxPolicy,
    ctx: &'a ResolveContext,
) -> impl Iterator<Item = (PathBuf, FileSystemAccessMode)> + 'a {
    policy
        .entries
        .iter()
        .filter_map(move |entry| match resolve(&entry.path, ctx) {
            Resolved::Path(path) => Some((path, entry.access)),
            Resolved::Glob(_) | Resolved::Nothing => None,
        })
}

fn deny_globs<'a>(
    policy: &'a FileSystemSandboxPolicy,
    ctx: &'a ResolveContext,
) -> impl Iterator<Item = String> + 'a {
    policy
        .entries
        .iter()
        .filter(|entry| entry.access == FileSystemAccessMode::Deny)
        .filter_map(move |entry| match resolve(&entry.path, ctx) {
            Resolved::Glob(pattern) => Some(pattern),
            Resolved::Path(_) | Resolved::Nothing => None,
        })
}

fn is_special(path: &FileSystemPath, want: &FileSystemSpecialPath) -> bool {
    matches!(path, FileSystemPath::Special { value } if value == want)
}

impl FileSystemPolicyQueries for FileSystemSandboxPolicy {
    fn resolve_access(&self, path: &Path, ctx: &ResolveContext) -> FileSystemAccessMode {
        if self.kind != FileSystemSandboxKind::Restricted {
            return FileSystemAccessMode::Write;
        }
        let path = absolutize(path, &ctx.cwd);
        if deny_globs(self, ctx).any(|pattern| glob_matches_path_or_ancestor(&pattern, &path)) {
            return FileSystemAccessMode::Deny;
        }
        resolved_paths(self, ctx)
            .filter(|(entry_path, _)| path.starts_with(entry_path))
            .max_by_key(|(entry_path, access)| (depth(entry_path), *access))
            .map_or(FileSystemAccessMode::Deny, |(_, access)| access)
    }

    fn has_full_disk_read_access(&self) -> bool {
        if self.kind != FileSystemSandboxKind::Restricted {
            return true;
        }
        let root_readable = self.entries.iter().any(|entry| {
            is_special(&entry.path, &FileSystemSpecialPath::Root) && entry.access.can_read()
        });
        let any_deny = self
            .entries
            .iter()
            .any(|entry| entry.access == FileSystemAccessMode::Deny);
        root_readable && !any_deny
    }

    fn has_full_disk_write_access(&self) -> bool {
        if self.kind != FileSystemSandboxKind::Restricted {
            return true;
        }
        let root = FileSystemSpecialPath::Root;
        let root_write = self.entries.iter().any(|entry| {
            is_special(&entry.path, &root) && entry.access == FileSystemAccessMode::Write
        });
        let narrowing = self.entries.iter().any(|entry| {
            if entry.access == FileSystemAccessMode::Write {
                return false;
            }
            match &entry.path {
                FileSystemPath::GlobPattern { .. } => true,
                FileSystemPath::Special {
                    value: FileSystemSpecialPath::Minimal | FileSystemSpecialPath::Unknown { .. },
                } => false,
                // A read entry is shadowed by an equally specific write entry; deny wins ties.
                other => {
                    entry.access == FileSystemAccessMode::Deny
                        || !self.entries.iter().any(|candidate| {
                            candidate.access == FileSystemAccessMode::Write
                                && candidate.path == *other
                        })
                }
            }
        });
        root_write && !narrowing
    }

    fn include_platform_defaults(&self) -> bool {
        !self.has_full_disk_read_access()
            && self.entries.iter().any(|entry| {
                is_special(&entry.path, &FileSystemSpecialPath::Minimal) && entry.access.can_read()
            })
    }

    fn unsandboxed_execution_allowed(&self) -> bool {
        !self
            .entries
            .iter()
            .any(|entry| entry.access == FileSystemAccessMode::Deny)
    }

    fn get_writable_roots(&self, ctx: &ResolveContext) -> Vec<WritableRoot> {
        judged_writable_roots(self, ctx).0
    }

    fn get_refused_writable_roots(&self, ctx: &ResolveContext) -> Vec<RefusedWritableRoot> {
        judged_writable_roots(self, ctx).1
    }

    fn get_writable_roots_judged(
        &self,
        ctx: &ResolveContext,
    ) -> (Vec<WritableRoot>, Vec<RefusedWritableRoot>) {
        judged_writable_roots(self, ctx)
    }

    fn get_unreadable_roots(&self, ctx: &ResolveContext) -> Vec<PathBuf> {
        if self.kind != FileSystemSandboxKind::Restricted {
            return Vec::new();
        }
        let mut out: Vec<PathBuf> = Vec::new();
        for (path, access) in resolved_paths(self, ctx) {
            let is_fs_root = path.parent().is_none();
            if access == FileSystemAccessMode::Deny
                && !is_fs_root
                && self.resolve_access(&path, ctx) == FileSystemAccessMode::Deny
                && !out.contains(&path)
            {
                out.push(path);
            }
        }
        out
    }

    fn get_readable_roots(&self, ctx: &ResolveContext) -> Vec<PathBuf> {
        if self.kind != FileSystemSandboxKind::Restricted {
            return Vec::new();
        }
        let mut out: Vec<PathBuf> = Vec::new();
        for (path, access) in resolved_paths(self, ctx) {
            if access.can_read()
                && self.resolve_access(&path, ctx).can_read()
                && !out.contains(&path)
            {
                out.push(path);
            }
        }
        out
    }

    fn get_unreadable_globs_with_cwd(&self, cwd: &Path) -> Vec<String> {
        let ctx = ResolveContext::with_tmpdir(cwd, None);
        let mut globs: Vec<String> = deny_globs(self, &ctx).collect();
        globs.sort();
        globs.dedup();
        globs
    }
}
