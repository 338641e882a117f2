//! Exec wrappers and their value-taking options (spec 03 "Two views" item 2, edge
//! cases 3 and 23).

use airlock_shell::{EXEC_WRAPPERS, is_exec_wrapper, unwrap_exec_wrapper};
use pretty_assertions::assert_eq;

use crate::support::{argv, inner_contains};

/// The command one level of unwrapping yields.
fn wrapped(command: &[&str]) -> Vec<String> {
    unwrap_exec_wrapper(&argv(command))
        .unwrap_or_else(|| panic!("{command:?} is not a wrapper"))
        .command
        .to_vec()
}

#[test]
fn every_listed_wrapper_is_recognised_by_basename() {
    for wrapper in EXEC_WRAPPERS {
        assert!(is_exec_wrapper(wrapper));
        assert!(is_exec_wrapper(&format!("/usr/bin/{wrapper}")));
        // Some wrappers take a positional before the command (a duration, a CPU mask,
        // a lock file, a priority).
        let command = match *wrapper {
            "timeout" | "chrt" => argv(&[wrapper, "5", "git", "push"]),
            "taskset" => argv(&[wrapper, "0x3", "git", "push"]),
            "flock" => argv(&[wrapper, "/tmp/lock", "git", "push"]),
            _ => argv(&[wrapper, "git", "push"]),
        };
        assert!(inner_contains(&command, &["git", "push"]), "{wrapper}");
    }
    assert!(!is_exec_wrapper("git"));
}

