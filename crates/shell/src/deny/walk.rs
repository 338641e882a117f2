//! The deny view's traversal: argv → exec wrappers / nested scripts → syntax tree →
//! commands. Tree walks use an explicit stack; nesting through shells and wrappers is
//! bounded by the collector's depth limit.

use tree_sitter::{Node, Tree};

use super::exec_wrappers::{find_actions, split_assignment, unwrap_exec_wrapper};
use super::nodes::{
    NON_ARGUMENT_KINDS, WORD_KINDS, command_like_argv, construct, extended, heredoc_line_words,
    is_standalone, printed_words, redirects_of, stage_argv, stdin_script, stdin_shell,
};
use super::spellings::respelled;
use super::{AssignmentKind, DenyView, EnvAssignment, InnerCommand, Via};
use crate::git::{GitRuns, git_runs};
use crate::heredoc::{body_as_script, body_runs_commands, unquoted_body};
use crate::heredoc_bounds::heredocs_read_as_bash;
use crate::notes::Note;
use crate::plain::is_blank_script;
use crate::redirect::file_redirect;
use crate::syntax::{ParseBudget, children, named_children, parse_bash, text};
use crate::words::loose_word;
use crate::wrapper::{detect_shell_type, extract_shell_wrapper};

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
        if let Some(runs) = git_runs(&argv) {
            self.visit_git(runs, &via, depth);
            return;
        }
        let actions = find_actions(&argv);
        if !actions.is_empty() {
            if depth >= self.max_depth {
                self.note(Note::DepthLimitReached {
                    limit: self.max_depth,
                });
                return;
            }
            let find_via = extended(
                &via,
                Via::ExecWrapper {
                    wrapper: "find".to_owned(),
                },
            );
            for action in actions {
                self.visit_argv(action.to_vec(), find_via.clone(), depth + 1);
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

    /// Parses `script` and visits every command in it, and once more in the spelling of
    /// [`respelled_for_tree_sitter`] when that differs.
    fn visit_script(&mut self, script: &str, via: &[Via], depth: usize) {
        self.visit_script_text(script, via, depth, true);
        if let Some(respelled) = respelled_for_tree_sitter(script) {
            self.visit_script_text(&respelled, via, depth, false);
        }
    }

    /// [`Self::visit_script`] for one spelling of the script; `as_written` is false for
    /// the joined spelling, whose heredocs are not checked against bash's reading (the
    /// script as written is).
    fn visit_script_text(&mut self, script: &str, via: &[Via], depth: usize, as_written: bool) {
        if is_blank_script(script) {
            return;
        }
        let reused = self
            .preparsed
            .filter(|(text, _)| depth == 1 && *text == script)
            .map(|(_, tree)| tree.clone());
        let Some(tree) = reused.or_else(|| parse_bash(script, &self.budget)) else {
            self.note(Note::ScriptUnparsed);
            return;
        };
        if as_written && !heredocs_read_as_bash(tree.root_node(), script) {
            self.note(Note::HeredocUnclear);
        }
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
                "pipeline" => self.visit_pipeline(node, script, &node_via, depth),
                "heredoc_body" | "simple_heredoc_body" => {
                    // tree-sitter does not parse backticks in a body, so the body is read
                    // again as a double-quoted string; a quoted body is literal text.
                    if let Some(body) = parent.and_then(|redirect| unquoted_body(redirect, script))
                    {
                        self.visit_heredoc_body(body, &node_via, depth);
                    }
                    continue;
                }
                _ => {}
            }
            for child in children(node).into_iter().rev() {
                stack.push((child, Some(node), here.clone()));
            }
        }
    }

    /// What a `git` argv with global options runs (issue 18 item 4): the command without
    /// them, the script of a `!`-alias, or unknown code for an alias defined elsewhere.
    fn visit_git(&mut self, runs: GitRuns, via: &[Via], depth: usize) {
        if depth >= self.max_depth {
            self.note(Note::DepthLimitReached {
                limit: self.max_depth,
            });
            return;
        }
        let via = extended(via, Via::GitGlobalOptions);
        match runs {
            GitRuns::Command(command) => self.visit_argv(command, via, depth + 1),
            GitRuns::Script(script) => self.visit_script(&script, &via, depth + 1),
            GitRuns::Unknown => self.note(Note::UnknownCode {
                program: "git".to_owned(),
            }),
        }
    }

    /// A pipeline whose later stage is a shell reading its script from the pipe
    /// (`curl … | sh`, `… | sudo bash -s`): what that shell runs is unknown code
    /// ([`Note::UnknownCode`]); when the stage before it only prints literal words
    /// (`echo …`, `printf …`), those words are also read as the script (issue 18 item 2).
    fn visit_pipeline(&mut self, node: Node<'_>, src: &str, via: &[Via], depth: usize) {
        let stages: Vec<Node<'_>> = named_children(node)
            .into_iter()
            .filter(|stage| matches!(stage.kind(), "command" | "redirected_statement"))
            .collect();
        for pair in stages.windows(2) {
            let [feeder, reader] = pair else { continue };
            let Some(program) = stdin_shell(&stage_argv(*reader, src)) else {
                continue;
            };
            self.note(Note::UnknownCode {
                program: program.clone(),
            });
            let printed = stage_argv(*feeder, src);
            let Some(script) = printed_words(&printed) else {
                continue;
            };
            if depth >= self.max_depth {
                self.note(Note::DepthLimitReached {
                    limit: self.max_depth,
                });
                continue;
            }
            let via = extended(via, Via::ShellStdin { program });
            self.visit_script(&script, &via, depth + 1);
        }
    }

    /// The commands an unquoted heredoc body runs while bash expands it (its
    /// `` `…` `` and `$(…)` substitutions; issue 18 item 1, field log BL-08).
    fn visit_heredoc_body(&mut self, body: &str, via: &[Via], depth: usize) {
        if !body_runs_commands(body) {
            return;
        }
        if depth >= self.max_depth {
            self.note(Note::DepthLimitReached {
                limit: self.max_depth,
            });
            return;
        }
        let script = body_as_script(body);
        let first = self.view.commands.len();
        self.visit_script(&script, via, depth + 1);
        // The `:` that carries the string is not a command of the original script.
        if self
            .view
            .commands
            .get(first)
            .is_some_and(|carrier| carrier.argv.first().is_some_and(|word| word == ":"))
        {
            self.view.commands.remove(first);
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
        let mut after_heredoc = Vec::new();
        for redirect in &redirects {
            match redirect.kind() {
                "file_redirect" => {
                    let parts = file_redirect(*redirect, src);
                    argv.extend(parts.trailing_args.iter().map(|arg| loose_word(*arg, src)));
                }
                "heredoc_redirect" => {
                    let (arguments, commands) = heredoc_line_words(*redirect, src);
                    argv.extend(arguments);
                    after_heredoc.extend(commands);
                }
                _ => {}
            }
        }
        let stdin_script = argv
            .first()
            .filter(|program| detect_shell_type(program).is_some())
            .filter(|_| extract_shell_wrapper(&argv).is_none())
            .and_then(|program| {
                stdin_script(&redirects, src).map(|script| (program.clone(), script))
            });
        // Script words only: what bash makes of brace expansions and `$IFS`.
        if let Some(respelled) = respelled(&argv) {
            self.visit_argv(respelled, via.clone(), depth);
        }
        self.visit_argv(argv, via.clone(), depth);
        for command in after_heredoc {
            self.visit_argv(command, via.clone(), depth);
        }
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
        // tree-sitter reads a word that starts with a brace group (`{r,}m`) as the
        // opening of a `{ ...; }` group it cannot close; the ERROR's own text, split into
        // words, is what bash expands (issue 18 item 2).
        let raw = text(node, src);
        if raw.contains('{') && raw.contains(',') {
            let words = shlex::split(raw)
                .unwrap_or_else(|| raw.split_whitespace().map(str::to_owned).collect());
            if let Some(respelled) = respelled(&words) {
                self.visit_argv(respelled, via.to_vec(), depth);
            }
        }
        let mut run: Vec<String> = Vec::new();
        for child in children(node) {
            if child.is_named() && WORD_KINDS.contains(&child.kind()) {
                run.push(loose_word(child, src));
            } else if !run.is_empty() {
                self.visit_words(std::mem::take(&mut run), via, depth);
            }
        }
        if !run.is_empty() {
            self.visit_words(run, via, depth);
        }
    }

    /// A run of script words: its re-spelling (brace expansion, `$IFS`) and itself.
    fn visit_words(&mut self, words: Vec<String>, via: &[Via], depth: usize) {
        if let Some(respelled) = respelled(&words) {
            self.visit_argv(respelled, via.to_vec(), depth);
        }
        self.visit_argv(words, via.to_vec(), depth);
    }
}

/// `script` respelled where tree-sitter reads it otherwise than bash, for the deny view's
/// second reading (findings F2, F4); `None` when nothing changes. Every backslash-newline
/// is removed, as bash removes it before it reads words (tree-sitter splits
/// `git pu\<newline>sh`, which runs `git push`, and joins `git status<newline>\<newline>git
/// push` into one command); then a backslash at the start of a line is dropped
/// (tree-sitter glues `ls<newline>\git push` into one command, bash runs `\git`, that is
/// `git`). Both only ever add commands to the view.
fn respelled_for_tree_sitter(script: &str) -> Option<String> {
    if !script.contains("\\\n") && !script.contains("\n\\") {
        return None;
    }
    let respelled = script.replace("\\\n", "").replace("\n\\", "\n");
    (respelled != script).then_some(respelled)
}
