#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt as _;

use super::AuditLog;

fn lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn records_go_to_the_file_the_path_names_now() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log/audit.jsonl");
    let log = AuditLog::new(&path);
    log.append(&"one").unwrap();
    log.append(&"two").unwrap();
    assert_eq!(lines(&path), ["\"one\"", "\"two\""]);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let folder = std::fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(folder, 0o700);

    // Rotated away: the next record starts a new file at the path.
    let rotated = dir.path().join("log/audit.jsonl.1");
    std::fs::rename(&path, &rotated).unwrap();
    log.append(&"three").unwrap();
    assert_eq!(lines(&rotated), ["\"one\"", "\"two\""]);
    assert_eq!(lines(&path), ["\"three\""]);

    // Removed: recreated.
    std::fs::remove_file(&path).unwrap();
    log.append(&"four").unwrap();
    assert_eq!(lines(&path), ["\"four\""]);
}

#[test]
fn a_log_made_readable_meanwhile_is_tightened_before_the_next_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::new(&path);
    log.append(&"one").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    log.append(&"two").unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "tightened again");
    assert_eq!(lines(&path), ["\"one\"", "\"two\""]);
}

#[test]
fn a_loosened_log_folder_is_tightened_before_the_next_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log/audit.jsonl");
    let log = AuditLog::new(&path);
    log.append(&"one").unwrap();
    let folder = path.parent().unwrap();
    std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    log.append(&"two").unwrap();
    let mode = std::fs::metadata(folder).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    assert_eq!(lines(&path), ["\"one\"", "\"two\""]);
}

#[test]
fn only_a_regular_file_is_written_never_a_fifo_or_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let log = AuditLog::new(&path);
    log.append(&"one").unwrap();
    // A FIFO swapped in: an error naming the path, at once (no reader is waited for).
    std::fs::remove_file(&path).unwrap();
    let fifo = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) reads the NUL-terminated path only.
    #[allow(unsafe_code)]
    let made = unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) };
    assert_eq!(made, 0);
    let error = log.append(&"two").unwrap_err();
    assert!(error.to_string().contains("audit.jsonl"), "{error}");
    // A symlink to another file: refused, the target untouched (mode and content).
    std::fs::remove_file(&path).unwrap();
    let target = dir.path().join("elsewhere.txt");
    std::fs::write(&target, "mine\n").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::os::unix::fs::symlink(&target, &path).unwrap();
    assert!(log.append(&"three").is_err());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "mine\n");
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    // Back to a plain path: written again.
    std::fs::remove_file(&path).unwrap();
    log.append(&"four").unwrap();
    assert_eq!(lines(&path), ["\"four\""]);
}
