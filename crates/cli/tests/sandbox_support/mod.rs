//! What the `airlock sandbox` test binaries share: running the real binary in a workspace,
//! reading its output, and a fresh git workspace outside every writable root.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use airlock_sandbox::{ExecOutput, SandboxType, is_likely_sandbox_denied};

pub fn airlock(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_airlock"))
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(args)
        .current_dir(cwd)
        .env("AIRLOCK_HOME", cwd.join(".airlock-home-unused"))
        .env("OPENAI_API_KEY", "sk-canary")
        .output()
        .unwrap()
}

pub fn sh(profile: &str, ws: &Path, script: &str) -> Output {
    airlock(
        &[
            "sandbox",
            "-P",
            profile,
            "-C",
            ws.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            script,
        ],
        ws,
    )
}

pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub fn denied(out: &Output) -> bool {
    let output = ExecOutput {
        exit_code: out.status.code().unwrap_or(1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        ..ExecOutput::default()
    };
    is_likely_sandbox_denied(SandboxType::LinuxSeccomp, &output)
}

pub fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
}

pub fn git_workspace() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("airlock-sbx-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let ok = Command::new("git")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["init", "-q"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(ok.success());
    std::fs::write(dir.path().join("README"), "hello\n").unwrap();
    dir
}
