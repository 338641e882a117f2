//! Where git keeps the metadata of a repository whose `.git` entry is protected (spec 04
//! §Compilation and materialisation: "`.git` (dir, or file — then its `gitdir:` target too)").
//!
//! Protecting only the `.git` name is not enough when git reads the repository from somewhere
//! else: a `.git` *file* (`gitdir: <path>`, written by `git worktree add`, `git clone
//! --separate-git-dir`, submodules and bare-repository layouts) sends git to another directory,
//! and a git directory holding a `commondir` file (every linked worktree) takes `config`,
//! `hooks/` and `info/` from the main repository's git directory. A sandboxed command that can
//! write any of them plants a command (`core.fsmonitor`, a hook) that the user's next `git status`
//! on the host runs. This module finds those directories exactly as git does (a `.git` symlink
//! is followed, as git does), so that every backend can keep them read-only:
//! - `gitdir:` files follow git's `read_gitfile_gently`: at most [`MAX_GIT_FILE_BYTES`], the
//!   content must start with `gitdir: `, trailing CR/LF are dropped, a relative path is relative
//!   to the directory holding the file. Anything else is not a repository to git (it stops with
//!   "invalid gitfile format" instead of looking further up), so nothing beyond the file itself
//!   needs protecting.
//! - `commondir` follows git's `get_common_dir_noenv`: trailing CR/LF dropped, relative to the
//!   git directory.
//! - `config`, `config.worktree`, `hooks` and `info` that are symlinks (layouts such as
//!   `git-new-workdir`) are followed one level: git reads their targets.
//! - files included by `config`/`config.worktree` (`include.path`, `includeIf.*.path`, any
//!   condition; `~/` against `$HOME`, relative to the including file), transitively up to
//!   git's depth of [`MAX_INCLUDE_DEPTH`]; a missing one counts, as git skips it silently
//!   and would read it once created.
//! - `core.hooksPath` from those files when it lies outside the working tree (`~/` against
//!   `$HOME`, relative to the working tree). A hooks directory *inside* the working tree
//!   (`.husky`) holds workspace files like any other and is left writable.
//! - the `.git` files of the repository's other linked worktrees (`worktrees/<id>/gitdir`
//!   of the common directory, at most [`MAX_LINKED_WORKTREES`]).
//!
//! A location that does not exist (a dangling pointer) is reported with the first missing
//! component, because creating that component is how a sandboxed command would make git use a
//! repository of its own. A path with a non-directory on the way is reported at that entry,
//! which must not be replaced by a directory.
//!
//! Must not: decide what is writable (callers know the writable roots), follow more than what git
//! itself follows, or read unbounded amounts of data.

use std::ffi::OsStr;
use std::ffi::OsString;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;

use crate::git_includes::hooks_paths;
use crate::git_includes::include_paths;
use crate::paths::normalize_lexically;
use crate::untrusted_file::{Follow, Limit, UntrustedProblem, read_untrusted};

/// Largest `.git` pointer or `commondir` file read, in bytes: git's own limit for gitfiles
/// (1 MiB). Longer files are not a repository to git.
pub const MAX_GIT_FILE_BYTES: u64 = 1 << 20;

/// How deep includes are followed (git stops at the same depth).
pub const MAX_INCLUDE_DEPTH: usize = 10;

/// At most this many linked worktrees are listed for one repository.
pub const MAX_LINKED_WORKTREES: usize = 256;

/// At most this many configuration files are read for one repository.
const MAX_CONFIG_FILES: usize = 64;

/// Entries of a git directory that git follows when they are symlinks and that decide which
/// programs run (configuration, hooks) or what is read as repository information.
pub const LINKED_METADATA_NAMES: [&str; 4] = ["config", "config.worktree", "hooks", "info"];

/// What a location is to git.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GitMetadataRole {
    /// The directory a `.git` file's `gitdir:` line names.
    GitDir,
    /// The directory a git directory's `commondir` file names (a linked worktree's main
    /// repository: `config`, `hooks/`, `info/`, objects and refs).
    CommonDir,
    /// The target of a symlinked `config`, `config.worktree`, `hooks` or `info`.
    LinkedEntry,
    /// A file the repository's configuration includes (`include.path`, `includeIf.*.path`).
    IncludedConfig,
    /// A `core.hooksPath` directory outside the repository's working tree.
    HooksPath,
    /// The `.git` file of another linked worktree of the repository (named by
    /// `worktrees/<id>/gitdir` of the common directory): re-pointed, the user's git in that
    /// worktree would read another repository.
    LinkedWorktree,
}

