//! Issue 17, the new-user trial: no control character from a command, a path or a rules
//! file name reaches the terminal raw, outside the prompts too (`sandbox`, `explain`,
//! `permissions show`, `instructions`, `exec` warnings). Each test runs the real binary and
//! checks the exit code, the escaped text and that no `ESC` byte was printed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exec_support;

use std::path::Path;
use std::process::Command;
use std::process::Output;

use exec_support::Dirs;
use exec_support::airlock_bin;
use exec_support::stderr;
use exec_support::stdout;
use pretty_assertions::assert_eq;

/// Runs `airlock ARGS` in `dir` with this `$AIRLOCK_HOME`, stdin closed.
fn airlock_in(dirs: &Dirs, dir: &Path, args: &[&str]) -> Output {
    Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(args)
        .current_dir(dir)
        .env("AIRLOCK_HOME", &dirs.home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn no_escape_byte(what: &str, output: &Output) {
    assert!(
        !output.stdout.contains(&0x1b) && !output.stderr.contains(&0x1b),
        "{what} printed ESC raw:\nstdout: {:?}\nstderr: {:?}",
        stdout(output),
        stderr(output)
    );
}

#[test]
fn sandbox_command_not_found_is_escaped() {
    let dirs = Dirs::new();
    dirs.config("");
    let out = airlock_in(&dirs, &dirs.ws, &["sandbox", "--", "\x1b[31mevil\x1b[0m"]);
    assert_eq!(out.status.code(), Some(127), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("command not found: \\x1b[31mevil\\x1b[0m"),
        "{}",
        stderr(&out)
    );
    no_escape_byte("sandbox", &out);
}

/// A workspace directory whose name carries an ANSI sequence.
fn escape_dir(dirs: &Dirs) -> std::path::PathBuf {
    let dir = dirs.ws.join("esc\x1b[31mdir");
    std::fs::create_dir(&dir).unwrap();
    dir
}

#[test]
fn explain_shows_an_escaped_cwd() {
    let dirs = Dirs::new();
    dirs.config("");
    let dir = escape_dir(&dirs);
    let out = airlock_in(&dirs, &dir, &["explain", "--", "echo", "hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let cwd = text.lines().find(|line| line.starts_with("cwd:")).unwrap();
    assert!(cwd.ends_with("esc\\x1b[31mdir"), "{cwd}");
    no_escape_byte("explain", &out);
}

#[test]
fn permissions_show_escapes_roots_and_entries() {
    let dirs = Dirs::new();
    dirs.config("");
    let dir = escape_dir(&dirs);
    let out = airlock_in(&dirs, &dir, &["permissions", "show", "-P", ":workspace"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|line| line.starts_with("workspace roots:") && line.contains("esc\\x1b[31mdir")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|line| line.starts_with("  ") && line.contains("esc\\x1b[31mdir")),
        "{text}"
    );
    no_escape_byte("permissions show", &out);
    // JSON keeps the real path (JSON escaping applies there).
    let json = airlock_in(&dirs, &dir, &["permissions", "show", "--json"]);
    assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
    assert!(
        stdout(&json).contains("esc\\u001b[31mdir"),
        "{}",
        stdout(&json)
    );
}

#[test]
fn instructions_show_control_characters_as_visible_escapes() {
    let dirs = Dirs::new();
    dirs.config("");
    let dir = escape_dir(&dirs);
    let out = airlock_in(&dirs, &dir, &["instructions", "-P", ":workspace"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("esc\\x1b[31mdir"), "{}", stdout(&out));
    no_escape_byte("instructions", &out);
    let json = airlock_in(&dirs, &dir, &["instructions", "-P", ":workspace", "--json"]);
    assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let text = value["text"].as_str().unwrap();
    assert!(
        text.contains("esc\\x1b[31mdir") && !text.contains('\x1b'),
        "{text}"
    );
}

#[test]
fn exec_warning_about_a_rules_file_is_escaped() {
    let dirs = Dirs::new();
    dirs.config("");
    let out = airlock_in(
        &dirs,
        &dirs.ws,
        &["exec", "-r", "/x\x1b[31m.rules", "--", "true"],
    );
    let err = stderr(&out);
    // An unreadable rules file means every command needs approval; none is available here.
    assert_eq!(out.status.code(), Some(125), "{err}");
    assert!(
        err.contains("exec policy unavailable") && err.contains("/x\\x1b[31m.rules"),
        "{err}"
    );
    no_escape_byte("exec -r", &out);
}

#[test]
fn sandbox_dry_run_shows_control_characters_escaped_with_a_note() {
    let dirs = Dirs::new();
    dirs.config("");
    for profile in [":workspace", ":danger-full-access"] {
        let out = airlock_in(
            &dirs,
            &dirs.ws,
            &[
                "sandbox",
                "--dry-run",
                "-P",
                profile,
                "--",
                "echo",
                "\x1b[31mx",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{profile}: {}", stderr(&out));
        assert!(
            stdout(&out).contains("echo '\\x1b[31mx'"),
            "{profile}: {}",
            stdout(&out)
        );
        assert!(
            stderr(&out).contains("does not run as printed"),
            "{profile}: {}",
            stderr(&out)
        );
        no_escape_byte("sandbox --dry-run", &out);
    }
}
