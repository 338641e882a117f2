//! Error types of the exec-policy engine.
//!
//! Messages are part of the drop-in contract with Codex `.rules` files: the key error
//! line a user sees for a bad file is the same text Codex prints (reference
//! `execpolicy.md` §4, §6), so the `Display` strings below are deliberately exact.

use std::path::PathBuf;

/// A problem with one builtin call or one rule, raised while a file is evaluated.
///
/// Inside Starlark the message is shown as `error: <Display>` in a diagnostic that
/// points at the offending call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// `decision=` is not one of the accepted spellings; carries the raw value.
    #[error("invalid decision: {0}")]
    InvalidDecision(String),
    /// A `pattern` element is malformed (empty pattern, wrong element type, ...).
    #[error("invalid pattern element: {0}")]
    InvalidPattern(String),
    /// Any other rule-level validation failure (justification, host_executable, network_rule).
    #[error("invalid rule: {0}")]
    InvalidRule(String),
    /// A `match`/`not_match` example has the wrong shape.
    #[error("invalid example: {0}")]
    InvalidExample(String),
    /// A `not_match` example matched its rule. `rule` is the match in Codex's
    /// `Debug` shape, `example` the example re-joined with shell quoting.
    #[error("expected example to not match rule `{rule}`: {example}")]
    ExampleDidMatch {
        /// `PrefixRuleMatch { .. }` text of the first match.
        rule: String,
        /// The example, shell-quoted.
        example: String,
        /// The rule that matched, as written, and where, for [`RuleError::for_people`].
        site: Box<ExampleSite>,
    },
    /// Some `match` examples matched no rule of their call.
    #[error(
        "expected every example to match at least one rule. rules: {rules:?}; unmatched examples: {examples:?}"
    )]
    ExamplesDidNotMatch {
        /// `PrefixRule { .. }` text of every rule the call created (Codex's message).
        rules: Vec<String>,
        /// Every unmatched example, shell-quoted.
        examples: Vec<String>,
        /// The same rules as a rules file spells them, and where, for
        /// [`RuleError::for_people`].
        site: Box<ExampleSite>,
    },
}

/// Where a failing example's `prefix_rule` call is and its rules as written (boxed in
/// [`RuleError`] to keep the error small).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExampleSite {
    /// The rules as a rules file spells them (`prefix_rule(pattern=[...], decision="...")`).
    pub shown: Vec<String>,
    /// `file:line` of the `prefix_rule` call, when known.
    pub at: Option<String>,
}

impl RuleError {
    /// The message for a person (`airlock exec` / `explain` warnings): like the `Display`
    /// text, which keeps Codex's wording for `execpolicy check`, except that rules are
    /// shown as a rules file spells them instead of a Rust debug dump (issue 17 item 8).
    #[must_use]
    pub fn for_people(&self) -> String {
        match self {
            Self::ExampleDidMatch { example, site, .. } => format!(
                "{}a `not_match` example matches its rule: `{example}`; the rule is: {}; fix the example or the pattern",
                site.at
                    .as_ref()
                    .map(|at| format!("{at}: "))
                    .unwrap_or_default(),
                site.shown.join(", ")
            ),
            Self::ExamplesDidNotMatch { examples, site, .. } => format!(
                "{}a `match` example matches none of the rules of its call: {}; the rule{}: {}; fix the example or the pattern",
                site.at
                    .as_ref()
                    .map(|at| format!("{at}: "))
                    .unwrap_or_default(),
                examples
                    .iter()
                    .map(|example| format!("`{example}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if site.shown.len() == 1 {
                    " is"
                } else {
                    "s are"
                },
                site.shown.join(", ")
            ),
            other => other.to_string(),
        }
    }
}

/// Why evaluating one file's source failed.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// A Starlark parse, name-resolution or runtime error (including [`RuleError`]s
    /// raised by builtins). Displayed with its diagnostic: traceback, `error:` line and
    /// a source excerpt naming `file:line:col`.
    #[error("starlark error: {0}")]
    Starlark(starlark::Error),
    /// A Starlark parse error at the end of the file caused by a bracket that is never
    /// closed. Displayed exactly as [`ParseError::Starlark`] (Codex's text, which points at
    /// line 1); [`ParseError::for_people`] names the line where the bracket was opened.
    #[error("starlark error: {error}")]
    Unclosed {
        /// Starlark's error.
        error: starlark::Error,
        /// The file label.
        label: String,
        /// 1-based line of the bracket.
        line: usize,
        /// The bracket.
        bracket: char,
    },
    /// An example failed validation after the file was evaluated; no location.
    #[error(transparent)]
    Example(RuleError),
    /// The source nests deeper than the parser can handle safely.
    #[error(
        "{label}:{line}: expressions nest more than {max} levels deep; .rules files cannot be nested this deeply (split the expression)"
    )]
    TooDeep {
        /// The file label.
        label: String,
        /// 1-based line of the first too-deep point.
        line: usize,
        /// The limit.
        max: usize,
    },
    /// The thread that evaluates deeply nested sources could not be started.
    #[error("could not start a thread to evaluate a deeply nested rules file: {0}")]
    Thread(std::io::Error),
    /// One statement chains so many operators that its syntax tree would be too deep.
    #[error(
        "{label}:{line}: a statement chains more than {max} operators; .rules files cannot hold expressions this long (split the expression)"
    )]
    TooLong {
        /// The file label.
        label: String,
        /// 1-based line where the chain passes the limit.
        line: usize,
        /// The limit.
        max: usize,
    },
    /// Evaluating the file passed a bound of [`crate::EvalLimits`] (issue 18 item 9), or
    /// the evaluation failed outside Starlark (an allocation the system refused).
    #[error("{label}: {}", describe_limit(*.limit, *.limits))]
    Limit {
        /// The file label.
        label: String,
        /// Which bound; `None` when the evaluation itself failed (out of memory).
        limit: Option<crate::Limit>,
        /// The bounds in force.
        limits: crate::EvalLimits,
    },
}

