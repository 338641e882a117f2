//! Shell-wrapper detection (spec 03 "Wrappers", edge cases 2, 17, 20).

use airlock_shell::{
    ShellType, WrapperForm, detect_shell_type, extract_bash_command, extract_shell_wrapper,
};
use pretty_assertions::assert_eq;

use crate::support::argv;

#[test]
fn detects_shells_by_name_and_file_stem() {
    assert_eq!(detect_shell_type("bash"), Some(ShellType::Bash));
    assert_eq!(detect_shell_type("/bin/bash"), Some(ShellType::Bash));
    assert_eq!(
        detect_shell_type("/usr/local/bin/zsh"),
        Some(ShellType::Zsh)
    );
    assert_eq!(detect_shell_type("bash.exe"), Some(ShellType::Bash));
    assert_eq!(detect_shell_type("/bin/sh"), Some(ShellType::Sh));
    assert_eq!(detect_shell_type("dash"), Some(ShellType::Dash));
    assert_eq!(detect_shell_type("/bin/ksh"), Some(ShellType::Ksh));
}

#[test]
fn powershell_and_other_programs_are_not_shells() {
    for program in [
        "pwsh",
        "powershell",
        "powershell.exe",
        "cmd",
        "fish",
        "python3",
        "bashful",
    ] {
        assert_eq!(detect_shell_type(program), None, "{program}");
    }
}

#[test]
fn exact_three_token_forms() {
    for (shell, flag) in [
        ("bash", "-lc"),
        ("bash", "-c"),
        ("sh", "-c"),
        ("zsh", "-lc"),
        ("/bin/bash", "-lc"),
    ] {
        let command = argv(&[shell, flag, "ls"]);
        let wrapper = extract_shell_wrapper(&command).expect("wrapper");
        assert_eq!(wrapper.form, WrapperForm::Exact, "{shell} {flag}");
        assert_eq!(wrapper.script, "ls");
        assert_eq!(wrapper.flag, flag);
        assert_eq!(wrapper.script_index, 2);
    }
}

#[test]
fn other_clusters_with_c_are_extended_wrappers() {
    for flag in ["-ic", "-cl", "-ec", "-xc"] {
        let command = argv(&["bash", flag, "ls"]);
        let wrapper = extract_shell_wrapper(&command).expect("wrapper");
        assert_eq!(wrapper.form, WrapperForm::Extended, "{flag}");
        assert_eq!(wrapper.script, "ls");
    }
}

#[test]
fn options_before_the_flag_keep_a_wrapper() {
    let cases: &[(&[&str], &str)] = &[
        (&["bash", "-l", "-c", "ls"], "ls"),
        (&["bash", "--login", "-c", "ls"], "ls"),
        (&["bash", "--norc", "-c", "ls"], "ls"),
        (&["bash", "-o", "pipefail", "-c", "git push"], "git push"),
        (&["bash", "+x", "-e", "-c", "ls"], "ls"),
        (&["bash", "--", "-c", "ls"], "ls"),
        (&["bash", "--rcfile", "/tmp/rc", "-c", "ls"], "ls"),
        (&["/bin/ksh", "-l", "-c", "git push"], "git push"),
        (&["bash", "-c", "-e", "ls"], "ls"),
        (&["bash", "-c", "--", "-ls"], "-ls"),
    ];
    for (command, script) in cases {
        let command = argv(command);
        let wrapper = extract_shell_wrapper(&command).expect("wrapper");
        assert_eq!(wrapper.form, WrapperForm::Extended, "{command:?}");
        assert_eq!(wrapper.script, *script, "{command:?}");
    }
}

#[test]
fn positional_parameters_make_the_form_extended() {
    let command = argv(&["bash", "-lc", "git status", "git", "push"]);
    let wrapper = extract_shell_wrapper(&command).expect("wrapper");
    assert_eq!(wrapper.form, WrapperForm::Extended);
    assert_eq!(wrapper.script, "git status");
    assert_eq!(wrapper.script_index, 2);
}

#[test]
fn not_wrappers() {
    let cases: &[&[&str]] = &[
        &["bash"],
        &["bash", "script.sh"],
        &["bash", "-l", "script.sh"],
        &["bash", "-c"],
        &["bash", "-lc"],
        &["python3", "-c", "print(1)"],
        &["pwsh", "-Command", "ls"],
        &["powershell", "-NoProfile", "-Command", "Get-ChildItem"],
    ];
    for command in cases {
        assert_eq!(extract_shell_wrapper(&argv(command)), None, "{command:?}");
    }
}

#[test]
fn codex_extract_bash_command_is_exact_and_limited_to_bash_zsh_sh() {
    assert_eq!(
        extract_bash_command(&argv(&["bash", "-lc", "ls"])),
        Some(("bash", "ls"))
    );
    assert_eq!(
        extract_bash_command(&argv(&["/bin/zsh", "-c", "ls"])),
        Some(("/bin/zsh", "ls"))
    );
    assert_eq!(extract_bash_command(&argv(&["dash", "-c", "ls"])), None);
    assert_eq!(extract_bash_command(&argv(&["bash", "-ic", "ls"])), None);
    assert_eq!(
        extract_bash_command(&argv(&["bash", "-lc", "ls", "x"])),
        None
    );
}
