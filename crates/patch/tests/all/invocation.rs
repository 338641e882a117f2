//! Recognising `apply_patch` in a shell-tool argv (reference §A5 table).

use std::path::PathBuf;

use airlock_patch::ApplyPatchInvocation;
use airlock_patch::maybe_parse_apply_patch;
use pretty_assertions::assert_eq;

const PATCH: &str = "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch";

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| (*word).to_owned()).collect()
}

fn bash(script: &str) -> ApplyPatchInvocation {
    maybe_parse_apply_patch(&argv(&["bash", "-lc", script]))
}

fn found(workdir: Option<&str>) -> ApplyPatchInvocation {
    ApplyPatchInvocation::Patch {
        patch: PATCH.to_owned(),
        workdir: workdir.map(PathBuf::from),
    }
}

#[test]
fn direct_forms() {
    assert_eq!(
        maybe_parse_apply_patch(&argv(&["apply_patch", PATCH])),
        found(None)
    );
    assert_eq!(
        maybe_parse_apply_patch(&argv(&["applypatch", PATCH])),
        found(None)
    );
    assert_eq!(
        maybe_parse_apply_patch(&argv(&[PATCH])),
        ApplyPatchInvocation::Implicit
    );
    assert_eq!(
        maybe_parse_apply_patch(&argv(&["ls", "-l"])),
        ApplyPatchInvocation::NotApplyPatch
    );
}

#[test]
fn heredoc_scripts_that_match() {
    assert_eq!(
        bash(&format!("apply_patch <<'EOF'\n{PATCH}\nEOF\n")),
        found(None)
    );
    assert_eq!(
        bash(&format!("cd sub && apply_patch <<'EOF'\n{PATCH}\nEOF")),
        found(Some("sub"))
    );
    assert_eq!(
        bash(&format!("cd 'my dir' && applypatch <<EOF\n{PATCH}\nEOF")),
        found(Some("my dir"))
    );
    assert_eq!(
        bash(&format!(
            "cd \"d\" && apply_patch <<\"PATCH\"\n{PATCH}\nPATCH"
        )),
        found(Some("d"))
    );
    assert_eq!(
        maybe_parse_apply_patch(&argv(&[
            "/bin/zsh",
            "-c",
            &format!("apply_patch <<EOF\n{PATCH}\nEOF")
        ])),
        found(None)
    );
}

#[test]
fn scripts_that_are_not_apply_patch() {
    for script in [
        format!("cd sub; apply_patch <<'EOF'\n{PATCH}\nEOF"),
        format!("apply_patch <<'EOF'\n{PATCH}\nEOF\necho done"),
        format!("apply_patch <<'EOF' && echo ok\n{PATCH}\nEOF"),
        format!("cat <<'EOF' | apply_patch\n{PATCH}\nEOF"),
        format!("cd -P sub && apply_patch <<'EOF'\n{PATCH}\nEOF"),
        format!("cd a || apply_patch <<'EOF'\n{PATCH}\nEOF"),
        format!("cd a | apply_patch <<'EOF'\n{PATCH}\nEOF"),
        format!("cd a b && apply_patch <<'EOF'\n{PATCH}\nEOF"),
        format!("cd a && cd b && apply_patch <<'EOF'\n{PATCH}\nEOF"),
        format!("apply_patch foo <<'EOF'\n{PATCH}\nEOF"),
        format!("cd \"$HOME\" && apply_patch <<'EOF'\n{PATCH}\nEOF"),
        format!("apply_patch <<'EOF'\n{PATCH}\n"),
    ] {
        assert_eq!(
            bash(&script),
            ApplyPatchInvocation::NotApplyPatch,
            "{script}"
        );
    }
}

#[test]
fn a_script_that_is_itself_a_patch_is_implicit() {
    assert_eq!(bash(PATCH), ApplyPatchInvocation::Implicit);
}
