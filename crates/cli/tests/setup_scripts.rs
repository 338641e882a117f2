//! Issue 17 items 2 and 3: `scripts/test` runs every suite even when one fails and ends
//! with a summary and a non-zero status; `ensure_rust` checks the toolchain against the
//! workspace's `rust-version` and the `rustfmt` / `clippy` components and says what to do.
//!
//! The scripts run for real, in a copy of `scripts/` and `Cargo.toml` under a temporary
//! directory, with `cargo`, `rustc` and the other tools replaced by logging stand-ins on
//! `PATH` (so nothing is built or installed, and the checkout's `target/` is untouched).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;

use pretty_assertions::assert_eq;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn write_exe(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A copy of the scripts with stand-in tools. `rustc_version` is what the fake `rustc`
/// reports; `clippy_works` whether `cargo clippy --version` succeeds.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new(rustc_version: &str, clippy_works: bool) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("airlock-scripts-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join("scripts")).unwrap();
        for name in ["test", "lib.sh", "demo"] {
            std::fs::copy(
                Path::new(REPO).join("scripts").join(name),
                repo.join("scripts").join(name),
            )
            .unwrap();
        }
        std::fs::copy(Path::new(REPO).join("Cargo.toml"), repo.join("Cargo.toml")).unwrap();
        let log = dir.path().join("log");
        let log = log.display();
        // The later suites: one of them fails.
        for (name, status) in [
            ("shell-conformance", 0),
            ("realworld-execpolicy", 3),
            ("sandbox-probes", 0),
        ] {
            write_exe(
                &repo.join("scripts").join(name),
                &format!("echo \"{name}\" >> '{log}'; exit {status}"),
            );
        }
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for tool in ["gcc", "git", "bwrap", "script", "tmux", "curl"] {
            write_exe(&bin.join(tool), "exit 0");
        }
        write_exe(
            &bin.join("python3"),
            &format!("echo \"python3 $*\" >> '{log}'; exit 0"),
        );
        write_exe(
            &bin.join("rustc"),
            &format!(
                "case \"$1\" in --version) echo 'rustc {rustc_version} (fake)';; -vV) echo 'host: x86_64-fake-linux-gnu';; esac"
            ),
        );
        let clippy_version = if clippy_works {
            "echo 'clippy 0.1 (fake)'"
        } else {
            "echo 'no such command: clippy' >&2; exit 101"
        };
        write_exe(
            &bin.join("cargo"),
            &format!(
                r#"echo "cargo $*" >> '{log}'
case "$1 $2" in
  "fmt --version") echo 'rustfmt 1.0 (fake)';;
  "clippy --version") {clippy_version};;
  "fmt --all") exit 1;;
  "clippy --locked") exit 0;;
  "test --locked") exit 101;;
  "build --locked") mkdir -p target/x86_64-fake-linux-gnu/release && printf '#!/bin/sh\n' > target/x86_64-fake-linux-gnu/release/airlock && chmod +x target/x86_64-fake-linux-gnu/release/airlock;;
esac"#
            ),
        );
        let shared = dir.path().join("shared/conformance/execpolicy");
        std::fs::create_dir_all(&shared).unwrap();
        Self { dir }
    }

    fn run(&self, script: &str) -> Output {
        Command::new("bash")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .arg("-c")
            .arg(script)
            .current_dir(self.dir.path().join("repo"))
            .env_clear()
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", self.dir.path().join("bin").display()),
            )
            .env("HOME", self.dir.path())
            .env("AIRLOCK_SHARED", self.dir.path().join("shared"))
            .output()
            .unwrap()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }

    fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Item 2: fmt fails, the tests fail, one conformance suite fails — and still every later
/// step runs; the summary lists exactly the three failures; the exit status is 1.
#[test]
fn scripts_test_runs_every_suite_and_summarises_failures() {
    let sandbox = Sandbox::new("1.95.0", true);
    let out = sandbox.run("scripts/test");
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    let log = sandbox.log();
    assert!(
        log.contains("cargo test --locked --workspace --no-fail-fast"),
        "{log}"
    );
    for later in [
        "cargo clippy --locked --workspace --all-targets -- -D warnings",
        "cargo build --locked --release --target x86_64-fake-linux-gnu -p airlock-cli",
        "python3 ",
        "shell-conformance",
        "realworld-execpolicy",
        "sandbox-probes",
    ] {
        assert!(log.contains(later), "{later} did not run:\n{log}");
    }
    assert!(sandbox.repo().join("target/release/airlock").exists());
    assert!(all.contains("==> FAILED: 3 step(s)"), "{all}");
    let summary = &all[all.find("==> FAILED").unwrap()..];
    assert_eq!(
        summary.lines().skip(1).collect::<Vec<_>>(),
        [
            "  - cargo fmt --check (exit 1)",
            "  - cargo test (workspace, every test binary) (exit 101)",
            "  - exec-policy conformance on real-world rules files (exit 3)",
        ],
        "{all}"
    );
}

/// Item 3: every step prints a line even when satisfied; a toolchain older than the
/// workspace's `rust-version` without rustup fails with what to do; a missing component
/// is named.
#[test]
fn ensure_rust_checks_version_and_components() {
    let good = Sandbox::new("1.95.0", true);
    let out = good.run(". scripts/lib.sh && ensure_build_deps && ensure_sandbox_deps");
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    for line in [
        "gcc: already installed (build-essential)",
        "git: already installed (git)",
        "bwrap: already installed (bubblewrap)",
        "tmux: already installed (tmux)",
        "==> Rust toolchain: need >= 1.89 with rustfmt and clippy",
        "rustc 1.95.0, rustfmt 1.0 (fake), clippy 0.1 (fake): ok",
    ] {
        assert!(all.contains(line), "{line:?} in\n{all}");
    }

    let old = Sandbox::new("1.63.0", true);
    let out = old.run(". scripts/lib.sh && ensure_rust");
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("error: rustc 1.63.0 (")
            && all.contains("is older than 1.89, the workspace's rust-version"),
        "{all}"
    );
    assert!(all.contains("Debian's packaged cargo is too old for edition 2024"));
    assert!(
        all.contains("curl -sSf https://sh.rustup.rs | sh -s -- -y --component clippy,rustfmt")
    );

    let no_clippy = Sandbox::new("1.95.0", false);
    let out = no_clippy.run(". scripts/lib.sh && ensure_rust");
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("error: 'cargo clippy --version' does not work and rustup is not installed"),
        "{all}"
    );
}
