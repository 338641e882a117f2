//! Reading `file_redirect` nodes: which redirects are harmless, and which words
//! tree-sitter attached to a redirect although they are command arguments.
//!
//! Spec 03 edge cases 6 and 22.

use tree_sitter::Node;

use crate::syntax::{children, text};

/// The parts of a `file_redirect` node.
pub(crate) struct FileRedirect<'t> {
    /// The operator token (`>`, `>>`, `<`, `&>`, `>&`, `>&-`, `<&`, `>|`, `<>`, ...).
    pub operator: String,
    /// The redirect target, absent for descriptor-closing operators (`>&-`).
    pub destination: Option<Node<'t>>,
    /// Words after the target. tree-sitter-bash attaches them to the redirect
    /// (`ls >/dev/null -la`), but bash passes them to the command as arguments.
    pub trailing_args: Vec<Node<'t>>,
}

/// Splits a `file_redirect` node into operator, target and trailing arguments.
pub(crate) fn file_redirect<'t>(node: Node<'t>, src: &str) -> FileRedirect<'t> {
    let mut operator = String::new();
    let mut destination = None;
    let mut trailing_args = Vec::new();
    for child in children(node) {
        if !child.is_named() {
            if operator.is_empty() {
                operator = text(child, src).to_owned();
            }
            continue;
        }
        if child.kind() == "file_descriptor" {
            continue;
        }
        let closes_descriptor = operator.ends_with("&-");
        if destination.is_none() && !closes_descriptor {
            destination = Some(child);
        } else {
            trailing_args.push(child);
        }
    }
    FileRedirect {
        operator,
        destination,
        trailing_args,
    }
}

/// Whether a `file_redirect` keeps a script plain (spec 03 edge cases 6 and 22): a
/// descriptor duplication `N>&M` / `>&M` with a numeric target, or `>`, `>>`, `<` (with
/// or without a descriptor number) or `&>` whose target is the unquoted word
/// `/dev/null`. Everything else is not harmless: `2>&-`, `<&3`, `>|`, `<>`, `&>>`,
/// quoted or expanded targets, and redirects followed by further words (tree-sitter
/// attaches those to the redirect; the plain view does not reorder them).
pub(crate) fn is_harmless_redirect(node: Node<'_>, src: &str) -> bool {
    let redirect = file_redirect(node, src);
    if !redirect.trailing_args.is_empty() {
        return false;
    }
    let Some(target) = redirect.destination else {
        return false;
    };
    match redirect.operator.as_str() {
        ">&" => target.kind() == "number" && text(target, src).bytes().all(|b| b.is_ascii_digit()),
        ">" | ">>" | "<" | "&>" => target.kind() == "word" && text(target, src) == "/dev/null",
        _ => false,
    }
}
