#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Issue 11: nothing a confined run writes may later run on the host unconfined. Each test
//! runs the real attack against the real sandbox (real `bwrap`, real processes) and checks
//! the host afterwards: the planted program never ran.

mod exec_support;

use std::process::{Command, Output};

use exec_support::{Dirs, airlock_bin, exists, stderr};

const REFUSED: i32 = 125;

/// A directory under `/tmp`, which `:workspace` makes writable: where an attacker plants.
fn tmp_dir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/tmp")
        .unwrap()
}

/// Item 3. A confined run plants a fake `bwrap` in a directory it can write (`/tmp/x`); the
/// user's `PATH` starts with that directory. Later runs must still use the real
/// bubblewrap: the fake never runs, the command is confined, `doctor` names the real one.
#[test]
fn a_bwrap_planted_on_path_is_never_executed() {
    let dirs = Dirs::new();
    dirs.config("");
    let plant = tmp_dir("airlock-fake-bwrap-");
    let fake_dir = plant.path().join("x");
    let Some(marker) = dirs.outside_file("fake-bwrap-ran") else {
        return;
    };
    let script = format!(
        "mkdir -p '{dir}' && printf '#!/bin/sh\\ntouch {marker}\\nshift $#\\nexec \"$@\"\\n' > '{dir}/bwrap' && chmod 755 '{dir}/bwrap'",
        dir = fake_dir.display()
    );
    // Step 1: the sandbox itself plants the fake.
    let planted = dirs.airlock_with_env(&["sandbox", "--", "sh", "-c", &script], &[]);
    assert_eq!(planted.status.code(), Some(0), "{}", stderr(&planted));
    assert!(fake_dir.join("bwrap").exists(), "the plant worked");
    let path = format!(
        "{}:{}",
        fake_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let Some(escape) = dirs.outside_file("escaped") else {
        return;
    };
    let probe = format!("touch inside.txt; touch '{escape}'; true");
    // Step 2: later runs with the poisoned PATH, through `sandbox` and `exec`.
    for args in [
        vec!["sandbox", "--", "sh", "-c", probe.as_str()],
        vec!["exec", "-a", "never", "--", "sh", "-c", probe.as_str()],
    ] {
        let out = dirs.airlock_with_env(&args, &[("PATH", &path)]);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(!exists(&marker), "{args:?}: the fake bwrap ran");
        assert!(
            exists(dirs.ws.join("inside.txt")),
            "{args:?}: the command ran"
        );
        assert!(!exists(&escape), "{args:?}: the command ran unconfined");
        std::fs::remove_file(dirs.ws.join("inside.txt")).unwrap();
    }
    let doctor = dirs.airlock_with_env(&["doctor", "--json"], &[("PATH", &path)]);
    let checks: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let bwrap = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "bubblewrap")
        .unwrap();
    let detail = bwrap["detail"].as_str().unwrap();
    assert!(detail.starts_with("/usr/bin/bwrap: "), "{detail}");
    assert!(detail.contains("PATH is never searched"), "{detail}");
    assert!(!exists(&marker));
    // The same class: `airlock` itself is the sandbox helper; doctor flags one that lies
    // inside a writable root (here the workspace is the binary's own directory).
    let exe_dir = airlock_bin().parent().unwrap().to_path_buf();
    let doctor = Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["doctor", "--json"])
        .current_dir(&exe_dir)
        .env("AIRLOCK_HOME", &dirs.home)
        .output()
        .unwrap();
    let checks: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let exe = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "airlock executable outside the writable roots")
        .unwrap();
    assert_eq!(exe["ok"], false, "{exe}");
    assert!(
        exe["detail"]
            .as_str()
            .unwrap()
            .contains("could replace the sandbox helper")
    );
}

