//! tree-sitter-bash glue: parsing a script and reading node text.
//!
//! Everything that walks a tree does so with an explicit stack, never by recursion, so a
//! hostile script with deeply nested constructs cannot overflow the thread's stack.

use tree_sitter::{Node, Parser, Tree};

/// Scripts longer than this are not parsed at all and count as not understood
/// (non-plain, deny view incomplete). Far above anything an agent sends; it bounds the
/// work one command can cost.
pub const MAX_SCRIPT_BYTES: usize = 1 << 20;

/// Parses `script` with tree-sitter-bash.
///
/// Returns `None` when the script is too long ([`MAX_SCRIPT_BYTES`]) or the grammar
/// cannot be loaded; `None` means "not safely understood". A returned tree may contain
/// syntax errors: callers check `has_error()` where they need a clean parse.
pub(crate) fn parse_bash(script: &str) -> Option<Tree> {
    if script.len() > MAX_SCRIPT_BYTES {
        return None;
    }
    let mut parser = Parser::new();
    let language: tree_sitter::Language = tree_sitter_bash::LANGUAGE.into();
    parser.set_language(&language).ok()?;
    parser.parse(script, None)
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
