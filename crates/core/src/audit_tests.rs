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
