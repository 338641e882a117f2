//! Codex's heredoc single-command fallback (`parse_shell_lc_single_command_prefix`,
//! reference §2), as current Codex and spec 03 edge case 5 define it.
//!
//! A script such as `python3 - <<'PY' ... PY` is not plain, but it runs exactly one
//! program; its literal words are used for rule matching only (never a sandbox bypass,
//! never an amendment).

use tree_sitter::{Node, Tree};

use crate::heredoc_bounds::heredocs_read_as_bash;
use crate::plain::split_as_bash_splits;
use crate::syntax::{
    ParseBudget, has_descendant_kind, has_syntax_error, is_reserved_word, named_children,
    parse_bash, text,
};
use crate::words::plain_word;
use crate::wrapper::{WrapperForm, extract_shell_wrapper};

/// Node kinds that may hang off the single command without changing which program runs.
const HEREDOC_ATTACHMENTS: &[&str] = &[
    "heredoc_body",
    "simple_heredoc_body",
    "heredoc_redirect",
    "herestring_redirect",
    "redirected_statement",
    "comment",
];

/// The heredoc command's literal words from an already parsed script.
///
/// Eligible only when the tree has no syntax error, contains a `heredoc_redirect`,
/// contains no `file_redirect` (current Codex) and no variable assignment or declaration
/// anywhere (spec 03 edge case 5), and has exactly one `command` node, whose name and
/// arguments are all literal words or numbers.
pub(crate) fn heredoc_command(tree: &Tree, src: &str) -> Option<Vec<String>> {
    let root = tree.root_node();
    if has_syntax_error(root) || !has_descendant_kind(root, &["heredoc_redirect"]) {
        return None;
    }
    // Where tree-sitter ends a heredoc elsewhere than bash, the words it shows are not
    // what runs (finding F3).
    if !heredocs_read_as_bash(root, src) {
        return None;
    }
    let disqualifying = [
        "file_redirect",
        "variable_assignment",
        "declaration_command",
    ];
    if has_descendant_kind(root, &disqualifying) {
        return None;
    }
    if has_expansion_in_unquoted_body(root, src) {
        return None;
    }
    let command = single_command(root)?;
    if split_as_bash_splits(command, src).is_some() {
        return None;
    }
    let mut words = Vec::new();
    for child in named_children(command) {
        match child.kind() {
            "command_name" => {
                let name = literal(child.named_child(0)?, src)?;
                if is_reserved_word(&name) {
                    return None;
                }
                words.push(name);
            }
            "word" | "number" => words.push(literal(child, src)?),
            kind if HEREDOC_ATTACHMENTS.contains(&kind) => {}
            _ => return None,
        }
    }
    (!words.is_empty()).then_some(words)
}

/// Whether a heredoc of the tree has an unquoted delimiter and a body that bash expands
/// beyond plain parameter references (see [`body_expands`]): such a body is never inert
/// text, and the script is never the single-command form (issue 18 item 1, field log
/// BL-08, finding F3).
fn has_expansion_in_unquoted_body(root: Node<'_>, src: &str) -> bool {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "heredoc_redirect"
            && let Some(body) = unquoted_body(node, src)
            && body_expands(body)
        {
            return true;
        }
        stack.extend(named_children(node));
    }
    false
}

/// Whether an unquoted heredoc body holds an expansion that can run code or evaluate text
/// (bash expands the body like a double-quoted string). Only plain parameter references
/// are inert: `$NAME`, `${NAME}`, `$1`, the special parameters `$@ $* $# $? $$ $! $- $_`,
/// and a `$` before a blank or the end. Everything else counts: `` `…` ``, `$(…)`,
/// `$((…))`, `$[…]` and `${…}` with an operator or subscript (arithmetic on a variable's
/// value runs the substitutions in it; `${x@P}` expands prompt escapes). A backslash
/// escapes `$`, `` ` `` and `\`; a backslash-newline is removed first, so it escapes
/// nothing.
pub(crate) fn body_expands(body: &str) -> bool {
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if matches!(chars.peek(), Some('$' | '`' | '\\')) {
                    chars.next();
                }
            }
            '`' => return true,
            '$' => match chars.peek().copied() {
                None | Some(' ' | '\t' | '\n') => {}
                Some('@' | '*' | '#' | '?' | '$' | '!' | '-' | '0'..='9') => {
                    chars.next();
                }
                Some('{') => {
                    chars.next();
                    let mut name = String::new();
                    loop {
                        match chars.next() {
                            Some('}') => break,
                            Some(inner) if inner.is_ascii_alphanumeric() || inner == '_' => {
                                name.push(inner);
                            }
                            _ => return true,
                        }
                    }
                    if name.is_empty() {
                        return true;
                    }
                }
                Some(first) if first.is_ascii_alphabetic() || first == '_' => {
                    while chars
                        .peek()
                        .is_some_and(|next| next.is_ascii_alphanumeric() || *next == '_')
                    {
                        chars.next();
                    }
                }
                Some(_) => return true,
            },
            _ => {}
        }
    }
    false
}