/// Item 3, configured path: `[sandbox] bwrap_path` naming the planted file (in a directory
/// the sandbox can write) or a relative name is refused before anything runs.
#[test]
fn a_configured_bwrap_the_sandbox_could_replace_is_refused() {
    let dirs = Dirs::new();
    let plant = tmp_dir("airlock-fake-bwrap-");
    let fake = plant.path().join("bwrap");
    let Some(marker) = dirs.outside_file("fake-bwrap-ran") else {
        return;
    };
    std::fs::write(&fake, format!("#!/bin/sh\ntouch {marker}\n")).unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for (value, expected) in [
        (fake.display().to_string(), "refusing bubblewrap"),
        ("bwrap".to_owned(), "not an absolute path"),
    ] {
        dirs.config(&format!("[sandbox]\nbwrap_path = {value:?}\n"));
        for args in [
            vec!["sandbox", "--", "touch", "inside.txt"],
            vec!["exec", "-a", "never", "--", "touch", "inside.txt"],
        ] {
            let out = dirs.airlock_with_env(&args, &[]);
            assert_eq!(out.status.code(), Some(REFUSED), "{args:?} {value}");
            assert!(
                stderr(&out).contains(expected),
                "{args:?}: {}",
                stderr(&out)
            );
            assert!(!exists(dirs.ws.join("inside.txt")), "nothing ran");
            assert!(!exists(&marker), "the configured fake never ran");
        }
        let doctor = dirs.airlock_with_env(&["doctor", "--json"], &[]);
        assert_eq!(doctor.status.code(), Some(1), "doctor fails");
        let checks: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
        let bwrap = &checks[0];
        assert_eq!(bwrap["check"], "bubblewrap");
        assert_eq!(bwrap["ok"], false);
        assert!(
            bwrap["detail"].as_str().unwrap().contains(expected),
            "{bwrap}"
        );
        assert!(
            bwrap["fix"].as_str().unwrap().contains("bwrap_path"),
            "{bwrap}"
        );
        assert!(!exists(&marker), "doctor never ran the configured fake");
    }
}

/// Runs `airlock exec ARGS` inside a new user namespace whose `user.max_user_namespaces`
/// is 0, so bubblewrap's own set-up fails for real ("Creating new namespace failed").
fn exec_without_user_namespaces(dirs: &Dirs, args: &[&str]) -> Output {
    let mut command = Command::new("unshare");
    command
        .args(["--user", "--map-root-user", "sh", "-c"])
        .arg("echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"")
        .arg("sh")
        .arg(airlock_bin())
        .arg("exec")
        .args(args)
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        .stdin(std::process::Stdio::null());
    command.output().unwrap()
}

/// Item 5. bubblewrap cannot create its namespaces: under `untrusted`, with a reviewer that
/// approves everything, the command must not be re-run without the sandbox. It is an
/// execution error, exit 125, "could not start the sandbox: <cause>" with the doctor fix,
/// and the reviewer is never asked about a retry.
#[test]
fn a_sandbox_set_up_failure_is_never_retried_unconfined() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook("allow"));
    let Some(marker) = dirs.outside_file("ran-unconfined") else {
        return;
    };
    let script = format!("touch '{marker}'; echo 'Operation not permitted' >&2; exit 1");
    let out = exec_without_user_namespaces(&dirs, &["-a", "untrusted", "--", "sh", "-c", &script]);
    if stderr(&out).contains("unshare: ") {
        eprintln!("skipped: this host cannot create user namespaces for the test harness");
        return;
    }
    assert_eq!(out.status.code(), Some(REFUSED), "{}", stderr(&out));
    let last = stderr(&out).lines().last().unwrap_or_default().to_owned();
    assert!(
        last.starts_with(
            "airlock: could not start the sandbox: bwrap: Creating new namespace failed"
        ),
        "{last}"
    );
    assert!(last.contains("airlock doctor"), "{last}");
    assert!(!exists(&marker), "the command ran without the sandbox");
    assert_eq!(dirs.requests("hook").len(), 1, "no retry was asked for");
    let audit = dirs.audit();
    let attempts = audit[0]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    assert!(
        attempts[0]["error"]
            .as_str()
            .unwrap()
            .contains("could not start the sandbox"),
        "{attempts:?}"
    );
}

