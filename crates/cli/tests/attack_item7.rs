#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
//! Issue 11 item 7, the filesystem parts: a `$TMPDIR` that would widen the sandbox, Airlock's
//! own home inside a writable root, a writable root that is a symlink, a deny entry on a
//! dangling symlink, and a writable root on a read-only filesystem. Each test runs the real
//! attack through `airlock sandbox` (real bubblewrap) and checks the host afterwards; each has
//! a control showing that the same write does land when the sandbox allows it, so a clean
//! host is the sandbox's doing.

mod exec_support;

use std::path::Path;
use std::process::{Command, Output};

use exec_support::{Dirs, airlock_bin, exists, stderr};

const SETUP_FAILURE: i32 = 125;

/// `airlock ARGS` in `cwd` with `$AIRLOCK_HOME` = `dirs.home` unless `env` sets it.
fn airlock_in(dirs: &Dirs, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(airlock_bin());
    command
        .args(args)
        .current_dir(cwd)
        .env("AIRLOCK_HOME", &dirs.home)
        .stdin(std::process::Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

/// `airlock sandbox -P PROFILE -- sh -c SCRIPT` in the workspace.
fn sandbox(dirs: &Dirs, profile: &str, script: &str, env: &[(&str, &str)]) -> Output {
    airlock_in(
        dirs,
        &dirs.ws,
        &["sandbox", "-P", profile, "--", "sh", "-c", script],
        env,
    )
}

fn all(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(out))
}

/// `permissions show -P PROFILE` in the workspace.
fn show(dirs: &Dirs, profile: &str, env: &[(&str, &str)]) -> String {
    let out = airlock_in(dirs, &dirs.ws, &["permissions", "show", "-P", profile], env);
    assert!(out.status.success(), "{}", all(&out));
    all(&out)
}

/// `TMPDIR=/` (or `/tmp/..`, a relative or a missing directory) used to make the whole disk
/// writable: now it is ignored with a warning naming the value and the reason, and a write
/// outside every writable root fails. Control: a valid `TMPDIR` pointing at the same outside
/// directory does make it writable.
#[test]
fn a_tmpdir_at_the_root_or_unusable_widens_nothing() {
    let dirs = Dirs::new();
    let outside = dirs.outside_path().to_path_buf();
    let planted = outside.join("planted");
    let script = format!("echo x > '{}'", planted.display());
    let missing = outside.join("no-such-dir").display().to_string();
    for (value, reason) in [
        ("/", "filesystem root"),
        ("/tmp/..", "filesystem root"),
        ("relative/tmp", "not an absolute path"),
        (missing.as_str(), "cannot be resolved"),
    ] {
        let out = sandbox(&dirs, ":workspace", &script, &[("TMPDIR", value)]);
        assert!(!exists(&planted), "TMPDIR={value}: {}", all(&out));
        assert_ne!(out.status.code(), Some(0), "TMPDIR={value}: {}", all(&out));
        let text = stderr(&out);
        assert!(
            text.contains(&format!("warning: ignoring TMPDIR={value}: ")) && text.contains(reason),
            "TMPDIR={value}: {text}"
        );
        assert!(
            text.contains("Read-only file system"),
            "TMPDIR={value}: {text}"
        );
    }
    let shown = show(&dirs, ":workspace", &[("TMPDIR", "/")]);
    assert!(
        shown.contains("TMPDIR=/ (ignored: it is the filesystem root"),
        "{shown}"
    );
    let out = sandbox(
        &dirs,
        ":workspace",
        &script,
        &[("TMPDIR", outside.to_str().unwrap())],
    );
    assert_eq!(out.status.code(), Some(0), "control: {}", all(&out));
    assert!(exists(&planted), "control: a valid TMPDIR is writable");
}

/// `TMPDIR=<ws>/.git` (or a directory below it) used to bind the repository's git directory
/// writable, so a confined run could set `core.fsmonitor` that the user's next `git status`
/// runs. The same for a `TMPDIR` inside a path the profile denies: it would be readable and
/// writable. Both are ignored with a warning; the host's `git status` runs nothing planted.
#[test]
fn a_tmpdir_inside_git_or_a_denied_path_is_ignored() {
    let dirs = Dirs::new();
    let outside = dirs.outside_path().to_path_buf();
    let marker = outside.join("fsmonitor-ran");
    let git = |args: &[&str]| {
        Command::new("git")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(args)
            .current_dir(&dirs.ws)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap()
    };
    assert!(git(&["init", "-q"]).status.success());
    let git_dir = dirs.ws.join(".git");
    let plant = format!(
        "git config --file .git/config core.fsmonitor 'touch {m}'; \
         printf '#!/bin/sh\\ntouch {m}\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
         echo x > .git/hooks/planted",
        m = marker.display()
    );
    for tmpdir in [git_dir.clone(), git_dir.join("hooks")] {
        let _ = std::fs::remove_file(git_dir.join("hooks/pre-commit"));
        let value = tmpdir.to_str().unwrap();
        let out = sandbox(&dirs, ":workspace", &plant, &[("TMPDIR", value)]);
        let text = stderr(&out);
        assert!(
            text.contains(&format!("warning: ignoring TMPDIR={value}: ")),
            "{text}"
        );
        assert!(text.contains("protected"), "{text}");
        assert!(!exists(git_dir.join("hooks/planted")), "{text}");
        assert!(!exists(git_dir.join("hooks/pre-commit")), "{text}");
        let _ = git(&["status", "--short"]);
        assert!(!exists(&marker), "host git ran the planted fsmonitor");
        let shown = show(&dirs, ":workspace", &[("TMPDIR", value)]);
        assert!(
            shown.contains("write entries kept read-only:")
                && shown.contains(&format!("TMPDIR={value} (resolves to")),
            "{shown}"
        );
    }
    // A nested repository's `.git` (protected by the mount plan, not by a profile entry).
    let lib = dirs.ws.join("vendor/lib");
    std::fs::create_dir_all(&lib).unwrap();
    let lib_git = |args: &[&str]| {
        Command::new("git")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(args)
            .current_dir(&lib)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap()
    };
    assert!(lib_git(&["init", "-q"]).status.success());
    let nested = lib.join(".git");
    let out = sandbox(
        &dirs,
        ":workspace",
        &format!(
            "git config --file '{g}/config' core.fsmonitor 'touch {m}'; echo x > '{g}/planted'",
            g = nested.display(),
            m = marker.display()
        ),
        &[("TMPDIR", nested.to_str().unwrap())],
    );
    assert!(
        stderr(&out).contains(&format!("warning: ignoring TMPDIR={}: ", nested.display())),
        "{}",
        all(&out)
    );
    assert!(!exists(nested.join("planted")), "{}", all(&out));
    let _ = lib_git(&["status", "--short"]);
    assert!(
        !exists(&marker),
        "host git in the nested repository ran the plant"
    );
    // Inside a denied directory.
    let secret = outside.join("secret");
    std::fs::create_dir_all(secret.join("sub")).unwrap();
    std::fs::write(secret.join("key"), "private\n").unwrap();
    dirs.config(&format!(
        "[permissions.secretive]\nextends = \":workspace\"\n[permissions.secretive.filesystem]\n{:?} = \"none\"\n",
        secret.display().to_string()
    ));
    let sub = secret.join("sub");
    let steal = format!(
        "cat '{}/key'; echo x > '{}/planted'",
        secret.display(),
        sub.display()
    );
    let out = sandbox(
        &dirs,
        "secretive",
        &steal,
        &[("TMPDIR", sub.to_str().unwrap())],
    );
    let text = all(&out);
    assert!(!text.contains("private"), "{text}");
    assert!(!exists(sub.join("planted")), "{text}");
    assert!(text.contains("which the profile denies"), "{text}");
    // Control: an ordinary TMPDIR is writable, and so would `.git/hooks` be.
    let ordinary = outside.join("tmp");
    std::fs::create_dir(&ordinary).unwrap();
    let out = sandbox(
        &dirs,
        ":workspace",
        &format!("echo x > '{}/ok'", ordinary.display()),
        &[("TMPDIR", ordinary.to_str().unwrap())],
    );
    assert_eq!(out.status.code(), Some(0), "control: {}", all(&out));
    assert!(exists(ordinary.join("ok")));
}

/// `$AIRLOCK_HOME` (and `$CODEX_HOME`) inside the workspace: its `config.toml` and
/// `rules/` are what later runs trust, so planting a rule there would let later commands out
/// of the sandbox. They stay read-only (missing ones cannot be created), `permissions show`
/// says so, and a workspace inside the home is not writable at all.
#[test]
fn airlock_and_codex_homes_inside_the_workspace_stay_read_only() {
    let dirs = Dirs::new();
    let home = dirs.ws.join("airlock-home");
    std::fs::create_dir_all(home.join("rules")).unwrap();
    std::fs::write(home.join("config.toml"), "# the user's\n").unwrap();
    std::fs::write(home.join("rules/default.rules"), "# the user's\n").unwrap();
    let codex = dirs.ws.join("codex-home");
    let missing_home = dirs.ws.join("later/airlock-home");
    let plant = |home: &Path| {
        format!(
            "h='{h}'; mkdir -p \"$h/rules\"; \
             echo 'prefix_rule(pattern=[\"sh\"], decision=\"allow\")' > \"$h/rules/planted.rules\"; \
             echo 'default_permissions = \":danger-full-access\"' >> \"$h/config.toml\"; \
             cp \"$h/config.toml\" /tmp/airlock-cfg.$$; mv /tmp/airlock-cfg.$$ \"$h/config.toml\"; \
             mv \"$h\" \"$h.moved\"; mkdir -p \"$h/log\" && echo '{{}}' > \"$h/log/audit.jsonl\"; true",
            h = home.display()
        )
    };
    let env = [
        ("AIRLOCK_HOME", home.to_str().unwrap()),
        ("CODEX_HOME", codex.to_str().unwrap()),
    ];
    let out = sandbox(
        &dirs,
        ":workspace",
        &format!("{}; {}", plant(&home), plant(&codex)),
        &env,
    );
    assert_eq!(out.status.code(), Some(0), "{}", all(&out));
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).unwrap(),
        "# the user's\n"
    );
    assert_eq!(
        std::fs::read_dir(home.join("rules")).unwrap().count(),
        1,
        "a rules file was planted"
    );
    assert!(!exists(home.join("log")) && !exists(dirs.ws.join("airlock-home.moved")));
    assert!(
        !exists(&codex) && !exists(dirs.ws.join("codex-home.moved")),
        "a missing CODEX_HOME was created"
    );
    // A missing home deeper down: not creatable either, and nothing left behind.
    let out = sandbox(
        &dirs,
        ":workspace",
        &plant(&missing_home),
        &[("AIRLOCK_HOME", missing_home.to_str().unwrap())],
    );
    assert_eq!(out.status.code(), Some(0), "{}", all(&out));
    assert!(!exists(&missing_home), "{}", all(&out));
    assert!(!exists(dirs.ws.join("later")), "placeholder left behind");
    let shown = show(&dirs, ":workspace", &env);
    for path in [&home, &codex] {
        assert!(
            shown.contains(&format!(
                "read-only: {} (Airlock's or Codex's home",
                path.display()
            )),
            "{shown}"
        );
    }
    // The workspace inside the home: kept read-only as a whole.
    let inner = home.join("project");
    std::fs::create_dir(&inner).unwrap();
    let out = airlock_in(
        &dirs,
        &inner,
        &[
            "sandbox",
            "-P",
            ":workspace",
            "--",
            "sh",
            "-c",
            "echo x > f",
        ],
        &env,
    );
    assert!(!exists(inner.join("f")), "{}", all(&out));
    assert!(
        stderr(&out).contains("is always read-only"),
        "{}",
        all(&out)
    );
    // Control: with the home elsewhere, the same script does plant (the directory is an
    // ordinary workspace directory then).
    let out = sandbox(&dirs, ":workspace", &plant(&home), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", all(&out));
    assert!(exists(home.join("rules/planted.rules")) || exists(dirs.ws.join("airlock-home.moved")));
}

