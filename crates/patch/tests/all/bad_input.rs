//! Bad input: empty, binary junk, very large, paths escaping the cwd (issue 12).

use std::path::PathBuf;

use airlock_patch::parse_patch;
use pretty_assertions::assert_eq;

use crate::support::Files;
use crate::support::patch;
use crate::support::verify;

const FIRST_LINE: &str = "invalid patch: The first line of the patch must be '*** Begin Patch'";

#[test]
fn empty_and_blank_input() {
    for text in ["", "   ", "\n\n\r\n"] {
        assert_eq!(parse_patch(text).unwrap_err().to_string(), FIRST_LINE);
    }
    assert_eq!(
        parse_patch("*** Begin Patch").unwrap_err().to_string(),
        "invalid patch: The last line of the patch must be '*** End Patch'"
    );
}

#[test]
fn binary_junk_is_an_invalid_patch() {
    let junk: String = (0..4096_u32)
        .map(|i| char::from_u32((i * 7919) % 0xD7FF).unwrap_or('\u{0}'))
        .collect();
    assert_eq!(parse_patch(&junk).unwrap_err().to_string(), FIRST_LINE);
    let with_nul = patch("*** Add File: a\0b\n+x\n");
    // A NUL in a path parses (the kernel refuses it later); nothing panics.
    assert!(parse_patch(&with_nul).is_ok());
}

#[test]
fn ten_mebibyte_patches() {
    let junk = "x".repeat(10 << 20);
    assert_eq!(parse_patch(&junk).unwrap_err().to_string(), FIRST_LINE);
    let line = format!("+{}\n", "y".repeat(1023));
    let big = patch(&format!("*** Add File: big\n{}", line.repeat(10 << 10)));
    let verified = verify(&Files::default(), &big).unwrap();
    assert_eq!(
        verified.final_writes[0].content.as_ref().map(String::len),
        Some(10 << 20)
    );
}

#[test]
fn paths_escaping_the_cwd_are_resolved_lexically() {
    let files = Files(
        [(PathBuf::from("/etc/passwd"), b"root:x:0:0\n".to_vec())]
            .into_iter()
            .collect(),
    );
    let verified = verify(
        &files,
        &patch("*** Update File: ../../etc/passwd\n-root:x:0:0\n+owned\n"),
    )
    .unwrap();
    // The caller (crate core) sees the real target and judges it as outside the workspace.
    assert_eq!(
        verified.affected_paths(),
        vec![PathBuf::from("/etc/passwd")]
    );
    assert_eq!(verified.changes[0].display, "../../etc/passwd");
}

#[test]
fn non_utf8_file_to_update_is_a_clear_error() {
    let files = Files(
        [(PathBuf::from("/ws/bin"), vec![0xff, 0xfe, b'\n'])]
            .into_iter()
            .collect(),
    );
    let error = verify(&files, &patch("*** Update File: bin\n-a\n+b\n")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Failed to read file to update bin: stream did not contain valid UTF-8"
    );
}