/// The body text of a `heredoc_redirect` whose delimiter is unquoted (`<<EOF`, not
/// `<<'EOF'`, `<<"EOF"` or `<<\EOF`); `None` for a quoted delimiter or a missing body.
pub(crate) fn unquoted_body<'s>(redirect: Node<'_>, src: &'s str) -> Option<&'s str> {
    let mut start = None;
    let mut body = None;
    for child in named_children(redirect) {
        match child.kind() {
            "heredoc_start" => start = Some(text(child, src)),
            "heredoc_body" | "simple_heredoc_body" => body = Some(text(child, src)),
            _ => {}
        }
    }
    let quoted = start.is_none_or(|start| start.contains(['\'', '"', '\\']));
    if quoted { None } else { body }
}

/// Whether an unquoted heredoc body contains a command substitution, by a cheap text
/// test (backtick, or `$(` that is not escaped). `$((` arithmetic counts too: it may hold
/// substitutions, and counting it only makes a decision stricter.
pub(crate) fn body_runs_commands(body: &str) -> bool {
    let mut escaped = false;
    let mut previous = '\0';
    for c in body.chars() {
        if escaped {
            escaped = false;
            // `\<newline>` is removed before expansion: `$\<newline>(id)` runs `id`.
            if c != '\n' {
                previous = '\0';
            }
            continue;
        }
        match c {
            '\\' => {
                escaped = true;
                continue;
            }
            '`' => return true,
            '(' if previous == '$' => return true,
            _ => {}
        }
        previous = c;
    }
    false
}

/// An unquoted heredoc body rewritten as the script `: "BODY"`, so that tree-sitter
/// parses its substitutions as it would in double quotes (bash expands an unquoted body
/// as a double-quoted string, except that `"` is literal). A backslash keeps its meaning
/// before `$`, `` ` `` and `\`, a line continuation is removed, and a backslash is
/// literal otherwise.
pub(crate) fn body_as_script(body: &str) -> String {
    let mut script = String::with_capacity(body.len() + 8);
    script.push_str(": \"");
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.peek().copied() {
                // A line continuation disappears before expansion.
                Some('\n') => {
                    chars.next();
                }
                Some(next @ ('$' | '`' | '\\')) => {
                    script.push('\\');
                    script.push(next);
                    chars.next();
                }
                _ => script.push_str("\\\\"),
            },
            '"' => script.push_str("\\\""),
            _ => script.push(c),
        }
    }
    script.push('"');
    script
}

/// A word or number that bash passes on unchanged ([`plain_word`], finding F2).
fn literal(node: Node<'_>, src: &str) -> Option<String> {
    if !matches!(node.kind(), "word" | "number") {
        return None;
    }
    plain_word(node, src)
}

/// The only `command` node of the tree; `None` when there are none or several (a
/// command substitution inside the heredoc body counts as a second command).
fn single_command(root: Node<'_>) -> Option<Node<'_>> {
    let mut found = None;
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "command" {
            if found.is_some() {
                return None;
            }
            found = Some(node);
        }
        stack.extend(named_children(node));
    }
    found
}

/// Codex's `parse_shell_lc_single_command_prefix`: for an exact wrapper
/// `[shell, -c|-lc, script]` whose script is one command fed by a heredoc, that command's
/// literal words.
///
/// Returns `None` ("not safely understood") for any other argv or script; see
/// spec 03 edge case 5 for the eligibility rules.
pub fn parse_shell_lc_single_command_prefix(argv: &[String]) -> Option<Vec<String>> {
    let wrapper = extract_shell_wrapper(argv)?;
    if wrapper.form != WrapperForm::Exact {
        return None;
    }
    let tree = parse_bash(wrapper.script, &ParseBudget::start())?;
    heredoc_command(&tree, wrapper.script)
}
