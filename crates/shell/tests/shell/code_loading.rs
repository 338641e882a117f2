//! Code-loading environment assignments (spec 03 "Policy evaluation" item 4, edge
//! cases 14 and 22).

use airlock_shell::{AssignmentKind, is_code_loading_variable, parse_command};
use pretty_assertions::assert_eq;

use crate::support::{argv, bash};

fn code_loading_names(command: &[String]) -> Vec<String> {
    parse_command(command)
        .expect("valid argv")
        .code_loading_assignments()
        .map(|assignment| assignment.name.clone())
        .collect()
}

#[test]
fn listed_variables_and_families() {
    for name in [
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "DYLD_INSERT_LIBRARIES",
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "PAGER",
        "EDITOR",
        "VISUAL",
        "PYTHONSTARTUP",
        "PERL5OPT",
        "NODE_OPTIONS",
        "RUBYOPT",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_EXTERNAL_DIFF",
        "GIT_PAGER",
        "GIT_EDITOR",
        "GIT_SEQUENCE_EDITOR",
        "GIT_ASKPASS",
        "GIT_PROXY_COMMAND",
        "GIT_EXEC_PATH",
        "GIT_TEMPLATE_DIR",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_KEY_0",
        "GIT_CONFIG_VALUE_12",
    ] {
        assert!(is_code_loading_variable(name), "{name}");
    }
}

#[test]
fn other_variables_are_not_code_loading() {
    for name in [
        "GIT_AUTHOR_NAME",
        "GIT_TRACE",
        "TZ",
        "FOO",
        "PATH",
        "ld_preload",
        "XLD_PRELOAD",
        "GIT_CONFIG",
    ] {
        assert!(!is_code_loading_variable(name), "{name}");
    }
}

#[test]
fn prefix_assignments() {
    assert_eq!(
        code_loading_names(&bash("LD_PRELOAD=/tmp/e.so ls")),
        ["LD_PRELOAD"]
    );
    assert_eq!(
        code_loading_names(&bash("(LD_PRELOAD=/tmp/e.so ls)")),
        ["LD_PRELOAD"]
    );
    assert_eq!(
        code_loading_names(&bash("NODE_OPTIONS='--require /tmp/x.js' node app.js")),
        ["NODE_OPTIONS"]
    );
    assert!(code_loading_names(&bash("TZ=UTC date")).is_empty());
}

#[test]
fn env_and_sudo_assignments() {
    assert_eq!(
        code_loading_names(&argv(&["env", "LD_PRELOAD=/tmp/e.so", "ls"])),
        ["LD_PRELOAD"]
    );
    assert_eq!(
        code_loading_names(&bash("env GIT_ASKPASS=/tmp/p git fetch")),
        ["GIT_ASKPASS"]
    );
    assert_eq!(
        code_loading_names(&argv(&["sudo", "LD_PRELOAD=x", "ls"])),
        ["LD_PRELOAD"]
    );
}

#[test]
fn declarations_anywhere_in_the_script() {
    assert_eq!(
        code_loading_names(&bash("export LD_PRELOAD=/tmp/e.so; ls")),
        ["LD_PRELOAD"]
    );
    assert_eq!(
        code_loading_names(&bash("declare -x GIT_SSH=/tmp/ssh; git fetch")),
        ["GIT_SSH"]
    );
    assert_eq!(
        code_loading_names(&bash("typeset -x EDITOR=/tmp/e && git commit")),
        ["EDITOR"]
    );
    assert_eq!(
        code_loading_names(&bash("f() { local PAGER=/tmp/p; }")),
        ["PAGER"]
    );
    assert_eq!(
        code_loading_names(&bash("export \"BASH_ENV=/tmp/x\"")),
        ["BASH_ENV"]
    );
    assert_eq!(
        code_loading_names(&bash(
            "export GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=/tmp/p; GIT_CONFIG_COUNT=1 git log"
        )),
        ["GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "GIT_CONFIG_COUNT"]
    );
}

#[test]
fn export_without_a_value_counts() {
    let parsed = parse_command(&bash("export LD_PRELOAD; ls")).expect("valid argv");
    let found: Vec<_> = parsed.code_loading_assignments().collect();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].value, None);
    assert_eq!(
        found[0].kind,
        AssignmentKind::Declaration {
            keyword: "export".into()
        }
    );
}

#[test]
fn standalone_assignments_count() {
    assert_eq!(
        code_loading_names(&bash("LD_PRELOAD=/tmp/x; ls")),
        ["LD_PRELOAD"]
    );
}

#[test]
fn nested_scripts_and_syntax_errors_are_searched() {
    assert_eq!(
        code_loading_names(&bash("sh -c 'LD_PRELOAD=/x ls'")),
        ["LD_PRELOAD"]
    );
    assert_eq!(
        code_loading_names(&bash("export LD_PRELOAD=/tmp/e.so\nls &&")),
        ["LD_PRELOAD"]
    );
}
