//! `PolicyFiles`: the parent verifies with the sandbox's view of the files (spec 11
//! §Verification), so it is no oracle for what the sandbox hides.

use std::fs;
use std::path::Path;

use airlock_core::apply_patch::PolicyFiles;
use airlock_core::apply_patch::READ_NOT_ALLOWED;
use airlock_patch::ReadFile;
use airlock_permissions::built_in_profile;
use airlock_permissions::file_system_sandbox_policy;
use airlock_permissions::materialize_project_roots_with_workspace_roots;
use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::PermissionProfile;
use pretty_assertions::assert_eq;

fn root() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("airlock-policy-files-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

fn refused(reader: &PolicyFiles<'_>, path: &Path) -> bool {
    let error = reader.read_file(path).unwrap_err();
    error.kind() == std::io::ErrorKind::PermissionDenied && error.to_string() == READ_NOT_ALLOWED
}

#[test]
fn pseudo_filesystems_are_never_read_by_the_parent() {
    let dir = root();
    let ws = dir.path().to_path_buf();
    let profile = materialize_project_roots_with_workspace_roots(
        &built_in_profile(":workspace").unwrap(),
        std::slice::from_ref(&ws),
    );
    let fs_policy = file_system_sandbox_policy(&profile);
    let reader = PolicyFiles::new(&fs_policy, &ws);
    for path in [
        "/proc/self/environ",
        "/proc/self/cmdline",
        "/sys/kernel/hostname",
        "/dev/null",
    ] {
        assert!(refused(&reader, Path::new(path)), "{path}");
    }
    // A symlink in the workspace to the parent's environment is judged on what it opens.
    std::os::unix::fs::symlink("/proc/self/environ", ws.join("env")).unwrap();
    assert!(refused(&reader, &ws.join("env")));
    fs::write(ws.join("plain.txt"), "ok\n").unwrap();
    assert_eq!(reader.read_file(&ws.join("plain.txt")).unwrap(), b"ok\n");
}

#[test]
fn a_profile_that_only_reads_the_workspace_hides_everything_else() {
    let dir = root();
    let ws = dir.path().join("ws");
    let elsewhere = dir.path().join("elsewhere");
    fs::create_dir_all(&ws).unwrap();
    fs::create_dir_all(&elsewhere).unwrap();
    fs::write(elsewhere.join("key"), "private\n").unwrap();
    fs::write(ws.join("code.rs"), "fn main() {}\n").unwrap();
    std::os::unix::fs::symlink(elsewhere.join("key"), ws.join("key-link")).unwrap();
    let profile = PermissionProfile::Managed {
        file_system: ManagedFileSystemPermissions::Restricted {
            entries: vec![FileSystemSandboxEntry::path(
                ws.clone(),
                FileSystemAccessMode::Write,
            )],
            glob_scan_max_depth: None,
        },
        network: NetworkSandboxPolicy::Restricted,
    };
    let fs_policy = file_system_sandbox_policy(&profile);
    let reader = PolicyFiles::new(&fs_policy, &ws);
    assert_eq!(
        reader.read_file(&ws.join("code.rs")).unwrap(),
        b"fn main() {}\n"
    );
    assert!(refused(&reader, &elsewhere.join("key")));
    assert!(refused(&reader, &ws.join("key-link")));
}