fn describe_limit(limit: Option<crate::Limit>, limits: crate::EvalLimits) -> String {
    match limit {
        Some(crate::Limit::Time) => format!(
            "evaluating the rules file took longer than {} ms; .rules files must declare rules, not compute (remove long loops)",
            limits.time.as_millis()
        ),
        Some(crate::Limit::Heap) => format!(
            "evaluating the rules file allocated more than {} KiB; .rules files must declare rules, not build large values",
            limits.heap_bytes >> 10
        ),
        None => "evaluating the rules file failed (it ran out of memory); .rules files must declare rules, not build large values".to_owned(),
    }
}

impl ParseError {
    /// [`RuleError::for_people`] for an example error, else the `Display` text.
    #[must_use]
    pub fn for_people(&self) -> String {
        match self {
            Self::Example(error) => error.for_people(),
            Self::Unclosed {
                label,
                line,
                bracket,
                ..
            } => format!(
                "{label}:{line}: this `{bracket}` is never closed (the file ends first); close it"
            ),
            other => other.to_string(),
        }
    }
}

/// Loading a policy file failed. The message names the file as given.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read: missing, a directory, or not UTF-8.
    #[error("failed to read policy at {}", path.display())]
    Read {
        /// The path exactly as the caller passed it.
        path: PathBuf,
        /// The underlying I/O error (`stream did not contain valid UTF-8` for bad UTF-8).
        #[source]
        source: std::io::Error,
    },
    /// The file was read but is not a valid policy.
    #[error("failed to parse policy at {}", path.display())]
    Parse {
        /// The path exactly as the caller passed it.
        path: PathBuf,
        /// What was wrong.
        #[source]
        source: ParseError,
    },
}

/// Appending an amendment to a rules file failed (reference `execpolicy.md` §7).
#[derive(Debug, thiserror::Error)]
pub enum AmendError {
    /// The prefix to allow was empty.
    #[error("prefix rule requires at least one token")]
    EmptyPrefix,
    /// The network rule is invalid (host, protocol or justification).
    #[error(transparent)]
    InvalidNetworkRule(#[from] RuleError),
    /// The policy file has no parent folder to create.
    #[error("policy file {} has no parent directory", path.display())]
    MissingParent {
        /// The policy file path.
        path: PathBuf,
    },
    /// Creating the parent folder failed.
    #[error("failed to create policy directory {}: {source}", dir.display())]
    CreateDir {
        /// The folder that could not be created.
        dir: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Opening the policy file failed.
    #[error("failed to open policy file {}: {source}", path.display())]
    Open {
        /// The policy file path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Taking the exclusive advisory lock failed.
    #[error("failed to lock policy file {}: {source}", path.display())]
    Lock {
        /// The policy file path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Reading, writing or syncing the file failed.
    #[error("failed to update policy file {}: {source}", path.display())]
    Write {
        /// The policy file path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}
