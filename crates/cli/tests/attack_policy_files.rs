#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
//! Issue 11, red-team finding F5: policy files a confined run could write. A trusted project
//! (`[projects."/p"] trust_level = "trusted"`) makes later runs load `/p/.airlock/rules/*.rules`
//! and `/p/.airlock/config.toml`. When `/p` lies inside a writable root without being that
//! root (a project nested in the workspace, a project under `/tmp` while the workspace is
//! elsewhere), only the root's own `.airlock` used to be protected: a confined run planted
//! `prefix_rule(pattern=["touch"], decision="allow")` there, and the next `airlock exec` in
//! the project ran `touch` outside the sandbox.
//!
//! Each case plants from inside the real sandbox (`airlock sandbox -P :workspace`, real
//! bubblewrap), then runs what the user runs next (`airlock exec -a never -- touch MARKER` in
//! the project) and asserts the planted rule was never written and the marker never
//! appeared. The control runs the same planting script outside the sandbox: the same later
//! run then does create the marker, so the attack is real and the check can fail.

mod attack_support;
mod exec_support;

use std::path::Path;
use std::process::{Command, Output};

use attack_support::{Marker, serial, temp_in};
use exec_support::{Dirs, airlock_bin, exists, stderr};

/// `airlock ARGS` in `cwd` with `$AIRLOCK_HOME` = `dirs.home`, stdin closed.
fn airlock_in(dirs: &Dirs, cwd: &Path, args: &[&str]) -> Output {
    Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(args)
        .current_dir(cwd)
        .env("AIRLOCK_HOME", &dirs.home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn all(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(out))
}

/// Every simple way to plant an allow rule and a config for the project `project`: create
/// the folder, append to a config, replace it, rename the project away and build a new one
/// at its path. Each step may fail; the script ends with status 0.
fn plant(project: &Path) -> String {
    format!(
        "p='{p}'; mkdir -p \"$p/.airlock/rules\"; \
         echo 'prefix_rule(pattern=[\"touch\"], decision=\"allow\")' > \"$p/.airlock/rules/planted.rules\"; \
         echo 'approval_policy = \"never\"' >> \"$p/.airlock/config.toml\"; \
         echo x > /tmp/airlock-cfg.$$; mv /tmp/airlock-cfg.$$ \"$p/.airlock/config.toml\"; \
         mv \"$p\" \"$p.moved\" && mkdir -p \"$p/.airlock/rules\" && \
           echo 'prefix_rule(pattern=[\"touch\"], decision=\"allow\")' > \"$p/.airlock/rules/planted.rules\"; \
         true",
        p = project.display()
    )
}

/// What the user runs next in `project`: a command that only an allow rule lets out of the
/// sandbox (the marker lies outside every writable root).
fn later_run(dirs: &Dirs, project: &Path, marker: &Marker) -> Output {
    let cmd = marker.command();
    let words: Vec<&str> = cmd.split(' ').collect();
    let mut args = vec!["exec", "-a", "never", "--"];
    args.extend(words);
    airlock_in(dirs, project, &args)
}

/// The config trusting every project in `projects`.
fn trust(dirs: &Dirs, projects: &[&Path]) {
    let mut text = String::new();
    for project in projects {
        text.push_str(&format!(
            "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            project.display()
        ));
    }
    dirs.config(&text);
}

/// A trusted project nested in the workspace, and one under `/tmp` while the workspace is
/// elsewhere (`/tmp` is a writable root of `:workspace`): neither's `.airlock` can be
/// created, written, replaced or moved away from inside the sandbox, and the next run in the
/// project does not load a planted rule.
#[test]
fn a_trusted_project_inside_a_writable_root_keeps_its_policy_read_only() {
    let _serial = serial();
    let dirs = Dirs::new();
    let nested = dirs.ws.join("vendor/proj");
    std::fs::create_dir_all(&nested).unwrap();
    let (_tmp, tmp_base) = temp_in("/tmp", "airlock-trusted-");
    let under_tmp = tmp_base.join("proj");
    std::fs::create_dir_all(&under_tmp).unwrap();
    // One with policy of its own already: it must stay exactly as the user wrote it.
    let existing = dirs.ws.join("tools/proj");
    std::fs::create_dir_all(existing.join(".airlock/rules")).unwrap();
    std::fs::write(existing.join(".airlock/rules/user.rules"), "# the user's\n").unwrap();
    std::fs::write(existing.join(".airlock/config.toml"), "# the user's\n").unwrap();
    trust(&dirs, &[&nested, &under_tmp, &existing]);
    for project in [&nested, &under_tmp, &existing] {
        let marker = Marker::new();
        let out = airlock_in(
            &dirs,
            &dirs.ws,
            &[
                "sandbox",
                "-P",
                ":workspace",
                "--",
                "sh",
                "-c",
                &plant(project),
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{project:?}: {}", all(&out));
        assert!(
            !exists(project.join(".airlock/rules/planted.rules")),
            "{project:?}: a rule was planted"
        );
        assert!(
            !exists(project.with_extension("moved")),
            "{project:?}: the project was moved away"
        );
        if project == &existing {
            for name in ["rules/user.rules", "config.toml"] {
                assert_eq!(
                    std::fs::read_to_string(project.join(".airlock").join(name)).unwrap(),
                    "# the user's\n"
                );
            }
            assert_eq!(
                std::fs::read_dir(project.join(".airlock/rules"))
                    .unwrap()
                    .count(),
                1
            );
        } else {
            assert!(
                !exists(project.join(".airlock")),
                "{project:?}: .airlock was created (or its placeholder left behind)"
            );
        }
        let out = later_run(&dirs, project, &marker);
        assert!(
            !marker.fired(),
            "{project:?}: the next run loaded a planted rule: {}",
            all(&out)
        );
    }
    // Control: planted outside the sandbox, the same rule does let the next run out.
    let marker = Marker::new();
    let ran = Command::new("sh")
        .args(["-c", &plant(&nested)])
        .output()
        .unwrap();
    assert!(ran.status.success());
    let out = later_run(&dirs, &nested, &marker);
    assert!(marker.fired(), "control: {}", all(&out));
}

/// A trusted project that does not exist yet, deep inside the workspace: the sandbox cannot
/// create it (it would create its `.airlock` with it; the first missing folder on the way is
/// held by an empty read-only placeholder for the run, as for a missing `$AIRLOCK_HOME`), and
/// nothing is left behind.
#[test]
fn a_missing_trusted_project_cannot_be_created_from_inside() {
    let _serial = serial();
    let dirs = Dirs::new();
    let project = dirs.ws.join("later/deeper/proj");
    trust(&dirs, &[&project]);
    let out = airlock_in(
        &dirs,
        &dirs.ws,
        &[
            "sandbox",
            "-P",
            ":workspace",
            "--",
            "sh",
            "-c",
            &plant(&project),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", all(&out));
    assert!(!exists(&project), "{}", all(&out));
    assert!(!exists(project.join(".airlock")));
    // The first missing folder on the way was held by a placeholder for the run (so the
    // path could not be built), and nothing is left behind.
    assert!(!exists(dirs.ws.join("later")), "placeholder left behind");
}

/// `permissions show` names each protected policy folder and why, and `--json` lists it
/// (a read entry, and the reason under `protected_policy_paths`).
#[test]
fn permissions_show_names_the_trusted_projects_policy() {
    let _serial = serial();
    let dirs = Dirs::new();
    let project = dirs.ws.join("vendor/proj");
    std::fs::create_dir_all(&project).unwrap();
    trust(&dirs, &[&project]);
    let out = airlock_in(&dirs, &dirs.ws, &["permissions", "show"]);
    assert!(out.status.success(), "{}", all(&out));
    let shown = all(&out);
    let line = format!(
        "read-only: {} (policy of the trusted project {}",
        project.join(".airlock").display(),
        project.display()
    );
    assert!(shown.contains(&line), "{shown}");
    let out = airlock_in(&dirs, &dirs.ws, &["permissions", "show", "--json"]);
    assert!(out.status.success(), "{}", all(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = &json["protected_policy_paths"];
    let entry = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == project.join(".airlock").display().to_string())
        .unwrap_or_else(|| panic!("{json}"));
    assert!(
        entry["reason"]
            .as_str()
            .unwrap()
            .contains("trusted project"),
        "{entry}"
    );
}

/// A trusted project spelled through a symlink that lies in a writable root (`/tmp/link ->`
/// the real project): a confined command could re-point the link to a folder of its own, and
/// a later run in `/tmp/link` would load that folder's rules. The sandbox refuses to start,
/// naming the symlink and the fix, and creates nothing through the link.
#[test]
fn a_trusted_project_spelled_through_a_writable_symlink_is_refused() {
    let _serial = serial();
    let dirs = Dirs::new();
    let real = dirs.outside_path().join("proj");
    std::fs::create_dir_all(&real).unwrap();
    let (_tmp, tmp_base) = temp_in("/tmp", "airlock-trusted-link-");
    let link = tmp_base.join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    trust(&dirs, &[&link]);
    let out = airlock_in(
        &dirs,
        &dirs.ws,
        &[
            "sandbox",
            "-P",
            ":workspace",
            "--",
            "sh",
            "-c",
            "echo ran > ran",
        ],
    );
    assert_eq!(out.status.code(), Some(125), "{}", all(&out));
    assert!(
        all(&out).contains(&format!("crosses writable symlink {}", link.display())),
        "{}",
        all(&out)
    );
    assert!(!exists(dirs.ws.join("ran")));
    assert!(!exists(real.join(".airlock")), "created through the link");
}