/// A profile's extra writable root `vendor/link` that a sandboxed run turned into a symlink to
/// a directory outside (here a "secret" one, also denied in a second profile): binding it
/// writable would hand the command that directory. It is judged by its target and kept
/// read-only, with a warning and a `permissions show` line. A symlink to a directory inside
/// the workspace stays writable.
#[test]
fn a_symlinked_writable_root_is_judged_by_its_target() {
    let dirs = Dirs::new();
    let outside = dirs.outside_path().to_path_buf();
    let secret = outside.join("secret");
    std::fs::create_dir(&secret).unwrap();
    std::fs::write(secret.join("authorized_keys"), "the user's\n").unwrap();
    std::fs::create_dir_all(dirs.ws.join("vendor/real")).unwrap();
    let link = dirs.ws.join("vendor/link");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    std::os::unix::fs::symlink("real", dirs.ws.join("vendor/inner")).unwrap();
    let key = |path: &Path| format!("{:?}", path.display().to_string());
    dirs.config(&format!(
        "[permissions.linked]\nextends = \":workspace\"\n[permissions.linked.filesystem]\n{link} = \"write\"\n{inner} = \"write\"\n\
         [permissions.denied]\nextends = \":workspace\"\n[permissions.denied.filesystem]\n{link} = \"write\"\n{secret} = \"none\"\n",
        link = key(&link),
        inner = key(&dirs.ws.join("vendor/inner")),
        secret = key(&secret),
    ));
    let plant = "echo planted >> vendor/link/authorized_keys; echo x > vendor/link/new";
    for (profile, reason) in [
        ("linked", "a sandboxed command could have made it"),
        ("denied", "which the profile denies"),
    ] {
        let out = sandbox(&dirs, profile, plant, &[]);
        assert_eq!(
            std::fs::read_to_string(secret.join("authorized_keys")).unwrap(),
            "the user's\n",
            "{profile}: {}",
            all(&out)
        );
        assert!(!exists(secret.join("new")), "{profile}: {}", all(&out));
        let text = stderr(&out);
        assert!(
            text.contains(&format!(
                "warning: writable root {} is kept read-only",
                link.display()
            )) && text.contains(reason),
            "{profile}: {text}"
        );
        let shown = show(&dirs, profile, &[]);
        assert!(
            shown.contains(&format!(
                "  {} (resolves to {}; not writable:",
                link.display(),
                secret.canonicalize().unwrap().display()
            )),
            "{profile}: {shown}"
        );
    }
    // The workspace itself reached through a symlink that lies in a writable root (`/tmp`).
    let tmp = tempfile::Builder::new()
        .prefix("airlock-cwd-link-")
        .tempdir_in("/tmp")
        .unwrap();
    let cwd_link = tmp.path().join("ws");
    std::os::unix::fs::symlink(&secret, &cwd_link).unwrap();
    let out = airlock_in(
        &dirs,
        &dirs.ws,
        &[
            "sandbox",
            "-P",
            ":workspace",
            "-C",
            cwd_link.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "echo x > new",
        ],
        &[],
    );
    assert!(!exists(secret.join("new")), "{}", all(&out));
    assert!(stderr(&out).contains("is kept read-only"), "{}", all(&out));
    // Control: the symlink into the workspace is writable, and so is the secret directory
    // when the profile names it as it is.
    let out = sandbox(&dirs, "linked", "echo x > vendor/inner/ok", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", all(&out));
    assert!(exists(dirs.ws.join("vendor/real/ok")));
    dirs.config(&format!(
        "[permissions.plain]\nextends = \":workspace\"\n[permissions.plain.filesystem]\n{} = \"write\"\n",
        key(&secret)
    ));
    let out = sandbox(
        &dirs,
        "plain",
        &format!("echo x > '{}/new'", secret.display()),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", all(&out));
    assert!(exists(secret.join("new")));
}

/// A deny entry on a dangling symlink used to stop every launch (bubblewrap cannot mount on a
/// missing target). Inside the workspace the target is masked, so the command can neither
/// create it nor read it through the link; outside every writable root there is nothing to
/// mask and the entry is skipped with a warning naming it.
#[test]
fn a_deny_entry_on_a_dangling_symlink_does_not_stop_the_sandbox() {
    let dirs = Dirs::new();
    let outside = dirs.outside_path().to_path_buf();
    let inside_link = dirs.ws.join("secret-link");
    std::os::unix::fs::symlink("secret-target", &inside_link).unwrap();
    let outside_link = outside.join("dangling");
    std::os::unix::fs::symlink(outside.join("nothere/x"), &outside_link).unwrap();
    dirs.config(&format!(
        "[permissions.dangling]\nextends = \":workspace\"\n[permissions.dangling.filesystem]\n{:?} = \"none\"\n{:?} = \"none\"\n",
        inside_link.display().to_string(),
        outside_link.display().to_string()
    ));
    let script =
        "echo secret > secret-target; echo via-link > secret-link; cat secret-link; echo STARTED";
    let out = sandbox(&dirs, "dangling", script, &[]);
    let text = all(&out);
    assert!(text.contains("STARTED"), "{text}");
    assert!(
        !text.contains("secret\n") && !text.contains("via-link"),
        "{text}"
    );
    let content = std::fs::read_to_string(dirs.ws.join("secret-target")).unwrap_or_default();
    assert!(
        content.is_empty(),
        "the denied target was written: {content:?}"
    );
    assert!(
        stderr(&out).contains(&format!(
            "warning: deny entry {} is a symlink to the missing",
            outside_link.display()
        )),
        "{text}"
    );
    // Control: without the deny entries the same script writes and reads the target.
    let out = sandbox(&dirs, ":workspace", script, &[]);
    assert!(all(&out).contains("via-link"), "{}", all(&out));
}

/// `unshare -rm sh -c SCRIPT` (a user and mount namespace of the test's own, where the test
/// can make a directory read-only), or `None` when this machine does not allow one.
fn in_own_mount_namespace(script: &str, dirs: &Dirs) -> Option<Output> {
    let probe = Command::new("unshare")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["-rm", "true"])
        .output()
        .ok()?;
    if !probe.status.success() {
        eprintln!(
            "\n*** SKIPPED: `unshare -rm` is not allowed here ({}) ***\n",
            stderr(&probe)
        );
        return None;
    }
    Some(
        Command::new("unshare")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(["-rm", "sh", "-c", script])
            .env("AIRLOCK_HOME", &dirs.home)
            .env("AIRLOCK_BIN", airlock_bin())
            .output()
            .unwrap(),
    )
}

/// A writable root on a read-only filesystem (a read-only bind in a mount namespace the test
/// makes, as a read-only `/tmp` or NFS export would be): the launch stops with exit 125 and an
/// error naming the path that could not be made and the fix, and nothing runs. `/tmp` itself
/// read-only fails the same way for `:workspace`.
#[test]
fn a_writable_root_on_a_read_only_filesystem_fails_naming_the_path() {
    let dirs = Dirs::new();
    let outside = dirs.outside_path().to_path_buf();
    let ro = outside.join("ro");
    let ws = ro.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let ran = ws.join("ran");
    let script = format!(
        "mount --bind '{ro}' '{ro}' && mount -o remount,bind,ro '{ro}' && cd '{ws}' && \
         \"$AIRLOCK_BIN\" sandbox -P :workspace -- touch ran",
        ro = ro.display(),
        ws = ws.display(),
    );
    let Some(out) = in_own_mount_namespace(&script, &dirs) else {
        return;
    };
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(SETUP_FAILURE), "{text}");
    assert!(!exists(&ran), "the command ran: {text}");
    assert!(
        text.contains(&format!("cannot create the mount point {}/", ws.display()))
            && text.contains(&format!("{} is on a read-only filesystem", ws.display()))
            && text
                .contains("remount it writable, or use a profile that does not make it writable"),
        "{text}"
    );
    // `/tmp` read-only: a fresh empty tmpfs mounted read-only over it (an empty one, so no
    // concurrent launch's placeholders are there already). Only when the checkout is not
    // under /tmp: the mount would hide it.
    let under_tmp = |p: &Path| p.canonicalize().unwrap().starts_with("/tmp");
    if under_tmp(&dirs.ws) || under_tmp(&airlock_bin()) {
        eprintln!("\n*** SKIPPED the read-only /tmp part: the checkout is under /tmp ***\n");
    } else {
        let script = format!(
            "mount -t tmpfs -o ro tmpfs /tmp && cd '{ws}' && \
             \"$AIRLOCK_BIN\" sandbox -P :workspace -- touch ran",
            ws = dirs.ws.display(),
        );
        let out = in_own_mount_namespace(&script, &dirs).unwrap();
        let text = stderr(&out);
        assert_eq!(out.status.code(), Some(SETUP_FAILURE), "{text}");
        assert!(!exists(dirs.ws.join("ran")), "the command ran: {text}");
        assert!(
            text.contains("cannot create the mount point /tmp/")
                && text.contains("/tmp is on a read-only filesystem")
                && text.contains("remount /tmp writable"),
            "{text}"
        );
    }
    // Control: the same launch without the read-only bind runs.
    let script = format!(
        "cd '{ws}' && \"$AIRLOCK_BIN\" sandbox -P :workspace -- touch ran",
        ws = ws.display(),
    );
    let out = in_own_mount_namespace(&script, &dirs).unwrap();
    assert_eq!(out.status.code(), Some(0), "control: {}", stderr(&out));
    assert!(exists(&ran));
}

