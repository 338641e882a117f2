#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The interactive patch prompt of `airlock apply-patch` in a real terminal (spec 11
//! §Approval): `airlock apply-patch FILE` runs in its own tmux server; the test waits for the
//! prompt (paths and diff), answers with a key and checks the file and the exit status.
//!
//! tmux is installed by `scripts/lib.sh` (`ensure_sandbox_deps`); without it these tests
//! print why and pass without checking anything.

mod exec_support;

use std::process::Command;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use exec_support::Dirs;
use pretty_assertions::assert_eq;

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A tmux server running `airlock apply-patch PATCH_FILE` in the workspace; killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(dirs: &Dirs, patch_file: &std::path::Path) -> Option<Self> {
        if !Command::new("tmux")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .arg("-V")
            .output()
            .is_ok_and(|out| out.status.success())
        {
            eprintln!("skipping: tmux is not installed (scripts/lib.sh installs it)");
            return None;
        }
        let socket = format!(
            "airlock-patch-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let quote = |text: String| shlex::try_quote(&text).unwrap().into_owned();
        let script = format!(
            "cd {ws} && unset LD_LIBRARY_PATH; AIRLOCK_HOME={home} {bin} apply-patch {file}; echo \"EXIT=$?\"; sleep 600",
            ws = quote(dirs.ws.display().to_string()),
            home = quote(dirs.home.display().to_string()),
            bin = quote(exec_support::airlock_bin().display().to_string()),
            file = quote(patch_file.display().to_string()),
        );
        let status = Command::new("tmux")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args([
                "-L",
                &socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "t",
            ])
            .args(["-x", "200", "-y", "50", "sh", "-c", &script])
            .status()
            .unwrap();
        assert!(status.success(), "tmux new-session failed");
        Some(Self { socket })
    }

    fn pane(&self) -> String {
        let out = Command::new("tmux")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(["-L", &self.socket, "capture-pane", "-p", "-J", "-t", "t"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let pane = self.pane();
            if pane.contains(text) {
                return pane;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {text:?}; pane:\n{pane}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for the prompt, presses `key`; returns (pane at the prompt, `EXIT=` line).
    fn answer(&self, key: &str) -> (String, String) {
        let prompt = self.wait_for("[Esc] abort");
        let status = Command::new("tmux")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(["-L", &self.socket, "send-keys", "-t", "t", key])
            .status()
            .unwrap();
        assert!(status.success());
        let done = self.wait_for("EXIT=");
        let exit = done
            .lines()
            .find(|line| line.starts_with("EXIT="))
            .unwrap()
            .trim()
            .to_owned();
        (prompt, exit)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// A workspace with `outside/o.txt` = `x` and a patch file changing it to `y`.
fn outside_edit() -> (Dirs, std::path::PathBuf) {
    let dirs = Dirs::new();
    dirs.config("");
    std::fs::write(dirs.outside_path().join("o.txt"), "x\n").unwrap();
    let file = dirs.scripts.join("edit.patch");
    std::fs::write(
        &file,
        format!(
            "*** Begin Patch\n*** Update File: {}\n-x\n+y\n*** End Patch\n",
            dirs.outside_path_str("o.txt")
        ),
    )
    .unwrap();
    (dirs, file)
}

#[test]
fn the_prompt_shows_the_path_and_diff_and_y_applies() {
    let (dirs, file) = outside_edit();
    let Some(tmux) = Tmux::start(&dirs, &file) else {
        return;
    };
    let (prompt, exit) = tmux.answer("y");
    assert!(
        prompt.contains("airlock: approval needed to apply a patch"),
        "{prompt}"
    );
    assert!(
        prompt.contains(&format!("update {}", dirs.outside_path_str("o.txt"))),
        "{prompt}"
    );
    assert!(prompt.contains("    -x\n    +y"), "{prompt}");
    assert_eq!(exit, "EXIT=0");
    assert_eq!(
        std::fs::read_to_string(dirs.outside_path().join("o.txt")).unwrap(),
        "y\n"
    );
}

#[test]
fn n_denies_and_changes_nothing() {
    let (dirs, file) = outside_edit();
    let Some(tmux) = Tmux::start(&dirs, &file) else {
        return;
    };
    let (_, exit) = tmux.answer("n");
    assert_eq!(exit, "EXIT=125");
    assert_eq!(
        std::fs::read_to_string(dirs.outside_path().join("o.txt")).unwrap(),
        "x\n"
    );
}

/// Issue 11, finding F6: a patch through a symlinked folder that leads outside the writable
/// roots is asked about before anything runs, and the prompt names the real path.
#[test]
fn a_prompt_for_a_write_through_a_symlinked_folder_shows_the_real_path_and_y_applies_it() {
    let dirs = Dirs::new();
    dirs.config("");
    std::os::unix::fs::symlink(dirs.outside_path(), dirs.ws.join("door")).unwrap();
    let file = dirs.scripts.join("door.patch");
    std::fs::write(
        &file,
        "*** Begin Patch\n*** Add File: door/through.txt\n+t\n*** End Patch\n",
    )
    .unwrap();
    let Some(tmux) = Tmux::start(&dirs, &file) else {
        return;
    };
    let (prompt, exit) = tmux.answer("y");
    // Asked once, before anything runs, naming where the write really goes (issue 11, F6).
    let real = dirs.outside_path().join("through.txt");
    assert!(
        prompt.contains(&format!("add {}", real.display())),
        "{prompt}"
    );
    assert!(!prompt.contains("retry reason:"), "{prompt}");
    assert_eq!(exit, "EXIT=0");
    assert_eq!(
        std::fs::read_to_string(dirs.outside_path().join("through.txt")).unwrap(),
        "t\n"
    );
}

/// Issue 17: escape sequences in a path, in added lines and in an existing file's content
/// (shown as diff context) are shown escaped; `ESC [2J` does not clear the screen, so the
/// header and the paths stay visible.
#[test]
fn escape_sequences_in_paths_and_diffs_are_shown_not_obeyed() {
    let dirs = Dirs::new();
    dirs.config("");
    std::fs::write(
        dirs.outside_path().join("o.txt"),
        "keep \x1b[2J\x1b[H context\nx\n",
    )
    .unwrap();
    let file = dirs.scripts.join("esc.patch");
    std::fs::write(
        &file,
        format!(
            "*** Begin Patch\n*** Add File: {}\n+line with \x1b[2J clear and \x1b]0;title\x07 osc\n\
             *** Update File: {}\n keep \x1b[2J\x1b[H context\n-x\n+y\n*** End Patch\n",
            dirs.outside_path_str("outside-\x1b[31mred.txt"),
            dirs.outside_path_str("o.txt"),
        ),
    )
    .unwrap();
    let Some(tmux) = Tmux::start(&dirs, &file) else {
        return;
    };
    let (prompt, exit) = tmux.answer("n");
    assert!(
        prompt.contains("airlock: approval needed to apply a patch"),
        "{prompt}"
    );
    assert!(
        prompt.contains(&format!(
            "add {}",
            dirs.outside_path_str("outside-\\x1b[31mred.txt")
        )),
        "{prompt}"
    );
    assert!(
        prompt.contains("+line with \\x1b[2J clear and \\x1b]0;title\\x07 osc"),
        "{prompt}"
    );
    assert!(prompt.contains("keep \\x1b[2J\\x1b[H context"), "{prompt}");
    assert_eq!(exit, "EXIT=125");
    assert!(!dirs.outside_path().join("outside-\x1b[31mred.txt").exists());
}
