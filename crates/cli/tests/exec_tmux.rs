#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The interactive approval prompt of `airlock exec` in a real terminal (spec 10 §CLI
//! "Interactive approval"): each test starts `airlock exec` in its own tmux server, waits for
//! the prompt with `capture-pane`, answers with `send-keys`, and checks what ran, the exit
//! status and the audit log. Keys: `y` approve, `a` approve for the session, `p` approve and
//! save the prefix rule, `n` deny with a reason, `Esc` / `Ctrl-C` abort; a retry prompt shows
//! the retry reason.
//!
//! tmux is installed by `scripts/lib.sh` (`ensure_sandbox_deps`); without it these tests
//! print why and pass without checking anything.

mod exec_support;

use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use exec_support::Dirs;
use exec_support::exists;
use pretty_assertions::assert_eq;

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A tmux server of its own, running one shell command in a 200x50 window; killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// `None` (with a message) when tmux is not installed.
    fn start(dirs: &Dirs, airlock_args: &[&str]) -> Option<Self> {
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
            "airlock-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let quoted: Vec<String> =
            std::iter::once(exec_support::airlock_bin().display().to_string())
                .chain(std::iter::once("exec".to_owned()))
                .chain(airlock_args.iter().map(|arg| (*arg).to_owned()))
                .map(|word| shlex::try_quote(&word).unwrap().into_owned())
                .collect();
        let script = format!(
            "cd {ws} && unset LD_LIBRARY_PATH; AIRLOCK_HOME={home} {cmd}; echo \"EXIT=$?\"; sleep 600",
            ws = shlex::try_quote(&dirs.ws.display().to_string()).unwrap(),
            home = shlex::try_quote(&dirs.home.display().to_string()).unwrap(),
            cmd = quoted.join(" ")
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

    /// Waits until the pane contains `text` (20 s at most) and returns the pane.
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

    fn send(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
            .args(["-L", &self.socket, "send-keys", "-t", "t"])
            .args(keys)
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the prompt, answers with `keys`, and returns (pane at the prompt, exit status
    /// line, final pane).
    fn answer(&self, keys: &[&str]) -> (String, String, String) {
        let prompt = self.wait_for("[Esc] abort");
        self.send(keys);
        let done = self.wait_for("EXIT=");
        let status = done
            .lines()
            .find(|line| line.starts_with("EXIT="))
            .unwrap()
            .to_owned();
        (prompt, status, done)
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

fn last_decision(dirs: &Dirs) -> serde_json::Value {
    let audit = dirs.audit();
    let record = audit.last().unwrap();
    record["approvals"].as_array().unwrap().last().unwrap()["decision"].clone()
}

#[test]
fn approve_with_y_shows_the_facts_and_runs_in_the_sandbox() {
    let dirs = Dirs::new();
    let args = [
        "-a",
        "untrusted",
        "--justification",
        "make a file",
        "--",
        "touch",
        "made.txt",
    ];
    let Some(tmux) = Tmux::start(&dirs, &args) else {
        return;
    };
    let (prompt, status, _) = tmux.answer(&["y"]);
    assert!(prompt.contains("airlock: approval needed"), "{prompt}");
    assert!(prompt.contains("command: touch made.txt"), "{prompt}");
    assert!(
        prompt.contains(&format!("cwd:     {}", dirs.ws.display())),
        "{prompt}"
    );
    assert!(prompt.contains("justification: make a file"), "{prompt}");
    assert!(
        prompt.contains(
            r#"proposed rule: prefix_rule(pattern=["touch", "made.txt"], decision="allow")"#
        ),
        "{prompt}"
    );
    assert!(
        prompt.contains(
            "effect: commands starting so then run without asking and outside the sandbox"
        ),
        "the prompt says a saved allow rule also skips the sandbox: {prompt}"
    );
    assert!(
        prompt.contains(&format!(
            "saved to: {} (your user rules",
            dirs.home.join("rules/default.rules").display()
        )) && prompt.contains("if you press p"),
        "{prompt}"
    );
    // Issue 18 item 6: the prompt says where the saved rule goes and what it covers.
    assert!(
        prompt.contains("saved to: ") && prompt.contains("rules/default.rules (your user rules"),
        "{prompt}"
    );
    assert!(prompt.contains("[y] approve  [a] approve for this session  [p] approve and save the prefix rule  [n] deny  [Esc] abort"), "{prompt}");
    assert_eq!(status, "EXIT=0");
    assert!(exists(dirs.ws.join("made.txt")));
    assert_eq!(last_decision(&dirs), "approved");
    assert_eq!(dirs.audit()[0]["attempts"][0]["sandbox"], "linuxSeccomp");
}

#[test]
fn approve_for_session_with_a() {
    let dirs = Dirs::new();
    let Some(tmux) = Tmux::start(&dirs, &["-a", "untrusted", "--", "touch", "s.txt"]) else {
        return;
    };
    let (_, status, pane) = tmux.answer(&["a"]);
    assert_eq!(status, "EXIT=0");
    assert!(pane.contains("approved for this session"), "{pane}");
    assert!(exists(dirs.ws.join("s.txt")));
    assert_eq!(last_decision(&dirs), "approved_for_session");
}

/// `p` saves the proposed prefix rule to `$AIRLOCK_HOME/rules/default.rules`; the next run
/// of the command needs nobody (here: no terminal at all).
#[test]
fn save_prefix_with_p_and_the_next_run_skips_the_prompt() {
    let dirs = Dirs::new();
    let Some(tmux) = Tmux::start(&dirs, &["-a", "untrusted", "--", "touch", "p.txt"]) else {
        return;
    };
    let (_, status, _) = tmux.answer(&["p"]);
    assert_eq!(status, "EXIT=0");
    let rules = std::fs::read_to_string(dirs.home.join("rules/default.rules")).unwrap();
    assert!(
        rules.contains(r#"prefix_rule(pattern=["touch", "p.txt"], decision="allow")"#),
        "{rules}"
    );
    let decision = last_decision(&dirs);
    assert_eq!(
        decision["approved_execpolicy_amendment"]["proposed_execpolicy_amendment"],
        serde_json::json!(["touch", "p.txt"])
    );
    std::fs::remove_file(dirs.ws.join("p.txt")).unwrap();
    let out = dirs.exec(&["-a", "untrusted", "--", "touch", "p.txt"]);
    assert_eq!(out.status.code(), Some(0), "{}", exec_support::stderr(&out));
    assert!(exists(dirs.ws.join("p.txt")));
    assert_eq!(last_decision(&dirs), "approved");
    assert_eq!(
        dirs.audit().last().unwrap()["approvals"][0]["source"],
        "config"
    );
}

#[test]
fn escape_aborts() {
    let dirs = Dirs::new();
    let Some(tmux) = Tmux::start(&dirs, &["-a", "untrusted", "--", "touch", "no.txt"]) else {
        return;
    };
    let (_, status, pane) = tmux.answer(&["Escape"]);
    assert_eq!(status, "EXIT=125");
    assert!(pane.contains("airlock: approval request aborted"), "{pane}");
    assert!(!exists(dirs.ws.join("no.txt")));
    assert_eq!(last_decision(&dirs), "abort");
}

#[test]
fn ctrl_c_aborts() {
    let dirs = Dirs::new();
    let Some(tmux) = Tmux::start(&dirs, &["-a", "untrusted", "--", "touch", "no.txt"]) else {
        return;
    };
    let (_, status, _) = tmux.answer(&["C-c"]);
    assert_eq!(status, "EXIT=125");
    assert!(!exists(dirs.ws.join("no.txt")));
    assert_eq!(last_decision(&dirs), "abort");
}

#[test]
fn n_denies_with_a_reason() {
    let dirs = Dirs::new();
    let Some(tmux) = Tmux::start(&dirs, &["-a", "untrusted", "--", "touch", "no.txt"]) else {
        return;
    };
    tmux.wait_for("[Esc] abort");
    tmux.send(&["n"]);
    tmux.wait_for("reason (optional, Enter to skip):");
    tmux.send(&["not today", "Enter"]);
    let pane = tmux.wait_for("EXIT=");
    assert!(pane.contains("EXIT=125"), "{pane}");
    assert!(
        pane.contains("airlock: rejected by user: not today"),
        "{pane}"
    );
    assert!(!exists(dirs.ws.join("no.txt")));
}

/// A retry prompt shows the retry reason: under granular with `sandbox_approval = true` a
/// command that needed no approval is denied by the sandbox, and running it without the
/// sandbox is asked about first.
#[test]
fn retry_prompt_shows_the_retry_reason() {
    let dirs = Dirs::new();
    let Some(target) = dirs.outside_file("retry.txt") else {
        return;
    };
    let policy =
        "approval_policy={granular={sandbox_approval=true,rules=true,mcp_elicitations=false}}";
    let Some(tmux) = Tmux::start(&dirs, &["-c", policy, "--", "touch", &target]) else {
        return;
    };
    let (prompt, status, _) = tmux.answer(&["y"]);
    assert!(
        prompt.contains("retry reason: command failed in the sandbox; retry without sandbox?"),
        "{prompt}"
    );
    assert!(prompt.contains("Read-only file system"), "{prompt}");
    assert_eq!(status, "EXIT=0");
    assert!(Path::new(&target).exists());
    let record = &dirs.audit()[0];
    assert_eq!(record["approvals"][1]["phase"], "retry");
    assert_eq!(record["approvals"][1]["source"], "user");
    assert_eq!(record["attempts"][1]["sandbox"], "none");
}

/// Issue 17 item 7: the command cannot rewrite its own displayed text. An ANSI "erase line"
/// sequence, a right-to-left override, a zero-width space and 300 spaces of padding in the
/// argv and in the justification all show up escaped or collapsed; nothing is hidden.
#[test]
fn prompt_escapes_control_bidi_zero_width_and_padding() {
    let dirs = Dirs::new();
    let sneaky = format!(
        "harmless\u{1b}[2K\u{1b}[1Gdone\u{202e}txt.exe\u{200b}{}TAIL",
        " ".repeat(300)
    );
    let args = [
        "-a",
        "untrusted",
        "--justification",
        "trust me\u{1b}[8m hidden",
        "--",
        "touch",
        sneaky.as_str(),
    ];
    let Some(tmux) = Tmux::start(&dirs, &args) else {
        return;
    };
    let (prompt, status, _) = tmux.answer(&["n", "Enter"]);
    assert!(
        prompt.contains(r"harmless\x1b[2K\x1b[1Gdone\u{202e}txt.exe\u{200b} [300 spaces] TAIL"),
        "{prompt}"
    );
    assert!(
        prompt.contains(r"justification: trust me\x1b[8m hidden"),
        "{prompt}"
    );
    assert_eq!(status, "EXIT=125");
    assert!(!exists(dirs.ws.join(&sneaky)));
}

/// A loopback origin answering every request with `origin <port>` (issue 14 tests).
fn origin() -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = format!("origin {port}\n");
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

/// Issue 14: the proxy holds a request for an unlisted host and the user is asked
/// "allow <host>?"; `w` (always) saves `network_rule(...)` and the next session needs
/// nobody; `x` (never) saves a deny rule and the host is refused from then on.
#[test]
fn network_prompt_always_and_never_save_network_rules() {
    let dirs = Dirs::new();
    let port = origin();
    // `allow_local_binding` lets the loopback origin stand in for an unlisted public host.
    dirs.config(
        "default_permissions = \"net\"\n[permissions.net]\nextends = \":workspace\"\n[permissions.net.network]\nenabled = true\nallow_local_binding = true\n[permissions.net.network.domains]\n\"unused.test\" = \"allow\"\n",
    );
    let url = format!("http://localhost:{port}/");
    let Some(tmux) = Tmux::start(&dirs, &["--", "curl", "-sS", "-m", "30", &url]) else {
        return;
    };
    let (prompt, status, pane) = tmux.answer(&["w"]);
    assert!(
        prompt.contains(&format!("network-access http://localhost:{port}")),
        "{prompt}"
    );
    assert!(prompt.contains("network: allow localhost?"), "{prompt}");
    assert!(prompt.contains("[w] always allow this host"), "{prompt}");
    assert_eq!(status, "EXIT=0", "{pane}");
    assert!(pane.contains(&format!("origin {port}")), "{pane}");
    let rules = std::fs::read_to_string(dirs.home.join("rules/default.rules")).unwrap();
    assert!(
        rules.contains("network_rule(host=\"localhost\", protocol=\"http\", decision=\"allow\""),
        "{rules}"
    );
    drop(tmux);
    // The next session loads the rule: no terminal, nobody to ask, still allowed.
    let out = dirs.exec(&["--", "curl", "-sS", "-m", "30", &url]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("origin {port}\n")
    );

    let other = origin();
    let url = format!("http://127.0.0.1:{other}/");
    let Some(tmux) = Tmux::start(&dirs, &["--", "curl", "-sS", "-m", "30", &url]) else {
        return;
    };
    let (_, _, pane) = tmux.answer(&["x"]);
    assert!(pane.contains("(denied)"), "{pane}");
    let rules = std::fs::read_to_string(dirs.home.join("rules/default.rules")).unwrap();
    assert!(
        rules.contains("network_rule(host=\"127.0.0.1\", protocol=\"http\", decision=\"deny\""),
        "{rules}"
    );
    let out = dirs.exec(&["--", "curl", "-sS", "-m", "30", &url]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("matches deny entry `127.0.0.1` (denied)"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Issue 14: `a` answers the key `{host, protocol, port}` for the rest of the session: the
/// second request of the same command is not asked about again.
#[test]
fn network_prompt_for_the_session_asks_once() {
    let dirs = Dirs::new();
    let port = origin();
    dirs.config(
        "default_permissions = \"net\"\n[permissions.net]\nextends = \":workspace\"\n[permissions.net.network]\nenabled = true\nallow_local_binding = true\n[permissions.net.network.domains]\n\"unused.test\" = \"allow\"\n",
    );
    let url = format!("http://localhost:{port}/");
    let script = format!("curl -sS -m 30 {url}; curl -sS -m 30 {url}");
    let Some(tmux) = Tmux::start(&dirs, &["--", "sh", "-c", &script]) else {
        return;
    };
    let (_, status, pane) = tmux.answer(&["a"]);
    assert_eq!(status, "EXIT=0", "{pane}");
    assert_eq!(pane.matches(&format!("origin {port}")).count(), 2, "{pane}");
    assert_eq!(
        pane.matches("airlock: approval needed").count(),
        1,
        "{pane}"
    );
    assert!(
        !dirs.home.join("rules/default.rules").exists(),
        "nothing saved"
    );
}
