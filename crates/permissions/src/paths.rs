//! Path helpers shared by compilation, resolution and queries: `~` expansion, lexical
//! normalisation, glob detection, subpath validation and the TOML key spelling used in errors.

use std::path::Component;
use std::path::Path;
use std::path::PathBuf;

/// Characters that make a filesystem key a glob (reference `permissions-config.md` §3).
const GLOB_CHARS: [char; 4] = ['*', '?', '[', ']'];

/// Whether `text` contains a glob metacharacter.
pub(crate) fn is_glob(text: &str) -> bool {
    text.contains(GLOB_CHARS)
}

/// Expands a leading `~` or `~/` against `home`; `Ok(None)` when the text does not start with `~`.
/// `Err(())` when it does and `home` is unknown.
pub(crate) fn expand_home(text: &str, home: Option<&Path>) -> Result<Option<PathBuf>, ()> {
    let rest = if text == "~" {
        ""
    } else if let Some(rest) = text.strip_prefix("~/") {
        rest
    } else {
        return Ok(None);
    };
    let home = home.ok_or(())?;
    Ok(Some(if rest.is_empty() {
        home.to_path_buf()
    } else {
        home.join(rest)
    }))
}

/// Removes `.` components and folds `..` into the parent, without touching the filesystem.
/// `..` above the root stays at the root. Relative inputs stay relative.
#[must_use]
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && !path.is_absolute() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `path` made absolute against `cwd` and normalised lexically.
#[must_use]
pub fn absolutize(path: &Path, cwd: &Path) -> PathBuf {
    if path.is_absolute() {
        normalize_lexically(path)
    } else {
        normalize_lexically(&cwd.join(path))
    }
}

/// Whether a scoped subpath is acceptable: non-empty, relative, and made only of normal
/// components (no `.`, `..`, root or prefix) — reference `permissions-config.md` §3.
pub(crate) fn is_valid_subpath(subpath: &str) -> bool {
    if subpath.is_empty() || subpath.starts_with('/') {
        return false;
    }
    // `Path::components` silently drops inner `.` segments, so check the raw segments too.
    let raw_ok = subpath
        .split('/')
        .all(|segment| segment != "." && segment != "..");
    raw_ok
        && Path::new(subpath)
            .components()
            .all(|component| matches!(component, Component::Normal(_)))
}

/// Number of components, the specificity of an entry (spec 04 §Types).
pub(crate) fn depth(path: &Path) -> usize {
    path.components().count()
}

/// `path` canonicalised when it exists, else normalised lexically (symlink-aware dedup).
pub(crate) fn canonical_or_lexical(path: &Path) -> PathBuf {
    crate::resolution_memo::canonicalize(path).unwrap_or_else(|_| normalize_lexically(path))
}

/// Joins a relative glob pattern onto a root: `/ws` + `**/*.env` → `/ws/**/*.env`.
pub(crate) fn join_pattern(root: &Path, pattern: &str) -> String {
    let root = root.to_string_lossy();
    format!("{}/{}", root.trim_end_matches('/'), pattern)
}

/// A TOML key as it would be written in a dotted path (quoted unless bare-safe).
pub(crate) fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_owned()
    } else {
        format!("\"{}\"", key.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// Dotted key path for error messages, e.g. `permissions.dev.filesystem."/tmp"`.
pub(crate) fn key_path(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|part| toml_key(part))
        .collect::<Vec<_>>()
        .join(".")
}
