//! The filesystem half of the bubblewrap command line, computed from resolved
//! policy facts (spec 05 §Linux step 1, reference `linux-sandbox.md` §3–4).
//!
//! Bubblewrap executes mount operations in argument order, so the order below is the
//! security argument:
//! 1. the base view (`--ro-bind / /` for full-read policies, else an empty tmpfs
//!    plus read-only binds of the readable roots), then a fresh `/dev` and `/proc`;
//! 2. deny masks for denied paths that are ancestors of writable roots;
//! 3. per writable root, shallowest first: the writable bind, the directories it pins
//!    (see [`pinned_ancestors`]: bound onto themselves so the command cannot rename
//!    them), its read-only carve-outs
//!    (existing → read-only bind; missing protected name → empty read-only
//!    placeholder directory, or file for a startup file of `$HOME`; missing user entry →
//!    empty read-only file), read-only `hooks/` and
//!    `config` of nested repositories, then every deny mask under the root again —
//!    a bind re-exposes whatever was masked beneath it, so masks are re-applied after
//!    each bind that covers them;
//! 4. the remaining deny masks.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A path to hide: directories get an empty mode-000 tmpfs, other files an empty
/// mode-000 file fed from a descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DenyMask {
    /// The denied path (existing, symlinks resolved).
    pub path: PathBuf,
    /// Whether it is a directory.
    pub is_dir: bool,
}

/// A writable root with what must stay read-only beneath it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritableMount {
    /// The path the bind is made at (symlinks resolved; must exist).
    pub root: PathBuf,
    /// Read-only carve-outs that exist, shallowest first.
    pub read_only: Vec<PathBuf>,
    /// Protected metadata names (`.git`, `.codex`, ...) that do not exist: an empty,
    /// read-only directory is mounted there so they cannot be created.
    pub placeholders: Vec<PathBuf>,
    /// Protected names that would be files (`~/.bashrc`, `~/.gitconfig`) and do not
    /// exist: an empty read-only file is mounted there so they cannot be created.
    pub file_placeholders: Vec<PathBuf>,
    /// Narrower read-only entries that do not exist: an empty read-only file is
    /// mounted there so nothing can be created under that name.
    pub missing_read_only: Vec<PathBuf>,
}

/// Everything the filesystem arguments depend on, already resolved against the host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MountInputs {
    /// Start from the whole host filesystem, read-only.
    pub full_read: bool,
    /// Restricted read: the directories to bind read-only on an empty root (existing, resolved).
    pub readable_roots: Vec<PathBuf>,
    /// Writable roots, in any order (sorted here).
    pub writable: Vec<WritableMount>,
    /// Everything that must not be readable (deny paths and expanded deny globs).
    pub deny: Vec<DenyMask>,
    /// Mount a fresh `/proc` (with `/proc/sys` read-only) right after `/dev`, so that
    /// deny masks under `/proc` come after it and hold.
    pub mount_proc: bool,
    /// What the plan leaves out, for the user (an ignored `$TMPDIR`, a write entry kept
    /// read-only, a deny entry with nothing to mask); printed before the launch.
    pub warnings: Vec<String>,
    /// Read-only paths found by the nested-repository scan: bound with `--ro-bind-try`,
    /// so that one a process outside this sandbox removed before bubblewrap starts is
    /// skipped instead of failing the launch (nothing is left there to protect; one that
    /// exists is always bound).
    pub vanishable: Vec<PathBuf>,
}

/// The filesystem arguments plus what launching them needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MountArgs {
    /// Arguments in order. `--ro-bind-data` descriptors are written as the
    /// placeholder [`DATA_FD_PLACEHOLDER`] and numbered by the launcher.
    pub args: Vec<OsString>,
    /// Number of `--ro-bind-data` descriptors the launcher must supply, in order.
    pub data_fds: usize,
    /// Host directories bubblewrap will create as mount points (missing protected
    /// names); the launcher removes them again after the command.
    pub created_mount_points: Vec<PathBuf>,
    /// Host files bubblewrap would create as mount points (file placeholders and missing
    /// narrower read-only entries); the launcher creates them first and removes them again
    /// after the command (see `placeholders`).
    pub created_file_mount_points: Vec<PathBuf>,
}

/// Stands in for a descriptor number in [`MountArgs::args`].
pub const DATA_FD_PLACEHOLDER: &str = "{data-fd}";

