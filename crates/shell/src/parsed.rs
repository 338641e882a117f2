//! The segmentation result: plain segments, the deny view and what was not understood
//! (spec 03 "Segmentation result").

use std::collections::HashSet;

use serde::Serialize;
use tree_sitter::Tree;

use crate::argv::validate_argv;
use crate::code_loading::is_code_loading_variable;
use crate::danger::{DangerFinding, find_dangerous_in};
use crate::deny::{
    DEFAULT_MAX_DEPTH, DenyView, EnvAssignment, InnerCommand, deny_view_parsed, extend_deny_view,
    unwrap_exec_wrapper,
};
use crate::error::Result;
use crate::heredoc::heredoc_command;
use crate::notes::{NotPlainReason, Note};
use crate::plain::{is_blank_script, plain_commands};
use crate::syntax::{ParseBudget, has_syntax_error, named_children, parse_bash};
use crate::words::plain_word;
use crate::wrapper::{WrapperForm, extract_shell_wrapper};

/// How [`ParsedCommand::segments`] was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SegmentSource {
    /// The argv is not a shell wrapper: one segment, plain (spec 03 edge case 1).
    Direct,
    /// The plain segments of an exact wrapper's script.
    PlainScript,
    /// The literal words of a heredoc single-command script (Codex fallback; matching
    /// only, spec 03 edge case 5).
    Heredoc,
    /// The whole argv, because the script is not plain and not the heredoc form.
    WholeArgv,
}

/// One command, segmented (spec 03 "Segmentation result").
///
/// Invariants: `segments` is never empty and no segment is empty; `plain` is true exactly
/// when `source` is [`SegmentSource::Direct`] or [`SegmentSource::PlainScript`]; every
/// segment also appears in `inner` (spec 03 edge case 3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParsedCommand {
    /// Plain segments, the heredoc command's words, or `[argv]`.
    pub segments: Vec<Vec<String>>,
    /// Whether the segments are plain: only plain segments may be allowed by a rule
    /// with a sandbox bypass, proposed as amendments, or be known-safe.
    pub plain: bool,
    /// How `segments` was obtained.
    pub source: SegmentSource,
    /// The deny view: every command the shell could execute, the argv itself first.
    pub inner: Vec<InnerCommand>,
    /// Every environment variable assignment found (prefix, `env`/`sudo`, `export`, ...).
    pub assignments: Vec<EnvAssignment>,
    /// Why the command is not plain, whether the heredoc fallback was used, and what the
    /// deny view could not inspect.
    pub notes: Vec<Note>,
    /// For an exact wrapper whose script is not plain only because its commands carry
    /// leading assignments of variables that load no code, with literal values
    /// (`FOO=1 gh api …`): the plain segments of the script without those assignments.
    /// Used to match allow rules only (issue 18 item 5, field log BL-06); the command
    /// stays non-plain (no bypass, no amendment, spec 03 decision 5). `None` otherwise.
    pub assignment_free_segments: Option<Vec<Vec<String>>>,
}

impl ParsedCommand {
    /// The deny-view commands as argv slices.
    pub fn inner_argvs(&self) -> impl Iterator<Item = &[String]> {
        self.inner.iter().map(|command| command.argv.as_slice())
    }

    /// Assignments of code-loading variables (spec 03 "Policy evaluation" item 4, edge
    /// case 14): when any exists the command is never auto-allowed.
    pub fn code_loading_assignments(&self) -> impl Iterator<Item = &EnvAssignment> {
        self.assignments
            .iter()
            .filter(|assignment| is_code_loading_variable(&assignment.name))
    }

    /// Whether the deny view inspected everything (no depth limit reached, every nested
    /// script parsed). When false, callers must not let the command run without asking.
    pub fn deny_view_complete(&self) -> bool {
        !self.notes.iter().any(|note| {
            matches!(
                note,
                Note::DepthLimitReached { .. } | Note::ScriptUnparsed | Note::HeredocUnclear
            )
        })
    }

    /// The first dangerous command of the deny view (spec 03 edge case 7), without parsing
    /// again. Same answer as [`crate::find_dangerous_command`] on the same argv.
    pub fn find_dangerous(&self) -> Option<DangerFinding> {
        find_dangerous_in(&self.inner)
    }

    /// Why the command is not plain, if it is not.
    pub fn not_plain_reason(&self) -> Option<&NotPlainReason> {
        self.notes.iter().find_map(|note| match note {
            Note::NotPlain(reason) => Some(reason),
            _ => None,
        })
    }
}

/// Segments `argv` per spec 03 "Segmentation result" and computes its deny view.
///
/// - not a shell wrapper → `segments = [argv]`, plain (edge case 1);
/// - exact wrapper with a plain script → the plain segments (edge cases 6, 22);
/// - exact wrapper whose script is the heredoc single-command form → its words,
///   not plain (edge case 5);
/// - anything else (extended wrapper forms, blank scripts, syntax errors, other
///   constructs) → `segments = [argv]`, not plain (edge cases 2, 15, 16, 20);
/// - any segment that runs `env -S` (possibly through other exec wrappers) makes the
///   command not plain with `segments = [argv]` (edge case 23).
///
/// Errors: the input errors of [`validate_argv`] (empty argv, empty program, NUL byte;
/// edge case 16).
pub fn parse_command(argv: &[String]) -> Result<ParsedCommand> {
    parse_command_with_depth(argv, DEFAULT_MAX_DEPTH)
}

