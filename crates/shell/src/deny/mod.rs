//! Airlock's deny view: every command the shell could execute (spec 03 "Two views",
//! item 2, and edge cases 3, 7, 15, 23).
//!
//! Commands are found anywhere in the syntax tree (subshells, brace groups, command and
//! process substitution, control-flow and function bodies, redirected commands,
//! heredoc bodies, prefix assignments stripped), through exec wrappers
//! ([`EXEC_WRAPPERS`]) and nested shell scripts, down to a depth limit. Words are read
//! loosely: quotes removed, expansions kept as their literal text. The view is only ever
//! used to make a decision stricter (forbidden/prompt rules, dangerous commands,
//! code-loading assignments), never to allow anything.

mod exec_wrappers;
mod nodes;
mod spellings;
mod walk;

use std::fmt;

pub use exec_wrappers::{EXEC_WRAPPERS, Unwrapped, basename, is_exec_wrapper, unwrap_exec_wrapper};

use serde::Serialize;
use tree_sitter::Tree;

use crate::notes::Note;
use crate::syntax::ParseBudget;

/// How many nested shells and exec wrappers the deny view descends through before it
/// stops and records [`Note::DepthLimitReached`].
pub const DEFAULT_MAX_DEPTH: usize = 16;

/// Where a deny-view command was found, outermost step first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Via {
    /// Inside the script of a shell wrapper (`bash -c`, `sh -lc`, ...).
    ShellScript {
        /// The shell program as written.
        program: String,
    },
    /// A script read by a shell from a heredoc or herestring (`bash <<< "..."`).
    ShellStdin {
        /// The shell program as written.
        program: String,
    },
    /// The command an exec wrapper runs (`timeout 5 git push` → `git push`).
    ExecWrapper {
        /// The wrapper's basename.
        wrapper: String,
    },
    /// The command line of `env -S`, `eval`, `watch` or `flock -c`, the action of `trap`,
    /// or the compound body of `coproc`, re-parsed as a script.
    SplitString {
        /// `env`, `eval`, `trap`, `coproc`, `watch` or `flock`.
        wrapper: String,
    },
    /// What `git` runs once its global options are skipped (`git -C . push` →
    /// `git push`) and a `-c alias.NAME=...` alias is resolved (issue 18 item 4).
    GitGlobalOptions,
    /// Inside `( ... )`.
    Subshell,
    /// Inside `{ ...; }`.
    BraceGroup,
    /// Inside `$( ... )` or backticks.
    CommandSubstitution,
    /// Inside `<( ... )` or `>( ... )`.
    ProcessSubstitution,
    /// Inside an `if`, `while`, `until`, `for` or `case` statement.
    ControlFlow,
    /// Inside a function body.
    FunctionBody,
    /// Inside a heredoc body.
    Heredoc,
    /// Recovered from a part of the script with a syntax error (spec 03 edge case 15).
    SyntaxError,
}

impl fmt::Display for Via {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ShellScript { program } => write!(f, "`{program} -c` script"),
            Self::ShellStdin { program } => write!(f, "script fed to `{program}` on stdin"),
            Self::ExecWrapper { wrapper } => write!(f, "run by `{wrapper}`"),
            Self::SplitString { wrapper } => write!(f, "command line of `{wrapper}`"),
            Self::GitGlobalOptions => f.write_str("git without its global options"),
            Self::Subshell => f.write_str("subshell"),
            Self::BraceGroup => f.write_str("brace group"),
            Self::CommandSubstitution => f.write_str("command substitution"),
            Self::ProcessSubstitution => f.write_str("process substitution"),
            Self::ControlFlow => f.write_str("control-flow body"),
            Self::FunctionBody => f.write_str("function body"),
            Self::Heredoc => f.write_str("heredoc body"),
            Self::SyntaxError => f.write_str("text after a syntax error"),
        }
    }
}

