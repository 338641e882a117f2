//! Issue 17, "a newcomer's first hour": one test per item, each running the real `airlock`
//! binary (and the real sandbox) and checking the exact exit code and the key words of each
//! message. The set-up scripts themselves are tested in `setup_scripts.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod exec_support;

use std::os::unix::fs::PermissionsExt as _;
use std::process::Command;
use std::process::Output;

use exec_support::Dirs;
use exec_support::airlock_bin;
use exec_support::exists;
use exec_support::stderr;
use exec_support::stdout;
use pretty_assertions::assert_eq;

/// Runs `airlock ARGS` in the workspace with this `$AIRLOCK_HOME`, stdin closed.
fn airlock(dirs: &Dirs, args: &[&str]) -> Output {
    dirs.airlock(args)
}

/// Item 1: the hidden `permissions outside` query (what `scripts/demo` asks) agrees with
/// the real sandbox: paths it calls writable can be written by a confined `touch`, paths it
/// calls outside cannot — `/tmp` included, which `:workspace` makes writable.
#[test]
fn item1_outside_query_agrees_with_the_sandbox() {
    let dirs = Dirs::new();
    let Some(outside) = dirs.outside() else {
        return;
    };
    let tmp = tempfile::Builder::new()
        .prefix("airlock-item1-")
        .tempdir_in("/tmp")
        .unwrap();
    let cases = [
        (dirs.ws.join("in-ws.txt"), true),
        (tmp.path().join("in-tmp.txt"), true),
        (outside.join("escaped.txt"), false),
        (dirs.ws.join(".git/x"), false),
    ];
    std::fs::create_dir_all(dirs.ws.join(".git")).unwrap();
    for (path, writable) in &cases {
        let path = path.to_str().unwrap();
        let query = airlock(&dirs, &["permissions", "outside", "-P", ":workspace", path]);
        let word = if *writable { "writable" } else { "outside" };
        assert_eq!(
            query.status.code(),
            Some(if *writable { 1 } else { 0 }),
            "{path}: {}",
            stdout(&query)
        );
        assert_eq!(stdout(&query), format!("{word} {path}\n"));
        let run = airlock(&dirs, &["sandbox", "-P", ":workspace", "--", "touch", path]);
        assert_eq!(run.status.success(), *writable, "{path}: {}", stderr(&run));
        assert_eq!(exists(path), *writable, "{path}");
    }
}

