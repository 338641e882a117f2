//! Reference `apply-patch.md` §A10, each example with its exact result or error text.

use std::path::PathBuf;

use airlock_patch::ChangeKind;
use airlock_patch::Hunk;
use airlock_patch::UpdateChunk;
use airlock_patch::parse_patch;
use pretty_assertions::assert_eq;

use crate::support::Files;
use crate::support::apply_to;
use crate::support::patch;
use crate::support::verify;

const EXAMPLE_1: &str = "*** Begin Patch
*** Add File: notes/todo.md
+# Todo
+
+- write spec
*** Delete File: old.log
*** Update File: src/lib.rs
*** Move to: src/core.rs
@@ fn answer() -> u32 {
-    41
+    42
*** End Patch";

#[test]
fn example_1_add_delete_and_move_parse() {
    let parsed = parse_patch(EXAMPLE_1).unwrap();
    assert_eq!(
        parsed.hunks,
        vec![
            Hunk::AddFile {
                path: PathBuf::from("notes/todo.md"),
                contents: "# Todo\n\n- write spec\n".to_owned()
            },
            Hunk::DeleteFile {
                path: PathBuf::from("old.log")
            },
            Hunk::UpdateFile {
                path: PathBuf::from("src/lib.rs"),
                move_path: Some(PathBuf::from("src/core.rs")),
                chunks: vec![UpdateChunk {
                    change_context: vec!["fn answer() -> u32 {".to_owned()],
                    old_lines: vec!["    41".to_owned()],
                    new_lines: vec!["    42".to_owned()],
                    is_end_of_file: false,
                }],
            },
        ]
    );
}

#[test]
fn example_1_applies_with_exact_bytes_and_summary() {
    let mut files = Files::with(&[
        ("old.log", "log\n"),
        (
            "src/lib.rs",
            "pub mod x;\nfn answer() -> u32 {\n    41\n}\n",
        ),
    ]);
    let verified = verify(&files, EXAMPLE_1).unwrap();
    files.apply(&verified);
    assert_eq!(
        files.text("notes/todo.md").as_deref(),
        Some("# Todo\n\n- write spec\n")
    );
    assert_eq!(files.text("old.log"), None);
    assert_eq!(files.text("src/lib.rs"), None);
    assert_eq!(
        files.text("src/core.rs").as_deref(),
        Some("pub mod x;\nfn answer() -> u32 {\n    42\n}\n")
    );
    assert_eq!(
        verified.summary(),
        "Success. Updated the following files:\nA notes/todo.md\nM src/core.rs\nD old.log\n"
    );
    assert_eq!(
        verified.affected_paths(),
        [
            "/ws/notes/todo.md",
            "/ws/old.log",
            "/ws/src/core.rs",
            "/ws/src/lib.rs"
        ]
        .map(PathBuf::from)
        .to_vec()
    );
}

#[test]
fn example_1_context_prefix_is_deliberately_improved() {
    // Codex: `Failed to find context 'fn answer()' in src/lib.rs` (whole-line match only).
    // Airlock (spec 11): a context matches as a prefix of the trimmed line when no whole line does.
    let out = apply_to(
        "src/lib.rs",
        "pub mod x;\nfn answer() -> u32 {\n    41\n}\n",
        "*** Update File: src/lib.rs\n@@ fn answer()\n-    41\n+    42\n",
    );
    assert_eq!(
        out.unwrap(),
        "pub mod x;\nfn answer() -> u32 {\n    42\n}\n"
    );
}

#[test]
fn example_1_context_missing_entirely_keeps_codex_error() {
    let out = apply_to(
        "src/lib.rs",
        "pub mod x;\nfn answer() -> u32 {\n    41\n}\n",
        "*** Update File: src/lib.rs\n@@ fn question()\n-    41\n+    42\n",
    );
    assert_eq!(
        out.unwrap_err(),
        "Failed to find context 'fn question()' in src/lib.rs"
    );
}

#[test]
fn example_2_first_chunk_without_marker() {
    let body =
        "*** Update File: greet.py\n def hello():\n-    print(\"hi\")\n+    print(\"hello\")\n";
    let parsed = parse_patch(&patch(body)).unwrap();
    let Hunk::UpdateFile { chunks, .. } = &parsed.hunks[0] else {
        panic!("not an update");
    };
    assert_eq!(chunks[0].change_context, Vec::<String>::new());
    assert_eq!(chunks[0].old_lines, ["def hello():", "    print(\"hi\")"]);
    let out = apply_to("greet.py", "def hello():\n    print(\"hi\")\n", body).unwrap();
    assert_eq!(out, "def hello():\n    print(\"hello\")\n");
}

#[test]
fn example_3_no_end_marker() {
    let error = parse_patch("*** Begin Patch\n*** Add File: a.txt\n+x\n").unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid patch: The last line of the patch must be '*** End Patch'"
    );
}