impl GitMetadataRole {
    /// How people call it (`permissions show`).
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::GitDir => "git directory",
            Self::CommonDir => "git common directory",
            Self::LinkedEntry => "linked git metadata",
            Self::IncludedConfig => "file included by the git configuration",
            Self::HooksPath => "hooks directory (core.hooksPath)",
            Self::LinkedWorktree => "`.git` file of a linked worktree",
        }
    }
}

/// Where a location is protected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtectAt {
    /// The location exists (or a non-directory blocks the way to it): this path, symlinks
    /// resolved, must stay as it is.
    Existing(PathBuf),
    /// The location does not exist: this is its first missing component (parent resolved), which
    /// must not be created.
    Missing(PathBuf),
}

impl ProtectAt {
    /// The path to protect.
    #[must_use]
    pub fn path(&self) -> &Path {
        match self {
            Self::Existing(path) | Self::Missing(path) => path,
        }
    }
}

/// One location git reads as metadata of the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitMetadataPath {
    /// What it is.
    pub role: GitMetadataRole,
    /// The path as written, made absolute against the directory it is relative to, not
    /// normalised: symlinks on the way are visible in it (backends refuse one that the sandbox
    /// could re-point).
    pub lexical: PathBuf,
    /// Where it is protected.
    pub protect: ProtectAt,
}

/// The metadata locations of one `.git` entry, beyond the entry itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitMetadata {
    /// Git directory, common directory and linked entries, in that order, without repeats.
    pub paths: Vec<GitMetadataPath>,
    /// Why git would not use this `.git` at all (an invalid pointer file), if so. Only the entry
    /// itself is then protected: git stops there rather than looking elsewhere.
    pub invalid: Option<String>,
}

/// A `.git` entry whose metadata cannot be determined: protection would be guesswork, so
/// callers refuse to start (fail closed).
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot read git metadata file {path} ({source}); Airlock must know where that repository keeps its configuration before it starts the sandbox — make the file readable or remove it"
)]
pub struct GitMetadataError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

/// Reads at most [`MAX_GIT_FILE_BYTES`] + 1 bytes of `path`; `Ok(None)` when it does not exist.
/// Never blocks and reads only regular files ([`read_untrusted`], red-team F11): a FIFO,
/// device or socket is `Ok(Err(reason))` — git cannot use such a file (it would block on
/// it or fail), so callers protect what they have and follow it no further.
fn read_bounded(path: &Path) -> Result<Option<Result<Vec<u8>, String>>, GitMetadataError> {
    match read_untrusted(path, Follow::Yes, Limit::Prefix(MAX_GIT_FILE_BYTES + 1)) {
        Ok(bytes) => Ok(bytes.map(Ok)),
        Err(error) if error.problem == UntrustedProblem::NotRegular => {
            Ok(Some(Err(error.to_string())))
        }
        Err(error) => Err(GitMetadataError {
            path: path.to_path_buf(),
            source: std::io::Error::other(error.why),
        }),
    }
}

/// Drops trailing CR and LF, then cuts at the first NUL (git handles these files as C strings).
fn trim_git_line(mut bytes: &[u8]) -> &[u8] {
    while let [rest @ .., b'\n' | b'\r'] = bytes {
        bytes = rest;
    }
    bytes
        .iter()
        .position(|b| *b == 0)
        .map_or(bytes, |nul| &bytes[..nul])
}

