//! Dangerous commands (`command_might_be_dangerous`): destructive commands that always
//! need a person, even where the sandbox would otherwise be trusted (spec 03
//! "Dangerous commands", edge cases 7 and 8, reference §5).
//!
//! All patterns live in one table, [`DANGER_PATTERNS`]. Each is checked against every
//! command of the deny view, so wrappers (`sudo -u root rm -rf /`, `timeout 5 rm -rf x`),
//! subshells and substitutions are covered without per-pattern recursion (edge case 7).

use std::fmt;

use crate::deny::{InnerCommand, basename, deny_view};
use crate::git::split_git;

/// One dangerous-command pattern.
#[derive(Clone, Copy)]
pub struct DangerPattern {
    /// Stable identifier (`rm-recursive-force`, ...), used in reasons and tests.
    pub id: &'static str,
    /// What the pattern flags, for people.
    pub description: &'static str,
    /// Where the rule comes from.
    pub source: &'static str,
    matches: fn(&[String]) -> bool,
}

impl DangerPattern {
    /// Whether this pattern flags `argv` itself (no unwrapping; the program is matched
    /// by basename, spec 03 edge case 8).
    pub fn matches(&self, argv: &[String]) -> bool {
        (self.matches)(argv)
    }
}

impl fmt::Debug for DangerPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DangerPattern")
            .field("id", &self.id)
            .finish()
    }
}

impl PartialEq for DangerPattern {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for DangerPattern {}

/// Every dangerous-command pattern (spec 03 "Dangerous commands", edge case 8).
pub const DANGER_PATTERNS: &[DangerPattern] = &[
    DangerPattern {
        id: "rm-force-first",
        description: "rm whose first argument is -f or -rf",
        source: "Codex baseline (reference §5)",
        matches: rm_force_first,
    },
    DangerPattern {
        id: "rm-recursive-force",
        description: "rm with both recursive and force flags, in any spelling",
        source: "spec 03 Dangerous commands",
        matches: rm_recursive_force,
    },
    DangerPattern {
        id: "find-delete",
        description: "find -delete (removes every file it matches, like rm -rf)",
        source: "issue 18 item 2 (field log BL-03)",
        matches: find_delete,
    },
    DangerPattern {
        id: "git-reset-hard",
        description: "git reset --hard",
        source: "spec 03 Dangerous commands",
        matches: git_reset_hard,
    },
    DangerPattern {
        id: "git-clean-force",
        description: "git clean with -f (in any short-option cluster) or --force",
        source: "spec 03 Dangerous commands, edge case 8",
        matches: git_clean_force,
    },
    DangerPattern {
        id: "git-push-force",
        description: "git push --force, -f, --force-with-lease or a +refspec",
        source: "spec 03 Dangerous commands, edge case 8",
        matches: git_push_force,
    },
    DangerPattern {
        id: "dd-output",
        description: "dd writing to a file or device (of=)",
        source: "spec 03 Dangerous commands",
        matches: dd_output,
    },
    DangerPattern {
        id: "mkfs",
        description: "mkfs and mkfs.* (formats a filesystem)",
        source: "spec 03 Dangerous commands",
        matches: mkfs,
    },
    DangerPattern {
        id: "recursive-chmod-chown-root-or-home",
        description: "chmod -R or chown -R on /, /*, ~, ~/, $HOME or ${HOME}",
        source: "spec 03 Dangerous commands, edge case 8",
        matches: recursive_chmod_chown_root_or_home,
    },
    DangerPattern {
        id: "shred",
        description: "shred (destroys file contents)",
        source: "spec 03 Dangerous commands",
        matches: shred,
    },
    DangerPattern {
        id: "truncate-zero",
        description: "truncate -s 0 (empties files)",
        source: "spec 03 Dangerous commands",
        matches: truncate_zero,
    },
];

/// A dangerous command found in an argv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DangerFinding {
    /// The pattern that matched.
    pub pattern: &'static DangerPattern,
    /// The (deny-view) command it matched, e.g. `["rm", "-rf", "x"]` for
    /// `timeout 5 rm -rf x`.
    pub command: Vec<String>,
}

impl fmt::Display for DangerFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is dangerous: {}",
            self.command.join(" "),
            self.pattern.description
        )
    }
}

/// The first dangerous command inside `argv`, searching its whole deny view (the argv,
/// exec-wrapped commands, plain segments and every command of a wrapper script; spec 03
/// edge case 7). `None` when no pattern matches.
pub fn find_dangerous_command(argv: &[String]) -> Option<DangerFinding> {
    find_dangerous_in(&deny_view(argv).commands)
}