/// [`parse_command`] with an explicit deny-view depth limit.
pub fn parse_command_with_depth(argv: &[String], max_depth: usize) -> Result<ParsedCommand> {
    validate_argv(argv)?;
    let budget = ParseBudget::start();
    let mut notes = Vec::new();
    // The outermost script is parsed once and shared by both views.
    let wrapper = extract_shell_wrapper(argv);
    let tree = wrapper
        .filter(|wrapper| wrapper.form == WrapperForm::Exact && !is_blank_script(wrapper.script))
        .and_then(|wrapper| parse_bash(wrapper.script, &budget).map(|tree| (wrapper.script, tree)));
    let (mut segments, mut source) = segment(argv, tree.as_ref().map(|(_, tree)| tree), &mut notes);
    if segments
        .iter()
        .any(|segment| runs_env_split_string(segment, max_depth))
    {
        notes.retain(|note| *note != Note::HeredocFallback);
        notes.push(Note::NotPlain(NotPlainReason::EnvSplitString));
        segments = vec![argv.to_vec()];
        source = SegmentSource::WholeArgv;
    }
    let preparsed = tree.as_ref().map(|(script, tree)| (*script, tree));
    let mut view: DenyView = deny_view_parsed(argv, max_depth, budget.clone(), preparsed);
    let seen: HashSet<Vec<String>> = view
        .commands
        .iter()
        .map(|inner| inner.argv.clone())
        .collect();
    for segment in &segments {
        if !seen.contains(segment) {
            extend_deny_view(&mut view, segment, max_depth, budget.clone());
        }
    }
    notes.extend(view.notes);
    let assignment_free_segments = match (&tree, source) {
        (Some((script, tree)), SegmentSource::WholeArgv) => assignment_free(tree, script, budget),
        _ => None,
    };
    Ok(ParsedCommand {
        assignment_free_segments,
        plain: matches!(source, SegmentSource::Direct | SegmentSource::PlainScript),
        segments,
        source,
        inner: view.commands,
        assignments: view.assignments,
        notes,
    })
}

/// The segments of a validated argv and how they were obtained. `tree` is the parse of
/// an exact wrapper's non-blank script, when it could be parsed.
fn segment(
    argv: &[String],
    tree: Option<&Tree>,
    notes: &mut Vec<Note>,
) -> (Vec<Vec<String>>, SegmentSource) {
    let whole = || vec![argv.to_vec()];
    let Some(wrapper) = extract_shell_wrapper(argv) else {
        return (whole(), SegmentSource::Direct);
    };
    if wrapper.form == WrapperForm::Extended {
        notes.push(Note::NotPlain(NotPlainReason::ExtendedWrapper));
        return (whole(), SegmentSource::WholeArgv);
    }
    if is_blank_script(wrapper.script) {
        notes.push(Note::NotPlain(NotPlainReason::EmptyScript));
        return (whole(), SegmentSource::WholeArgv);
    }
    let Some(tree) = tree else {
        notes.push(Note::NotPlain(NotPlainReason::Unparsed));
        return (whole(), SegmentSource::WholeArgv);
    };
    match plain_commands(tree, wrapper.script) {
        Ok(segments) => (segments, SegmentSource::PlainScript),
        Err(reason) => {
            notes.push(Note::NotPlain(reason));
            match heredoc_command(tree, wrapper.script) {
                Some(words) => {
                    notes.push(Note::HeredocFallback);
                    (vec![words], SegmentSource::Heredoc)
                }
                None => (whole(), SegmentSource::WholeArgv),
            }
        }
    }
}

/// The plain segments of `script` once its command-prefix assignments are removed, when
/// every assignment in it is such a prefix, names a variable that loads no code, and has
/// a literal value (see [`ParsedCommand::assignment_free_segments`]).
fn assignment_free(tree: &Tree, script: &str, budget: ParseBudget) -> Option<Vec<Vec<String>>> {
    let root = tree.root_node();
    if has_syntax_error(root) {
        return None;
    }
    let mut removed: Vec<(usize, usize)> = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "variable_assignment" {
            let prefix = node
                .parent()
                .is_some_and(|parent| parent.kind() == "command");
            let name = node.child_by_field_name("name")?;
            let literal = node
                .child_by_field_name("value")
                .is_none_or(|value| plain_word(value, script).is_some());
            if !prefix || name.kind() != "variable_name" || !literal {
                return None;
            }
            if is_code_loading_variable(script.get(name.byte_range())?) {
                return None;
            }
            removed.push((node.start_byte(), node.end_byte()));
            continue;
        }
        stack.extend(named_children(node));
    }
    if removed.is_empty() {
        return None;
    }
    removed.sort_unstable();
    let mut stripped = String::with_capacity(script.len());
    let mut at = 0;
    for (start, end) in removed {
        stripped.push_str(script.get(at..start)?);
        at = end;
    }
    stripped.push_str(script.get(at..)?);
    let tree = parse_bash(&stripped, &budget)?;
    plain_commands(&tree, &stripped).ok()
}

/// Whether `argv`, possibly through a chain of exec wrappers, runs `env -S`
/// (spec 03 edge case 23).
fn runs_env_split_string(argv: &[String], max_depth: usize) -> bool {
    let mut current = argv;
    for _ in 0..=max_depth {
        let Some(unwrapped) = unwrap_exec_wrapper(current) else {
            return false;
        };
        if unwrapped.wrapper == "env" && unwrapped.script.is_some() {
            return true;
        }
        current = unwrapped.command;
    }
    false
}