/// File content as a path, byte for byte where the platform allows.
fn os_string(bytes: &[u8]) -> OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt as _;
        OsString::from_vec(bytes.to_vec())
    }
    #[cfg(not(unix))]
    {
        OsString::from(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// The path of a `.git` file's content, as git reads it (see the module docs), or why git
/// rejects the file.
///
/// # Errors
/// A message naming the problem, for content git does not accept as a pointer.
pub fn parse_git_file(bytes: &[u8]) -> Result<OsString, String> {
    if bytes.len() as u64 > MAX_GIT_FILE_BYTES {
        return Err(format!(
            "larger than {MAX_GIT_FILE_BYTES} bytes (git refuses it)"
        ));
    }
    let Some(rest) = bytes.strip_prefix(b"gitdir: ") else {
        return Err("does not start with `gitdir: ` (git reports an invalid gitfile)".to_owned());
    };
    Ok(os_string(trim_git_line(rest)))
}

/// The path of a `commondir` file's content, as git reads it.
///
/// # Errors
/// A message for a file longer than [`MAX_GIT_FILE_BYTES`] (no valid path is that long).
pub fn parse_commondir(bytes: &[u8]) -> Result<OsString, String> {
    if bytes.len() as u64 > MAX_GIT_FILE_BYTES {
        return Err(format!(
            "larger than {MAX_GIT_FILE_BYTES} bytes (no valid path)"
        ));
    }
    Ok(os_string(trim_git_line(bytes)))
}

/// `written` against `base` (kept as written when absolute); components are not folded so that
/// every symlink on the way stays visible.
fn join_lexically(base: &Path, written: &OsStr) -> PathBuf {
    let written = Path::new(written);
    if written.is_absolute() {
        written.to_path_buf()
    } else {
        base.join(written)
    }
}

/// Where `lexical` must be protected: the path itself when it resolves, else the first prefix
/// that is missing (parent resolved) or that is not a directory although more follows.
#[must_use]
pub fn protect_at(lexical: &Path) -> ProtectAt {
    if let Ok(resolved) = crate::resolution_memo::canonicalize(lexical) {
        return ProtectAt::Existing(resolved);
    }
    let mut current = PathBuf::new();
    let components: Vec<Component<'_>> = lexical.components().collect();
    for (index, component) in components.iter().enumerate() {
        current.push(component);
        if !matches!(component, Component::Normal(_)) {
            continue;
        }
        match std::fs::metadata(&current) {
            Ok(meta) if meta.is_dir() || index + 1 == components.len() => {}
            Ok(_) => return ProtectAt::Existing(canonical_or(&current)),
            Err(_) => {
                let parent = current.parent().map_or_else(PathBuf::new, canonical_or);
                let name = current.file_name().unwrap_or_default();
                return ProtectAt::Missing(parent.join(name));
            }
        }
    }
    // Only `..`/`.` left unresolved: judge the lexical path.
    ProtectAt::Existing(canonical_or(lexical))
}

fn canonical_or(path: &Path) -> PathBuf {
    crate::resolution_memo::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

impl GitMetadata {
    fn add(&mut self, role: GitMetadataRole, lexical: PathBuf) {
        let protect = protect_at(&lexical);
        if !self.paths.iter().any(|p| p.protect == protect) {
            self.paths.push(GitMetadataPath {
                role,
                lexical,
                protect,
            });
        }
    }

    /// Every path to protect, in order.
    pub fn protected_paths(&self) -> impl Iterator<Item = &Path> {
        self.paths.iter().map(|p| p.protect.path())
    }
}

/// The metadata locations of the repository whose `.git` entry is `dot_git` (a directory or a
/// pointer file; anything else, or nothing, has none).
///
/// # Errors
/// [`GitMetadataError`] when the pointer or a `commondir` file exists but cannot be read.
pub fn git_metadata(dot_git: &Path) -> Result<GitMetadata, GitMetadataError> {
    // A launch's plan asks about the same `.git` several times (writable roots, protected
    // metadata, `permissions show`): while a resolution memo is alive it is read once.
    thread_local! {
        static READ: crate::resolution_memo::MemoCache<PathBuf, GitMetadata> =
            const { std::cell::RefCell::new(None) };
    }
    crate::resolution_memo::remember(&READ, &dot_git.to_path_buf(), || read_git_metadata(dot_git))
}

fn read_git_metadata(dot_git: &Path) -> Result<GitMetadata, GitMetadataError> {
    let mut out = GitMetadata::default();
    // Git follows a `.git` symlink.
    let Ok(meta) = std::fs::metadata(dot_git) else {
        return Ok(out);
    };
    let git_dir = if meta.is_file() {
        let bytes = match read_bounded(dot_git)? {
            None => return Ok(out),
            Some(Ok(bytes)) => bytes,
            Some(Err(why)) => {
                out.invalid = Some(why);
                return Ok(out);
            }
        };
        let written = match parse_git_file(&bytes) {
            Ok(written) => written,
            Err(why) => {
                out.invalid = Some(format!("{}: {why}", dot_git.display()));
                return Ok(out);
            }
        };
        let base = dot_git.parent().unwrap_or(Path::new("/"));
        let lexical = join_lexically(base, &written);
        out.add(GitMetadataRole::GitDir, lexical.clone());
        lexical
    } else if meta.is_dir() {
        dot_git.to_path_buf()
    } else {
        return Ok(out);
    };
    let mut dirs = vec![git_dir.clone()];
    let commondir = read_bounded(&git_dir.join("commondir"))?;
    if let Some(Err(why)) = &commondir {
        // git cannot use this repository; its `.git` entry is protected as it is.
        out.invalid = Some(why.clone());
        return Ok(out);
    }
    if let Some(Ok(bytes)) = commondir {
        match parse_commondir(&bytes) {
            Ok(written) => {
                let lexical = join_lexically(&git_dir, &written);
                out.add(GitMetadataRole::CommonDir, lexical.clone());
                dirs.push(lexical);
            }
            Err(why) => {
                out.invalid = Some(format!("{}: {why}", git_dir.join("commondir").display()));
            }
        }
    }
    for dir in &dirs {
        for name in LINKED_METADATA_NAMES {
            let entry = dir.join(name);
            if let Ok(target) = std::fs::read_link(&entry) {
                out.add(
                    GitMetadataRole::LinkedEntry,
                    join_lexically(dir, target.as_os_str()),
                );
            }
        }
    }
    if let Some(common) = dirs.last() {
        add_linked_worktrees(&mut out, common);
    }
    // Where hooks run and relative `core.hooksPath` values start.
    let worktree = dot_git.parent().unwrap_or(Path::new("/"));
    let mut configs: Vec<(PathBuf, usize)> = dirs
        .iter()
        .flat_map(|dir| [dir.join("config"), dir.join("config.worktree")])
        .map(|path| (path, 0))
        .collect();
    let mut read = 0;
    while let Some((config, depth)) = configs.pop() {
        read += 1;
        if read > MAX_CONFIG_FILES {
            break;
        }
        // An include that cannot be read is still protected (above); only its own
        // includes stay unknown, and git cannot read them either.
        let Ok(Some(Ok(bytes))) = read_bounded(&config) else {
            continue;
        };
        let base = config.parent().unwrap_or(Path::new("/"));
        for written in hooks_paths(&bytes) {
            let Some(lexical) = include_target(worktree, &os_string(&written)) else {
                continue;
            };
            if !normalize_lexically(&lexical).starts_with(worktree) {
                out.add(GitMetadataRole::HooksPath, lexical);
            }
        }
        for written in include_paths(&bytes) {
            let Some(lexical) = include_target(base, &os_string(&written)) else {
                continue;
            };
            out.add(GitMetadataRole::IncludedConfig, lexical.clone());
            if depth + 1 < MAX_INCLUDE_DEPTH {
                configs.push((lexical, depth + 1));
            }
        }
    }
    Ok(out)
}

/// The `.git` files named by `common/worktrees/*/gitdir` (absolute, or relative to the
/// administrative directory with `worktree.useRelativePaths`).
fn add_linked_worktrees(out: &mut GitMetadata, common: &Path) {
    let Ok(entries) = std::fs::read_dir(common.join("worktrees")) else {
        return;
    };
    for entry in entries.flatten().take(MAX_LINKED_WORKTREES) {
        let admin = entry.path();
        let Ok(Some(Ok(bytes))) = read_bounded(&admin.join("gitdir")) else {
            continue;
        };
        if let Ok(written) = parse_commondir(&bytes)
            && !written.is_empty()
        {
            out.add(
                GitMetadataRole::LinkedWorktree,
                join_lexically(&admin, &written),
            );
        }
    }
}

/// Where git looks for an included file: `~/` against `$HOME`, relative paths against the
/// including file's directory. `None` for an empty value or `~` without a home.
fn include_target(base: &Path, written: &OsStr) -> Option<PathBuf> {
    let text = written.to_string_lossy();
    if text.is_empty() {
        return None;
    }
    if let Some(rest) = text.strip_prefix("~/") {
        let home = std::env::var_os("HOME")?;
        return Some(Path::new(&home).join(rest));
    }
    Some(join_lexically(base, written))
}

/// The `.git` entries above a writable root that git's discovery reaches from inside it
/// (git walks up from a directory without `.git`), as far as a sandboxed command could
/// change or create them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnclosingGit {
    /// Missing `.git` names in directories inside a writable root, between the root and the
    /// first existing `.git` above it: creating one would give git a repository of the
    /// command's making.
    pub missing: Vec<PathBuf>,
    /// `.git` directories on the way that git passes over (no `HEAD`: not a git directory)
    /// and that lie inside a writable root: filled in, they would become the repository git
    /// finds.
    pub skipped: Vec<PathBuf>,
    /// The first `.git` entry above the root that git would use (wherever it is: its git
    /// locations may still lie in a writable root).
    pub existing: Option<PathBuf>,
}

/// Walks up from `root`'s parent (`root` and `writable_roots` canonical); see [`EnclosingGit`].
#[must_use]
pub fn enclosing_git_entries(root: &Path, writable_roots: &[PathBuf]) -> EnclosingGit {
    let mut out = EnclosingGit::default();
    for dir in root.ancestors().skip(1) {
        let dot_git = dir.join(".git");
        let writable = writable_roots.iter().any(|r| dir.starts_with(r));
        match std::fs::symlink_metadata(&dot_git) {
            Ok(meta)
                if meta.is_dir() && std::fs::symlink_metadata(dot_git.join("HEAD")).is_err() =>
            {
                if writable {
                    out.skipped.push(dot_git);
                }
            }
            Ok(_) => {
                out.existing = Some(dot_git);
                break;
            }
            Err(_) if writable => out.missing.push(dot_git),
            Err(_) => {}
        }
    }
    out
}

#[cfg(all(test, unix))]
#[path = "git_metadata_tests.rs"]
mod tests;
