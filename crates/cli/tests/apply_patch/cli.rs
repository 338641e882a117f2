//! Applying inside the workspace, the reference's worked examples on real files, atomicity,
//! and `airlock exec` routing.

use std::fs;

use pretty_assertions::assert_eq;

use crate::exec_support::Dirs;
use crate::exec_support::stderr;
use crate::exec_support::stdout;
use crate::support::apply;
use crate::support::audit_text;
use crate::support::code;
use crate::support::patch;

#[test]
fn workspace_edit_applies_sandboxed_without_a_prompt() {
    let dirs = Dirs::new();
    dirs.config(&dirs.hook("deny"));
    fs::write(dirs.ws.join("a.txt"), "hello\nworld\n").unwrap();
    let out = apply(
        &dirs,
        &[],
        patch("*** Update File: a.txt\n-world\n+there\n*** Add File: sub/b.txt\n+new\n").as_bytes(),
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "Success. Updated the following files:\nA sub/b.txt\nM a.txt\n"
    );
    assert_eq!(
        fs::read_to_string(dirs.ws.join("a.txt")).unwrap(),
        "hello\nthere\n"
    );
    assert_eq!(
        fs::read_to_string(dirs.ws.join("sub/b.txt")).unwrap(),
        "new\n"
    );
    // Nobody was asked (the deny hook never ran), the write ran in the sandbox, and the audit
    // log names the paths but holds no content.
    assert!(dirs.requests("hook").is_empty());
    let audit = dirs.audit();
    let record = audit.last().unwrap();
    assert_eq!(
        record["files"][0]["path"],
        dirs.ws.join("a.txt").display().to_string()
    );
    assert_eq!(record["files"][0]["change"], "update");
    assert_eq!(record["files"][1]["change"], "add");
    assert_eq!(record["attempts"][0]["sandbox"], "linuxSeccomp");
    assert_eq!(record["outcome"]["status"], "ran");
    let text = audit_text(&dirs);
    assert!(!text.contains("there") && !text.contains("hello"), "{text}");
}

#[test]
fn worked_example_1_on_real_files() {
    let dirs = Dirs::new();
    dirs.config("");
    fs::create_dir(dirs.ws.join("src")).unwrap();
    fs::write(dirs.ws.join("old.log"), "log\n").unwrap();
    fs::write(
        dirs.ws.join("src/lib.rs"),
        "pub mod x;\nfn answer() -> u32 {\n    41\n}\n",
    )
    .unwrap();
    let text = "*** Begin Patch\n*** Add File: notes/todo.md\n+# Todo\n+\n+- write spec\n*** Delete File: old.log\n\
                *** Update File: src/lib.rs\n*** Move to: src/core.rs\n@@ fn answer() -> u32 {\n-    41\n+    42\n*** End Patch";
    let out = apply(&dirs, &[], text.as_bytes());
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(dirs.ws.join("notes/todo.md")).unwrap(),
        "# Todo\n\n- write spec\n"
    );
    assert!(!dirs.ws.join("old.log").exists());
    assert!(!dirs.ws.join("src/lib.rs").exists());
    assert_eq!(
        fs::read_to_string(dirs.ws.join("src/core.rs")).unwrap(),
        "pub mod x;\nfn answer() -> u32 {\n    42\n}\n"
    );
}

#[test]
fn worked_examples_7_8_10_and_crlf_on_real_files() {
    let dirs = Dirs::new();
    dirs.config("");
    let cases: [(&str, &str, &str, &str); 4] = [
        (
            "conf",
            "host = a\nport = 80   \n",
            "-port = 80\n+port = 8080\n",
            "host = a\nport = 8080\n",
        ),
        (
            "u.txt",
            "a \u{2013} \u{201C}b\u{201D}\n",
            "-a - \"b\"\n+a - b\n",
            "a - b\n",
        ),
        (
            "t.txt",
            "x\nend\nmid\nx\nend\n",
            " x\n-end\n+END\n*** End of File\n",
            "x\nend\nmid\nx\nEND\n",
        ),
        ("w.txt", "a\r\nb\r\n", "-a\n+A\n+A2\n", "A\r\nA2\r\nb\r\n"),
    ];
    for (file, before, chunk, after) in cases {
        fs::write(dirs.ws.join(file), before).unwrap();
        let out = apply(
            &dirs,
            &[],
            patch(&format!("*** Update File: {file}\n{chunk}")).as_bytes(),
        );
        assert_eq!(code(&out), 0, "{file}: {}", stderr(&out));
        assert_eq!(
            fs::read(dirs.ws.join(file)).unwrap(),
            after.as_bytes(),
            "{file}"
        );
    }
}

