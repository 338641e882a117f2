#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
//! Red-team findings F2 and F4 under the real sandbox: an allow rule bypasses the sandbox
//! for a plain script, and the plain view used to take words as written although bash
//! turns them into others. With `find` and `timeout` allowed (outside the sandbox) and
//! `touch` forbidden, each script below would run `touch MARKER` unconfined on the host:
//! a glob that a file the sandboxed agent planted turns into `-exec`, a brace sequence
//! that spells `-exec` or `touch`, a line that tree-sitter glued to the allowed command.
//! Each test runs the script through `airlock exec -r RULES -a never`, asserts the marker
//! (outside every writable root) was not created, and ends with the control: the same
//! script run directly on the host does create it, so the attack is real.

mod attack_support;
mod exec_support;

use std::process::Command;

use attack_support::{Marker, serial};
use exec_support::{Dirs, stderr};

/// `find` and `timeout` allowed (a rule-allowed plain script bypasses the sandbox),
/// `touch` forbidden.
const RULES: &str = "prefix_rule(pattern=[\"find\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"timeout\"], decision=\"allow\")\n\
prefix_rule(pattern=[\"touch\"], decision=\"forbidden\")\n";

/// A workspace with the rules file.
fn workspace() -> (Dirs, String) {
    let dirs = Dirs::new();
    dirs.config("");
    let rules = dirs.rules("words.rules", RULES).display().to_string();
    (dirs, rules)
}

/// The sandboxed agent plants a file named `name` in the workspace.
fn plant(dirs: &Dirs, name: &str) {
    let out = dirs.exec(&["-a", "never", "--", "sh", "-c", &format!("touch ./{name}")]);
    assert_eq!(out.status.code(), Some(0), "plant: {}", stderr(&out));
    assert!(dirs.ws.join(name).exists(), "plant: {}", stderr(&out));
}

/// Runs `bash -lc SCRIPT` through `airlock exec -r RULES -a never`, asserts the marker
/// was not created and that no attempt ran outside the sandbox.
fn assert_contained(dirs: &Dirs, rules: &str, script: &str, marker: &Marker) {
    let out = dirs.exec(&["-r", rules, "-a", "never", "--", "bash", "-lc", script]);
    assert!(
        !marker.fired(),
        "{script:?}: the command ran outside the sandbox: {}",
        stderr(&out)
    );
    for entry in dirs.audit() {
        for attempt in entry["attempts"].as_array().into_iter().flatten() {
            assert_ne!(attempt["sandbox"], "none", "{script:?}: {entry}");
        }
    }
}

/// The control: the same script run directly on the host creates the marker.
fn assert_attack_is_real(dirs: &Dirs, script: &str, marker: &Marker) {
    assert!(!marker.fired());
    let ran = Command::new("bash")
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(["-c", script])
        .current_dir(&dirs.ws)
        .output()
        .unwrap();
    assert!(
        marker.fired(),
        "control: {script:?} did not create the marker on the host: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
}

/// F2, glob: the agent planted a file named `-exec`; `-exe?` matches it, so bash runs
/// `find . -maxdepth 0 -exec touch MARKER ;`.
#[test]
fn a_glob_over_a_planted_file_name_stays_in_the_sandbox() {
    let _serial = serial();
    let (dirs, rules) = workspace();
    plant(&dirs, "-exec");
    let marker = Marker::new();
    let script = format!(
        "find . -maxdepth 0 -exe? touch {} \\;",
        marker.path.display()
    );
    assert_contained(&dirs, &rules, &script, &marker);
    assert_attack_is_real(&dirs, &script, &marker);
}

/// F2, brace sequences: `{e..e}` and `{o..o}` spell `-exec` and `touch` only after
/// expansion; no file needs to be planted.
#[test]
fn brace_sequences_stay_in_the_sandbox() {
    let _serial = serial();
    let (dirs, rules) = workspace();
    for template in [
        "find . -maxdepth 0 -{e..e}xec touch MARKER \\;",
        "timeout 5 t{o..o}uch MARKER",
    ] {
        let marker = Marker::new();
        let script = template.replace("MARKER", &marker.path.display().to_string());
        assert_contained(&dirs, &rules, &script, &marker);
        assert_attack_is_real(&dirs, &script, &marker);
    }
}

/// F4: tree-sitter reads `timeout 5 true<newline>\<newline>touch MARKER` as one
/// `timeout` command; bash runs `touch MARKER` as a command of its own. The forbidden
/// rule now sees it: nothing runs.
#[test]
fn a_line_glued_to_an_allowed_command_is_seen() {
    let _serial = serial();
    let (dirs, rules) = workspace();
    for template in [
        "timeout 5 true\n\\\ntouch MARKER",
        "timeout 5 true\n\\touch MARKER",
    ] {
        let marker = Marker::new();
        let script = template.replace("MARKER", &marker.path.display().to_string());
        let out = dirs.exec(&["-r", &rules, "-a", "never", "--", "bash", "-lc", &script]);
        assert!(!marker.fired(), "{script:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("policy forbids commands starting with `touch`"),
            "{script:?}: {}",
            stderr(&out)
        );
        assert_attack_is_real(&dirs, &script, &marker);
    }
}
