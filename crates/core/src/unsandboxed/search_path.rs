//! `PATH` as seen by a command that leaves the sandbox (red-team review of issue 11):
//! whatever runs unconfined looks up the programs it starts by name (git's `ssh`, its
//! pager and credential helpers, the tools a hook calls, a build tool's compilers) in
//! `PATH`, so an entry the sandbox can write, or one relative to the working directory,
//! lets a confined run plant them. Airlock's own check of the first program
//! (`requirement::program`) is not enough: the programs *it* starts matter too.

use std::path::Path;

/// Why `path` (a `PATH` value) makes an unsandboxed run unsafe: its first entry that is
/// empty or relative (the working directory), or that `writable` says the sandbox can
/// write, as spelled or with symlinks resolved. `None` when every entry is safe.
pub(super) fn writable_entry(
    path: Option<&str>,
    writable: &dyn Fn(&Path) -> bool,
) -> Option<String> {
    let path = path?;
    path.split(':').find_map(|entry| {
        if entry.is_empty() || !Path::new(entry).is_absolute() {
            return Some(format!(
                "PATH lists {entry:?}, the working directory, which the sandbox can write: outside the sandbox any program run by name could be one a sandboxed command planted there"
            ));
        }
        let spelled = Path::new(entry);
        let resolved = std::fs::canonicalize(spelled).unwrap_or_else(|_| spelled.to_path_buf());
        (writable(spelled) || writable(&resolved)).then(|| {
            format!(
                "PATH lists {entry}, which is writable inside the sandbox: outside the sandbox any program run by name could be one a sandboxed command planted there (remove it from PATH to let commands leave the sandbox)"
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_empty_and_writable_entries_are_named() {
        let writable = |p: &Path| p.starts_with("/tmp");
        assert_eq!(writable_entry(Some("/usr/bin:/bin"), &writable), None);
        assert_eq!(writable_entry(None, &writable), None);
        for path in [
            "/usr/bin::/bin",
            "bin:/usr/bin",
            "/usr/bin:/tmp/x",
            ".:/bin",
        ] {
            assert!(writable_entry(Some(path), &writable).is_some(), "{path}");
        }
        assert!(
            writable_entry(Some("/bin:/tmp/x/y"), &writable)
                .is_some_and(|why| why.contains("/tmp/x/y"))
        );
    }
}