/// One command of the deny view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InnerCommand {
    /// The command's words, loosely read (quotes removed, expansions as literal text).
    /// Never empty, and the first word is never empty.
    pub argv: Vec<String>,
    /// Where it was found; empty for the command as given.
    pub via: Vec<Via>,
}

/// How an environment variable assignment was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AssignmentKind {
    /// `NAME=value cmd`
    CommandPrefix,
    /// `NAME=value` as a statement of its own.
    Standalone,
    /// `export`, `declare`, `typeset`, `local` or `readonly` (spec 03 edge case 14).
    Declaration {
        /// The keyword used.
        keyword: String,
    },
    /// `env NAME=value cmd` or `sudo NAME=value cmd`.
    ExecWrapper {
        /// The wrapper's basename.
        wrapper: String,
    },
}

/// An environment variable assignment found anywhere in the command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvAssignment {
    /// The variable name (for `a[1]=x`, the array name `a`).
    pub name: String,
    /// The value as loosely read; `None` for `export NAME` without a value.
    pub value: Option<String>,
    /// How it was written.
    pub kind: AssignmentKind,
    /// Where it was found (as for [`InnerCommand::via`]).
    pub via: Vec<Via>,
}

/// The deny view of one argv.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DenyView {
    /// Every command found, the argv itself first, then in discovery order (source order
    /// within each script). May contain duplicates.
    pub commands: Vec<InnerCommand>,
    /// Every environment variable assignment found.
    pub assignments: Vec<EnvAssignment>,
    /// Limits reached and nested scripts not understood; non-empty means the view is
    /// incomplete and callers must not treat the command as fully inspected.
    pub notes: Vec<Note>,
}

impl DenyView {
    /// Whether every nested script was parsed and no depth limit was reached.
    pub fn is_complete(&self) -> bool {
        self.notes.is_empty()
    }
}

/// The deny view of `argv` with [`DEFAULT_MAX_DEPTH`]. See [`deny_view_with_depth`].
pub fn deny_view(argv: &[String]) -> DenyView {
    deny_view_with_depth(argv, DEFAULT_MAX_DEPTH)
}

/// The deny view of `argv`: `argv` itself, every command inside it (spec 03 "Two views"
/// item 2), and every environment assignment. Applies to every argv, wrapper or not
/// (spec 03 edge case 3). `max_depth` bounds how many nested shells and exec wrappers are
/// entered; reaching it adds [`Note::DepthLimitReached`].
///
/// Never fails: an empty argv yields an empty view (validate input with
/// [`crate::validate_argv`] first), a script that does not parse yields what tree-sitter
/// recovered (spec 03 edge case 15).
pub fn deny_view_with_depth(argv: &[String], max_depth: usize) -> DenyView {
    deny_view_parsed(argv, max_depth, ParseBudget::start(), None)
}

/// The deny view of `argv`, reusing the parse of its outermost wrapper script when the
/// caller already has it, within the caller's parse budget.
pub(crate) fn deny_view_parsed(
    argv: &[String],
    max_depth: usize,
    budget: ParseBudget,
    preparsed: Option<(&str, &Tree)>,
) -> DenyView {
    let mut collector = walk::Collector::new(max_depth, budget, preparsed);
    collector.visit_argv(argv.to_vec(), Vec::new(), 0);
    collector.finish()
}

/// Adds `argv` (and what it wraps) to an existing view, for segments whose strict
/// reading differs from the loose one (`a\ b`), so that the view covers every segment.
pub(crate) fn extend_deny_view(
    view: &mut DenyView,
    argv: &[String],
    max_depth: usize,
    budget: ParseBudget,
) {
    let mut collector = walk::Collector::new(max_depth, budget, None);
    collector.visit_argv(argv.to_vec(), Vec::new(), 0);
    let extra = collector.finish();
    view.commands.extend(extra.commands);
    view.assignments.extend(extra.assignments);
    for note in extra.notes {
        if !view.notes.contains(&note) {
            view.notes.push(note);
        }
    }
}