fn depth(path: &Path) -> usize {
    path.components().count()
}

struct Builder {
    out: MountArgs,
}

impl Builder {
    fn push(&mut self, items: &[&str]) {
        self.out.args.extend(items.iter().map(OsString::from));
    }

    fn push_path_op(&mut self, op: &str, path: &Path) {
        self.out.args.push(op.into());
        self.out.args.push(path.into());
        self.out.args.push(path.into());
    }

    fn mask(&mut self, mask: &DenyMask, writable_inside: &[&WritableMount]) {
        if mask.is_dir {
            // 111 keeps writable descendants reachable without making the listing readable.
            let perms = if writable_inside.is_empty() {
                "000"
            } else {
                "111"
            };
            self.push(&["--perms", perms, "--tmpfs"]);
            self.out.args.push(mask.path.as_os_str().into());
            for inner in writable_inside {
                self.push_dirs_between(&mask.path, &inner.root);
            }
            self.out.args.push("--remount-ro".into());
            self.out.args.push(mask.path.as_os_str().into());
        } else {
            self.push(&["--perms", "000", "--ro-bind-data", DATA_FD_PLACEHOLDER]);
            self.out.args.push(mask.path.as_os_str().into());
            self.out.data_fds += 1;
        }
    }

    /// `--dir` for every component from just below `base` down to `target`.
    fn push_dirs_between(&mut self, base: &Path, target: &Path) {
        if let Ok(rest) = target.strip_prefix(base) {
            let mut current = base.to_path_buf();
            for component in rest.components() {
                current.push(component);
                self.out.args.push("--dir".into());
                self.out.args.push(current.as_os_str().into());
            }
        }
    }
}

/// Everything the plan mounts on: writable roots and their carve-outs.
fn mount_targets<'a>(writable: &[&'a WritableMount]) -> Vec<&'a Path> {
    let mut out: Vec<&Path> = Vec::new();
    for w in writable {
        out.push(&w.root);
        out.extend(w.read_only.iter().map(PathBuf::as_path));
        out.extend(w.placeholders.iter().map(PathBuf::as_path));
        out.extend(w.file_placeholders.iter().map(PathBuf::as_path));
        out.extend(w.missing_read_only.iter().map(PathBuf::as_path));
    }
    out
}

/// The index (in `writable`, sorted shallowest first) of the deepest root that contains
/// `path` strictly: the bind that `path` lives in.
fn strict_owner(writable: &[&WritableMount], path: &Path) -> Option<usize> {
    writable
        .iter()
        .enumerate()
        .filter(|(_, w)| path != w.root && path.starts_with(&w.root))
        .max_by_key(|(_, w)| depth(&w.root))
        .map(|(index, _)| index)
}

/// Directories the command could otherwise rename or replace to move a protected path or
/// a writable root away from where the host expects it (issue 11 item 2): every ancestor
/// of a mount target (writable root, read-only carve-out, placeholder) that lies strictly
/// inside a writable root, is no mount target itself and is not read-only already. A
/// rename moves the mounts beneath a directory with it, so a command that could rename
/// `/tmp/a` (writable `/tmp`) holding the workspace `/tmp/a/ws` would leave the host's
/// path free for a fake repository; a mount point cannot be renamed, removed or replaced
/// (`EBUSY`), and the command has no capability to unmount it.
///
/// Returns `(owner index, directory)`, each directory once, shallowest first.
pub fn pinned_ancestors(writable: &[&WritableMount]) -> Vec<(usize, PathBuf)> {
    let targets = mount_targets(writable);
    let read_only = |path: &Path, owner: Option<usize>| {
        writable
            .iter()
            .flat_map(|w| &w.read_only)
            .any(|ro| path.starts_with(ro) && strict_owner(writable, ro) == owner)
    };
    let mut out: Vec<(usize, PathBuf)> = Vec::new();
    for target in &targets {
        for ancestor in target.ancestors().skip(1) {
            if targets.contains(&ancestor) || out.iter().any(|(_, p)| p == ancestor) {
                continue;
            }
            let Some(owner) = strict_owner(writable, ancestor) else {
                continue;
            };
            if read_only(ancestor, Some(owner)) {
                continue;
            }
            out.push((owner, ancestor.to_path_buf()));
        }
    }
    out.sort_by_key(|(_, p)| (depth(p), p.clone()));
    out
}

