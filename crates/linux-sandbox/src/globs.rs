//! Expanding deny-read globs into concrete paths before the sandbox starts
//! (spec 05 §Linux step 1, issue 4 item 2).
//!
//! bubblewrap can only mask paths that exist at launch, so every deny glob is
//! expanded by walking the directory that precedes its first wildcard. The walk does
//! not follow symlinked directories (a link could lead anywhere, including in
//! circles), matches files, directories and symlinks, stops descending into a
//! matched directory (the whole directory gets masked), and masks a matched
//! symlink's target too. Limits fail closed: more than [`MAX_GLOB_MATCHES`] matches,
//! or a pattern without a fixed directory to start from, is an error rather than a
//! partially masked view. Files created after launch are not masked by bubblewrap;
//! in-process readers still consult the patterns (`ReadDenyMatcher`).

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// At most this many paths are masked per launch (Codex's limit).
pub const MAX_GLOB_MATCHES: usize = 8192;

/// Why deny globs could not be expanded.
#[derive(Debug, thiserror::Error)]
pub enum GlobExpandError {
    /// The pattern is not a valid glob.
    #[error(
        "deny-read glob `{pattern}` is invalid: {message}; fix the pattern in the permission profile"
    )]
    Invalid {
        /// The pattern.
        pattern: String,
        /// globset's explanation.
        message: String,
    },
    /// The pattern starts with a wildcard, so the whole filesystem would have to be scanned.
    #[error(
        "deny-read glob `{pattern}` has no fixed directory before its first wildcard, so it cannot be expanded before the command starts; anchor it under a directory (for example under `:workspace_roots`)"
    )]
    Unanchored {
        /// The pattern.
        pattern: String,
    },
    /// A directory below a pattern's prefix cannot be listed.
    #[error(
        "cannot expand deny-read globs: {dir} cannot be listed ({source}); make it readable so Airlock can mask what it contains"
    )]
    Unreadable {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Too many matches to mask.
    #[error(
        "deny-read globs matched more than {limit} paths under {root}; narrow the patterns or lower `glob_scan_max_depth`"
    )]
    TooManyMatches {
        /// The limit.
        limit: usize,
        /// The directory being scanned when the limit was hit.
        root: PathBuf,
    },
}

/// The part of `pattern` before its first wildcard, cut back to a directory.
fn static_prefix(pattern: &str) -> Option<PathBuf> {
    let first_meta = pattern.find(['*', '?', '[', '{']).unwrap_or(pattern.len());
    let head = &pattern[..first_meta];
    let dir = match head.rfind('/') {
        Some(0) | None => return None,
        Some(i) => &head[..i],
    };
    Some(PathBuf::from(dir))
}

fn compile(patterns: &[&String]) -> Result<GlobSet, GlobExpandError> {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| GlobExpandError::Invalid {
                pattern: (*pattern).clone(),
                message: e.kind().to_string(),
            })?;
        set.add(glob);
    }
    set.build().map_err(|e| GlobExpandError::Invalid {
        pattern: patterns
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        message: e.to_string(),
    })
}

/// Every existing path matching one of `patterns` (absolute globs), plus the targets
/// of matching symlinks, sorted and deduplicated. `max_depth` bounds how many
/// directory levels below a pattern's fixed prefix are scanned (`None`: unbounded).
///
/// # Errors
/// [`GlobExpandError`] for an invalid or unanchored pattern or too many matches.
pub fn expand_deny_globs(
    patterns: &[String],
    max_depth: Option<NonZeroUsize>,
) -> Result<Vec<PathBuf>, GlobExpandError> {
    let mut by_root: Vec<(PathBuf, Vec<&String>)> = Vec::new();
    for pattern in patterns {
        let root = static_prefix(pattern).ok_or_else(|| GlobExpandError::Unanchored {
            pattern: pattern.clone(),
        })?;
        match by_root.iter_mut().find(|(r, _)| *r == root) {
            Some((_, list)) => list.push(pattern),
            None => by_root.push((root, vec![pattern])),
        }
    }
    let mut found = Vec::new();
    for (root, group) in &by_root {
        let set = compile(group)?;
        walk(root, &set, max_depth.map(NonZeroUsize::get), &mut found)?;
    }
    found.sort();
    found.dedup();
    Ok(found)
}