#[test]
fn invalid_worked_examples_fail_with_the_exact_error_and_exit_1() {
    let dirs = Dirs::new();
    dirs.config("");
    fs::write(dirs.ws.join("t.txt"), "x\nend\nmid\n").unwrap();
    let cases = [
        (
            "*** Begin Patch\n*** Update File: a.txt\n*** End Patch".to_owned(),
            "apply_patch verification failed: invalid hunk at line 2, Update file hunk for path 'a.txt' is empty\n",
        ),
        (
            "*** Begin Patch\n*** Add File: a.txt\n+x\n".to_owned(),
            "apply_patch verification failed: invalid patch: The last line of the patch must be '*** End Patch'\n",
        ),
        (
            patch("*** Update File: t.txt\n x\n-nope\n+NOPE\n"),
            "apply_patch verification failed: Failed to find expected lines in t.txt:\nx\nnope\n",
        ),
    ];
    for (text, error) in cases {
        let out = apply(&dirs, &[], text.as_bytes());
        assert_eq!((code(&out), stderr(&out).as_str()), (1, error));
    }
    assert_eq!(
        fs::read_to_string(dirs.ws.join("t.txt")).unwrap(),
        "x\nend\nmid\n"
    );
    // The audit log keeps the first line of each error, never the patch's lines.
    let audit = dirs.audit();
    assert_eq!(
        audit.last().unwrap()["outcome"]["message"],
        "apply_patch verification failed: Failed to find expected lines in t.txt:"
    );
    assert!(!audit_text(&dirs).contains("nope"));
}

#[test]
fn a_patch_whose_second_file_fails_leaves_the_first_untouched() {
    let dirs = Dirs::new();
    dirs.config("");
    fs::write(dirs.ws.join("first.txt"), "one\n").unwrap();
    fs::create_dir(dirs.ws.join("second")).unwrap();
    let out = apply(
        &dirs,
        &[],
        patch("*** Update File: first.txt\n-one\n+ONE\n*** Add File: second\n+two\n").as_bytes(),
    );
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("second: path is a directory; nothing was changed"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read_to_string(dirs.ws.join("first.txt")).unwrap(),
        "one\n"
    );
    let mut names: Vec<String> = fs::read_dir(&dirs.ws)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["first.txt", "second"]);
}

#[test]
fn exec_routes_apply_patch_argv_and_heredoc_forms() {
    let dirs = Dirs::new();
    dirs.config("");
    fs::create_dir(dirs.ws.join("sub")).unwrap();
    fs::write(dirs.ws.join("sub/b.txt"), "new\n").unwrap();
    let direct = dirs.exec(&[
        "--",
        "apply_patch",
        &patch("*** Add File: direct.txt\n+d\n"),
    ]);
    assert_eq!(code(&direct), 0, "{}", stderr(&direct));
    assert_eq!(
        fs::read_to_string(dirs.ws.join("direct.txt")).unwrap(),
        "d\n"
    );
    let script = format!(
        "cd sub && apply_patch <<'EOF'\n{}EOF\n",
        patch("*** Update File: b.txt\n-new\n+newer\n")
    );
    let wrapped = dirs.exec(&["--", "bash", "-lc", &script]);
    assert_eq!(code(&wrapped), 0, "{}", stderr(&wrapped));
    assert_eq!(
        stdout(&wrapped),
        "Success. Updated the following files:\nM b.txt\n"
    );
    assert_eq!(
        stderr(&wrapped),
        "airlock: note: apply_patch was requested via exec; it is applied as a patch (airlock \
         apply-patch), not run as a command\n"
    );
    assert_eq!(
        fs::read_to_string(dirs.ws.join("sub/b.txt")).unwrap(),
        "newer\n"
    );
    let implicit = dirs.exec(&["--", &patch("*** Add File: z\n+z\n")]);
    assert_eq!(code(&implicit), 125);
    assert_eq!(
        stderr(&implicit),
        "airlock: patch detected without explicit call to apply_patch. Rerun as [\"apply_patch\", \"<patch>\"]\n"
    );
    assert!(!dirs.ws.join("z").exists());
    let audit = dirs.audit();
    assert_eq!(audit.len(), 2);
    assert!(audit.iter().all(|record| record["tool"] == "apply_patch"));
}

#[test]
fn patch_from_a_file_argument() {
    let dirs = Dirs::new();
    dirs.config("");
    let file = dirs.scripts.join("p.patch");
    fs::write(&file, patch("*** Add File: f.txt\n+from file\n")).unwrap();
    let out = apply(&dirs, &[file.to_str().unwrap()], b"");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(dirs.ws.join("f.txt")).unwrap(),
        "from file\n"
    );
}

#[test]
fn exec_heredoc_with_cd_into_a_folder_the_patch_creates() {
    let dirs = Dirs::new();
    dirs.config("");
    let script = format!(
        "cd fresh && apply_patch <<'EOF'\n{}EOF\n",
        patch("*** Add File: made.txt\n+m\n")
    );
    let out = dirs.exec(&["--", "bash", "-lc", &script]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(dirs.ws.join("fresh/made.txt")).unwrap(),
        "m\n"
    );
}

#[test]
fn explain_says_exec_would_apply_it_as_a_patch() {
    let dirs = Dirs::new();
    dirs.config("");
    let out = std::process::Command::new(crate::exec_support::airlock_bin())
        .env_remove("LD_LIBRARY_PATH") // cargo's; writable in a /tmp checkout
        .args([
            "explain",
            "--",
            "apply_patch",
            &patch("*** Add File: a\n+x\n"),
        ])
        .current_dir(&dirs.ws)
        .env("AIRLOCK_HOME", &dirs.home)
        .output()
        .unwrap();
    assert!(
        stderr(&out).starts_with(
            "note: `airlock exec` does not run this as a command: it is an apply_patch call"
        ),
        "{}",
        stderr(&out)
    );
    assert!(!dirs.ws.join("a").exists());
}