#[test]
fn timeout_options_and_duration() {
    assert_eq!(
        wrapped(&["timeout", "5", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["timeout", "-s", "KILL", "10", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["timeout", "--signal", "KILL", "10", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["timeout", "-k", "5", "10", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["timeout", "--kill-after=5", "10", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&[
            "timeout",
            "-sKILL",
            "--preserve-status",
            "10",
            "git",
            "push"
        ]),
        argv(&["git", "push"])
    );
}

#[test]
fn nice_adjustments() {
    assert_eq!(
        wrapped(&["nice", "-n", "10", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["nice", "-n10", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["nice", "--adjustment", "5", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["nice", "-10", "git", "push"]),
        argv(&["git", "push"])
    );
}

#[test]
fn stdbuf_modes() {
    assert_eq!(
        wrapped(&["stdbuf", "-o0", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["stdbuf", "-o", "L", "-e", "0", "-i", "0", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["stdbuf", "--output=L", "git", "push"]),
        argv(&["git", "push"])
    );
}

#[test]
fn env_options_and_assignments() {
    let command = argv(&[
        "env",
        "-i",
        "-u",
        "HOME",
        "-C",
        "/tmp",
        "PATH=/usr/bin",
        "LD_PRELOAD=x",
        "git",
        "push",
    ]);
    let unwrapped = unwrap_exec_wrapper(&command).expect("env");
    assert_eq!(unwrapped.command, &argv(&["git", "push"])[..]);
    assert_eq!(
        unwrapped.assignments,
        vec![("PATH", "/usr/bin"), ("LD_PRELOAD", "x")]
    );
    assert_eq!(
        wrapped(&["env", "-", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["env", "--unset=HOME", "--chdir", "/tmp", "git", "push"]),
        argv(&["git", "push"])
    );
    assert!(wrapped(&["env"]).is_empty());
    assert_eq!(
        wrapped(&["env", "-P", "/opt/bin", "git", "push"]),
        argv(&["git", "push"])
    );
}

#[test]
fn env_split_string_is_a_script() {
    let command = argv(&["env", "-S", "git push --force", "origin"]);
    let unwrapped = unwrap_exec_wrapper(&command).expect("env");
    assert!(unwrapped.command.is_empty());
    assert_eq!(unwrapped.script.as_deref(), Some("git push --force origin"));
    assert!(inner_contains(
        &command,
        &["git", "push", "--force", "origin"]
    ));
    let glued = argv(&["env", "--split-string=git push"]);
    assert!(inner_contains(&glued, &["git", "push"]));
}

#[test]
fn command_builtin_exec_time_nohup() {
    assert_eq!(
        wrapped(&["command", "-p", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(wrapped(&["builtin", "cd", "/"]), argv(&["cd", "/"]));
    assert_eq!(
        wrapped(&["exec", "-a", "name", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["exec", "-cl", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["time", "-p", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["time", "-f", "%e", "-o", "t.txt", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(wrapped(&["nohup", "git", "push"]), argv(&["git", "push"]));
    assert_eq!(
        wrapped(&["nohup", "--", "git", "push"]),
        argv(&["git", "push"])
    );
}

#[test]
fn xargs_options() {
    assert_eq!(
        wrapped(&["xargs", "git", "push", "origin"]),
        argv(&["git", "push", "origin"])
    );
    assert_eq!(
        wrapped(&["xargs", "-n1", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&[
            "xargs", "-n", "1", "-L", "2", "-P", "4", "-s", "99", "-d", ",", "-E", "x", "-I", "{}",
            "-a", "f", "git", "push"
        ]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["xargs", "-0", "-r", "--max-args", "2", "git", "push"]),
        argv(&["git", "push"])
    );
}

#[test]
fn sudo_and_doas_options() {
    assert_eq!(
        wrapped(&["sudo", "-u", "deploy", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["sudo", "-E", "-n", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&[
            "sudo", "-g", "g", "-h", "h", "-p", "p", "-C", "3", "-D", "/", "-r", "r", "-t", "t",
            "-U", "u", "git", "push"
        ]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["sudo", "--user=deploy", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["sudo", "--user", "deploy", "git", "push"]),
        argv(&["git", "push"])
    );
    let with_env = argv(&["sudo", "LD_PRELOAD=x", "ls"]);
    let unwrapped = unwrap_exec_wrapper(&with_env).expect("sudo");
    assert_eq!(unwrapped.assignments, vec![("LD_PRELOAD", "x")]);
    assert_eq!(unwrapped.command, &argv(&["ls"])[..]);
    assert_eq!(
        wrapped(&["doas", "-u", "root", "git", "push"]),
        argv(&["git", "push"])
    );
    assert_eq!(
        wrapped(&["doas", "-C", "/etc/doas.conf", "-n", "git", "push"]),
        argv(&["git", "push"])
    );
}

#[test]
fn chains_of_wrappers_unwrap_fully_on_a_direct_argv() {
    let command = argv(&[
        "sudo", "-u", "root", "timeout", "-s", "KILL", "5", "nice", "-n", "1", "env", "A=1", "git",
        "push",
    ]);
    assert!(inner_contains(&command, &["git", "push"]));
    assert!(inner_contains(&command, &["env", "A=1", "git", "push"]));
}

#[test]
fn wrappers_leading_to_shells_reach_their_scripts() {
    assert!(inner_contains(
        &argv(&["sudo", "bash", "-lc", "git push"]),
        &["git", "push"]
    ));
    assert!(inner_contains(
        &argv(&["timeout", "5", "bash", "-lc", "git push"]),
        &["git", "push"]
    ));
    assert!(inner_contains(
        &argv(&["/usr/bin/env", "bash", "-c", "git push"]),
        &["git", "push"]
    ));
    assert!(inner_contains(
        &argv(&["xargs", "sh", "-c", "git push"]),
        &["git", "push"]
    ));
}

#[test]
fn not_wrappers() {
    assert_eq!(unwrap_exec_wrapper(&argv(&["git", "push"])), None);
    assert_eq!(unwrap_exec_wrapper(&[]), None);
}

// ------------------------------------- issue 18 item 3: more wrappers (field log BL-04)

#[test]
fn process_attribute_wrappers_run_their_command() {
    for command in [
        &["setsid", "-f", "git", "push"][..],
        &["setsid", "--wait", "git", "push"],
        &["ionice", "-c", "3", "git", "push"],
        &["ionice", "-c3", "-n", "7", "git", "push"],
        &["ionice", "--class", "idle", "git", "push"],
        &["taskset", "-c", "0,1", "git", "push"],
        &["taskset", "0xff", "git", "push"],
        &["chrt", "-f", "10", "git", "push"],
        &["chrt", "--idle", "0", "git", "push"],
        &["flock", "-w", "5", "/tmp/l", "git", "push"],
        &["flock", "--timeout=5", "-x", "/tmp/l", "git", "push"],
        &["unbuffer", "-p", "git", "push"],
        &["busybox", "git", "push"],
        &["/bin/toybox", "git", "push"],
        &["watch", "-x", "git", "push"],
        &["watch", "-n", "1", "-x", "git", "push"],
    ] {
        assert!(
            inner_contains(&argv(command), &["git", "push"]),
            "{command:?}"
        );
    }
}

#[test]
fn watch_and_flock_run_scripts() {
    for command in [
        &["watch", "git", "push"][..],
        &["watch", "-n", "1", "git push"],
        &["watch", "-d", "true; git push"],
        &["flock", "/tmp/l", "-c", "git push"],
        &["flock", "-n", "/tmp/l", "--command", "true && git push"],
        &["flock", "/tmp/l", "--command=git push"],
    ] {
        assert!(
            inner_contains(&argv(command), &["git", "push"]),
            "{command:?}"
        );
    }
}

#[test]
fn process_modes_run_nothing() {
    for command in [
        &["ionice", "-p", "1234"][..],
        &["taskset", "-p", "0x3", "1234"],
        &["chrt", "-p", "10", "1234"],
        &["chrt", "-m"],
    ] {
        assert_eq!(wrapped(command), Vec::<String>::new(), "{command:?}");
    }
}

#[test]
fn applets_of_multi_call_binaries_are_commands() {
    assert!(inner_contains(
        &argv(&["busybox", "rm", "-rf", "/x"]),
        &["rm", "-rf", "/x"]
    ));
    assert!(inner_contains(
        &argv(&["busybox", "sh", "-c", "git push"]),
        &["git", "push"]
    ));
    assert!(inner_contains(
        &crate::support::bash("setsid nohup busybox timeout 5 git push &"),
        &["git", "push"]
    ));
}
