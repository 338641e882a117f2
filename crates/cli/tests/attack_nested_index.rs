//! Issue 11 "Launch speed in real trees": one-shot launches ask a per-user daemon that
//! keeps an inotify-driven index of the nested repositories. The daemon knows a tree
//! without walking it, so each test attacks what it might know wrongly: a repository the
//! host created after the daemon's scan, a parent directory renamed and recreated by the
//! sandbox, a sandboxed process talking to the daemon's socket, a flood of events that
//! overflows the inotify queue, and a tag removed and put back while the daemon, not the
//! disk cache, saw the untagged period. Each runs the real sandbox with the daemon running, and
//! asserts on the host that the planted command never ran (or that the daemon refused).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod attack_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use airlock_linux_sandbox::nested_index::client::{Asked, Batch, ask, ping, prefetch};
use airlock_linux_sandbox::nested_scan::ScanOptions;
use attack_support::{
    Marker, assert_attack_works_unsandboxed, assert_host_git_is_clean, git_ok, plant_in_git_dir,
    temp_in, text,
};

/// A workspace and a private Airlock home (outside every writable root) with the daemon
/// running; the daemon exits when its socket file is removed (on drop).
struct Setup {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    home: PathBuf,
    socket: PathBuf,
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.socket);
    }
}

fn setup(prefix: &str) -> Setup {
    let (dir, base) = temp_in("/var/tmp", prefix);
    let ws = base.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    git_ok(&ws, &["init", "-q"]);
    let home = base.join("home");
    std::fs::create_dir_all(&home).unwrap();
    // `net`: `:workspace` with full network, where every Unix socket is reachable.
    std::fs::write(
        home.join("config.toml"),
        "[permissions.net]\nextends = \":workspace\"\n[permissions.net.network]\nenabled = true\n",
    )
    .unwrap();
    let socket = home.join("run/nested-index.sock");
    Setup {
        _dir: dir,
        ws,
        home,
        socket,
    }
}

impl Setup {
    /// `airlock sandbox -P :workspace -C WS -- sh -c SCRIPT` with this Airlock home.
    fn sandboxed(&self, script: &str) -> Output {
        self.sandboxed_in(":workspace", script)
    }

    /// [`Self::sandboxed`] under the permission profile `profile`.
    fn sandboxed_in(&self, profile: &str, script: &str) -> Output {
        self.sandboxed_with_index(profile, "on", script)
    }

    /// [`Self::sandboxed_in`] with `AIRLOCK_NESTED_INDEX=index` (`off`: the plain scan with
    /// the disk cache, as a launch whose daemon answered too late falls back to).
    fn sandboxed_with_index(&self, profile: &str, index: &str, script: &str) -> Output {
        Command::new(env!("CARGO_BIN_EXE_airlock"))
            .env_remove("LD_LIBRARY_PATH")
            .env("AIRLOCK_NESTED_INDEX", index)
            .env("AIRLOCK_HOME", &self.home)
            .args(["sandbox", "-P", profile, "-C"])
            .arg(&self.ws)
            .args(["--", "sh", "-c", script])
            .current_dir(&self.ws)
            .output()
            .unwrap()
    }

    /// What the daemon answers for the workspace, asked from the host.
    fn ask(&self) -> Asked {
        self.ask_root(&self.ws)
    }

    /// What the daemon answers for `root`, asked from the host.
    fn ask_root(&self, root: &Path) -> Asked {
        let options = ScanOptions {
            skip: Vec::new(),
            cache_dir: Some(self.home.join("cache/nested-repos")),
            recent: Duration::from_secs(2),
        };
        ask(&self.socket, root, &options)
    }

