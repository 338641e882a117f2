//! Every Codex quirk of reference §A2–A3, pinned as kept or as deliberately improved (spec 11).

use std::path::PathBuf;

use airlock_patch::Hunk;
use airlock_patch::parse_patch;
use pretty_assertions::assert_eq;

use crate::support::Files;
use crate::support::apply_to;
use crate::support::patch;
use crate::support::verify;

#[test]
fn improved_nested_context_narrows_the_search() {
    // Codex rejects the second `@@` line ("invalid hunk at line 4, Unexpected line ...").
    let file = "class B:\n    def m(self):\n        return 1\nclass A:\n    def m(self):\n        return 1\n";
    let out = apply_to(
        "a.py",
        file,
        "*** Update File: a.py\n@@ class A:\n@@     def m(self):\n-        return 1\n+        return 2\n",
    );
    assert_eq!(
        out.unwrap(),
        "class B:\n    def m(self):\n        return 1\nclass A:\n    def m(self):\n        return 2\n"
    );
}

#[test]
fn improved_pure_addition_with_context_inserts_after_the_context_line() {
    // Codex appends at the end of the file: `alpha\nbeta\ninserted\n`.
    let out = apply_to(
        "f",
        "alpha\nbeta\n",
        "*** Update File: f\n@@ alpha\n+inserted\n",
    );
    assert_eq!(out.unwrap(), "alpha\ninserted\nbeta\n");
}

#[test]
fn pure_addition_marked_end_of_file_still_goes_to_the_end() {
    let out = apply_to(
        "f",
        "alpha\nbeta\n",
        "*** Update File: f\n@@ alpha\n+omega\n*** End of File\n",
    );
    assert_eq!(out.unwrap(), "alpha\nbeta\nomega\n");
}

#[test]
fn kept_pure_addition_without_context_appends_at_end_of_file() {
    let out = apply_to("f", "alpha\nbeta\n", "*** Update File: f\n@@\n+omega\n");
    assert_eq!(out.unwrap(), "alpha\nbeta\nomega\n");
}

#[test]
fn kept_whole_line_context_wins_over_an_earlier_prefix() {
    let out = apply_to(
        "f",
        "fn a() -> u8 {\n    1\n}\nfn a()\n    1\n",
        "*** Update File: f\n@@ fn a()\n-    1\n+    2\n",
    );
    assert_eq!(out.unwrap(), "fn a() -> u8 {\n    1\n}\nfn a()\n    2\n");
}

#[test]
fn kept_exact_match_anywhere_wins_over_an_earlier_fuzzy_one() {
    let out = apply_to("f", "x  \nx\n", "*** Update File: f\n-x\n+y\n");
    assert_eq!(out.unwrap(), "x  \ny\n");
}

#[test]
fn kept_trimmed_both_ends_pass() {
    let out = apply_to("f", "  x  \n", "*** Update File: f\n-x\n+y\n");
    assert_eq!(out.unwrap(), "y\n");
}

#[test]
fn improved_crlf_file_stays_crlf() {
    // Codex 0.125 gives `A\nb\r\n` (mixed endings).
    let out = apply_to("f", "a\r\nb\r\n", "*** Update File: f\n-a\n+A\n+A2\n");
    assert_eq!(out.unwrap(), "A\r\nA2\r\nb\r\n");
}

#[test]
fn improved_mixed_endings_keep_each_untouched_line_s_own() {
    let out = apply_to("f", "a\nb\r\nc\n", "*** Update File: f\n-c\n+C\n");
    assert_eq!(out.unwrap(), "a\nb\r\nC\n");
}

#[test]
fn kept_final_newline_is_always_added() {
    let out = apply_to("f", "a\nb", "*** Update File: f\n-a\n+A\n");
    assert_eq!(out.unwrap(), "A\nb\n");
}

#[test]
fn kept_add_with_zero_lines_is_an_empty_file() {
    let parsed = parse_patch(&patch("*** Add File: e\n")).unwrap();
    assert_eq!(
        parsed.hunks,
        vec![Hunk::AddFile {
            path: PathBuf::from("e"),
            contents: String::new()
        }]
    );
}

#[test]
fn kept_blank_line_after_chunk_is_an_empty_context_dropped_on_retry() {
    let out = apply_to("f", "a\nb\n", "*** Update File: f\n-a\n+A\n\n");
    assert_eq!(out.unwrap(), "A\nb\n");
}

