//! Why a command was segmented the way it was: data for `airlock explain` and the audit
//! log, and for callers that must act conservatively on what was not understood.

use std::fmt;

use serde::Serialize;

/// Why a script did not yield plain segments (spec 03 "Two views", item 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
#[non_exhaustive]
pub enum NotPlainReason {
    /// The wrapper is not exactly `[shell, -c|-lc, script]` (spec 03 edge cases 2, 20).
    ExtendedWrapper,
    /// The script is empty or whitespace only (spec 03 edge case 16).
    EmptyScript,
    /// tree-sitter reported a syntax error (spec 03 edge case 15).
    SyntaxError,
    /// The script could not be parsed at all: longer than [`crate::MAX_SCRIPT_BYTES`],
    /// a NUL byte, or parsing exceeded [`crate::PARSE_WORK_BUDGET_TICKS`].
    Unparsed,
    /// A syntax construct outside the plain subset (subshell, expansion, assignment,
    /// control flow, comment, ...). Carries the tree-sitter node kind.
    Construct(String),
    /// An operator or punctuation token outside `&&`, `||`, `;`, `|` (for example `&`,
    /// `;;`, `(`). Carries the token.
    Operator(String),
    /// A redirect other than the harmless ones of spec 03 edge cases 6 and 22. Carries
    /// its source text.
    Redirect(String),
    /// An argument that is not a literal: bash would turn it into other words (a glob,
    /// a brace expansion, a tilde form other than `~`/`~/`, `$`, a disguising backslash,
    /// a line continuation), tree-sitter splits it otherwise than bash (`}\*`, a bare
    /// newline between words), it is a concatenation that reads as empty, or a command
    /// name that is not a plain word (finding F2). Carries its source text.
    Word(String),
    /// Text that the parser left out of the tree without reporting an error (a grammar
    /// quirk); the plain view refuses rather than lose a word. Carries the text.
    Unrecognised(String),
    /// A command name that bash reads as a reserved word (`then`, `fi`, `}`, ...), so bash
    /// refuses the script or runs something else than a command of that name (finding
    /// F4). Carries the word.
    ReservedWord(String),
    /// `env -S`/`--split-string` re-splits a string into a command line, which the plain
    /// view cannot represent (spec 03 edge case 23).
    EnvSplitString,
}

impl fmt::Display for NotPlainReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ExtendedWrapper => {
                f.write_str("shell wrapper is not exactly [shell, -c|-lc, script]")
            }
            Self::EmptyScript => f.write_str("script is empty"),
            Self::SyntaxError => f.write_str("script has a syntax error"),
            Self::Unparsed => f.write_str("script could not be parsed"),
            Self::Construct(kind) => write!(f, "script uses a `{kind}` construct"),
            Self::Operator(token) => write!(f, "script uses the operator `{token}`"),
            Self::Redirect(redirect) => write!(f, "script has the redirect `{redirect}`"),
            Self::Word(word) => write!(f, "`{word}` is not a literal word"),
            Self::Unrecognised(text) => write!(f, "the parser skipped `{text}`"),
            Self::ReservedWord(word) => {
                write!(
                    f,
                    "`{word}` is a reserved word where bash expects a command"
                )
            }
            Self::EnvSplitString => f.write_str("`env -S` re-splits a string into a command line"),
        }
    }
}

/// One remark about how a command was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Note {
    /// The command is not plain, and why.
    NotPlain(NotPlainReason),
    /// The segments are the heredoc command's literal words (Codex's fallback,
    /// reference §2): usable for rule matching only, never for a bypass or an amendment
    /// (spec 03 edge case 5).
    HeredocFallback,
    /// The deny view stopped descending because nested shells and exec wrappers went
    /// deeper than the limit; commands below it were not inspected. Callers must treat
    /// the command as not fully understood.
    DepthLimitReached {
        /// The limit that was reached.
        limit: usize,
    },
    /// A script (the wrapper's own or a nested one) could not be parsed (too long, a NUL
    /// byte, or out of parse time); its commands were not inspected. Callers must treat
    /// the command as not fully understood.
    ScriptUnparsed,
    /// tree-sitter ends a heredoc of a script elsewhere than bash does (a partly quoted
    /// delimiter, a line continuation before the delimiter line, several heredocs on one
    /// line, no end; finding F3): what the deny view read as commands or as body text may
    /// be the other way round. Callers must treat the command as not fully understood.
    HeredocUnclear,
    /// A program runs code that is not on the command line: a shell reading its script
    /// from a pipe (`curl … | sh`, issue 18 item 2) or a git alias taken from the
    /// environment (`git --config-env=alias.x=VAR x`, item 4). No rule can be checked
    /// against it; the requirement computation treats it as unknown code.
    UnknownCode {
        /// The shell as written.
        program: String,
    },
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotPlain(reason) => write!(f, "not plain: {reason}"),
            Self::HeredocFallback => {
                f.write_str("heredoc single-command form: matched by its literal words only")
            }
            Self::DepthLimitReached { limit } => {
                write!(
                    f,
                    "nested shells and wrappers exceed depth {limit}; deeper commands not inspected"
                )
            }
            Self::ScriptUnparsed => {
                f.write_str("a script could not be parsed; its commands were not inspected")
            }
            Self::HeredocUnclear => f.write_str(
                "a heredoc may end elsewhere than the parser thinks; the script was not inspected completely",
            ),
            Self::UnknownCode { program } => {
                write!(
                    f,
                    "`{program}` runs code that is not on the command line (a script read from a pipe, an alias from the environment); its commands are unknown"
                )
            }
        }
    }
}
