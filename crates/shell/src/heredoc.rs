//! Codex's heredoc single-command fallback (`parse_shell_lc_single_command_prefix`,
//! reference §2), as current Codex and spec 03 edge case 5 define it.
//!
//! A script such as `python3 - <<'PY' ... PY` is not plain, but it runs exactly one
//! program; its literal words are used for rule matching only (never a sandbox bypass,
//! never an amendment).

use tree_sitter::{Node, Tree};

use crate::syntax::{ParseBudget, has_descendant_kind, named_children, parse_bash, text};
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
    if root.has_error() || !has_descendant_kind(root, &["heredoc_redirect"]) {
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
    let command = single_command(root)?;
    let mut words = Vec::new();
    for child in named_children(command) {
        match child.kind() {
            "command_name" => words.push(literal(child.named_child(0)?, src)?),
            "word" | "number" => words.push(literal(child, src)?),
            kind if HEREDOC_ATTACHMENTS.contains(&kind) => {}
            _ => return None,
        }
    }
    (!words.is_empty()).then_some(words)
}

/// A word or number with no expansion inside.
fn literal(node: Node<'_>, src: &str) -> Option<String> {
    let is_literal = matches!(node.kind(), "word" | "number") && node.named_child_count() == 0;
    is_literal.then(|| text(node, src).to_owned())
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
