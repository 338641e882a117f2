//! Host executables: binding bare program names to absolute paths, and resolving a
//! command's program token to an absolute path for basename fallback.
//!
//! Source of the rules: reference `execpolicy.md` §4.3 (validation) and §5.3
//! (resolution).

use std::path::{Component, Path, PathBuf};

use crate::error::RuleError;
use crate::rule::AbsolutePathBuf;

/// Resolves `.` and `..` (never above `/`), doubled slashes and a trailing slash
/// without touching the filesystem. Relative inputs stay relative.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                // `pop` on `/` is a no-op, which is exactly "never above the root".
                if !out.pop() && !out.has_root() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() && path.is_relative() {
        out.push(".");
    }
    out
}

/// Where relative and `~` program tokens are resolved from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolutionContext {
    /// The directory relative tokens are joined to (the process cwd for the CLI).
    pub cwd: Option<PathBuf>,
    /// `$HOME`, used for `~` and `~/...`.
    pub home: Option<PathBuf>,
}

impl ResolutionContext {
    /// The CLI's context: the current directory and `$HOME`.
    pub fn from_process() -> Self {
        Self {
            cwd: std::env::current_dir().ok(),
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
        }
    }

    /// Turns a program token into an absolute normalised path: `~`/`~/x` expand to
    /// `$HOME` (`~user` does not), anything relative joins the cwd. `None` when the
    /// needed directory is unknown.
    pub fn resolve(&self, token: &str) -> Option<AbsolutePathBuf> {
        let expanded: PathBuf = if token == "~" {
            self.home.clone()?
        } else if let Some(rest) = token.strip_prefix("~/") {
            // Concatenate rather than `join`: `~//git` must stay under `$HOME`.
            let mut joined = self.home.clone()?.into_os_string();
            joined.push("/");
            joined.push(rest);
            PathBuf::from(joined)
        } else {
            PathBuf::from(token)
        };
        if expanded.is_absolute() {
            AbsolutePathBuf::new(&expanded)
        } else {
            AbsolutePathBuf::new(&self.cwd.as_ref()?.join(expanded))
        }
    }
}

/// Checks the `name` of `host_executable`: non-empty and a bare file name.
///
/// # Errors
/// `invalid rule: host_executable name cannot be empty` or
/// `invalid rule: host_executable name must be a bare executable name (got X)`.
pub fn validate_host_executable_name(name: &str) -> Result<(), RuleError> {
    if name.is_empty() {
        return Err(RuleError::InvalidRule(
            "host_executable name cannot be empty".into(),
        ));
    }
    let mut components = Path::new(name).components();
    let bare = matches!(
        (components.next(), components.next()),
        (Some(Component::Normal(c)), None) if c == name
    );
    if !bare {
        return Err(RuleError::InvalidRule(format!(
            "host_executable name must be a bare executable name (got {name})"
        )));
    }
    Ok(())
}

/// Checks one path of `host_executable(name, paths)`: absolute (`~` is not), and with
/// final component exactly `name` after lexical normalisation. Returns the
/// normalised path.
///
/// # Errors
/// `invalid rule: host_executable paths must be absolute (got X)` or
/// ``invalid rule: host_executable path `X` must have basename `name` ``.
pub fn validate_host_executable_path(name: &str, raw: &str) -> Result<AbsolutePathBuf, RuleError> {
    let path = AbsolutePathBuf::new(Path::new(raw)).ok_or_else(|| {
        RuleError::InvalidRule(format!(
            "host_executable paths must be absolute (got {raw})"
        ))
    })?;
    if path.as_path().file_name().and_then(|n| n.to_str()) != Some(name) {
        return Err(RuleError::InvalidRule(format!(
            "host_executable path `{raw}` must have basename `{name}`"
        )));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> ResolutionContext {
        ResolutionContext {
            cwd: Some("/tmp/work".into()),
            home: Some("/home/oracle".into()),
        }
    }

    fn resolved(token: &str) -> Option<String> {
        ctx()
            .resolve(token)
            .map(|p| p.as_path().display().to_string())
    }

    #[test]
    fn normalises_without_touching_disk() {
        assert_eq!(
            normalize_lexically(Path::new("/usr/bin/../bin//git/")),
            Path::new("/usr/bin/git")
        );
        assert_eq!(normalize_lexically(Path::new("/../..")), Path::new("/"));
        assert_eq!(normalize_lexically(Path::new("/a/./b")), Path::new("/a/b"));
    }

    #[test]
    fn resolves_relative_tilde_and_dots() {
        assert_eq!(resolved("git").as_deref(), Some("/tmp/work/git"));
        assert_eq!(resolved("bin/git").as_deref(), Some("/tmp/work/bin/git"));
        assert_eq!(resolved(".").as_deref(), Some("/tmp/work"));
        assert_eq!(resolved("..").as_deref(), Some("/tmp"));
        assert_eq!(resolved("~").as_deref(), Some("/home/oracle"));
        assert_eq!(resolved("~/bin/az").as_deref(), Some("/home/oracle/bin/az"));
        assert_eq!(resolved("~//git").as_deref(), Some("/home/oracle/git"));
        assert_eq!(resolved("~other/x").as_deref(), Some("/tmp/work/~other/x"));
        assert_eq!(
            resolved("/usr/bin/../bin/git").as_deref(),
            Some("/usr/bin/git")
        );
    }

    #[test]
    fn validates_names() {
        assert!(validate_host_executable_name("git").is_ok());
        assert_eq!(
            validate_host_executable_name("").unwrap_err().to_string(),
            "invalid rule: host_executable name cannot be empty"
        );
        for bad in ["bin/git", ".", "..", "/git"] {
            assert_eq!(
                validate_host_executable_name(bad).unwrap_err().to_string(),
                format!(
                    "invalid rule: host_executable name must be a bare executable name (got {bad})"
                )
            );
        }
    }

    #[test]
    fn validates_paths() {
        assert_eq!(
            validate_host_executable_path("git", "/usr/bin/../bin/git")
                .unwrap()
                .as_path(),
            Path::new("/usr/bin/git")
        );
        assert_eq!(
            validate_host_executable_path("git", "usr/bin/git")
                .unwrap_err()
                .to_string(),
            "invalid rule: host_executable paths must be absolute (got usr/bin/git)"
        );
        assert_eq!(
            validate_host_executable_path("az", "~/.openai/bin/az")
                .unwrap_err()
                .to_string(),
            "invalid rule: host_executable paths must be absolute (got ~/.openai/bin/az)"
        );
        assert_eq!(
            validate_host_executable_path("git", "/")
                .unwrap_err()
                .to_string(),
            "invalid rule: host_executable path `/` must have basename `git`"
        );
        assert_eq!(
            validate_host_executable_path("git", "/usr/bin/git2")
                .unwrap_err()
                .to_string(),
            "invalid rule: host_executable path `/usr/bin/git2` must have basename `git`"
        );
    }
}
