//! Reading a `git` argv: global options, subcommand, subcommand arguments.
//!
//! Shared by the known-safe check (reference §4, spec 03 edge case 9) and the dangerous
//! patterns (spec 03 edge case 8), which both skip git's global options.

/// Global options of git that take a separate value (reference §4).
const GLOBAL_WITH_VALUE: &[&str] = &[
    "-C",
    "-c",
    "--config-env",
    "--exec-path",
    "--git-dir",
    "--namespace",
    "--super-prefix",
    "--work-tree",
];

/// A git argv split at its subcommand.
pub(crate) struct GitInvocation<'a> {
    /// Global option tokens between `git` and the subcommand (values included).
    pub globals: &'a [String],
    /// The subcommand, if any.
    pub subcommand: Option<&'a str>,
    /// Tokens after the subcommand.
    pub args: &'a [String],
}

/// Splits `argv` (whose first token is the git program) at the first token that is not
/// a global option or an option value.
pub(crate) fn split_git(argv: &[String]) -> GitInvocation<'_> {
    let mut index = 1;
    while let Some(token) = argv.get(index) {
        if GLOBAL_WITH_VALUE.contains(&token.as_str()) {
            index += 2;
        } else if token.starts_with('-') {
            // `--opt=value`, glued `-Cdir`/`-ckey=value`, flags and `--` are one token.
            index += 1;
        } else {
            break;
        }
    }
    let globals = argv.get(1..index.min(argv.len())).unwrap_or_default();
    match argv.get(index) {
        Some(subcommand) => GitInvocation {
            globals,
            subcommand: Some(subcommand),
            args: argv.get(index + 1..).unwrap_or_default(),
        },
        None => GitInvocation {
            globals,
            subcommand: None,
            args: &[],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| (*word).to_owned()).collect()
    }

    #[test]
    fn skips_global_options_and_their_values() {
        let command = argv(&[
            "git",
            "-C",
            "repo",
            "-c",
            "a=b",
            "--git-dir=.git",
            "-p",
            "log",
            "-1",
        ]);
        let split = split_git(&command);
        assert_eq!(split.globals.len(), 6);
        assert_eq!(split.subcommand, Some("log"));
        assert_eq!(split.args, &argv(&["-1"])[..]);
    }

    #[test]
    fn no_subcommand() {
        let command = argv(&["git", "--version"]);
        let split = split_git(&command);
        assert_eq!(split.subcommand, None);
        assert!(split.args.is_empty());
    }
}
