//! Dangerous commands: one test per table entry (spec 03 "Dangerous commands", edge
//! cases 7 and 8, reference §5).

use airlock_shell::{DANGER_PATTERNS, command_might_be_dangerous, find_dangerous_command};
use pretty_assertions::assert_eq;

use crate::support::{argv, bash};

/// Asserts that every `flagged` command is found dangerous by pattern `id`, and that no
/// `harmless` command is dangerous at all.
fn check(id: &str, flagged: &[&[&str]], harmless: &[&[&str]]) {
    assert!(
        DANGER_PATTERNS.iter().any(|pattern| pattern.id == id),
        "unknown pattern {id}"
    );
    for command in flagged {
        let finding = find_dangerous_command(&argv(command));
        let matched: Vec<&str> = DANGER_PATTERNS
            .iter()
            .filter(|pattern| pattern.matches(&argv(command)))
            .map(|pattern| pattern.id)
            .collect();
        assert!(finding.is_some(), "{command:?} should be dangerous");
        assert!(
            matched.contains(&id),
            "{command:?} should match {id}, matched {matched:?}"
        );
    }
    for command in harmless {
        assert_eq!(find_dangerous_command(&argv(command)), None, "{command:?}");
    }
}

#[test]
fn rm_force_first() {
    check(
        "rm-force-first",
        &[
            &["rm", "-f", "x"],
            &["rm", "-rf", "build"],
            &["/bin/rm", "-rf", "/tmp/x"],
        ],
        &[
            &["rm", "file.txt"],
            &["rm", "-r", "dir"],
            &["rm", "--", "-f"],
        ],
    );
}

#[test]
fn rm_recursive_force() {
    check(
        "rm-recursive-force",
        &[
            &["rm", "-fr", "x"],
            &["rm", "-Rf", "x"],
            &["rm", "-r", "-f", "x"],
            &["rm", "--recursive", "--force", "x"],
            &["rm", "-v", "-rf", "x"],
            &["rm", "-rvf", "x"],
        ],
        &[
            &["rm", "-r", "x"],
            &["rm", "-v", "x"],
            &["rm", "-r", "--", "-f"],
        ],
    );
}

#[test]
fn find_delete() {
    check(
        "find-delete",
        &[
            &["find", ".", "-name", "*.o", "-delete"],
            &["/usr/bin/find", "/", "-delete"],
        ],
        &[
            &["find", ".", "-name", "-deleted"],
            &["find", ".", "-print"],
        ],
    );
    assert!(command_might_be_dangerous(&bash("cd x && find ~ -delete")));
}

#[test]
fn git_reset_hard() {
    check(
        "git-reset-hard",
        &[
            &["git", "reset", "--hard", "HEAD~1"],
            &["git", "-C", "repo", "reset", "--hard"],
            &["/usr/bin/git", "reset", "--hard"],
        ],
        &[
            &["git", "reset", "HEAD~1"],
            &["git", "reset", "--soft", "HEAD~1"],
            &["git", "log", "--hard"],
        ],
    );
}

#[test]
fn git_clean_force() {
    check(
        "git-clean-force",
        &[
            &["git", "clean", "-f"],
            &["git", "clean", "-fdx"],
            &["git", "clean", "-df"],
            &["git", "clean", "--force"],
            &["git", "-c", "core.x=y", "clean", "-df"],
        ],
        &[
            &["git", "clean", "-n"],
            &["git", "clean", "-dn"],
            &["git", "clean", "--dry-run"],
        ],
    );
}

#[test]
fn git_push_force() {
    check(
        "git-push-force",
        &[
            &["git", "push", "--force"],
            &["git", "push", "-f", "origin", "main"],
            &["git", "push", "-uf", "origin", "main"],
            &["git", "push", "--force-with-lease"],
            &["git", "push", "--force-with-lease=main:abc"],
            &["git", "push", "origin", "+main"],
            &["git", "--git-dir=.git", "push", "-f"],
        ],
        &[
            &["git", "push", "origin", "main"],
            &["git", "push"],
            &["git", "fetch", "-f"],
        ],
    );
}

#[test]
fn dd_output() {
    check(
        "dd-output",
        &[
            &["dd", "if=/dev/zero", "of=/dev/sda"],
            &["/bin/dd", "of=x.img", "bs=1M"],
        ],
        &[&["dd", "if=/dev/zero", "count=1"], &["echo", "of=/dev/sda"]],
    );
}

