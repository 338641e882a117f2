//! tree-sitter-bash glue: parsing a script and reading node text.
//!
//! Everything that walks a tree does so with an explicit stack, never by recursion, so a
//! hostile script with deeply nested constructs cannot overflow the thread's stack.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use tree_sitter::{Node, ParseOptions, Parser, Tree};

/// Scripts longer than this are not parsed at all and count as not understood
/// (non-plain, deny view incomplete). Far above anything an agent sends; it bounds the
/// work one command can cost.
pub const MAX_SCRIPT_BYTES: usize = 1 << 20;

/// How much parsing work all tree-sitter parses of one call ([`crate::parse_command`],
/// [`crate::deny_view`], ...) may do, in progress-callback ticks (tree-sitter calls the
/// callback about every hundred parser operations). Ordinary scripts need one tick per
/// ~80 bytes (a 64 KiB script: ~800 ticks, ~11 ms in a release build), but tree-sitter's
/// error recovery is super-linear on some malformed inputs (64 KiB of `a | a | ...|`:
/// 1,000 ticks take ~37 ms, and the recovery at the end of the input takes seconds);
/// past the budget the parse is cancelled and the script counts as not understood, which
/// only ever makes a decision stricter.
///
/// The budget counts work, not time, so the same script gets the same decision on an idle
/// machine and on a loaded CI runner: a wall-clock budget made a forbidden `git push`
/// drop to a prompt when the deny view's parse ran out of time under load.
pub const PARSE_WORK_BUDGET_TICKS: u64 = 1_000;

/// A wall-clock backstop far above what [`PARSE_WORK_BUDGET_TICKS`] cost on any machine
/// (debug builds on a loaded runner included), checked at each tick.
pub const PARSE_TIME_BACKSTOP: Duration = Duration::from_secs(2);

/// The work budget shared by every parse of one top-level call (clones share it).
#[derive(Debug, Clone)]
pub(crate) struct ParseBudget {
    ticks_left: Rc<Cell<u64>>,
    deadline: Instant,
}

impl ParseBudget {
    /// A budget of [`PARSE_WORK_BUDGET_TICKS`] (and the [`PARSE_TIME_BACKSTOP`]) starting now.
    pub(crate) fn start() -> Self {
        Self {
            ticks_left: Rc::new(Cell::new(PARSE_WORK_BUDGET_TICKS)),
            deadline: Instant::now() + PARSE_TIME_BACKSTOP,
        }
    }

    /// Spends one tick; `true` when the budget is exhausted.
    fn spend(&self) -> bool {
        let left = self.ticks_left.get();
        if left == 0 {
            return true;
        }
        self.ticks_left.set(left - 1);
        Instant::now() >= self.deadline
    }

    fn exhausted(&self) -> bool {
        self.ticks_left.get() == 0 || Instant::now() >= self.deadline
    }
}

/// Parses `script` with tree-sitter-bash within `budget`.
///
/// Returns `None` when the script is too long ([`MAX_SCRIPT_BYTES`]), contains a NUL
/// byte (no shell receives one; what a parser makes of the rest is not what would run),
/// the budget runs out, or the grammar cannot be loaded; `None` means "not safely
/// understood". A returned tree may contain syntax errors: callers check `has_error()`
/// where they need a clean parse.
pub(crate) fn parse_bash(script: &str, budget: &ParseBudget) -> Option<Tree> {
    if script.len() > MAX_SCRIPT_BYTES
        || script.contains('\0')
        || budget.exhausted()
        || hits_brace_scanner_bug(script)
        || has_empty_pipeline_stage_and_many_pipes(script)
    {
        return None;
    }
    let mut parser = Parser::new();
    let language: tree_sitter::Language = tree_sitter_bash::LANGUAGE.into();
    parser.set_language(&language).ok()?;
    let bytes = script.as_bytes();
    let mut read = |offset: usize, _| bytes.get(offset..).unwrap_or_default();
    // tree-sitter calls this every hundred parser operations; `true` cancels.
    let mut out_of_budget = |_: &tree_sitter::ParseState| budget.spend();
    let options = ParseOptions::new().progress_callback(&mut out_of_budget);
    parser.parse_with_options(&mut read, None, Some(options))
}

/// Whether `script` would make tree-sitter-bash 0.25.1's external scanner read out of
/// bounds: when it looks for a brace range (`{1..3}`) it tests the code point after
/// `{` and after `..` (past any digits) with the C `isdigit`, whose table covers only
/// -1..=255 — a larger code point there is undefined behaviour (a segmentation fault
/// in debug builds, a stray read in release builds). Such scripts are not parsed: they
/// count as not understood, which only makes decisions stricter.
fn hits_brace_scanner_bug(script: &str) -> bool {
    let beyond_table = |c: Option<char>| c.is_some_and(|c| u32::from(c) > 0xff);
    fn skip_digits(rest: &str) -> &str {
        rest.trim_start_matches(|c: char| c.is_ascii_digit())
    }
    script.match_indices('{').any(|(at, _)| {
        let rest = skip_digits(&script[at + 1..]);
        beyond_table(rest.chars().next())
            || rest
                .strip_prefix("..")
                .is_some_and(|after| beyond_table(skip_digits(after).chars().next()))
    })
}

