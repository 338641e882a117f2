//! Search paths in the environment of a command that leaves the sandbox (red-team review
//! of issue 11): whatever runs unconfined looks up the programs it starts by name (git's
//! `ssh`, its pager and credential helpers, the tools a hook calls, a build tool's
//! compilers) in `PATH`, its shared libraries in `LD_LIBRARY_PATH`/`LD_PRELOAD`, and an
//! interpreter its modules in `PYTHONPATH` and the like. An entry the sandbox can write,
//! or one relative to the working directory (empty entries included), lets a confined
//! run plant them. Airlock's own check of the first program (`requirement::program`) is
//! not enough: the programs and libraries *it* loads matter too.

use std::path::Path;

/// Variables naming where programs, libraries or modules are loaded from, with the
/// separator of their lists.
pub(super) const SEARCH_VARIABLES: &[(&str, &[char])] = &[
    ("PATH", &[':']),
    ("LD_LIBRARY_PATH", &[':', ';']),
    ("LD_PRELOAD", &[':', ' ']),
    ("LD_AUDIT", &[':']),
    ("GIT_EXEC_PATH", &[':']),
    ("GIT_TEMPLATE_DIR", &[]),
    ("PYTHONPATH", &[':']),
    ("PYTHONSTARTUP", &[]),
    ("NODE_PATH", &[':']),
    ("PERL5LIB", &[':']),
    ("PERLLIB", &[':']),
    ("RUBYLIB", &[':']),
    ("BASH_ENV", &[]),
    ("ENV", &[]),
];

/// Why `env` makes an unsandboxed run unsafe: the first entry of a [`SEARCH_VARIABLES`]
/// variable that is empty or relative (the working directory, which the sandbox can
/// write; `PATH` as the shell reads it), or that `writable` says the sandbox can write, as
/// spelled or with symlinks resolved. `None` when every entry is safe.
pub(super) fn writable_entry(
    env: &dyn Fn(&str) -> Option<String>,
    writable: &dyn Fn(&Path) -> bool,
) -> Option<String> {
    SEARCH_VARIABLES.iter().find_map(|(name, separators)| {
        let value = env(name)?;
        // Dynamic loader lists skip empty entries only for LD_PRELOAD; a lone variable
        // that is set but empty names nothing.
        if value.is_empty() && *name != "PATH" {
            return None;
        }
        let entries: Vec<&str> = if separators.is_empty() {
            vec![value.as_str()]
        } else {
            value.split(*separators).collect()
        };
        entries.into_iter().find_map(|entry| {
            if entry.is_empty() && *name == "LD_PRELOAD" {
                return None;
            }
            if entry.is_empty() || !Path::new(entry).is_absolute() {
                return Some(format!(
                    "{name} lists {entry:?}, relative to the working directory, which the sandbox can write: outside the sandbox what is loaded from it could be what a sandboxed command planted"
                ));
            }
            let spelled = Path::new(entry);
            let resolved =
                std::fs::canonicalize(spelled).unwrap_or_else(|_| spelled.to_path_buf());
            (writable(spelled) || writable(&resolved)).then(|| {
                format!(
                    "{name} lists {entry}, which is writable inside the sandbox: outside the sandbox what is loaded from it could be what a sandboxed command planted (remove it from {name} to let commands leave the sandbox)"
                )
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &'static str, value: &'static str) -> Option<String> {
        let writable = |p: &Path| p.starts_with("/tmp");
        let env = move |key: &str| (key == name).then(|| value.to_owned());
        writable_entry(&env, &writable)
    }

    #[test]
    fn relative_empty_and_writable_entries_are_named() {
        assert_eq!(check("PATH", "/usr/bin:/bin"), None);
        assert_eq!(check("NOTHING", "/tmp"), None);
        for path in [
            "/usr/bin::/bin",
            "bin:/usr/bin",
            "/usr/bin:/tmp/x",
            ".:/bin",
            "",
        ] {
            assert!(check("PATH", path).is_some(), "{path}");
        }
        assert!(check("PATH", "/bin:/tmp/x/y").is_some_and(|why| why.contains("/tmp/x/y")));
        assert!(check("LD_PRELOAD", "/tmp/evil.so").is_some());
        assert_eq!(check("LD_PRELOAD", "/usr/lib/x.so  /lib/y.so"), None);
        assert!(check("LD_LIBRARY_PATH", "/usr/lib:").is_some());
        assert!(check("PYTHONPATH", "/tmp/site").is_some());
        assert!(check("BASH_ENV", "/tmp/rc").is_some());
        assert_eq!(check("BASH_ENV", ""), None);
    }
}
