//! Known-safe commands (reference §4, spec 03 "Known-safe commands", edge cases 9, 10).

use std::collections::BTreeSet;

use airlock_shell::{
    ExtraSafeCommand, ExtraSafeCommandError, SafeCommandOptions, is_known_safe_command,
};

use crate::support::{argv, bash};

fn safe(command: &[&str]) -> bool {
    is_known_safe_command(&argv(command), &SafeCommandOptions::default())
}

fn safe_script(script: &str) -> bool {
    is_known_safe_command(&bash(script), &SafeCommandOptions::default())
}

#[test]
fn always_safe_programs() {
    for program in [
        "cat", "cd", "cut", "echo", "expr", "false", "grep", "head", "id", "ls", "nl", "paste",
        "pwd", "rev", "seq", "stat", "tail", "tr", "true", "uname", "uniq", "wc", "which",
        "whoami", "numfmt", "tac",
    ] {
        assert!(safe(&[program, "x"]), "{program}");
    }
}

#[test]
fn other_programs_are_not_safe() {
    for command in [
        &["cargo", "check"][..],
        &["rm", "x"],
        &["touch", "x"],
        &["GIT", "status"],
        &["ｌｓ"],
    ] {
        assert!(!safe(command), "{command:?}");
    }
    assert!(!safe(&[]));
}

#[test]
fn base64_without_output_options() {
    assert!(safe(&["base64", "file.bin"]));
    assert!(safe(&["base64", "-d", "file.b64"]));
    assert!(!safe(&["base64", "-o", "out.bin", "in.bin"]));
    assert!(!safe(&["base64", "-oout.bin", "in.bin"]));
    assert!(!safe(&["base64", "--output", "out.bin"]));
    assert!(!safe(&["base64", "--output=out.bin", "in.bin"]));
}

#[test]
fn find_without_actions_that_run_or_write() {
    assert!(safe(&["find", ".", "-name", "*.rs"]));
    for action in [
        "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf",
    ] {
        assert!(!safe(&["find", ".", action, "x"]), "{action}");
    }
}

#[test]
fn rg_without_preprocessors_or_decompression() {
    assert!(safe(&["rg", "TODO"]));
    assert!(safe(&["rg", "-n", "-g", "*.rs", "TODO"]));
    for command in [
        &["rg", "--pre", "sh", "x"][..],
        &["rg", "--pre=sh", "x"],
        &["rg", "--hostname-bin", "sh", "x"],
        &["rg", "--hostname-bin=sh", "x"],
        &["rg", "-z", "x"],
        &["rg", "--search-zip", "x"],
        &["rg", "-iz", "x"],
    ] {
        assert!(!safe(command), "{command:?}");
    }
}

#[test]
fn git_read_only_subcommands() {
    for command in [
        &["git", "status"][..],
        &["git", "log", "--oneline", "-5"],
        &["git", "diff", "HEAD~1"],
        &["git", "show", "HEAD"],
        &["git", "-C", ".", "status"],
        &["git", "--no-pager", "log"],
        &["git", "log", "-p"],
        &["git", "diff", "-p", "--stat"],
    ] {
        assert!(safe(command), "{command:?}");
    }
    for command in [
        &["git", "fetch"][..],
        &["git", "checkout", "status"],
        &["git"],
        &["git", "push"],
    ] {
        assert!(!safe(command), "{command:?}");
    }
}

#[test]
fn git_redirecting_options_are_unsafe_anywhere() {
    for command in [
        &["git", "-c", "core.pager=sh -c id", "log"][..],
        &["git", "-ccore.pager=cat", "log"],
        &["git", "--config-env=core.pager=PAGER_VAR", "log"],
        &["git", "--config-env", "core.pager=X", "log"],
        &["git", "--exec-path=/tmp", "status"],
        &["git", "--git-dir=/tmp/x", "status"],
        &["git", "--work-tree=/tmp", "status"],
        &["git", "--namespace=x", "log"],
        &["git", "--super-prefix=x/", "status"],
        &["git", "log", "-c"],
    ] {
        assert!(!safe(command), "{command:?}");
    }
}

#[test]
fn git_pager_only_as_global_option_and_paginate_anywhere() {
    assert!(!safe(&["git", "-p", "log"]));
    assert!(!safe(&["git", "-C", ".", "-p", "log"]));
    assert!(!safe(&["git", "--paginate", "log"]));
    assert!(!safe(&["git", "log", "--paginate"]));
    assert!(safe(&["git", "log", "-p"]));
}

#[test]
fn git_subcommand_options_that_write_or_run() {
    for command in [
        &["git", "log", "--output=/tmp/x"][..],
        &["git", "log", "--output", "/tmp/x"],
        &["git", "log", "--ext-diff"],
        &["git", "show", "--textconv", "HEAD"],
        &["git", "log", "--exec=x"],
        &["git", "diff", "--exec", "x"],
    ] {
        assert!(!safe(command), "{command:?}");
    }
}

#[test]
fn git_branch_only_with_read_only_flags() {
    for command in [
        &["git", "branch"][..],
        &["git", "branch", "--show-current"],
        &["git", "branch", "-a", "-v"],
        &["git", "branch", "--list"],
        &["git", "branch", "-vv", "--format=%(refname)"],
        &["git", "-C", ".", "branch", "--show-current"],
    ] {
        assert!(safe(command), "{command:?}");
    }
    for command in [
        &["git", "branch", "new-feature"][..],
        &["git", "branch", "-D", "x"],
        &["git", "branch", "-a", "x"],
    ] {
        assert!(!safe(command), "{command:?}");
    }
}