#[test]
fn example_4_empty_update() {
    let error = parse_patch("*** Begin Patch\n*** Update File: a.txt\n*** End Patch").unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid hunk at line 2, Update file hunk for path 'a.txt' is empty"
    );
}

#[test]
fn example_5_unknown_header() {
    let error =
        parse_patch("*** Begin Patch\n*** Create File: a.txt\n+x\n*** End Patch").unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid hunk at line 2, '*** Create File: a.txt' is not a valid hunk header. Valid hunk \
         headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"
    );
}

#[test]
fn example_6_bad_line_after_first_chunk() {
    let error =
        parse_patch("*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n\tc\n*** End Patch")
            .unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid hunk at line 6, Expected update hunk to start with a @@ context marker, got: '\tc'"
    );
}

#[test]
fn example_7_trailing_whitespace_pass() {
    let out = apply_to(
        "conf",
        "host = a\nport = 80   \n",
        "*** Update File: conf\n-port = 80\n+port = 8080\n",
    );
    assert_eq!(out.unwrap(), "host = a\nport = 8080\n");
}

#[test]
fn example_8_unicode_normalisation_pass() {
    let out = apply_to(
        "u.txt",
        "a \u{2013} \u{201C}b\u{201D}\n",
        "*** Update File: u.txt\n-a - \"b\"\n+a - b\n",
    );
    assert_eq!(out.unwrap(), "a - b\n");
}

#[test]
fn example_9_heredoc_wrapper() {
    let parsed =
        parse_patch("<<'EOF'\n*** Begin Patch\n*** Add File: h.txt\n+hi\n*** End Patch\nEOF")
            .unwrap();
    assert_eq!(
        parsed.hunks,
        vec![Hunk::AddFile {
            path: PathBuf::from("h.txt"),
            contents: "hi\n".to_owned()
        }]
    );
    assert_eq!(
        parsed.patch,
        "*** Begin Patch\n*** Add File: h.txt\n+hi\n*** End Patch"
    );
    let error =
        parse_patch("<<\"EOF'\n*** Begin Patch\n*** Add File: h.txt\n+hi\n*** End Patch\nEOF")
            .unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid patch: The first line of the patch must be '*** Begin Patch'"
    );
}

const EOF_CHUNK: &str = "*** Update File: t.txt\n x\n-end\n+END\n*** End of File\n";

#[test]
fn example_10_end_of_file_changes_only_the_last_occurrence() {
    let out = apply_to("t.txt", "x\nend\nmid\nx\nend\n", EOF_CHUNK);
    assert_eq!(out.unwrap(), "x\nend\nmid\nx\nEND\n");
}

#[test]
fn example_10_end_of_file_not_at_end_is_deliberately_clearer() {
    // Codex: `Failed to find expected lines in t.txt:\nx\nend`. Airlock (spec 11) says why.
    let out = apply_to("t.txt", "x\nend\nmid\n", EOF_CHUNK);
    assert_eq!(
        out.unwrap_err(),
        "Failed to find expected lines at the end of t.txt (the chunk is marked '*** End of File', \
         but these lines are not the last lines of the file; drop the marker or fix the lines):\nx\nend"
    );
}