#[test]
fn mkfs() {
    check(
        "mkfs",
        &[
            &["mkfs.ext4", "/dev/sdb1"],
            &["mkfs", "-t", "ext4", "/dev/sdb1"],
            &["/sbin/mkfs.xfs", "/dev/x"],
        ],
        &[&["mkdir", "x"], &["echo", "mkfs"]],
    );
}

#[test]
fn recursive_chmod_chown_root_or_home() {
    check(
        "recursive-chmod-chown-root-or-home",
        &[
            &["chmod", "-R", "777", "/"],
            &["chmod", "-R", "777", "/*"],
            &["chown", "-R", "nobody", "~"],
            &["chown", "-R", "me", "~/"],
            &["chown", "-R", "me", "$HOME"],
            &["chown", "-R", "me", "${HOME}"],
            &["chmod", "--recursive", "755", "/"],
            &["chown", "-hR", "me", "/"],
        ],
        &[
            &["chmod", "-R", "755", "./build"],
            &["chmod", "-R", "755", "/home"],
            &["chmod", "755", "/"],
            &["chown", "me", "~"],
        ],
    );
}

#[test]
fn shred() {
    check(
        "shred",
        &[&["shred", "-u", "secret.txt"], &["shred", "x"]],
        &[&["shredder", "x"]],
    );
}

#[test]
fn truncate_zero() {
    check(
        "truncate-zero",
        &[
            &["truncate", "-s", "0", "app.log"],
            &["truncate", "-s0", "app.log"],
            &["truncate", "--size=0", "app.log"],
            &["truncate", "--size", "0", "app.log"],
        ],
        &[
            &["truncate", "-s", "10M", "app.log"],
            &["truncate", "-s", "+0", "x"],
        ],
    );
}

#[test]
fn every_table_entry_has_a_test_above() {
    let tested = [
        "rm-force-first",
        "rm-recursive-force",
        "find-delete",
        "git-reset-hard",
        "git-clean-force",
        "git-push-force",
        "dd-output",
        "mkfs",
        "recursive-chmod-chown-root-or-home",
        "shred",
        "truncate-zero",
    ];
    let ids: Vec<&str> = DANGER_PATTERNS.iter().map(|pattern| pattern.id).collect();
    assert_eq!(ids, tested);
}

#[test]
fn wrappers_are_seen_through() {
    for command in [
        &["sudo", "rm", "-rf", "/"][..],
        &["sudo", "-u", "root", "rm", "-rf", "/"],
        &["doas", "rm", "-rf", "/"],
        &["sudo", "-E", "-n", "git", "reset", "--hard"],
        &["doas", "-u", "root", "git", "push", "--force"],
        &["timeout", "5", "rm", "-rf", "x"],
        &["env", "FOO=1", "git", "clean", "-fdx"],
    ] {
        assert!(command_might_be_dangerous(&argv(command)), "{command:?}");
    }
}

#[test]
fn scripts_are_dangerous_when_any_deny_view_command_is() {
    for script in [
        "cd /tmp && rm -rf build",
        "(rm -rf /tmp/x)",
        "echo $(rm -rf /tmp/x)",
        "timeout 5 rm -rf x",
        "if true; then git reset --hard; fi",
        "FOO=1 rm -rf /ws/x",
        "chown -R nobody ~",
        "rm -rf /tmp/x\nif then",
    ] {
        assert!(command_might_be_dangerous(&bash(script)), "{script}");
    }
    assert!(!command_might_be_dangerous(&bash("ls && git status")));
}

#[test]
fn the_finding_names_the_inner_command() {
    let finding =
        find_dangerous_command(&argv(&["timeout", "5", "rm", "-rf", "x"])).expect("dangerous");
    assert_eq!(finding.command, argv(&["rm", "-rf", "x"]));
    assert_eq!(finding.pattern.id, "rm-force-first");
    assert_eq!(
        finding.to_string(),
        "`rm -rf x` is dangerous: rm whose first argument is -f or -rf"
    );
}

#[test]
fn look_alike_programs_are_not_matched() {
    assert!(!command_might_be_dangerous(&argv(&[
        "\u{ff52}\u{ff4d}",
        "-rf",
        "/"
    ])));
    assert!(!command_might_be_dangerous(&argv(&["RM", "-rf", "/"])));
}