/// Item 4: an unknown option before `--` is a usage error (exit 2) and nothing runs; after
/// `--` it is part of the command.
#[test]
fn item4_unknown_options_are_usage_errors() {
    let dirs = Dirs::new();
    for args in [
        &["exec", "--verbos", "--", "touch", "made.txt"][..],
        &["sandbox", "--bogus", "--", "touch", "made.txt"],
        &["explain", "--frm-log", "x"],
    ] {
        let out = airlock(&dirs, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("unexpected argument '--"),
            "{}",
            stderr(&out)
        );
        assert!(!exists(dirs.ws.join("made.txt")));
    }
    // `--from-log` is a real option now, not a command named `--from-log`.
    let out = airlock(&dirs, &["explain", "--from-log"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("a value is required for '--from-log <CALL_ID>'"));
    // After `--`, hyphen words belong to the command.
    let out = airlock(&dirs, &["exec", "--", "sh", "-c", "echo -n hi"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "hi");
}

/// Item 5: a config that selects no profile keeps `:workspace` (a write in the workspace
/// works, as it would not under `:read-only`); `permissions show` says in words who chose.
#[test]
fn item5_config_without_profile_keeps_workspace() {
    let dirs = Dirs::new();
    std::fs::write(dirs.home.join("config.toml"), "[audit]\nenabled = true\n").unwrap();
    let out = airlock(&dirs, &["exec", "--", "touch", "made.txt"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(exists(dirs.ws.join("made.txt")));
    let show = airlock(&dirs, &["permissions", "show"]);
    assert_eq!(show.status.code(), Some(0));
    let text = stdout(&show);
    assert!(text.starts_with("profile: :workspace\n"), "{text}");
    assert!(
        text.contains(
            "selected by: the embedded default (no config file, or a config that selects no profile)"
        ),
        "{text}"
    );
    let show = airlock(&dirs, &["permissions", "show", "-P", ":read-only"]);
    assert!(stdout(&show).contains("selected by: the command line (-P)"));
    std::fs::write(
        dirs.home.join("config.toml"),
        "sandbox_mode = \"read-only\"\n",
    )
    .unwrap();
    let show = airlock(&dirs, &["permissions", "show"]);
    let text = stdout(&show);
    assert!(
        text.contains("selected by: the legacy sandbox_mode key in the config"),
        "{text}"
    );
    assert!(!text.contains("LegacySandboxMode") && !text.contains("EmbeddedDefault"));
}

/// Item 6: 127 for a missing program and 126 for a file that is not executable, on every
/// path; refusals stay 125.
#[test]
fn item6_exit_codes_127_126_125_on_every_path() {
    let dirs = Dirs::new();
    let script = dirs.ws.join("plain.sh");
    std::fs::write(&script, "#!/bin/sh\necho ran\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let paths: [&[&str]; 5] = [
        &["exec", "--"],
        &["exec", "--yolo", "--"],
        &["exec", "-P", ":danger-full-access", "-a", "never", "--"],
        &["sandbox", "--"],
        &["sandbox", "-P", ":danger-full-access", "--"],
    ];
    for prefix in paths {
        let run = |program: &str| {
            let mut args = prefix.to_vec();
            args.push(program);
            airlock(&dirs, &args)
        };
        let out = run("no-such-program-17");
        assert_eq!(out.status.code(), Some(127), "{prefix:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("airlock: command not found: no-such-program-17"),
            "{}",
            stderr(&out)
        );
        let out = run("./plain.sh");
        assert_eq!(out.status.code(), Some(126), "{prefix:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("cannot execute")
                && stderr(&out).contains("plain.sh: permission denied"),
            "{}",
            stderr(&out)
        );
        assert!(!stdout(&out).contains("ran"));
    }
    let rules = dirs.rules(
        "no.rules",
        "prefix_rule(pattern=[\"rm\"], decision=\"forbidden\", justification=\"no rm\")\n",
    );
    let out = airlock(
        &dirs,
        &["exec", "-r", rules.to_str().unwrap(), "--", "rm", "x"],
    );
    assert_eq!(out.status.code(), Some(125));
    assert!(stderr(&out).contains("no rm"), "{}", stderr(&out));
}

/// Item 6: `exec --json` prints one result object: status, exit code, captured output,
/// and the decision trace with each attempt's sandbox type and exit code.
#[test]
fn item6_exec_json_result_object() {
    let dirs = Dirs::new();
    let json = |args: &[&str]| -> (Option<i32>, serde_json::Value) {
        let mut all = vec!["exec", "--json"];
        all.extend_from_slice(args);
        let out = airlock(&dirs, &all);
        let text = stdout(&out);
        assert_eq!(text.lines().count(), 1, "one line: {text}");
        (out.status.code(), serde_json::from_str(&text).unwrap())
    };
    let (code, ran) = json(&["--", "sh", "-c", "echo out; echo err >&2; exit 3"]);
    assert_eq!(code, Some(3));
    assert_eq!(ran["status"], "ran");
    assert_eq!(ran["exit_code"], 3);
    assert_eq!(ran["stdout"], "out\n");
    assert_eq!(ran["stderr"], "err\n");
    let attempts = ran["record"]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0]["sandbox"], "linuxSeccomp");
    assert_eq!(attempts[0]["exit_code"], 3);
    assert_eq!(ran["record"]["requirement"]["type"], "skip");
    assert_eq!(ran["call_id"], ran["record"]["call_id"]);
    assert!(ran.get("stdout_truncated_bytes").is_none(), "{ran}");

    // Output past the first MiB of a stream is counted, not silently cut.
    let (code, big) = json(&[
        "--",
        "sh",
        "-c",
        "head -c 3145728 /dev/zero | tr '\\0' x; head -c 1049600 /dev/zero | tr '\\0' y >&2",
    ]);
    assert_eq!(code, Some(0), "{big}");
    assert_eq!(big["stdout"].as_str().unwrap().len(), 1 << 20);
    assert_eq!(big["stdout_truncated_bytes"], 2 << 20);
    assert_eq!(big["stderr_truncated_bytes"], 1024);

    let rules = dirs.rules(
        "no.rules",
        "prefix_rule(pattern=[\"rm\"], decision=\"forbidden\", justification=\"no rm\")\n",
    );
    let (code, refused) = json(&["-r", rules.to_str().unwrap(), "--", "rm", "x"]);
    assert_eq!(code, Some(125));
    assert_eq!(refused["status"], "rejected");
    assert_eq!(refused["record"]["outcome"]["status"], "rejected");
    assert_eq!(refused["exit_code"], 125);
    assert!(refused["message"].as_str().unwrap().contains("no rm"));
    assert_eq!(refused["record"]["requirement"]["type"], "forbidden");
    assert_eq!(refused["record"]["attempts"], serde_json::json!([]));

    let (code, missing) = json(&["--", "no-such-program-17"]);
    assert_eq!(code, Some(127));
    assert_eq!(missing["status"], "command_not_found");

    let (code, denied) = json(&["-a", "on-request", "--", "touch", "/etc/airlock-17"]);
    assert_eq!(code, Some(1));
    assert_eq!(denied["status"], "sandbox_denied");
    assert!(!exists("/etc/airlock-17"));
}

/// Item 9: `[shell_environment_policy]` is not reported as unused, and `BASH_ENV` / `ENV`
/// no longer reach the command: a start-up file planted through them does not run.
#[test]
fn item9_env_policy_known_and_shell_start_up_files_dropped() {
    let dirs = Dirs::new();
    std::fs::write(
        dirs.home.join("config.toml"),
        "[shell_environment_policy]\ninherit = \"all\"\n",
    )
    .unwrap();
    let planted = dirs.ws.join("planted.sh");
    std::fs::write(&planted, "touch pwned\n").unwrap();
    let out = Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["exec", "--", "bash", "-c", "env; true"])
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        .env("BASH_ENV", &planted)
        .env("ENV", &planted)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("ignoring keys"), "{}", stderr(&out));
    assert!(!exists(dirs.ws.join("pwned")), "BASH_ENV was sourced");
    let env = stdout(&out);
    assert!(
        !env.lines()
            .any(|l| l.starts_with("BASH_ENV=") || l.starts_with("ENV="))
    );
    assert!(env.lines().any(|l| l.starts_with("PATH=")));
}

