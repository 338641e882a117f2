//! The deny view's traversal: argv → exec wrappers / nested scripts → syntax tree →
//! commands. Tree walks use an explicit stack; nesting through shells and wrappers is
//! bounded by the collector's depth limit.

use tree_sitter::{Node, Tree};

use super::exec_wrappers::{split_assignment, unwrap_exec_wrapper};
use super::{AssignmentKind, DenyView, EnvAssignment, InnerCommand, Via};
use crate::notes::Note;
use crate::plain::is_blank_script;
use crate::redirect::file_redirect;
use crate::syntax::{ParseBudget, children, named_children, parse_bash, text};
use crate::words::loose_word;
use crate::wrapper::{detect_shell_type, extract_shell_wrapper};

/// Argument-like node kinds that make up a command when tree-sitter could not build one
/// (inside an `ERROR` node).
const WORD_KINDS: &[&str] = &[
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
const NON_ARGUMENT_KINDS: &[&str] = &[
    "variable_assignment",
    "file_redirect",
    "heredoc_redirect",
    "herestring_redirect",
    "comment",
];

pub(super) struct Collector<'p> {
    max_depth: usize,
    budget: ParseBudget,
    /// The outermost wrapper's script, already parsed by the caller.
    preparsed: Option<(&'p str, &'p Tree)>,
    view: DenyView,
}

impl<'p> Collector<'p> {
    pub(super) fn new(
        max_depth: usize,
        budget: ParseBudget,
        preparsed: Option<(&'p str, &'p Tree)>,
    ) -> Self {
        Self {
            max_depth,
            budget,
            preparsed,
            view: DenyView::default(),
        }
    }

    pub(super) fn finish(self) -> DenyView {
        self.view
    }

    fn note(&mut self, note: Note) {
        if !self.view.notes.contains(&note) {
            self.view.notes.push(note);
        }
    }

    /// Records `argv` and descends into what it runs (a shell script or a wrapped
    /// command). `depth` counts the shells and wrappers already entered.
    pub(super) fn visit_argv(&mut self, argv: Vec<String>, via: Vec<Via>, depth: usize) {
        if argv.first().is_none_or(|program| program.is_empty()) {
            return;
        }
        self.view.commands.push(InnerCommand {
            argv: argv.clone(),
            via: via.clone(),
        });
        // `find … -exec CMD … ;` runs CMD for each file: seen as an inner command, so a
        // `forbidden` rule for CMD holds through `find` (red-team review).
        let find_commands = find_exec_commands(&argv);
        if !find_commands.is_empty() {
            if depth >= self.max_depth {
                self.note(Note::DepthLimitReached {
                    limit: self.max_depth,
                });
                return;
            }
            let via = extended(
                &via,
                Via::ExecWrapper {
                    wrapper: "find".to_owned(),
                },
            );
            for command in find_commands {
                self.visit_argv(command, via.clone(), depth + 1);
            }
            return;
        }
        let wrapper = extract_shell_wrapper(&argv);
        let unwrapped = if wrapper.is_none() {
            unwrap_exec_wrapper(&argv)
        } else {
            None
        };
        if wrapper.is_none() && unwrapped.is_none() {
            return;
        }
        if depth >= self.max_depth {
            self.note(Note::DepthLimitReached {
                limit: self.max_depth,
            });
            return;
        }
        if let Some(wrapper) = wrapper {
            let via = extended(
                &via,
                Via::ShellScript {
                    program: wrapper.program.to_owned(),
                },
            );
            self.visit_script(wrapper.script, &via, depth + 1);
            return;
        }
        let Some(unwrapped) = unwrapped else { return };
        for (name, value) in &unwrapped.assignments {
            self.view.assignments.push(EnvAssignment {
                name: (*name).to_owned(),
                value: Some((*value).to_owned()),
                kind: AssignmentKind::ExecWrapper {
                    wrapper: unwrapped.wrapper.to_owned(),
                },
                via: via.clone(),
            });
        }
        if let Some(script) = &unwrapped.script {
            let via = extended(
                &via,
                Via::SplitString {
                    wrapper: unwrapped.wrapper.to_owned(),
                },
            );
            self.visit_script(script, &via, depth + 1);
        }
        if !unwrapped.command.is_empty() {
            let via = extended(
                &via,
                Via::ExecWrapper {
                    wrapper: unwrapped.wrapper.to_owned(),
                },
            );
            self.visit_argv(unwrapped.command.to_vec(), via, depth + 1);
        }
    }