/// Item 6. Under `untrusted`, a command that merely prints "Operation not permitted" looks
/// like a sandbox denial; its unconfined retry must be asked for again. The reviewer
/// approves the command and declines the retry: the unconfined run never happens.
#[test]
fn an_output_only_denial_needs_a_second_approval() {
    let dirs = Dirs::new();
    let log = dirs.log("hook");
    let allow = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}"#;
    let deny = r#"{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no retry"}}}"#;
    dirs.config(&dirs.hook_with(
        &format!(
            "if [ \"$(wc -l < '{}')\" -le 1 ]; then echo '{allow}'; else echo '{deny}'; fi",
            log.display()
        ),
        10,
    ));
    let Some(marker) = dirs.outside_file("ran-unconfined") else {
        return;
    };
    // Inside the sandbox the touch fails quietly; unconfined it would succeed.
    let script = format!("touch '{marker}' 2>/dev/null; echo 'Operation not permitted'; exit 1");
    let out = dirs.exec(&["-a", "untrusted", "--", "sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(REFUSED), "{}", stderr(&out));
    assert!(stderr(&out).contains("no retry"), "{}", stderr(&out));
    assert!(
        !exists(&marker),
        "the retry ran without the sandbox unasked"
    );
    assert_eq!(dirs.requests("hook").len(), 2, "the retry was asked for");
    let audit = dirs.audit();
    assert_eq!(audit[0]["attempts"].as_array().unwrap().len(), 1);
    assert_eq!(audit[0]["attempts"][0]["denial_evidence"], "output_only");
}

/// Item 7. A root-owned set-id file must not be plantable on the host by any creating
/// call: `open(dir, O_TMPFILE, 06755)` + `linkat` (the mode is set at creation, no chmod
/// follows), `open(O_CREAT, 04755)`, `mkdir(02755)` and `chmod`. Runs python3 under the
/// real sandbox and inspects the host afterwards.
#[test]
fn no_set_id_file_can_be_planted_by_any_creating_call() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: python3 is not installed");
        return;
    }
    let dirs = Dirs::new();
    dirs.config("");
    let script = r#"
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, AT_SYMLINK_FOLLOW = -100, 0x400
results = []
def attempt(name, action):
    try:
        action()
        results.append(name + ":done")
    except OSError as error:
        results.append(name + ":" + type(error).__name__)
def tmpfile():
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o6755)
    # linkat(2) following the /proc magic link gives the unnamed file a name.
    src = ("/proc/self/fd/%d" % fd).encode()
    if libc.linkat(AT_FDCWD, src, AT_FDCWD, b"tmpfile-linked", AT_SYMLINK_FOLLOW) != 0:
        raise OSError(ctypes.get_errno(), "linkat")
attempt("tmpfile", tmpfile)
attempt("creat", lambda: os.close(os.open("created", os.O_CREAT | os.O_WRONLY, 0o4755)))
attempt("mkdir", lambda: os.mkdir("dir", 0o2755))
open("plain", "w").close()
attempt("chmod", lambda: os.chmod("plain", 0o4755))
print(" ".join(results))
"#;
    let out = dirs.airlock_with_env(&["sandbox", "--", "python3", "-c", script], &[]);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{printed} {}", stderr(&out));
    for name in ["tmpfile", "creat", "chmod"] {
        assert!(
            printed.contains(&format!("{name}:PermissionError")),
            "{name} must be refused: {printed}"
        );
    }
    for entry in std::fs::read_dir(&dirs.ws).unwrap() {
        let entry = entry.unwrap();
        let mode =
            std::os::unix::fs::PermissionsExt::mode(&entry.metadata().unwrap().permissions());
        assert_eq!(
            mode & 0o6000,
            0,
            "{} has a set-id bit on the host ({mode:o}); sandbox said {printed}",
            entry.path().display()
        );
    }
}

/// Item 5 for `airlock sandbox`, which has no launcher above it: bubblewrap's own set-up
/// failure (no user namespaces) is exit 125 with "could not start the sandbox", never the
/// command's status, and the command did not run.
#[test]
fn airlock_sandbox_reports_a_set_up_failure_as_125() {
    let dirs = Dirs::new();
    dirs.config("");
    let Some(marker) = dirs.outside_file("ran") else {
        return;
    };
    let out = Command::new("unshare")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["--user", "--map-root-user", "sh", "-c"])
        .arg("echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"")
        .arg("sh")
        .arg(airlock_bin())
        .args(["sandbox", "--", "touch", &marker])
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        .output()
        .unwrap();
    if stderr(&out).contains("unshare: ") {
        eprintln!("skipped: this host cannot create user namespaces for the test harness");
        return;
    }
    assert_eq!(out.status.code(), Some(REFUSED), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("bwrap: Creating new namespace failed")
            && stderr(&out).contains("could not start the sandbox: bubblewrap exited with code 1"),
        "{}",
        stderr(&out)
    );
    assert!(!exists(&marker));
}