/// Item 10: an unset `HOME` is a clear error (never `/.airlock`); `exec` and `sandbox` from
/// `/` refuse with a clear error about the working directory.
#[test]
fn item10_home_unset_and_root_working_directory() {
    let dirs = Dirs::new();
    let had_root_home = exists("/.airlock");
    for args in [&["exec", "--", "true"][..], &["permissions", "show"]] {
        let out = Command::new(airlock_bin())
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(args)
            .current_dir(&dirs.ws)
            .env_remove("HOME")
            .env_remove("AIRLOCK_HOME")
            .output()
            .unwrap();
        let expected = if args[0] == "exec" { 125 } else { 1 };
        assert_eq!(out.status.code(), Some(expected), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("HOME is not set, so Airlock cannot find its configuration"),
            "{}",
            stderr(&out)
        );
    }
    assert!(had_root_home || !exists("/.airlock"), "created /.airlock");
    for args in [&["exec", "--", "true"][..], &["sandbox", "--", "true"]] {
        let out = Command::new(airlock_bin())
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(args)
            .current_dir("/")
            .env("AIRLOCK_HOME", &dirs.home)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(125), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("the working directory is /, the filesystem root: as the workspace it would make the whole disk writable; cd into a project directory or pass -C DIR"),
            "{}",
            stderr(&out)
        );
    }
    // A profile that does not write the workspace may still run from `/`.
    let out = Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["sandbox", "-P", ":read-only", "--", "true"])
        .current_dir("/")
        .env("AIRLOCK_HOME", &dirs.home)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Item 11: every call gets its own call id; `explain --from-log CALL_ID` re-renders the
/// entry for a person, `--json` prints it, an unknown id is exit 1 with a clear message.
#[test]
fn item11_explain_from_log() {
    let dirs = Dirs::new();
    let first = airlock(&dirs, &["exec", "-v", "--", "touch", "a.txt"]);
    assert_eq!(first.status.code(), Some(0));
    let second = airlock(&dirs, &["exec", "--", "sh", "-c", "exit 4"]);
    assert_eq!(second.status.code(), Some(4));
    let audit = dirs.audit();
    assert_eq!(audit.len(), 2);
    let id = audit[0]["call_id"].as_str().unwrap().to_owned();
    assert_ne!(id, audit[1]["call_id"].as_str().unwrap());
    assert!(
        stderr(&first).contains(&format!(
            "airlock: call {id} (airlock explain --from-log {id})"
        )),
        "{}",
        stderr(&first)
    );
    let out = airlock(&dirs, &["explain", "--from-log", &id]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for line in [
        format!("call:    {id}\n"),
        format!("cwd:     {}\n", dirs.ws.display()),
        "command: touch a.txt\n".to_owned(),
        "  first: approved by config".to_owned(),
        "  first attempt: sandbox linuxSeccomp → exit 0".to_owned(),
        "outcome: ran, exit 0\n".to_owned(),
    ] {
        assert!(text.contains(&line), "{line:?} in\n{text}");
    }
    let out = airlock(&dirs, &["explain", "--from-log", &id, "--json"]);
    let entry: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(entry, audit[0]);
    let out = airlock(&dirs, &["explain", "--from-log", "call-nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no audit entry with call id `call-nope`"),
        "{}",
        stderr(&out)
    );
}