/// Builds the filesystem arguments (see the module doc for the order).
pub fn build_mount_args(inputs: &MountInputs) -> MountArgs {
    let mut b = Builder {
        out: MountArgs::default(),
    };
    let mut writable: Vec<&WritableMount> = inputs.writable.iter().collect();
    writable.sort_by_key(|w| (depth(&w.root), w.root.clone()));
    let mut deny: Vec<&DenyMask> = inputs.deny.iter().collect();
    deny.sort_by_key(|d| (depth(&d.path), d.path.clone()));
    deny.dedup_by(|a, b| a.path == b.path);

    if inputs.full_read {
        b.push(&["--ro-bind", "/", "/"]);
    } else {
        b.push(&["--tmpfs", "/"]);
        let mut roots = inputs.readable_roots.clone();
        roots.sort();
        roots.dedup();
        for root in &roots {
            b.push_path_op("--ro-bind", root);
        }
    }
    b.push(&["--dev", "/dev"]);
    if inputs.mount_proc {
        b.push(&["--proc", "/proc"]);
        // bubblewrap does not cover /proc/sys, and sysctl permission checks look at the
        // uid, not capabilities: a root-launched command could otherwise write global
        // knobs such as kernel.core_pattern. Bind the host's /proc/sys read-only over it.
        b.push(&["--ro-bind", "/proc/sys", "/proc/sys"]);
        if Path::new("/proc/sysrq-trigger").exists() {
            b.push(&["--ro-bind", "/proc/sysrq-trigger", "/proc/sysrq-trigger"]);
        }
    }

    let writable_under = |mask: &DenyMask| -> Vec<&WritableMount> {
        writable
            .iter()
            .copied()
            .filter(|w| w.root.starts_with(&mask.path) && w.root != mask.path)
            .collect()
    };

    // Deny paths that contain writable roots: masked first so the roots can be re-bound inside.
    let mut done = vec![false; deny.len()];
    for (i, mask) in deny.iter().enumerate() {
        let inner = writable_under(mask);
        if !inner.is_empty() {
            b.mask(mask, &inner);
            done[i] = true;
        }
    }

    let pins = pinned_ancestors(&writable);
    for (index, root) in writable.iter().enumerate() {
        b.push_path_op("--bind", &root.root);
        // `-try`: a pinned directory gone by the time bubblewrap runs can no longer be
        // renamed; whatever it held is gone with it (a writable root beneath it still
        // fails its own `--bind`).
        for (_, pin) in pins.iter().filter(|(owner, _)| *owner == index) {
            b.push_path_op("--bind-try", pin);
        }
        let mut read_only = root.read_only.clone();
        read_only.sort_by_key(|p| depth(p));
        for path in &read_only {
            let op = if inputs.vanishable.contains(path) {
                "--ro-bind-try"
            } else {
                "--ro-bind"
            };
            b.push_path_op(op, path);
        }
        for path in &root.placeholders {
            b.push(&["--perms", "555", "--tmpfs"]);
            b.out.args.push(path.into());
            b.out.args.push("--remount-ro".into());
            b.out.args.push(path.into());
            b.out.created_mount_points.push(path.clone());
        }
        // An empty read-only file from a descriptor over the host's placeholder file, which
        // stays out of the command's reach (it could otherwise hold its lock).
        for path in root.file_placeholders.iter().chain(&root.missing_read_only) {
            b.push(&["--perms", "444", "--ro-bind-data", DATA_FD_PLACEHOLDER]);
            b.out.args.push(path.into());
            b.out.data_fds += 1;
            b.out.created_file_mount_points.push(path.clone());
        }
        // Re-apply every mask this bind re-exposed (and the first application of masks
        // that live only under this root). Masks that contain a deeper writable root
        // are handled when that root is bound.
        for (i, mask) in deny.iter().enumerate() {
            if mask.path.starts_with(&root.root) && mask.path != root.root {
                let inner: Vec<&WritableMount> = writable_under(mask)
                    .into_iter()
                    .filter(|w| depth(&w.root) > depth(&root.root))
                    .collect();
                b.mask(mask, &inner);
                done[i] = true;
            }
        }
    }

    for (i, mask) in deny.iter().enumerate() {
        if !done[i] {
            b.mask(mask, &[]);
        }
    }
    b.out
}

#[cfg(test)]
#[path = "mounts_tests.rs"]
mod tests;