    /// Parses `script` and visits every command in it.
    fn visit_script(&mut self, script: &str, via: &[Via], depth: usize) {
        if is_blank_script(script) {
            return;
        }
        let reused = self
            .preparsed
            .filter(|(text, _)| depth == 1 && *text == script)
            .map(|(_, tree)| tree.clone());
        let Some(tree) = reused.or_else(|| parse_bash(script, self.budget)) else {
            self.note(Note::ScriptUnparsed);
            return;
        };
        // Each entry carries its parent (asking tree-sitter for a parent walks down from
        // the root, which deep trees make quadratic) and the innermost construct.
        let mut stack: Vec<(Node<'_>, Option<Node<'_>>, Option<Via>)> =
            vec![(tree.root_node(), None, None)];
        while let Some((node, parent, context)) = stack.pop() {
            let here = construct(node, context.as_ref()).or(context);
            let mut node_via = via.to_vec();
            node_via.extend(here.clone());
            match node.kind() {
                "command" => self.visit_command(node, parent, script, node_via, depth),
                "declaration_command" => self.visit_declaration(node, script, node_via, depth),
                "unset_command" => {
                    let argv = command_like_argv(node, script);
                    self.visit_argv(argv, node_via, depth);
                }
                "variable_assignment" if is_standalone(parent) => {
                    self.record_assignment(node, script, AssignmentKind::Standalone, node_via);
                }
                "ERROR" => self.visit_error_words(node, script, &node_via, depth),
                _ => {}
            }
            for child in children(node).into_iter().rev() {
                stack.push((child, Some(node), here.clone()));
            }
        }
    }

    /// A `command` node: prefix assignments, then the argv (including words that
    /// tree-sitter attached to a redirect), then what it runs. A shell reading its script
    /// from a heredoc or herestring gets that script parsed too.
    fn visit_command(
        &mut self,
        node: Node<'_>,
        parent: Option<Node<'_>>,
        src: &str,
        via: Vec<Via>,
        depth: usize,
    ) {
        let mut argv = Vec::new();
        let redirects = redirects_of(node, parent);
        for child in named_children(node) {
            match child.kind() {
                "variable_assignment" => {
                    self.record_assignment(child, src, AssignmentKind::CommandPrefix, via.clone());
                }
                kind if NON_ARGUMENT_KINDS.contains(&kind) => {}
                _ => argv.push(loose_word(child, src)),
            }
        }
        for redirect in &redirects {
            if redirect.kind() == "file_redirect" {
                let parts = file_redirect(*redirect, src);
                argv.extend(parts.trailing_args.iter().map(|arg| loose_word(*arg, src)));
            }
        }
        let stdin_script = argv
            .first()
            .filter(|program| detect_shell_type(program).is_some())
            .filter(|_| extract_shell_wrapper(&argv).is_none())
            .and_then(|program| {
                stdin_script(&redirects, src).map(|script| (program.clone(), script))
            });
        self.visit_argv(argv, via.clone(), depth);
        if let Some((program, script)) = stdin_script {
            if depth >= self.max_depth {
                self.note(Note::DepthLimitReached {
                    limit: self.max_depth,
                });
                return;
            }
            let via = extended(&via, Via::ShellStdin { program });
            self.visit_script(&script, &via, depth + 1);
        }
    }

    /// `export` / `declare` / `typeset` / `local` / `readonly`: every name they set or
    /// export is an assignment (spec 03 edge case 14), and the builtin itself is a
    /// command of the view.
    fn visit_declaration(&mut self, node: Node<'_>, src: &str, via: Vec<Via>, depth: usize) {
        let keyword = children(node)
            .into_iter()
            .find(|child| !child.is_named())
            .map(|child| text(child, src).to_owned())
            .unwrap_or_default();
        for child in named_children(node) {
            let kind = AssignmentKind::Declaration {
                keyword: keyword.clone(),
            };
            match child.kind() {
                "variable_assignment" => self.record_assignment(child, src, kind, via.clone()),
                "variable_name" => self.view.assignments.push(EnvAssignment {
                    name: text(child, src).to_owned(),
                    value: None,
                    kind,
                    via: via.clone(),
                }),
                _ => {
                    // `export "NAME=value"` and `export NAME` spelled as quoted words.
                    let word = loose_word(child, src);
                    if word.starts_with(['-', '+']) {
                        continue;
                    }
                    let (name, value) = match split_assignment(&word) {
                        Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
                        None if super::exec_wrappers::is_variable_name(&word) => (word, None),
                        None => continue,
                    };
                    self.view.assignments.push(EnvAssignment {
                        name,
                        value,
                        kind,
                        via: via.clone(),
                    });
                }
            }
        }
        let argv = command_like_argv(node, src);
        self.visit_argv(argv, via, depth);
    }