    /// Starts the daemon (the first launch does) and waits until it answers for the
    /// workspace and `/tmp` (the other writable root of `:workspace`) from its index, so
    /// that no query of a later launch is still being worked on while the sandbox runs.
    fn start_daemon(&self) {
        let out = self.sandboxed("true");
        assert!(out.status.success(), "{}", text(&out));
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if ping(&self.socket)
                && matches!(self.ask(), Asked::Answer(_))
                && matches!(self.ask_root(Path::new("/tmp")), Asked::Answer(_))
            {
                let out = self.sandboxed("true");
                assert!(out.status.success(), "{}", text(&out));
                return;
            }
            assert!(Instant::now() < deadline, "the daemon did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The daemon answers and lists `repo` among the nested repositories.
    fn assert_daemon_finds(&self, dot_git: &Path) {
        match self.ask() {
            Asked::Answer(out) => assert!(out.found.iter().any(|f| f == dot_git), "{out:?}"),
            other => panic!("the daemon did not answer: {other:?}"),
        }
    }

    /// A sandboxed run tries every simple way to plant a command in `repo`'s git
    /// directory; asserts the host's git never runs it, the daemon lists the repository,
    /// and the same plant works without the sandbox (the control).
    fn assert_plant_is_refused(&self, repo: &Path) {
        let marker = Marker::new();
        let script = plant_in_git_dir(&repo.join(".git"), &marker);
        let out = self.sandboxed(&script);
        assert!(out.status.success(), "{}", text(&out));
        assert_host_git_is_clean(repo, &marker);
        self.assert_daemon_finds(&repo.join(".git"));
        assert_attack_works_unsandboxed(repo, &script, &marker);
    }
}

/// (a) A repository the host creates after the daemon's first scan is protected in the
/// next sandboxed run.
#[test]
fn a_repository_created_after_the_daemons_scan_is_protected() {
    let _serial = attack_support::serial();
    let s = setup("airlock-index-new-");
    std::fs::create_dir_all(s.ws.join("src/lib")).unwrap();
    s.start_daemon();
    let repo = s.ws.join("src/lib/vendored");
    std::fs::create_dir_all(&repo).unwrap();
    git_ok(&repo, &["init", "-q"]);
    s.assert_plant_is_refused(&repo);
}

/// (b) The sandbox renames a parent two levels above a directory and recreates the path;
/// the repository the host then makes there is protected in the next run.
#[test]
fn a_parent_renamed_and_recreated_by_the_sandbox_is_seen() {
    let _serial = attack_support::serial();
    let s = setup("airlock-index-rename-");
    std::fs::create_dir_all(s.ws.join("p/q/r")).unwrap();
    s.start_daemon();
    let out = s.sandboxed("mv p p.moved && mkdir -p p/q/r && echo MOVED");
    assert!(text(&out).contains("MOVED"), "{}", text(&out));
    let repo = s.ws.join("p/q/r");
    git_ok(&repo, &["init", "-q"]);
    s.assert_plant_is_refused(&repo);
}

/// (c) A sandboxed process with full network (every Unix socket reachable) that connects
/// to the daemon's socket and sends garbage, a huge length and a well-formed query gets
/// nothing back; the daemon keeps serving.
/// A launch asks about each writable root in turn on one connection (a
/// [`Batch`]): its peer was checked once. Once the socket's directory is no longer
/// private, a new connection is refused (the client scans itself) while the batch's
/// open connection still answers; a batch whose connection the daemon closed after its
/// wait for a next query connects again.
#[test]
fn a_launch_asks_about_its_roots_on_one_checked_connection() {
    use std::os::unix::fs::PermissionsExt as _;
    let s = setup("batch");
    s.start_daemon();
    let tmp = Path::new("/tmp");
    {
        let _batch = Batch::begin();
        assert!(matches!(s.ask(), Asked::Answer(_)));
        std::thread::sleep(Duration::from_millis(600)); // past the daemon's wait
        assert!(matches!(s.ask_root(tmp), Asked::Answer(_)));
    }
    let run = s.socket.parent().unwrap().to_path_buf();
    let set_mode = |mode| std::fs::set_permissions(&run, std::fs::Permissions::from_mode(mode));
    {
        let batch = Batch::begin();
        assert!(matches!(s.ask(), Asked::Answer(_)));
        set_mode(0o755).unwrap();
        let kept = s.ask_root(tmp);
        drop(batch);
        let fresh = s.ask_root(tmp);
        set_mode(0o700).unwrap();
        assert!(matches!(kept, Asked::Answer(_)), "{kept:?}");
        assert!(matches!(fresh, Asked::Failed), "{fresh:?}");
    }
    assert!(matches!(s.ask(), Asked::Answer(_)));
}

/// Queries sent ahead ([`prefetch`]) are answered on the batch's connection, in order,
/// for exactly the root they asked about: once new connections are refused, the
/// prefetched roots still get answers (from the daemon, about the right root), and a root
/// asked out of order gets a correct answer too.
#[test]
fn prefetched_queries_are_answered_in_order_for_their_own_root() {
    use std::os::unix::fs::PermissionsExt as _;
    let s = setup("prefetch");
    s.start_daemon();
    let repo = s.ws.join("sub");
    std::fs::create_dir_all(&repo).unwrap();
    git_ok(&repo, &["init", "-q"]);
    let options = ScanOptions {
        skip: Vec::new(),
        cache_dir: Some(s.home.join("cache/nested-repos")),
        recent: Duration::from_secs(2),
    };
    let tmp = Path::new("/tmp");
    let run = s.socket.parent().unwrap().to_path_buf();
    let set_mode = |mode| std::fs::set_permissions(&run, std::fs::Permissions::from_mode(mode));
    let found = |asked: &Asked| match asked {
        Asked::Answer(out) => out.found.clone(),
        other => panic!("no answer: {other:?}"),
    };
    {
        let _batch = Batch::begin();
        prefetch(&s.socket, &s.ws, &options);
        prefetch(&s.socket, tmp, &options);
        set_mode(0o755).unwrap();
        let ws_answer = ask(&s.socket, &s.ws, &options);
        let tmp_answer = ask(&s.socket, tmp, &options);
        set_mode(0o700).unwrap();
        assert_eq!(found(&ws_answer), vec![repo.join(".git")]);
        assert!(!found(&tmp_answer).contains(&repo.join(".git")));
    }
    {
        // Out of order: the workspace's answer is set aside to reach /tmp's; the workspace
        // is then asked again.
        let _batch = Batch::begin();
        prefetch(&s.socket, &s.ws, &options);
        prefetch(&s.socket, tmp, &options);
        let tmp_answer = ask(&s.socket, tmp, &options);
        let ws_answer = ask(&s.socket, &s.ws, &options);
        assert!(!found(&tmp_answer).contains(&repo.join(".git")));
        assert_eq!(found(&ws_answer), vec![repo.join(".git")]);
    }
}

#[test]
fn a_sandboxed_process_gets_no_answer_from_the_daemon() {
    let _serial = attack_support::serial();
    let s = setup("airlock-index-peer-");
    s.start_daemon();
    let ws = s.ws.display().to_string();
    let script = format!(
        r#"python3 - <<'EOF'
import socket, struct
path = "{socket}"
root = b"{ws}"
query = b"ANIQ\x01" + struct.pack("<I", len(root)) + root + struct.pack("<I", 0)
for payload in [b"garbage" * 100, struct.pack("<I", 0xffffffff), struct.pack("<I", len(query)) + query]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(path)
        print("CONNECTED")
        s.sendall(payload)
        got = s.recv(100)
        print("ANSWER" if got else "CLOSED", len(got))
    except OSError as e:
        print("REFUSED", e)
    s.close()
EOF"#,
        socket = s.socket.display(),
    );
    let out = s.sandboxed_in("net", &script);
    let all = text(&out);
    assert!(
        !all.contains("ANSWER"),
        "the daemon answered a sandboxed peer: {all}"
    );
    // Connected (not merely refused by the sandbox's own filter), then closed unanswered.
    assert_eq!(all.matches("CONNECTED").count(), 3, "{all}");
    // Still serving the host.
    assert!(matches!(s.ask(), Asked::Answer(_)));
    // The control: the same query from the host is answered.
    let host = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert!(text(&host).contains("ANSWER"), "{}", text(&host));
}

/// (d) A sandboxed run floods the inotify queue (more events than it holds) in one
/// directory, then the host creates a repository in another one, whose events the full
/// queue dropped: it is still protected in the next run.
#[test]
fn a_flood_of_events_does_not_hide_a_new_repository() {
    let _serial = attack_support::serial();
    let s = setup("airlock-index-flood-");
    std::fs::create_dir_all(s.ws.join("flood")).unwrap();
    std::fs::create_dir_all(s.ws.join("src")).unwrap();
    s.start_daemon();
    let out = s.sandboxed(
        "python3 -c \"import os\nfor i in range(20000):\n    d = 'flood/d%d' % i\n    \
         os.mkdir(d)\n    os.rmdir(d)\nprint('FLOODED')\"",
    );
    assert!(text(&out).contains("FLOODED"), "{}", text(&out));
    let repo = s.ws.join("src/late");
    std::fs::create_dir_all(&repo).unwrap();
    git_ok(&repo, &["init", "-q"]);
    s.assert_plant_is_refused(&repo);
}

/// (e) Red-team finding on the daemon's tag history. A tagged directory is scanned when
/// first seen tagged; later scans keep only the repositories found then. The sandbox
/// removes the tag, the host creates a repository there, the sandbox puts a tag back. The
/// daemon, which saw the untagged period, protects the repository; but a launch that does
/// not get the daemon's answer (late, a restarted daemon, an evicted root) used to read the
/// disk cache's record from before the untagged period and prune the directory, leaving the
/// repository writable. A record now holds only under the very tag file it was made under.
#[test]
fn a_repository_made_while_a_tag_was_removed_stays_protected_without_the_daemon() {
    let _serial = attack_support::serial();
    let s = setup("airlock-index-tag-");
    let vendor = s.ws.join("vendor");
    std::fs::create_dir_all(&vendor).unwrap();
    let tag = "Signature: 8a477f597d28d172789f06886806bc55\n# a build cache\n";
    std::fs::write(vendor.join("CACHEDIR.TAG"), tag).unwrap();
    // The first launch scans without the daemon and records `vendor` as tagged and scanned.
    s.start_daemon();
    let out = s.sandboxed("rm vendor/CACHEDIR.TAG && echo UNTAGGED");
    assert!(text(&out).contains("UNTAGGED"), "{}", text(&out));
    let repo = vendor.join("lib");
    std::fs::create_dir_all(&repo).unwrap();
    git_ok(&repo, &["init", "-q"]);
    let retag = format!(
        "printf '{}' > vendor/CACHEDIR.TAG && echo RETAGGED",
        tag.replace('\n', "\\n")
    );
    let out = s.sandboxed(&retag);
    assert!(text(&out).contains("RETAGGED"), "{}", text(&out));
    s.assert_daemon_finds(&repo.join(".git"));
    let marker = Marker::new();
    let script = plant_in_git_dir(&repo.join(".git"), &marker);
    // The launch that falls back to the plain scan (no answer in time).
    let out = s.sandboxed_with_index(":workspace", "off", &script);
    assert!(out.status.success(), "{}", text(&out));
    assert_host_git_is_clean(&repo, &marker);
    // A daemon started afresh (after its idle exit) seeds its history from the disk cache.
    std::fs::remove_file(&s.socket).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while ping(&s.socket) {
        assert!(Instant::now() < deadline, "the daemon did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
    s.start_daemon();
    s.assert_plant_is_refused(&repo);
}

/// (f) The placeholders of the protected names missing from `$TMPDIR` (here a private one,
/// so that no other test's `/tmp` launches interfere) are left for the daemon between
/// launches, stay read-only to every sandboxed run, and are removed by the daemon once no
/// launch has asked for [`KEEP_FOR`]; with the index off they are removed at once.
#[test]
fn placeholders_left_for_the_daemon_stay_protected_and_are_swept() {
    use airlock_linux_sandbox::nested_index::keeper::KEEP_FOR;
    use std::os::unix::fs::PermissionsExt as _;
    let _serial = attack_support::serial();
    let s = setup("airlock-index-keep-");
    let tmpdir = s.home.parent().unwrap().join("scratch");
    std::fs::create_dir_all(&tmpdir).unwrap();
    let names = [".git", ".agents", ".codex", ".aws", ".airlock"];
    let run = |index: &str, script: &str| {
        Command::new(env!("CARGO_BIN_EXE_airlock"))
            .env_remove("LD_LIBRARY_PATH")
            .env("AIRLOCK_NESTED_INDEX", index)
            .env("AIRLOCK_HOME", &s.home)
            .env("TMPDIR", &tmpdir)
            .args(["sandbox", "-P", ":workspace", "-C"])
            .arg(&s.ws)
            .args(["--", "sh", "-c", script])
            .output()
            .unwrap()
    };
    let left = || -> Vec<&str> {
        names
            .iter()
            .copied()
            .filter(|n| tmpdir.join(n).exists())
            .collect()
    };
    // Off: removed when the launch ends.
    let out = run("off", "true");
    assert!(out.status.success(), "{}", text(&out));
    assert!(left().is_empty(), "{:?}", left());
    // With the daemon: kept, as empty read-only directories.
    s.start_daemon();
    let out = run("on", "true");
    assert!(out.status.success(), "{}", text(&out));
    let out = run("on", "true");
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(left(), names, "kept for the daemon");
    // Never in the project's own tree: its missing names are removed at once.
    for name in &names[1..] {
        assert!(!s.ws.join(name).exists(), "{name} left in the workspace");
    }
    for name in names {
        let meta = std::fs::symlink_metadata(tmpdir.join(name)).unwrap();
        assert!(meta.is_dir() && meta.permissions().mode() & 0o7777 == 0o555);
        assert_eq!(std::fs::read_dir(tmpdir.join(name)).unwrap().count(), 0);
    }
    // Still protected in the next sandboxed run.
    let t = tmpdir.display();
    let out = run(
        "on",
        &format!(
            "for n in {}; do mkdir \"{t}/$n/x\" 2>/dev/null && echo \"MADE $n\"; \
             rmdir \"{t}/$n\" 2>/dev/null && echo \"REMOVED $n\"; \
             mv \"{t}/$n\" \"{t}/$n.old\" 2>/dev/null && echo \"MOVED $n\"; done; echo DONE",
            names.join(" ")
        ),
    );
    let all = text(&out);
    assert!(
        all.contains("DONE") && !all.contains("MADE") && !all.contains("REMOVED"),
        "{all}"
    );
    assert!(!all.contains("MOVED"), "{all}");
    assert_eq!(left(), names);
    // Swept by the daemon once idle.
    let deadline = Instant::now() + KEEP_FOR + Duration::from_secs(20);
    while !left().is_empty() {
        assert!(Instant::now() < deadline, "not swept: {:?}", left());
        std::thread::sleep(Duration::from_millis(200));
    }
}