#[test]
fn sed_only_prints_line_ranges() {
    assert!(safe(&["sed", "-n", "5p", "a.txt"]));
    assert!(safe(&["sed", "-n", "1,10p", "a.txt"]));
    assert!(safe(&["sed", "-n", "1,10p"]));
    for command in [
        &["sed", "-n", "1,10p", "a.txt", "b.txt"][..],
        &["sed", "-n", "/foo/p", "a.txt"],
        &["sed", "-n", "1,$p", "a.txt"],
        &["sed", "5p", "a.txt"],
        &["sed", "-n", "p", "a.txt"],
        &["sed", "-n", ",5p", "a.txt"],
        &["sed", "-i", "s/a/b/", "a.txt"],
    ] {
        assert!(!safe(command), "{command:?}");
    }
}

#[test]
fn program_path_must_be_trustworthy() {
    for command in [
        &["/bin/ls", "-la"][..],
        &["/usr/bin/git", "status"],
        &["/usr/local/bin/rg", "x"],
        &["/sbin/ls"],
        &["/usr/bin/sed", "-n", "5p", "a"],
    ] {
        assert!(safe(command), "{command:?}");
    }
    for command in [
        &["./cat", "x"][..],
        &["/tmp/ls"],
        &["/opt/tools/ls"],
        &["bin/ls"],
        &["/usr/bin/../../tmp/ls"],
        &["./git", "status"],
    ] {
        assert!(!safe(command), "{command:?}");
    }
}

#[test]
fn host_executables_are_trustworthy() {
    let options = SafeCommandOptions {
        host_executables: BTreeSet::from(["/opt/git/bin/git".to_owned()]),
        ..SafeCommandOptions::default()
    };
    assert!(is_known_safe_command(
        &argv(&["/opt/git/bin/git", "status"]),
        &options
    ));
    assert!(!is_known_safe_command(
        &argv(&["/tmp/git", "status"]),
        &options
    ));
}

#[test]
fn plain_wrapper_scripts_are_safe_when_every_segment_is() {
    assert!(safe_script("ls && cat README.md"));
    assert!(safe_script("git status && git log -1 | head -n 5"));
    assert!(safe_script("ls 2>/dev/null"));
    assert!(!safe_script("ls && cargo build"));
    assert!(!safe_script("git status && git -c core.pager=cat log"));
    assert!(!safe_script("ls > out.txt"));
    assert!(!safe_script("(ls)"));
    assert!(!safe_script("cat <<EOF\nx\nEOF"));
    assert!(!is_known_safe_command(
        &argv(&["bash", "-l", "-c", "ls"]),
        &SafeCommandOptions::default()
    ));
}

#[test]
fn extra_safe_commands_match_prefix_and_refuse_forbidden_args() {
    let options = SafeCommandOptions {
        extra_safe_commands: vec![
            ExtraSafeCommand::parse("cargo check").expect("valid"),
            ExtraSafeCommand::new(argv(&["just", "fmt"]), argv(&["--exec"])).expect("valid"),
            ExtraSafeCommand::parse("/opt/bin/tool").expect("valid"),
            ExtraSafeCommand::parse("git").expect("valid"),
        ],
        ..SafeCommandOptions::default()
    };
    let safe_with = |command: &[&str]| is_known_safe_command(&argv(command), &options);
    assert!(safe_with(&["cargo", "check", "--all"]));
    assert!(safe_with(&["/usr/bin/cargo", "check"]));
    assert!(!safe_with(&["cargo", "build"]));
    assert!(!safe_with(&["/tmp/cargo", "check"]));
    assert!(safe_with(&["just", "fmt", "x"]));
    assert!(!safe_with(&["just", "fmt", "--exec"]));
    assert!(!safe_with(&["just", "fmt", "--exec=sh"]));
    assert!(safe_with(&["/opt/bin/tool", "x"]));
    assert!(!safe_with(&["tool", "x"]));
    // An extra entry never vouches for a dangerous command.
    assert!(safe_with(&["git", "fetch"]));
    assert!(!safe_with(&["git", "push", "--force"]));
    assert!(is_known_safe_command(&bash("cargo check && ls"), &options));
}

#[test]
fn extra_safe_commands_deserialize_from_config_shapes() {
    let entries: Vec<ExtraSafeCommand> = serde_json::from_str(
        r#"["make lint", ["cargo", "check"], {"command": "just fmt", "forbidden_args": ["--exec"]}, {"command": ["npm", "test"]}]"#,
    )
    .expect("valid config");
    assert_eq!(entries[0].prefix(), &argv(&["make", "lint"])[..]);
    assert_eq!(entries[1].prefix(), &argv(&["cargo", "check"])[..]);
    assert_eq!(entries[2].forbidden_args(), &argv(&["--exec"])[..]);
    assert_eq!(entries[3].prefix(), &argv(&["npm", "test"])[..]);
}

#[test]
fn invalid_extra_safe_commands_are_errors() {
    assert_eq!(
        ExtraSafeCommand::parse(""),
        Err(ExtraSafeCommandError::Empty)
    );
    assert_eq!(
        ExtraSafeCommand::parse("make 'lint"),
        Err(ExtraSafeCommandError::Unsplittable("make 'lint".into()))
    );
    assert!(matches!(
        ExtraSafeCommand::new(argv(&["make", ""]), vec![]),
        Err(ExtraSafeCommandError::EmptyWord(_))
    ));
    assert!(serde_json::from_str::<ExtraSafeCommand>("[]").is_err());
    assert!(serde_json::from_str::<ExtraSafeCommand>("42").is_err());
}
