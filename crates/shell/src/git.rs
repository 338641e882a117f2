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

/// What a `git` argv with global options runs, for the deny view (issue 18 item 4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GitRuns {
    /// `[git, subcommand, args...]` with the global options skipped and a `-c alias.*`
    /// alias replaced by its words.
    Command(Vec<String>),
    /// A `!`-alias: the shell script git hands to `sh -c` (its arguments appended).
    Script(String),
    /// An alias whose value is not on the command line (`--config-env=alias.x=VAR`).
    Unknown,
}

/// How many aliases that expand to aliases are followed.
const MAX_ALIAS_EXPANSIONS: usize = 8;

/// What `argv` runs when it is `git` with global options before the subcommand
/// (`git -C . push`, `git --git-dir=.git push`, `git -c alias.x=push x`); `None` for any
/// other argv, or when there are no global options (the argv itself is what rules see).
pub(crate) fn git_runs(argv: &[String]) -> Option<GitRuns> {
    if argv
        .first()
        .is_none_or(|program| crate::deny::basename(program) != "git")
    {
        return None;
    }
    let git = split_git(argv);
    if git.globals.is_empty() {
        return None;
    }
    let subcommand = git.subcommand?;
    let (aliases, from_environment) = command_line_aliases(git.globals);
    let mut words: Vec<String> = vec![subcommand.to_owned()];
    words.extend(git.args.iter().cloned());
    for _ in 0..MAX_ALIAS_EXPANSIONS {
        let Some(name) = words.first() else { break };
        let name = name.to_ascii_lowercase();
        if from_environment.contains(&name) {
            return Some(GitRuns::Unknown);
        }
        let Some((_, value)) = aliases.iter().rev().find(|(alias, _)| *alias == name) else {
            break;
        };
        let rest = words.get(1..).unwrap_or_default().to_vec();
        if let Some(script) = value.strip_prefix('!') {
            let mut script = script.to_owned();
            for arg in &rest {
                script.push(' ');
                script.push_str(
                    &shlex::try_quote(arg)
                        .map(|q| q.into_owned())
                        .unwrap_or_default(),
                );
            }
            return Some(GitRuns::Script(script));
        }
        let Some(mut expanded) = shlex::split(value) else {
            return Some(GitRuns::Unknown);
        };
        expanded.extend(rest);
        words = expanded;
    }
    let mut command = vec![argv.first()?.clone()];
    command.extend(words);
    Some(GitRuns::Command(command))
}

/// The `alias.NAME=VALUE` pairs given with `-c` (names lower-cased, as git compares
/// them), and the alias names given with `--config-env`, whose values are not here.
fn command_line_aliases(globals: &[String]) -> (Vec<(String, String)>, Vec<String>) {
    let mut aliases = Vec::new();
    let mut from_environment = Vec::new();
    let mut index = 0;
    while let Some(token) = globals.get(index) {
        index += 1;
        let (setting, environment) = match token.as_str() {
            "-c" => (globals.get(index).map(String::as_str), false),
            "--config-env" => (globals.get(index).map(String::as_str), true),
            other => match other.strip_prefix("--config-env=") {
                Some(value) => (Some(value), true),
                None => (
                    other.strip_prefix("-c").filter(|glued| !glued.is_empty()),
                    false,
                ),
            },
        };
        if matches!(token.as_str(), "-c" | "--config-env") {
            index += 1;
        }
        let Some(setting) = setting else { continue };
        let Some((key, value)) = setting.split_once('=') else {
            continue;
        };
        let key = key.to_ascii_lowercase();
        let Some(name) = key.strip_prefix("alias.") else {
            continue;
        };
        if environment {
            from_environment.push(name.to_owned());
        } else {
            aliases.push((name.to_owned(), value.to_owned()));
        }
    }
    (aliases, from_environment)
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
    fn global_options_are_skipped_and_aliases_resolved() {
        let runs = |words: &[&str]| git_runs(&argv(words));
        assert_eq!(
            runs(&["git", "-C", ".", "push"]),
            Some(GitRuns::Command(argv(&["git", "push"])))
        );
        assert_eq!(
            runs(&["git", "--git-dir=.git", "--work-tree", ".", "push", "-f"]),
            Some(GitRuns::Command(argv(&["git", "push", "-f"])))
        );
        assert_eq!(
            runs(&["git", "-c", "alias.x=push --force", "x", "origin"]),
            Some(GitRuns::Command(argv(&[
                "git", "push", "--force", "origin"
            ])))
        );
        assert_eq!(
            runs(&["git", "-c", "alias.y=push", "-c", "alias.X=y", "x"]),
            Some(GitRuns::Command(argv(&["git", "push"])))
        );
        assert_eq!(
            runs(&["git", "-c", "alias.x=!rm -rf ~", "x", "a b"]),
            Some(GitRuns::Script("rm -rf ~ 'a b'".to_owned()))
        );
        assert_eq!(
            runs(&["git", "--config-env=alias.x=CMD", "x"]),
            Some(GitRuns::Unknown)
        );
        assert_eq!(runs(&["git", "push"]), None);
        assert_eq!(runs(&["gitx", "-C", ".", "push"]), None);
    }

    #[test]
    fn no_subcommand() {
        let command = argv(&["git", "--version"]);
        let split = split_git(&command);
        assert_eq!(split.subcommand, None);
        assert!(split.args.is_empty());
    }
}
