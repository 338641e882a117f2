#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
//! Red-team review of issue 11: a user's `$HOME` inside a writable root. A confined command
//! must not plant a startup or configuration file that runs on the host later; each attack
//! runs in the real sandbox (`airlock sandbox` and `airlock exec`) and the host's files are
//! checked afterwards.

mod exec_support;

use std::path::Path;
use std::process::Command;

use exec_support::{Dirs, airlock_bin, exists, stderr};

/// Issue 11: when `$HOME` lies inside a writable root (the agent started in `~`, so the
/// workspace *is* `$HOME`; `$HOME` deeper inside the workspace; or `HOME` under `/tmp` as in
/// many containers), a confined command must not plant anything that runs on the host later:
/// appending to `~/.bashrc`, creating `~/.bash_profile` or `~/.gitconfig`, writing
/// `~/.ssh/config` (`ProxyCommand`), `~/.local/bin/x` or `~/.config/git/config`, and
/// removing or renaming the protected entries (or `$HOME` itself) all fail, the host's files
/// are untouched and nothing is left behind — while the user's other files in `$HOME` stay
/// writable. Inside the sandbox the stand-ins have the expected type: a login `bash` and `git`
/// run without complaints about them.
#[test]
fn startup_files_of_a_home_inside_a_writable_root_stay_read_only() {
    let dirs = Dirs::new();
    // The agent started in `~`.
    let home = dirs.ws.join("home");
    attack_home(&dirs, &home, &home, SANDBOX);
    // `$HOME` deeper inside the workspace, through `airlock exec` (the helper then runs
    // with the command's environment and learns the launcher's `$HOME` from its arguments).
    let nested = dirs.ws.join("users/me");
    attack_home(&dirs, &nested, &dirs.ws, EXEC);
    // `HOME` under `/tmp` (a container): writable through `:slash_tmp`.
    if Path::new("/tmp").is_dir() {
        let tmp_home = tempfile::Builder::new()
            .prefix("airlock-home-")
            .tempdir_in("/tmp")
            .unwrap();
        attack_home(
            &dirs,
            &tmp_home.path().canonicalize().unwrap(),
            &dirs.ws,
            SANDBOX,
        );
    }
}

/// `airlock sandbox` with the default profile.
const SANDBOX: &[&str] = &["sandbox", "-P", ":workspace", "--"];
/// `airlock exec`, never asking (the command runs in the sandbox or not at all).
const EXEC: &[&str] = &["exec", "-a", "never", "--"];

/// The attacks of [`startup_files_of_a_home_inside_a_writable_root_stay_read_only`] with
/// `HOME=home`, from `cwd` (the workspace), run through `airlock VIA sh -c SCRIPT`.
fn attack_home(dirs: &Dirs, home: &Path, cwd: &Path, via: &[&str]) {
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join(".config")).unwrap();
    std::fs::write(home.join(".bashrc"), "# user's\n").unwrap();
    std::fs::write(home.join(".ssh/known_hosts"), "# user's\n").unwrap();
    std::fs::write(home.join("notes.txt"), "before\n").unwrap();
    let before = listing(home);
    let marker = dirs.outside_path_str("home-planted");
    let script = format!(
        r#"m='{marker}'
echo "touch $m" >> "$HOME/.bashrc" && echo 'wrote .bashrc'
echo "touch $m" > "$HOME/.bash_profile" && echo 'wrote .bash_profile'
printf '[core]\n\tfsmonitor = touch %s\n' "$m" > "$HOME/.gitconfig" && echo 'wrote .gitconfig'
printf 'Host *\n  ProxyCommand touch %s\n' "$m" > "$HOME/.ssh/config" && echo 'wrote .ssh/config'
mkdir -p "$HOME/.local/bin" && printf '#!/bin/sh\ntouch %s\n' "$m" > "$HOME/.local/bin/x" && echo 'wrote .local/bin/x'
mkdir -p "$HOME/.config/git" && printf '[core]\n\tfsmonitor = touch %s\n' "$m" > "$HOME/.config/git/config" && echo 'wrote .config/git/config'
rm "$HOME/.bashrc" 2>/dev/null; rm -r "$HOME/.ssh" 2>/dev/null; mv "$HOME/.config" "$HOME/config-moved" 2>/dev/null && echo 'moved .config'
mv "$HOME" "$HOME.moved" 2>/dev/null && mkdir -p "$HOME" && echo "touch $m" > "$HOME/.bashrc" && echo 'replaced $HOME'
bash -lc true 2>&1 | sed 's/^/login bash: /'
git config --global --get core.fsmonitor 2>&1 | sed 's/^/git: /'
echo after > "$HOME/notes.txt" && mkdir -p "$HOME/project" && echo x > "$HOME/project/main.c" && echo 'wrote own files'
true
"#
    );
    let out = Command::new(airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args(via)
        .args(["sh", "-c", &script])
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .env("AIRLOCK_HOME", &dirs.home)
        .env("HOME", home)
        // Airlock's own probe cache (written on the host, by the launcher) goes elsewhere,
        // so that the listing below shows only what the sandbox could have left.
        .env("XDG_CACHE_HOME", dirs.home.join("cache"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let context = format!("HOME={}: {said}{}", home.display(), stderr(&out));
    assert!(out.status.success(), "{context}");
    assert_eq!(said.trim_end(), "wrote own files", "{context}");
    assert_eq!(
        std::fs::read_to_string(home.join(".bashrc")).unwrap(),
        "# user's\n",
        "the sandbox rewrote ~/.bashrc: {context}"
    );
    assert_eq!(
        std::fs::read_to_string(home.join(".ssh/known_hosts")).unwrap(),
        "# user's\n",
        "{context}"
    );
    for planted in [
        ".bash_profile",
        ".gitconfig",
        ".ssh/config",
        ".local",
        ".config/git",
        "config-moved",
    ] {
        assert!(
            !exists(home.join(planted)),
            "the sandbox created ~/{planted}: {context}"
        );
    }
    assert!(!exists(&marker), "a planted command ran: {context}");
    // Nothing left behind: the stand-ins for missing names are gone after the run, and the
    // user's own files were written.
    let mut expected = before;
    expected.push("project".into());
    expected.sort();
    assert_eq!(listing(home), expected, "{context}");
    assert_eq!(
        std::fs::read_to_string(home.join("notes.txt")).unwrap(),
        "after\n"
    );
    assert!(exists(home.join("project/main.c")));
    assert!(!exists(home.with_extension("moved")), "{context}");
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