#[test]
fn kept_whitespace_only_lines_between_chunks_are_skipped() {
    let out = apply_to(
        "f",
        "a\nb\nc\n",
        "*** Update File: f\n@@\n-a\n+A\n@@\n-c\n+C\n",
    );
    assert_eq!(out.unwrap(), "A\nb\nC\n");
    let parsed = parse_patch(&patch("*** Update File: f\n-a\n+A\n   \n@@\n-c\n+C\n")).unwrap();
    let Hunk::UpdateFile { chunks, .. } = &parsed.hunks[0] else {
        panic!("not an update");
    };
    // `   ` starts with a space, so it is a context line of the first chunk.
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[0].old_lines, ["a", "  "]);
}

#[test]
fn kept_later_chunks_need_a_marker() {
    let error = parse_patch(&patch("*** Update File: f\n-a\n+A\nb\n")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid hunk at line 5, Expected update hunk to start with a @@ context marker, got: 'b'"
    );
}

#[test]
fn improved_unexpected_first_line_reports_its_own_line() {
    // Codex says line 4 here (it adds one even when the chunk has no `@@`).
    let error = parse_patch(&patch("*** Update File: f\n\tx\n")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid hunk at line 3, Unexpected line found in update hunk: '\tx'. Every line should \
         start with ' ' (context line), '+' (added line), or '-' (removed line)"
    );
}

#[test]
fn kept_unexpected_line_after_marker_line_number() {
    let error = parse_patch(&patch("*** Update File: f\n@@ a\n\tx\n")).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("invalid hunk at line 4, Unexpected line found")
    );
}

#[test]
fn kept_marker_alone_has_no_lines() {
    let error = parse_patch(&patch("*** Update File: f\n@@\n")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid hunk at line 4, Update hunk does not contain any lines"
    );
}

#[test]
fn kept_marker_with_trailing_space_is_an_empty_context() {
    let parsed = parse_patch(&patch("*** Update File: f\n@@ \n-a\n+b\n")).unwrap();
    let Hunk::UpdateFile { chunks, .. } = &parsed.hunks[0] else {
        panic!("not an update");
    };
    assert_eq!(chunks[0].change_context, [""]);
    assert_eq!(
        apply_to("f", "x\n\na\n", "*** Update File: f\n@@ \n-a\n+b\n").unwrap(),
        "x\n\nb\n"
    );
}

#[test]
fn kept_indented_headers_and_absolute_paths() {
    let parsed = parse_patch(&patch("   *** Add File: /abs/x\n+1\n")).unwrap();
    assert_eq!(parsed.hunks[0].path(), std::path::Path::new("/abs/x"));
}

#[test]
fn kept_end_of_file_marker_is_not_trimmed() {
    let error =
        parse_patch(&patch("*** Update File: f\n-a\n+b\n *** End of File\nzz\n")).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("Expected update hunk to start with a @@ context marker, got: 'zz'")
    );
}

#[test]
fn kept_star_line_ends_the_update_hunk() {
    let error = parse_patch(&patch("*** Update File: f\n-a\n+b\n*junk\n")).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("invalid hunk at line 5, '*junk' is not a valid hunk header.")
    );
}

#[test]
fn kept_later_hunks_see_earlier_ones() {
    let mut files = Files::with(&[("f", "a\n")]);
    let body = "*** Update File: f\n-a\n+b\n*** Update File: f\n-b\n+c\n";
    let verified = verify(&files, &patch(body)).unwrap();
    files.apply(&verified);
    assert_eq!(files.text("f").as_deref(), Some("c\n"));
}

#[test]
fn kept_add_overwrites_an_existing_file_and_move_overwrites_its_destination() {
    let mut files = Files::with(&[("a", "old\n"), ("src", "s\n"), ("dst", "d\n")]);
    let body = "*** Add File: a\n+new\n*** Update File: src\n*** Move to: dst\n-s\n+S\n";
    let verified = verify(&files, &patch(body)).unwrap();
    files.apply(&verified);
    assert_eq!(files.text("a").as_deref(), Some("new\n"));
    assert_eq!(files.text("src"), None);
    assert_eq!(files.text("dst").as_deref(), Some("S\n"));
}

#[test]
fn kept_deleting_a_missing_file_fails_verification() {
    let error = verify(&Files::default(), &patch("*** Delete File: gone\n")).unwrap_err();
    assert_eq!(error.to_string(), "Failed to read gone: entity not found");
}

#[test]
fn kept_updating_a_missing_file_fails_verification() {
    let error = verify(&Files::default(), &patch("*** Update File: gone\n-a\n+b\n")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Failed to read file to update gone: entity not found"
    );
}