    fn record_assignment(
        &mut self,
        node: Node<'_>,
        src: &str,
        kind: AssignmentKind,
        via: Vec<Via>,
    ) {
        let Some(name_node) = node.child_by_field_name("name") else {
            return;
        };
        let name_node = if name_node.kind() == "subscript" {
            name_node.child_by_field_name("name").unwrap_or(name_node)
        } else {
            name_node
        };
        let value = node
            .child_by_field_name("value")
            .map(|value| loose_word(value, src))
            .unwrap_or_default();
        self.view.assignments.push(EnvAssignment {
            name: text(name_node, src).to_owned(),
            value: Some(value),
            kind,
            via,
        });
    }

    /// Inside an `ERROR` node, runs of consecutive word-like children are treated as
    /// commands: bash may still run them (spec 03 edge case 15).
    fn visit_error_words(&mut self, node: Node<'_>, src: &str, via: &[Via], depth: usize) {
        let mut run: Vec<String> = Vec::new();
        for child in children(node) {
            if child.is_named() && WORD_KINDS.contains(&child.kind()) {
                run.push(loose_word(child, src));
            } else if !run.is_empty() {
                self.visit_argv(std::mem::take(&mut run), via.to_vec(), depth);
            }
        }
        if !run.is_empty() {
            self.visit_argv(run, via.to_vec(), depth);
        }
    }
}

fn extended(via: &[Via], step: Via) -> Vec<Via> {
    let mut path = via.to_vec();
    path.push(step);
    path
}

/// The construct a node opens, if it is one the deny view reports.
fn construct(node: Node<'_>, context: Option<&Via>) -> Option<Via> {
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
fn redirects_of<'t>(command: Node<'t>, parent: Option<Node<'t>>) -> Vec<Node<'t>> {
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

/// The text a heredoc or herestring feeds on stdin, if any.
fn stdin_script(redirects: &[Node<'_>], src: &str) -> Option<String> {
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
fn command_like_argv(node: Node<'_>, src: &str) -> Vec<String> {
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
fn is_standalone(parent: Option<Node<'_>>) -> bool {
    parent.is_none_or(|parent| !matches!(parent.kind(), "command" | "declaration_command"))
}

/// The commands of `find`'s `-exec`, `-execdir`, `-ok` and `-okdir` actions (each up to
/// its `;` or `+`); none when `argv` is not a `find` command.
fn find_exec_commands(argv: &[String]) -> Vec<Vec<String>> {
    if argv
        .first()
        .is_none_or(|program| super::exec_wrappers::basename(program) != "find")
    {
        return Vec::new();
    }
    let mut commands = Vec::new();
    let mut tokens = argv.iter().skip(1);
    while let Some(token) = tokens.next() {
        if matches!(token.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let command: Vec<String> = tokens
                .by_ref()
                .take_while(|word| !matches!(word.as_str(), ";" | "+"))
                .cloned()
                .collect();
            if !command.is_empty() {
                commands.push(command);
            }
        }
    }
    commands
}

#[cfg(test)]
mod find_tests {
    use super::find_exec_commands;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn find_actions_are_inner_commands() {
        assert_eq!(
            find_exec_commands(&words("find . -name x -exec rm -f {} ; -okdir curl {} +")),
            vec![words("rm -f {}"), words("curl {}")]
        );
        assert!(find_exec_commands(&words("find . -name -exec")).is_empty());
        assert!(find_exec_commands(&words("grep -exec rm")).is_empty());
        assert_eq!(
            find_exec_commands(&words("/usr/bin/find / -execdir sh -c x ;")),
            vec![words("sh -c x")]
        );
    }
}