/// The first command of a deny view that a pattern flags.
pub(crate) fn find_dangerous_in(commands: &[InnerCommand]) -> Option<DangerFinding> {
    commands.iter().find_map(|inner| {
        DANGER_PATTERNS
            .iter()
            .find(|pattern| pattern.matches(&inner.argv))
            .map(|pattern| DangerFinding {
                pattern,
                command: inner.argv.clone(),
            })
    })
}

/// Codex's `command_might_be_dangerous` with Airlock's patterns and deny-view reach
/// (spec 03 "Dangerous commands", edge cases 7 and 8). See [`find_dangerous_command`]
/// for the reason.
pub fn command_might_be_dangerous(argv: &[String]) -> bool {
    find_dangerous_command(argv).is_some()
}

fn program_is(argv: &[String], name: &str) -> bool {
    argv.first()
        .is_some_and(|program| basename(program) == name)
}

/// Arguments before `--` (after it, `-rf` is a file name).
fn options(args: &[String]) -> impl Iterator<Item = &str> {
    args.iter()
        .map(String::as_str)
        .take_while(|arg| *arg != "--")
        .filter(|arg| arg.starts_with('-'))
}

/// Whether a short-option cluster (`-rf`, `-fdx`) contains `flag`.
fn cluster_has(arg: &str, flag: char) -> bool {
    arg.strip_prefix('-')
        .is_some_and(|cluster| !cluster.starts_with('-') && cluster.contains(flag))
}

fn rm_force_first(argv: &[String]) -> bool {
    program_is(argv, "rm") && matches!(argv.get(1).map(String::as_str), Some("-f" | "-rf"))
}

fn rm_recursive_force(argv: &[String]) -> bool {
    if !program_is(argv, "rm") {
        return false;
    }
    let args = argv.get(1..).unwrap_or_default();
    let recursive = options(args)
        .any(|arg| arg == "--recursive" || cluster_has(arg, 'r') || cluster_has(arg, 'R'));
    let force = options(args).any(|arg| arg == "--force" || cluster_has(arg, 'f'));
    recursive && force
}

fn find_delete(argv: &[String]) -> bool {
    program_is(argv, "find") && argv.iter().skip(1).any(|arg| arg == "-delete")
}

/// The arguments of `git <subcommand>` when `argv` is that git subcommand (global options
/// skipped, spec 03 edge case 8).
fn git_subcommand<'a>(argv: &'a [String], subcommand: &str) -> Option<&'a [String]> {
    if !program_is(argv, "git") {
        return None;
    }
    let git = split_git(argv);
    (git.subcommand == Some(subcommand)).then_some(git.args)
}

fn git_reset_hard(argv: &[String]) -> bool {
    git_subcommand(argv, "reset").is_some_and(|args| options(args).any(|arg| arg == "--hard"))
}

fn git_clean_force(argv: &[String]) -> bool {
    git_subcommand(argv, "clean")
        .is_some_and(|args| options(args).any(|arg| arg == "--force" || cluster_has(arg, 'f')))
}

fn git_push_force(argv: &[String]) -> bool {
    git_subcommand(argv, "push").is_some_and(|args| {
        let forced_option = options(args).any(|arg| {
            arg == "--force" || arg.starts_with("--force-with-lease") || cluster_has(arg, 'f')
        });
        // `+main`, `+HEAD:main`: a refspec that forces the update.
        let forced_refspec = args.iter().any(|arg| arg.len() > 1 && arg.starts_with('+'));
        forced_option || forced_refspec
    })
}

fn dd_output(argv: &[String]) -> bool {
    program_is(argv, "dd") && argv.iter().skip(1).any(|arg| arg.starts_with("of="))
}

fn mkfs(argv: &[String]) -> bool {
    argv.first()
        .is_some_and(|program| basename(program).starts_with("mkfs"))
}

/// Targets that stand for the whole filesystem or the whole home directory.
const ROOT_OR_HOME: &[&str] = &["/", "/*", "~", "~/", "$HOME", "${HOME}"];

fn recursive_chmod_chown_root_or_home(argv: &[String]) -> bool {
    if !(program_is(argv, "chmod") || program_is(argv, "chown")) {
        return false;
    }
    let args = argv.get(1..).unwrap_or_default();
    let recursive = options(args).any(|arg| arg == "--recursive" || cluster_has(arg, 'R'));
    recursive && args.iter().any(|arg| ROOT_OR_HOME.contains(&arg.as_str()))
}

fn shred(argv: &[String]) -> bool {
    program_is(argv, "shred")
}

fn truncate_zero(argv: &[String]) -> bool {
    if !program_is(argv, "truncate") {
        return false;
    }
    let args = argv.get(1..).unwrap_or_default();
    args.iter().enumerate().any(|(index, arg)| {
        let separate =
            (arg == "-s" || arg == "--size") && args.get(index + 1).is_some_and(|size| size == "0");
        separate || arg == "-s0" || arg == "--size=0"
    })
}