/// `airlock exec` starts the sandbox helper with the command's filtered environment: with
/// `[shell_environment_policy] inherit = "core"` the helper does not see `AIRLOCK_HOME`, and
/// used to protect `~/.airlock` instead. The launcher passes its homes along, so a home inside
/// the workspace stays read-only for `exec` too. Control: the same config with the home
/// elsewhere lets the same script write the directory.
#[test]
fn airlock_home_stays_read_only_under_exec_with_a_filtered_environment() {
    let dirs = Dirs::new();
    let home = dirs.ws.join("airlock-home");
    std::fs::create_dir_all(home.join("rules")).unwrap();
    let config =
        "default_permissions = \":workspace\"\n[shell_environment_policy]\ninherit = \"core\"\n";
    std::fs::write(home.join("config.toml"), config).unwrap();
    std::fs::write(dirs.home.join("config.toml"), config).unwrap();
    let script = "echo 'prefix_rule(pattern=[\"sh\"], decision=\"allow\")' > airlock-home/rules/planted.rules";
    let exec = |airlock_home: &Path| {
        airlock_in(
            &dirs,
            &dirs.ws,
            &["exec", "-a", "never", "--", "sh", "-c", script],
            &[("AIRLOCK_HOME", airlock_home.to_str().unwrap())],
        )
    };
    let out = exec(&home);
    assert!(!exists(home.join("rules/planted.rules")), "{}", all(&out));
    assert!(all(&out).contains("Read-only file system"), "{}", all(&out));
    let out = exec(&dirs.home);
    assert_eq!(out.status.code(), Some(0), "control: {}", all(&out));
    assert!(exists(home.join("rules/planted.rules")));
}
