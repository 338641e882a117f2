//! The deny view (spec 03 "Two views" item 2, edge cases 3, 7, 15).

use airlock_shell::{Note, Via, deny_view, deny_view_with_depth};
use pretty_assertions::assert_eq;

use crate::support::{argv, bash, inner, inner_contains};

/// The `via` path of the first deny-view command equal to `expected`.
fn via_of(command: &[String], expected: &[&str]) -> Vec<Via> {
    deny_view(command)
        .commands
        .into_iter()
        .find(|inner| inner.argv == argv(expected))
        .map(|inner| inner.via)
        .unwrap_or_else(|| panic!("{expected:?} not in the deny view of {command:?}"))
}

fn script_via(step: Via) -> Vec<Via> {
    vec![
        Via::ShellScript {
            program: "bash".into(),
        },
        step,
    ]
}

#[test]
fn the_argv_itself_comes_first() {
    let command = argv(&["git", "push"]);
    assert_eq!(inner(&command), vec![argv(&["git", "push"])]);
    let wrapped = bash("git push");
    assert_eq!(inner(&wrapped)[0], wrapped);
}

#[test]
fn finds_commands_of_plain_scripts() {
    let command = bash("ls && git push | cat");
    assert_eq!(
        inner(&command)[1..],
        [argv(&["ls"]), argv(&["git", "push"]), argv(&["cat"])]
    );
    assert_eq!(
        via_of(&command, &["git", "push"]),
        vec![Via::ShellScript {
            program: "bash".into()
        }]
    );
}

#[test]
fn finds_commands_in_subshells() {
    let command = bash("(curl https://x.invalid)");
    assert_eq!(
        via_of(&command, &["curl", "https://x.invalid"]),
        script_via(Via::Subshell)
    );
}

#[test]
fn finds_commands_in_brace_groups() {
    let command = bash("{ curl https://x.invalid; }");
    assert_eq!(
        via_of(&command, &["curl", "https://x.invalid"]),
        script_via(Via::BraceGroup)
    );
}

#[test]
fn finds_commands_in_command_substitutions() {
    for script in [
        "echo $(git push)",
        "echo `git push`",
        "echo \"$(git push)\"",
        "x=$(git push)",
    ] {
        let command = bash(script);
        assert_eq!(
            via_of(&command, &["git", "push"]),
            script_via(Via::CommandSubstitution),
            "{script}"
        );
    }
}

#[test]
fn finds_commands_in_process_substitutions() {
    let command = bash("diff <(git push) >(cat)");
    assert_eq!(
        via_of(&command, &["git", "push"]),
        script_via(Via::ProcessSubstitution)
    );
    assert!(inner_contains(&command, &["cat"]));
}

#[test]
fn finds_commands_in_control_flow() {
    for script in [
        "if true; then git push; fi",
        "if git push; then :; fi",
        "while true; do git push; done",
        "until false; do git push; done",
        "for u in a b; do git push; done",
        "for ((i=0;i<2;i++)); do git push; done",
        "case x in x) git push;; esac",
    ] {
        let command = bash(script);
        assert_eq!(
            via_of(&command, &["git", "push"]),
            script_via(Via::ControlFlow),
            "{script}"
        );
    }
}

#[test]
fn finds_commands_in_function_bodies() {
    let command = bash("f() { git push; }; f");
    assert_eq!(
        via_of(&command, &["git", "push"]),
        script_via(Via::FunctionBody)
    );
    assert!(inner_contains(&command, &["f"]));
}

#[test]
fn finds_redirected_and_backgrounded_commands() {
    assert!(inner_contains(
        &bash("git status > status.txt && git push"),
        &["git", "push"]
    ));
    assert!(inner_contains(
        &bash("git push 2>err.log | tee log"),
        &["git", "push"]
    ));
    assert!(inner_contains(&bash("nohup git push &"), &["git", "push"]));
    assert!(inner_contains(&bash("! git push"), &["git", "push"]));
}

#[test]
fn words_attached_to_a_redirect_are_arguments() {
    assert!(inner_contains(
        &bash("git push 2>/dev/null --force origin"),
        &["git", "push", "--force", "origin"]
    ));
    assert!(inner_contains(&bash("ls 2>&- -la"), &["ls", "-la"]));
}

#[test]
fn finds_commands_in_heredoc_bodies() {
    let command = bash("cat <<EOF\n$(git push)\nEOF");
    assert_eq!(
        via_of(&command, &["git", "push"]),
        vec![
            Via::ShellScript {
                program: "bash".into()
            },
            Via::Heredoc,
            Via::CommandSubstitution,
        ]
    );
    assert!(inner_contains(&command, &["cat"]));
}

