//! The plain view: scripts made only of word commands joined by `&&`, `||`, `;`, `|`.
//!
//! Codex's `parse_shell_lc_plain_commands` (reference §2) extended by spec 03 edge cases
//! 6 and 22: harmless redirects (`2>&1`, `>/dev/null`, ...) keep a script plain and are
//! left out of the segments. Only plain segments can be allowed by rules, bypass the
//! sandbox, be proposed as amendments or be known-safe (spec 03 "Two views").

use tree_sitter::{Node, Tree};

use crate::notes::NotPlainReason;
use crate::redirect::is_harmless_redirect;
use crate::syntax::{
    ParseBudget, children, has_syntax_error, is_reserved_word, named_children, parse_bash, text,
    uncovered_text,
};
use crate::words::plain_word;
use crate::wrapper::{WrapperForm, extract_shell_wrapper};

/// Named node kinds allowed in a plain script (Codex's list plus the two redirect
/// containers; redirects themselves are checked one by one).
const PLAIN_KINDS: &[&str] = &[
    "program",
    "list",
    "pipeline",
    "command",
    "command_name",
    "word",
    "string",
    "string_content",
    "raw_string",
    "number",
    "concatenation",
    "redirected_statement",
];

/// Anonymous tokens allowed in a plain script (besides pure whitespace).
const PLAIN_TOKENS: &[&str] = &["&&", "||", ";", "|", "\"", "'"];

/// Whether a script is empty for bash: only spaces, tabs and newlines (spec 03 edge case
/// 16). Other Unicode spaces are ordinary characters to bash.
pub(crate) fn is_blank_script(script: &str) -> bool {
    script.trim_matches([' ', '\t', '\n']).is_empty()
}

/// The text around the first backslash-newline that bash removes between two non-blank
/// characters (`pu\<newline>sh` is the one word `push` for bash, two words for
/// tree-sitter; `a\ \<newline>b` is `a b`; finding F2), if any. Quoting is not considered: inside quotes such a
/// sequence only makes the script non-plain, which is stricter.
fn joining_continuation(src: &str) -> Option<String> {
    let bytes = src.as_bytes();
    let blank = |byte: Option<&u8>| byte.is_none_or(|byte| matches!(byte, b' ' | b'\t' | b'\n'));
    src.match_indices("\\\n").find_map(|(at, _)| {
        // An escaped blank before it (`+\ \<newline>x`) is part of the word too.
        let escaped_before = at >= 2 && bytes.get(at - 2) == Some(&b'\\');
        let glued = (escaped_before || !blank(at.checked_sub(1).and_then(|i| bytes.get(i))))
            && !blank(bytes.get(at + 2));
        glued.then(|| {
            let start = src[..at]
                .rfind([' ', '\t', '\n'])
                .map_or(0, |blank| blank + 1);
            let end = src[at + 2..]
                .find([' ', '\t', '\n'])
                .map_or(src.len(), |blank| at + 2 + blank);
            src.get(start..end).unwrap_or_default().to_owned()
        })
    })
}

/// Splits a parsed script into plain segments, or says why it is not plain.
pub(crate) fn plain_commands(tree: &Tree, src: &str) -> Result<Vec<Vec<String>>, NotPlainReason> {
    let root = tree.root_node();
    if has_syntax_error(root) {
        return Err(NotPlainReason::SyntaxError);
    }
    if let Some(dropped) = uncovered_text(root, src) {
        return Err(NotPlainReason::Unrecognised(dropped));
    }
    if let Some(joined) = joining_continuation(src) {
        return Err(NotPlainReason::Word(joined));
    }
    let mut command_nodes = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let kind = node.kind();
        if node.is_named() {
            if kind == "file_redirect" {
                if !is_harmless_redirect(node, src) {
                    return Err(NotPlainReason::Redirect(text(node, src).to_owned()));
                }
                // Validated as a whole; its descriptor and target are not segment words.
                continue;
            }
            if !PLAIN_KINDS.contains(&kind) {
                return Err(NotPlainReason::Construct(kind.to_owned()));
            }
            if kind == "command" {
                command_nodes.push(node);
            }
        } else if !(PLAIN_TOKENS.contains(&kind) || kind.trim().is_empty()) {
            return Err(NotPlainReason::Operator(kind.to_owned()));
        }
        stack.extend(children(node));
    }
    // The stack visits nodes out of order; segments follow the source.
    command_nodes.sort_by_key(Node::start_byte);
    let segments = command_nodes
        .into_iter()
        .map(|node| plain_command_words(node, src))
        .collect::<Result<Vec<_>, _>>()?;
    if segments.is_empty() {
        return Err(NotPlainReason::EmptyScript);
    }
    Ok(segments)
}