#[test]
fn example_10_end_of_file_lines_absent_keep_codex_error() {
    let out = apply_to("t.txt", "a\nb\n", EOF_CHUNK);
    assert_eq!(
        out.unwrap_err(),
        "Failed to find expected lines in t.txt:\nx\nend"
    );
}

#[test]
fn edge_padded_markers_with_crlf_parse() {
    let parsed =
        parse_patch(" *** Begin Patch \r\n*** Add File: a\r\n+x\r\n  *** End Patch  \r\n").unwrap();
    assert_eq!(
        parsed.hunks,
        vec![Hunk::AddFile {
            path: PathBuf::from("a"),
            contents: "x\n".to_owned()
        }]
    );
}

#[test]
fn edge_empty_patch_parses_and_is_rejected_by_verification() {
    assert_eq!(
        parse_patch("*** Begin Patch\n*** End Patch").unwrap().hunks,
        vec![]
    );
    let error = verify(&Files::default(), "*** Begin Patch\n*** End Patch").unwrap_err();
    assert_eq!(error.to_string(), "empty patch");
}

#[test]
fn edge_add_line_without_plus_is_an_invalid_header() {
    let error = parse_patch(&patch("*** Add File: a\n+x\ny\n")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid hunk at line 4, 'y' is not a valid hunk header. Valid hunk headers: '*** Add File: \
         {path}', '*** Delete File: {path}', '*** Update File: {path}'"
    );
}

#[test]
fn edge_indented_move_is_a_context_line() {
    let parsed = parse_patch(&patch(
        "*** Update File: a.txt\n  *** Move to: b.txt\n-x\n+y\n",
    ))
    .unwrap();
    let Hunk::UpdateFile {
        move_path, chunks, ..
    } = &parsed.hunks[0]
    else {
        panic!("not an update");
    };
    assert_eq!(move_path, &None);
    assert_eq!(chunks[0].old_lines, [" *** Move to: b.txt", "x"]);
}

#[test]
fn edge_chunks_out_of_file_order_fail() {
    let out = apply_to(
        "f",
        "a\nb\nc\n",
        "*** Update File: f\n@@\n-c\n+C\n@@\n-a\n+A\n",
    );
    assert_eq!(out.unwrap_err(), "Failed to find expected lines in f:\na");
}

#[test]
fn edge_marker_then_end_of_file_has_no_lines() {
    let error = parse_patch(&patch("*** Update File: f\n@@\n*** End of File\n")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid hunk at line 4, Update hunk does not contain any lines"
    );
}

#[test]
fn edge_delete_followed_by_junk_is_an_invalid_header() {
    let error = parse_patch(&patch("*** Delete File: f\n+junk\n")).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("invalid hunk at line 3, '+junk' is not a valid hunk header.")
    );
}

#[test]
fn delete_change_carries_the_old_content() {
    let files = Files::with(&[("f", "old\n")]);
    let verified = verify(&files, &patch("*** Delete File: f\n")).unwrap();
    assert_eq!(
        verified.changes[0].kind,
        ChangeKind::Delete {
            content: "old\n".to_owned()
        }
    );
}

#[test]
fn update_diff_has_one_line_of_context_and_no_headers() {
    let files = Files::with(&[("f", "foo\nbar\nbaz\nqux\n")]);
    let verified = verify(
        &files,
        &patch("*** Update File: f\n foo\n-bar\n+BAR\n baz\n-qux\n+QUX\n"),
    )
    .unwrap();
    let ChangeKind::Update { unified_diff, .. } = &verified.changes[0].kind else {
        panic!("not an update");
    };
    assert_eq!(
        unified_diff,
        "@@ -1,4 +1,4 @@\n foo\n-bar\n+BAR\n baz\n-qux\n+QUX\n"
    );
}
