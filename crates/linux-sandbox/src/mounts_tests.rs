//! Unit tests of the mount plan's command line (`mounts.rs`).

use super::*;
use pretty_assertions::assert_eq;

fn args(out: &MountArgs) -> Vec<String> {
    out.args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

fn ws(root: &str, read_only: &[&str], placeholders: &[&str]) -> WritableMount {
    WritableMount {
        root: root.into(),
        read_only: read_only.iter().map(PathBuf::from).collect(),
        placeholders: placeholders.iter().map(PathBuf::from).collect(),
        file_placeholders: Vec::new(),
        missing_read_only: Vec::new(),
    }
}

#[test]
fn ancestors_inside_writable_roots_are_pinned_before_what_they_hold() {
    let out = build_mount_args(&MountInputs {
        full_read: true,
        writable: vec![
            ws(
                "/tmp/a/b/ws",
                &["/tmp/a/b/ws/.git", "/tmp/a/b/ws/vendor/lib/.git"],
                &[],
            ),
            // A git directory elsewhere under /tmp, and a placeholder inside a
            // read-only directory (its parents are read-only already).
            ws(
                "/tmp",
                &["/tmp/main/.git", "/srv/ws/.git"],
                &["/tmp/main/.git/x/y"],
            ),
            ws("/srv/ws", &["/srv/ws/.git"], &[]),
        ],
        ..Default::default()
    });
    let got = args(&out);
    let binds: Vec<&str> = got
        .windows(2)
        .filter(|w| w[0] == "--bind" || w[0] == "--bind-try")
        .map(|w| w[1].as_str())
        .collect();
    assert_eq!(
        binds,
        [
            "/tmp",
            "/tmp/a",
            "/tmp/main",
            "/tmp/a/b",
            "/srv/ws",
            "/tmp/a/b/ws",
            "/tmp/a/b/ws/vendor",
            "/tmp/a/b/ws/vendor/lib",
        ]
    );
    // Each pin comes after the bind it lives in and before anything mounted inside it.
    let at = |op: &str, path: &str| {
        got.windows(2)
            .position(|w| w[0] == op && w[1] == path)
            .unwrap()
    };
    assert!(at("--bind", "/tmp") < at("--bind-try", "/tmp/main"));
    assert!(at("--bind-try", "/tmp/main") < at("--ro-bind", "/tmp/main/.git"));
    assert!(at("--bind-try", "/tmp/a/b") < at("--bind", "/tmp/a/b/ws"));
    assert!(
        at("--bind-try", "/tmp/a/b/ws/vendor/lib") < at("--ro-bind", "/tmp/a/b/ws/vendor/lib/.git")
    );
}

#[test]
fn scan_found_paths_and_pins_are_skipped_by_bubblewrap_when_gone() {
    let out = build_mount_args(&MountInputs {
        full_read: true,
        writable: vec![ws("/tmp", &["/tmp/x/lib/.git", "/tmp/.git"], &[])],
        vanishable: vec!["/tmp/x/lib/.git".into()],
        ..Default::default()
    });
    let got = args(&out);
    let op = |path: &str| {
        got.windows(2)
            .find(|w| w[1] == path)
            .map(|w| w[0].clone())
            .unwrap()
    };
    assert_eq!(op("/tmp/x/lib/.git"), "--ro-bind-try");
    assert_eq!(op("/tmp/.git"), "--ro-bind");
    assert_eq!(op("/tmp/x"), "--bind-try");
    assert_eq!(op("/tmp/x/lib"), "--bind-try");
    assert_eq!(op("/tmp"), "--bind");
}

#[test]
fn read_only_profile_is_the_host_view_plus_dev() {
    let out = build_mount_args(&MountInputs {
        full_read: true,
        ..Default::default()
    });
    assert_eq!(args(&out), ["--ro-bind", "/", "/", "--dev", "/dev"]);
    assert_eq!(out.data_fds, 0);
}

#[test]
fn workspace_profile_binds_roots_then_protects_metadata() {
    let out = build_mount_args(&MountInputs {
        full_read: true,
        writable: vec![
            ws(
                "/srv/ws",
                &["/srv/ws/.git", "/srv/ws/.git/hooks"],
                &["/srv/ws/.codex"],
            ),
            ws("/tmp", &[], &[]),
        ],
        ..Default::default()
    });
    assert_eq!(
        args(&out),
        [
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--bind",
            "/tmp",
            "/tmp",
            "--bind",
            "/srv/ws",
            "/srv/ws",
            "--ro-bind",
            "/srv/ws/.git",
            "/srv/ws/.git",
            "--ro-bind",
            "/srv/ws/.git/hooks",
            "/srv/ws/.git/hooks",
            "--perms",
            "555",
            "--tmpfs",
            "/srv/ws/.codex",
            "--remount-ro",
            "/srv/ws/.codex",
        ]
    );
    assert_eq!(out.created_mount_points, [PathBuf::from("/srv/ws/.codex")]);
}

/// A `$HOME` inside `/tmp`: its existing dot entries are bound read-only, a missing
/// startup directory gets a placeholder directory and a missing startup file an empty
/// read-only file; both are recorded for removal, and `$HOME` itself is pinned so it
/// cannot be renamed away from under its carve-outs.
#[test]
fn startup_files_of_a_home_get_file_placeholders_and_the_home_is_pinned() {
    let mut home = ws("/tmp", &["/tmp/h/.bashrc"], &["/tmp/h/.ssh"]);
    home.file_placeholders.push("/tmp/h/.profile".into());
    home.missing_read_only.push("/tmp/docs".into());
    let out = build_mount_args(&MountInputs {
        full_read: true,
        writable: vec![home],
        ..Default::default()
    });
    assert_eq!(
        args(&out)[5..],
        [
            "--bind",
            "/tmp",
            "/tmp",
            "--bind-try",
            "/tmp/h",
            "/tmp/h",
            "--ro-bind",
            "/tmp/h/.bashrc",
            "/tmp/h/.bashrc",
            "--perms",
            "555",
            "--tmpfs",
            "/tmp/h/.ssh",
            "--remount-ro",
            "/tmp/h/.ssh",
            "--perms",
            "444",
            "--ro-bind-data",
            DATA_FD_PLACEHOLDER,
            "/tmp/h/.profile",
            "--perms",
            "444",
            "--ro-bind-data",
            DATA_FD_PLACEHOLDER,
            "/tmp/docs",
        ]
    );
    assert_eq!(out.data_fds, 2);
    assert_eq!(out.created_mount_points, [PathBuf::from("/tmp/h/.ssh")]);
    assert_eq!(
        out.created_file_mount_points,
        [PathBuf::from("/tmp/h/.profile"), PathBuf::from("/tmp/docs")]
    );
}

#[test]
fn masks_are_reapplied_after_each_covering_bind() {
    let out = build_mount_args(&MountInputs {
        full_read: true,
        writable: vec![ws("/tmp", &[], &[]), ws("/tmp/ws", &[], &[])],
        deny: vec![
            DenyMask {
                path: "/tmp/ws/.env".into(),
                is_dir: false,
            },
            DenyMask {
                path: "/etc/ssl".into(),
                is_dir: true,
            },
        ],
        ..Default::default()
    });
    assert_eq!(
        args(&out),
        [
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--bind",
            "/tmp",
            "/tmp",
            "--perms",
            "000",
            "--ro-bind-data",
            DATA_FD_PLACEHOLDER,
            "/tmp/ws/.env",
            "--bind",
            "/tmp/ws",
            "/tmp/ws",
            "--perms",
            "000",
            "--ro-bind-data",
            DATA_FD_PLACEHOLDER,
            "/tmp/ws/.env",
            "--perms",
            "000",
            "--tmpfs",
            "/etc/ssl",
            "--remount-ro",
            "/etc/ssl",
        ]
    );
    assert_eq!(out.data_fds, 2);
}

#[test]
fn denied_ancestor_of_a_writable_root_keeps_the_root_reachable() {
    let out = build_mount_args(&MountInputs {
        full_read: true,
        writable: vec![ws("/srv/priv/pub", &[], &[])],
        deny: vec![DenyMask {
            path: "/srv/priv".into(),
            is_dir: true,
        }],
        ..Default::default()
    });
    assert_eq!(
        args(&out),
        [
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--perms",
            "111",
            "--tmpfs",
            "/srv/priv",
            "--dir",
            "/srv/priv/pub",
            "--remount-ro",
            "/srv/priv",
            "--bind",
            "/srv/priv/pub",
            "/srv/priv/pub",
        ]
    );
}

#[test]
fn restricted_read_starts_from_an_empty_root() {
    let out = build_mount_args(&MountInputs {
        full_read: false,
        readable_roots: vec!["/usr".into(), "/bin".into(), "/usr".into()],
        writable: vec![ws("/srv/ws", &[], &[])],
        ..Default::default()
    });
    assert_eq!(
        args(&out),
        [
            "--tmpfs",
            "/",
            "--ro-bind",
            "/bin",
            "/bin",
            "--ro-bind",
            "/usr",
            "/usr",
            "--dev",
            "/dev",
            "--bind",
            "/srv/ws",
            "/srv/ws",
        ]
    );
}

#[test]
fn fresh_proc_comes_before_masks_so_proc_denies_hold() {
    let out = build_mount_args(&MountInputs {
        full_read: true,
        mount_proc: true,
        deny: vec![DenyMask {
            path: "/proc/cpuinfo".into(),
            is_dir: false,
        }],
        ..Default::default()
    });
    let a = args(&out);
    let proc_at = a.iter().position(|x| x == "--proc").unwrap();
    let sys_at = a.iter().position(|x| x == "/proc/sys").unwrap();
    let mask_at = a.iter().position(|x| x == "/proc/cpuinfo").unwrap();
    assert!(a.iter().position(|x| x == "--dev").unwrap() < proc_at);
    assert!(proc_at < sys_at && sys_at < mask_at, "{a:?}");
}