/// Where bash would split a command's children otherwise than tree-sitter does: the
/// source text of the command up to the offending child, or `None` when each pair of
/// neighbouring word nodes is separated by blanks (spaces, tabs, line continuations).
///
/// Two word nodes with nothing between them are one word for bash (tree-sitter splits
/// `}\*` and `"\q"\*`), and a bare newline between them ends the command for bash
/// (tree-sitter reads `git status<newline>\<newline>git push` as one command; finding F4).
pub(crate) fn split_as_bash_splits(command: Node<'_>, src: &str) -> Option<String> {
    let mut previous_word_end = None;
    for child in named_children(command) {
        if matches!(
            child.kind(),
            "file_redirect" | "heredoc_redirect" | "herestring_redirect"
        ) {
            previous_word_end = None;
            continue;
        }
        if let Some(end) = previous_word_end {
            let gap = src.get(end..child.start_byte()).unwrap_or_default();
            let blanks = gap.replace("\\\n", "");
            if gap.is_empty() || !blanks.chars().all(|c| matches!(c, ' ' | '\t')) {
                let upto = src.get(command.start_byte()..child.end_byte());
                return Some(upto.unwrap_or_default().to_owned());
            }
        }
        previous_word_end = Some(child.end_byte());
    }
    None
}

/// The words of one `command` node under Codex's literal reading; the command must split
/// as bash splits it ([`split_as_bash_splits`]).
fn plain_command_words(command: Node<'_>, src: &str) -> Result<Vec<String>, NotPlainReason> {
    if let Some(misread) = split_as_bash_splits(command, src) {
        return Err(NotPlainReason::Word(misread));
    }
    let mut words = Vec::new();
    for child in named_children(command) {
        match child.kind() {
            "command_name" => {
                let name = child
                    .named_child(0)
                    .filter(|name| name.kind() == "word")
                    .and_then(|name| plain_word(name, src))
                    .ok_or_else(|| NotPlainReason::Word(text(child, src).to_owned()))?;
                if is_reserved_word(&name) {
                    return Err(NotPlainReason::ReservedWord(name));
                }
                words.push(name);
            }
            // Already checked by the walk: only harmless redirects get here.
            "file_redirect" => {}
            _ => {
                let word = plain_word(child, src)
                    .ok_or_else(|| NotPlainReason::Word(text(child, src).to_owned()))?;
                words.push(word);
            }
        }
    }
    Ok(words)
}

/// Splits `script` into plain segments.
///
/// Returns `None` when the script is not plain ("not safely understood" as a sequence of
/// word commands): it is blank, has a syntax error, or uses any construct outside the
/// plain subset of spec 03 "Two views" item 1 and edge cases 6, 22. `Some` always holds at
/// least one segment, each with at least one word.
pub fn parse_plain_commands(script: &str) -> Option<Vec<Vec<String>>> {
    plain_script(script).ok()
}

/// [`parse_plain_commands`] with the reason when the script is not plain.
pub(crate) fn plain_script(script: &str) -> Result<Vec<Vec<String>>, NotPlainReason> {
    if is_blank_script(script) {
        return Err(NotPlainReason::EmptyScript);
    }
    let tree = parse_bash(script, &ParseBudget::start()).ok_or(NotPlainReason::Unparsed)?;
    plain_commands(&tree, script)
}

/// Codex's `parse_shell_lc_plain_commands` (reference §2) with Airlock's wrapper
/// detection: `argv` must be exactly `[shell, -c|-lc, script]` for one of the shells of
/// [`crate::ShellType`] (spec 03 edge case 2), and the script must be plain.
///
/// Returns `None` ("not safely understood as plain segments") for any other argv or any
/// non-plain script.
pub fn parse_shell_lc_plain_commands(argv: &[String]) -> Option<Vec<Vec<String>>> {
    let wrapper = extract_shell_wrapper(argv)?;
    if wrapper.form != WrapperForm::Exact {
        return None;
    }
    parse_plain_commands(wrapper.script)
}
