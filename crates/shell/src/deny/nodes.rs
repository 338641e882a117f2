//! Helpers of the deny view's traversal that read one syntax node or argv: the `Via` step a
//! construct adds, a command's redirects, a pipeline stage's words, what a shell reads on
//! stdin (here-strings, heredocs, `echo … |`), and whether a command stands alone.

use tree_sitter::Node;

use super::Via;
use super::exec_wrappers::{basename, unwrap_exec_wrapper};
use crate::syntax::{children, named_children, text};
use crate::words::loose_word;
use crate::wrapper::{detect_shell_type, extract_shell_wrapper};

/// Argument-like node kinds that make up a command when tree-sitter could not build one
/// (inside an `ERROR` node).
pub(super) const WORD_KINDS: &[&str] = &[
    "word",
    "number",
    "string",
    "raw_string",
    "concatenation",
    "simple_expansion",
    "expansion",
    "ansi_c_string",
    "translated_string",
];

/// Children of a `command` that are not words of its argv.
pub(super) const NON_ARGUMENT_KINDS: &[&str] = &[
    "variable_assignment",
    "file_redirect",
    "heredoc_redirect",
    "herestring_redirect",
    "comment",
];

/// `via` with `step` appended.
pub(super) fn extended(via: &[Via], step: Via) -> Vec<Via> {
    let mut path = via.to_vec();
    path.push(step);
    path
}

/// The construct a node opens, if it is one the deny view reports.
pub(super) fn construct(node: Node<'_>, context: Option<&Via>) -> Option<Via> {
    match node.kind() {
        "subshell" => Some(Via::Subshell),
        // A function's body is a brace group; keep reporting it as the function body.
        "compound_statement" if context != Some(&Via::FunctionBody) => Some(Via::BraceGroup),
        "command_substitution" => Some(Via::CommandSubstitution),
        "process_substitution" => Some(Via::ProcessSubstitution),
        "if_statement"
        | "while_statement"
        | "for_statement"
        | "c_style_for_statement"
        | "case_statement" => Some(Via::ControlFlow),
        "function_definition" => Some(Via::FunctionBody),
        "heredoc_body" => Some(Via::Heredoc),
        "ERROR" => Some(Via::SyntaxError),
        _ => None,
    }
}

/// Redirect nodes that apply to `command`: its own children, plus those of the
/// `redirected_statement` (`parent`) it is the body of.
pub(super) fn redirects_of<'t>(command: Node<'t>, parent: Option<Node<'t>>) -> Vec<Node<'t>> {
    let is_redirect = |node: &Node<'_>| {
        matches!(
            node.kind(),
            "file_redirect" | "heredoc_redirect" | "herestring_redirect"
        )
    };
    let mut redirects: Vec<Node<'t>> = named_children(command)
        .into_iter()
        .filter(is_redirect)
        .collect();
    if let Some(parent) = parent
        && parent.kind() == "redirected_statement"
        && parent.child_by_field_name("body") == Some(command)
    {
        redirects.extend(named_children(parent).into_iter().filter(is_redirect));
    }
    redirects
}

/// The loosely read words of a pipeline stage (a `command`, possibly redirected).
pub(super) fn stage_argv(stage: Node<'_>, src: &str) -> Vec<String> {
    let command = if stage.kind() == "redirected_statement" {
        stage.child_by_field_name("body")
    } else {
        Some(stage)
    };
    command
        .filter(|command| command.kind() == "command")
        .map(|command| {
            named_children(command)
                .into_iter()
                .filter(|child| !NON_ARGUMENT_KINDS.contains(&child.kind()))
                .map(|child| loose_word(child, src))
                .collect()
        })
        .unwrap_or_default()
}