fn walk(
    root: &Path,
    set: &GlobSet,
    max_depth: Option<usize>,
    found: &mut Vec<PathBuf>,
) -> Result<(), GlobExpandError> {
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        if max_depth.is_some_and(|max| depth >= max) {
            continue;
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            // A directory the launcher cannot list may hide matches (`chmod 000` by an
            // earlier sandboxed command): fail closed instead of masking too little.
            Err(source) => return Err(GlobExpandError::Unreadable { dir, source }),
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            if set.is_match(&path) {
                found.push(path.clone());
                if file_type.is_symlink()
                    && let Ok(target) = airlock_permissions::resolution_memo::canonicalize(&path)
                {
                    found.push(target);
                }
                if found.len() > MAX_GLOB_MATCHES {
                    return Err(GlobExpandError::TooManyMatches {
                        limit: MAX_GLOB_MATCHES,
                        root: root.to_path_buf(),
                    });
                }
                continue; // a matched directory is masked whole
            }
            if file_type.is_dir() {
                stack.push((path, depth + 1));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "secret").unwrap();
    }

    #[test]
    fn prefixes() {
        assert_eq!(static_prefix("/w/**/*.env"), Some(PathBuf::from("/w")));
        assert_eq!(static_prefix("/w/a/b*.key"), Some(PathBuf::from("/w/a")));
        assert_eq!(static_prefix("/**/*.env"), None);
        assert_eq!(static_prefix("*.env"), None);
    }

    #[test]
    fn expands_at_every_depth_and_respects_the_depth_limit() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        for rel in [
            ".env",
            "a/.env",
            "a/b/c/d/e/f/.env",
            "a/app.env.bak",
            "a/x.txt",
        ] {
            touch(&base.join(rel));
        }
        let pattern = format!("{}/**/*.env", base.display());
        let all = expand_deny_globs(std::slice::from_ref(&pattern), None).unwrap();
        assert_eq!(
            all,
            vec![
                base.join(".env"),
                base.join("a/.env"),
                base.join("a/b/c/d/e/f/.env")
            ]
        );
        let shallow = expand_deny_globs(&[pattern], NonZeroUsize::new(2)).unwrap();
        assert_eq!(shallow, vec![base.join(".env"), base.join("a/.env")]);
    }

    #[test]
    fn masks_symlink_targets_and_does_not_follow_symlinked_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("ws");
        let outside = dir.path().join("outside");
        touch(&outside.join("real.key"));
        touch(&outside.join("deep/other.key"));
        std::fs::create_dir_all(&base).unwrap();
        std::os::unix::fs::symlink(outside.join("real.key"), base.join("link.key")).unwrap();
        std::os::unix::fs::symlink(&outside, base.join("dirlink")).unwrap();
        let found = expand_deny_globs(&[format!("{}/**/*.key", base.display())], None).unwrap();
        assert_eq!(
            found,
            vec![
                outside.join("real.key").canonicalize().unwrap(),
                base.join("link.key")
            ]
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
        );
    }

    #[test]
    fn errors_fail_closed() {
        assert!(matches!(
            expand_deny_globs(&["/**/*.env".into()], None),
            Err(GlobExpandError::Unanchored { .. })
        ));
        assert!(matches!(
            expand_deny_globs(&["/w/[a.env".into()], None),
            Err(GlobExpandError::Invalid { .. })
        ));
        let dir = tempfile::tempdir().unwrap();
        for i in 0..(MAX_GLOB_MATCHES + 1) {
            std::fs::write(dir.path().join(format!("{i}.env")), "").unwrap();
        }
        let err =
            expand_deny_globs(&[format!("{}/*.env", dir.path().display())], None).unwrap_err();
        assert!(err.to_string().contains("more than 8192"), "{err}");
    }
}