#[test]
fn parses_scripts_fed_to_a_shell_on_stdin() {
    let command = bash("bash <<EOF\ngit push\nEOF");
    assert_eq!(
        via_of(&command, &["git", "push"]),
        vec![
            Via::ShellScript {
                program: "bash".into()
            },
            Via::ShellStdin {
                program: "bash".into()
            }
        ]
    );
    assert!(inner_contains(&bash("sh <<< 'git push'"), &["git", "push"]));
}

#[test]
fn strips_prefix_assignments() {
    assert!(inner_contains(
        &bash("FOO=1 BAR=2 git push"),
        &["git", "push"]
    ));
}

#[test]
fn reads_words_loosely() {
    for script in [
        "\\git push",
        "'g'it push",
        "\"git\" push",
        "git 'push'",
        "g\\it pu\"sh\"",
    ] {
        assert!(inner_contains(&bash(script), &["git", "push"]), "{script}");
    }
    // Expansions stay as their literal text.
    assert!(inner_contains(
        &bash("rm -rf $TARGET"),
        &["rm", "-rf", "$TARGET"]
    ));
    assert!(inner_contains(
        &bash("rm -rf \"$HOME\""),
        &["rm", "-rf", "$HOME"]
    ));
}

#[test]
fn includes_declaration_builtins() {
    assert!(inner_contains(&bash("export A=1; ls"), &["export", "A=1"]));
    assert!(inner_contains(&bash("unset A"), &["unset", "A"]));
}

#[test]
fn nested_shells_are_parsed_recursively() {
    let command = bash("sh -c \"bash -lc 'git push'\"");
    assert_eq!(
        via_of(&command, &["git", "push"]),
        vec![
            Via::ShellScript {
                program: "bash".into()
            },
            Via::ShellScript {
                program: "sh".into()
            },
            Via::ShellScript {
                program: "bash".into()
            },
        ]
    );
}

#[test]
fn extended_wrapper_scripts_are_inspected() {
    for command in [
        argv(&["bash", "-l", "-c", "git push"]),
        argv(&["bash", "-lc", "git push", "extra"]),
        argv(&["dash", "-c", "git push"]),
        argv(&["bash", "-ic", "git push"]),
    ] {
        assert!(inner_contains(&command, &["git", "push"]), "{command:?}");
    }
}

#[test]
fn eval_arguments_are_parsed_as_a_script() {
    let command = bash("eval 'git push'");
    assert_eq!(
        via_of(&command, &["git", "push"]),
        script_via(Via::SplitString {
            wrapper: "eval".into()
        })
    );
}

#[test]
fn recovers_commands_around_syntax_errors() {
    for script in [
        "git push\nif then",
        "echo ok\ngit push\n)",
        "git push; ls | | wc",
        "git push &&",
        "(git push",
        "echo $(git push",
        "{ git push",
    ] {
        assert!(inner_contains(&bash(script), &["git", "push"]), "{script}");
    }
    assert!(inner_contains(
        &bash("timeout 5 git push\nif then"),
        &["git", "push"]
    ));
}

#[test]
fn depth_limit_stops_descent_and_is_reported() {
    let command = argv(&["nice", "nice", "nice", "git", "push"]);
    let view = deny_view_with_depth(&command, 2);
    assert!(!view.is_complete());
    assert_eq!(view.notes, vec![Note::DepthLimitReached { limit: 2 }]);
    assert!(
        !view
            .commands
            .iter()
            .any(|inner| inner.argv == argv(&["git", "push"]))
    );
    let full = deny_view_with_depth(&command, 3);
    assert!(full.is_complete());
    assert!(
        full.commands
            .iter()
            .any(|inner| inner.argv == argv(&["git", "push"]))
    );
}

#[test]
fn deeply_nested_scripts_hit_the_default_limit() {
    // Each `eval` re-parses the rest as a nested script.
    let script = format!("{}git push", "eval ".repeat(40));
    let view = deny_view(&bash(&script));
    assert!(!view.is_complete());
    assert!(
        !view
            .commands
            .iter()
            .any(|inner| inner.argv == argv(&["git", "push"]))
    );
    let shallow = format!("{}git push", "eval ".repeat(5));
    assert!(deny_view(&bash(&shallow)).is_complete());
    assert!(inner_contains(&bash(&shallow), &["git", "push"]));
}

#[test]
fn empty_and_blank_inputs_yield_minimal_views() {
    assert!(deny_view(&[]).commands.is_empty());
    assert!(deny_view(&argv(&[""])).commands.is_empty());
    assert_eq!(inner(&bash("   ")), vec![bash("   ")]);
}
