#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;

use super::renumber_descriptor_args;

fn args(list: &[&str]) -> Vec<OsString> {
    list.iter().map(OsString::from).collect()
}

#[test]
fn every_descriptor_option_gets_the_number_its_descriptor_will_have() {
    let given = args(&[
        "--new-session",
        "--die-with-parent",
        "--ro-bind-data",
        "41",
        "/tmp/x",
        "--add-seccomp-fd",
        "17",
        "--add-seccomp-fd",
        "52",
        "--json-status-fd",
        "9",
        "--",
        "/bin/echo",
        "--add-seccomp-fd",
        "17",
    ]);
    let renumbered = renumber_descriptor_args(&given, &[41, 17, 52, 9]).unwrap();
    assert_eq!(
        renumbered,
        args(&[
            "--new-session",
            "--die-with-parent",
            "--ro-bind-data",
            "3",
            "/tmp/x",
            "--add-seccomp-fd",
            "4",
            "--add-seccomp-fd",
            "5",
            "--json-status-fd",
            "6",
            "--",
            "/bin/echo",
            "--add-seccomp-fd",
            "17",
        ]),
        "the command's own arguments after `--` are left alone"
    );
}

#[test]
fn a_descriptor_the_launch_does_not_hand_over_refuses_the_launch() {
    let given = args(&[
        "--die-with-parent",
        "--add-seccomp-fd",
        "8",
        "--",
        "/bin/true",
    ]);
    let error = renumber_descriptor_args(&given, &[9]).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        error.to_string().contains("\"--add-seccomp-fd\""),
        "{error}"
    );
    let missing_value = args(&["--die-with-parent", "--add-seccomp-fd", "--", "/bin/true"]);
    assert!(renumber_descriptor_args(&missing_value, &[9]).is_err());
    let not_a_number = args(&[
        "--die-with-parent",
        "--json-status-fd",
        "x",
        "--",
        "/bin/true",
    ]);
    assert!(renumber_descriptor_args(&not_a_number, &[9]).is_err());
}

#[test]
fn a_launch_without_death_with_the_server_is_refused() {
    let given = args(&["--new-session", "--", "/bin/true", "--die-with-parent"]);
    let error = renumber_descriptor_args(&given, &[]).unwrap_err();
    assert!(error.to_string().contains("--die-with-parent"), "{error}");
}