/// The shell (as written) when `argv`, through exec wrappers, is a shell that reads its
/// script from stdin: no `-c` and no script-file operand, or `-s` / `-`.
pub(crate) fn stdin_shell(argv: &[String]) -> Option<String> {
    let mut current = argv;
    for _ in 0..super::DEFAULT_MAX_DEPTH {
        let program = current.first()?;
        if detect_shell_type(program).is_some() {
            if extract_shell_wrapper(current).is_some() {
                return None;
            }
            let mut index = 1;
            while let Some(token) = current.get(index) {
                if token == "-" || token == "--" {
                    return Some(program.clone());
                }
                let Some(letters) = token.strip_prefix('-').or_else(|| token.strip_prefix('+'))
                else {
                    // A script file operand, unless `-s` came first.
                    return None;
                };
                if token.starts_with('-') && !token.starts_with("--") && letters.contains('s') {
                    return Some(program.clone());
                }
                index += if !token.starts_with("--") && letters.ends_with(['o', 'O']) {
                    2
                } else {
                    1
                };
            }
            return Some(program.clone());
        }
        current = unwrap_exec_wrapper(current)?.command;
    }
    None
}

/// The script an `echo WORDS…` / `printf WORDS…` stage prints, best effort (options of
/// `echo` dropped, words joined by spaces); `None` for any other program.
pub(super) fn printed_words(argv: &[String]) -> Option<String> {
    let (program, args) = argv.split_first()?;
    let args: Vec<&str> = match basename(program) {
        "echo" => args
            .iter()
            .map(String::as_str)
            .skip_while(|arg| matches!(*arg, "-n" | "-e" | "-E" | "-ne" | "-en"))
            .collect(),
        "printf" => args.iter().map(String::as_str).collect(),
        _ => return None,
    };
    (!args.is_empty()).then(|| args.join(" "))
}

/// The words tree-sitter attaches to a `heredoc_redirect` on the operator's line: those
/// before any syntax error are further arguments of the fed command (`cat <<EOF -n`),
/// each run after an error is a command of its own (`python3 <<PY ; rm -rf x` — the
/// grammar does not see the `;`; issue 18 item 1).
pub(super) fn heredoc_line_words(redirect: Node<'_>, src: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut arguments = Vec::new();
    let mut commands: Vec<Vec<String>> = Vec::new();
    let mut after_error = false;
    for child in named_children(redirect) {
        if child.kind() == "ERROR" {
            after_error = true;
            commands.push(Vec::new());
        } else if WORD_KINDS.contains(&child.kind()) {
            let word = loose_word(child, src);
            match commands.last_mut() {
                Some(command) if after_error => command.push(word),
                _ => arguments.push(word),
            }
        }
    }
    commands.retain(|command| !command.is_empty());
    (arguments, commands)
}

/// The text a heredoc or herestring feeds on stdin, if any.
pub(super) fn stdin_script(redirects: &[Node<'_>], src: &str) -> Option<String> {
    redirects.iter().find_map(|redirect| match redirect.kind() {
        "heredoc_redirect" => named_children(*redirect)
            .into_iter()
            .find(|child| child.kind() == "heredoc_body")
            .map(|body| text(body, src).to_owned()),
        "herestring_redirect" => named_children(*redirect)
            .into_iter()
            .last()
            .map(|word| loose_word(word, src)),
        _ => None,
    })
}

/// `[keyword, words...]` for builtins that tree-sitter does not parse as `command`.
pub(super) fn command_like_argv(node: Node<'_>, src: &str) -> Vec<String> {
    children(node)
        .into_iter()
        .filter(|child| child.kind() != "comment")
        .map(|child| {
            if child.is_named() {
                loose_word(child, src)
            } else {
                text(child, src).to_owned()
            }
        })
        .collect()
}

/// Whether an assignment whose parent is `parent` is a statement by itself (not a
/// command prefix, not an operand of `export`/`declare`).
pub(super) fn is_standalone(parent: Option<Node<'_>>) -> bool {
    parent.is_none_or(|parent| !matches!(parent.kind(), "command" | "declaration_command"))
}
