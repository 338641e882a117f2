//! Bad input through the CLI: empty, binary junk, 10 MiB, `../../etc/passwd`.

use std::fs;

use pretty_assertions::assert_eq;

use crate::exec_support::Dirs;
use crate::exec_support::stderr;
use crate::support::apply;
use crate::support::code;
use crate::support::patch;

const FIRST_LINE: &str = "apply_patch verification failed: invalid patch: The first line of the patch must be '*** Begin Patch'\n";

#[test]
fn empty_and_hunkless_patches() {
    let dirs = Dirs::new();
    dirs.config("");
    let out = apply(&dirs, &[], b"");
    assert_eq!((code(&out), stderr(&out).as_str()), (1, FIRST_LINE));
    let out = apply(&dirs, &[], b"*** Begin Patch\n*** End Patch\n");
    assert_eq!(
        (code(&out), stderr(&out).as_str()),
        (125, "airlock: patch rejected: empty patch\n")
    );
}

#[test]
fn binary_junk_is_refused_as_not_text() {
    let dirs = Dirs::new();
    dirs.config("");
    let junk: Vec<u8> = (0..65536_u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let out = apply(&dirs, &[], &junk);
    assert_eq!(code(&out), 125);
    assert!(
        stderr(&out).starts_with("airlock: the patch is not UTF-8 text (invalid byte at offset"),
        "{}",
        stderr(&out)
    );
    assert_eq!(fs::read_dir(&dirs.ws).unwrap().count(), 0);
}

#[test]
fn ten_mebibyte_patches() {
    let dirs = Dirs::new();
    dirs.config("");
    let junk = "j".repeat(10 << 20);
    let out = apply(&dirs, &[], junk.as_bytes());
    assert_eq!((code(&out), stderr(&out).as_str()), (1, FIRST_LINE));
    let line = format!("+{}\n", "y".repeat(1023));
    let big = patch(&format!("*** Add File: big.txt\n{}", line.repeat(10 << 10)));
    let out = apply(&dirs, &[], big.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        fs::metadata(dirs.ws.join("big.txt")).unwrap().len(),
        10 << 20
    );
}

#[test]
fn a_patch_naming_etc_passwd_is_refused_and_writes_nothing() {
    let dirs = Dirs::new();
    dirs.config("");
    let before = fs::read("/etc/passwd").unwrap();
    let first = String::from_utf8_lossy(&before)
        .lines()
        .next()
        .unwrap()
        .to_owned();
    let body = format!(
        "*** Update File: ../../../../../../../../etc/passwd\n-{first}\n+owned::0:0::/:/bin/sh\n"
    );
    let out = apply(&dirs, &[], patch(&body).as_bytes());
    assert_eq!(code(&out), 125, "{}", stderr(&out));
    // Then the cause (no terminal) and the ways forward (issue 17).
    assert!(
        stderr(&out).starts_with(
            "airlock: approval required but no reviewer is available\n  no terminal to ask on:"
        ),
        "{}",
        stderr(&out)
    );
    let out = apply(&dirs, &["-a", "never"], patch(&body).as_bytes());
    assert_eq!(
        stderr(&out),
        "airlock: patch rejected: writing outside of the project; rejected by user approval settings\n"
    );
    assert_eq!(fs::read("/etc/passwd").unwrap(), before);
    let record = dirs.audit().pop().unwrap();
    assert_eq!(record["files"][0]["path"], "/etc/passwd");
}

#[test]
fn fifos_and_devices_are_refused_not_read() {
    let dirs = Dirs::new();
    dirs.config("");
    let fifo = dirs.ws.join("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for (target, why) in [
        ("pipe", "not a regular file"),
        (
            "/dev/zero",
            "the permission profile does not allow reading it",
        ),
    ] {
        let out = apply(
            &dirs,
            &[],
            patch(&format!("*** Update File: {target}\n-a\n+b\n")).as_bytes(),
        );
        assert_eq!(
            (code(&out), stderr(&out)),
            (
                1,
                format!(
                    "apply_patch verification failed: Failed to read file to update {target}: {why}\n"
                )
            )
        );
    }
}
