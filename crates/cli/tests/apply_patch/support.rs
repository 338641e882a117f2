//! Running `airlock apply-patch` / `airlock exec` with a patch.

use std::io::Write as _;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;

use crate::exec_support::Dirs;
use crate::exec_support::airlock_bin;

/// `*** Begin Patch` + body + `*** End Patch`.
pub fn patch(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

/// Runs `airlock apply-patch ARGS` in the workspace with `stdin` as the patch.
pub fn apply(dirs: &Dirs, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .arg("apply-patch")
        .args(args)
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

/// The exit code.
pub fn code(output: &Output) -> i32 {
    output.status.code().unwrap()
}

/// The audit log as text.
pub fn audit_text(dirs: &Dirs) -> String {
    std::fs::read_to_string(dirs.home.join("log/audit.jsonl")).unwrap_or_default()
}