/// Scripts with an empty pipeline stage and more than this many pipes are not parsed
/// (see [`has_empty_pipeline_stage_and_many_pipes`]).
const MAX_PIPES_WITH_EMPTY_STAGE: usize = 16;

/// Whether `script` has an empty pipeline stage (a single `|` followed, after blanks, by
/// another `|`, a `)`, `}`, `;`, `&` or the end: `a | | b`, `$(a|)`) and more than
/// [`MAX_PIPES_WITH_EMPTY_STAGE`] pipes. On such input tree-sitter-bash 0.25.1's error
/// recovery doubles its work with every further pipeline stage inside a single parse
/// step, where the progress callback cannot cancel it (24 stages after `$(a|)`: seconds;
/// found by `scripts/fuzz`, issue 18 item 11). Such scripts count as not understood,
/// which only makes decisions stricter; a lone typo (`ls | | wc`) is still parsed and read
/// around (spec 03 decision 15). Quoted text that looks the same counts too.
fn has_empty_pipeline_stage_and_many_pipes(script: &str) -> bool {
    let bytes = script.as_bytes();
    if bytes.iter().filter(|byte| **byte == b'|').count() <= MAX_PIPES_WITH_EMPTY_STAGE {
        return false;
    }
    bytes.iter().enumerate().any(|(at, byte)| {
        if *byte != b'|' || (at > 0 && bytes.get(at - 1) == Some(&b'|')) {
            return false;
        }
        let rest = bytes.get(at + 1..).unwrap_or_default();
        if matches!(rest.first(), Some(b'|' | b'&')) {
            // `||` and `|&` are operators of their own.
            return false;
        }
        rest.iter()
            .find(|next| !matches!(next, b' ' | b'\t' | b'\n'))
            .is_none_or(|next| matches!(next, b'|' | b')' | b'}' | b';' | b'&'))
    })
}

/// Whether the tree rooted at `node` holds a syntax error: an `ERROR` node or a `MISSING`
/// token tree-sitter inserted to recover (finding F4). Bash refuses such a script or reads
/// it differently, so no view may take the recovered commands as what runs.
pub(crate) fn has_syntax_error(node: Node<'_>) -> bool {
    if node.has_error() {
        return true;
    }
    let mut stack = vec![node];
    while let Some(current) = stack.pop() {
        if current.is_error() || current.is_missing() {
            return true;
        }
        stack.extend(children(current));
    }
    false
}

/// Bash's reserved words that tree-sitter-bash accepts as an ordinary command name
/// although bash does not run them as one: in command position bash reads them as syntax
/// (`then ls`, `fi`, `done; ls` and `echo a; }` are syntax errors; `coproc`, `!` and the
/// compound-command openers change what runs). `time` is not listed: it times the
/// pipeline it prefixes, which the plain view reads as the exec wrapper of spec 03
/// "Two views" item 2.
pub(crate) const RESERVED_WORDS: &[&str] = &[
    "!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
    "function", "if", "in", "select", "then", "until", "while",
];

/// Whether `word`, as a command name, is one of [`RESERVED_WORDS`].
pub(crate) fn is_reserved_word(word: &str) -> bool {
    RESERVED_WORDS.contains(&word)
}

/// The source text of `node`; empty when the node's range is not valid UTF-8 in `src`
/// (only possible around error recovery).
pub(crate) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// All children (named and anonymous) of `node`, in source order.
pub(crate) fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// Named children of `node`, in source order.
pub(crate) fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// Whether any node of the subtree rooted at `node` has kind `kind`.
pub(crate) fn has_descendant_kind(node: Node<'_>, kinds: &[&str]) -> bool {
    let mut stack = vec![node];
    while let Some(current) = stack.pop() {
        if kinds.contains(&current.kind()) {
            return true;
        }
        stack.extend(named_children(current));
    }
    false
}

/// The first stretch of `src` that no leaf token of the tree covers, unless it is blank
/// for bash (spaces, tabs, newlines, backslash-newline continuations).
///
/// tree-sitter-bash occasionally drops a token without reporting an error (for example
/// the `-` in `python3 - <<EOF`); a view that claims to list every word must refuse such
/// trees rather than silently lose an argument.
pub(crate) fn uncovered_text(root: Node<'_>, src: &str) -> Option<String> {
    let mut leaves = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.child_count() == 0 {
            leaves.push(node.byte_range());
        } else {
            stack.extend(children(node));
        }
    }
    leaves.sort_by_key(|range| range.start);
    let mut position = 0;
    let mut gaps = Vec::new();
    for range in leaves {
        if range.start > position {
            gaps.push(position..range.start);
        }
        position = position.max(range.end);
    }
    gaps.push(position..src.len());
    gaps.into_iter()
        .filter_map(|gap| src.get(gap))
        .find(|gap| {
            !gap.replace("\\\n", "")
                .chars()
                .all(|c| matches!(c, ' ' | '\t' | '\n'))
        })
        .map(str::to_owned)
}
