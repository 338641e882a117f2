//! Recognising shell wrappers: `[shell, ..., -c|-lc, script, ...]`.
//!
//! Spec 03 "Wrappers" and edge cases 2, 17 and 20. Codex recognises only the exact
//! three-token form `[bash|zsh|sh, -c|-lc, script]` (reference §1); Airlock also
//! recognises longer forms so that their scripts reach the deny view, but only the exact
//! form can yield plain segments.

use std::path::Path;

/// A POSIX-family shell whose `-c` scripts Airlock parses with tree-sitter-bash.
///
/// PowerShell and `cmd` are deliberately absent: on Unix hosts their wrappers are
/// ordinary argv (spec 03 edge case 17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShellType {
    /// `bash`
    Bash,
    /// `zsh` (parsed with the bash grammar, as Codex does)
    Zsh,
    /// `sh`
    Sh,
    /// `dash` (Airlock addition, spec 03 edge case 2)
    Dash,
    /// `ksh` (Airlock addition, spec 03 edge case 2)
    Ksh,
}

impl ShellType {
    fn from_name(name: &str) -> Option<Self> {
        match name {
            "bash" => Some(Self::Bash),
            "zsh" => Some(Self::Zsh),
            "sh" => Some(Self::Sh),
            "dash" => Some(Self::Dash),
            "ksh" => Some(Self::Ksh),
            _ => None,
        }
    }

    /// The shell's canonical name (`"bash"`, `"zsh"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::Bash => "bash",
            Self::Zsh => "zsh",
            Self::Sh => "sh",
            Self::Dash => "dash",
            Self::Ksh => "ksh",
        }
    }
}

/// Detects the shell a program token names: first by exact name, then by the file stem
/// of the path (`/bin/bash`, `/usr/local/bin/zsh`, `bash.exe`), as Codex's
/// `detect_shell_type` does (reference §1), restricted to the shells of [`ShellType`].
///
/// Returns `None` for anything else, including PowerShell (spec 03 edge case 17).
pub fn detect_shell_type(program: &str) -> Option<ShellType> {
    ShellType::from_name(program).or_else(|| {
        Path::new(program)
            .file_stem()
            .and_then(|stem| stem.to_str())
            .and_then(ShellType::from_name)
    })
}

/// Whether a recognised wrapper can produce plain segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WrapperForm {
    /// Exactly `[shell, -c|-lc, script]`: the script may be split into plain segments
    /// (spec 03 edge cases 2 and 20).
    Exact,
    /// Any other wrapper spelling (options before or around the flag, a flag cluster
    /// other than `-c`/`-lc`, positional parameters after the script): never plain, but
    /// the script is still parsed for the deny view (spec 03 edge cases 2 and 20).
    Extended,
}

/// A shell wrapper found in an argv. Borrows from the argv it was extracted from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShellWrapper<'a> {
    /// Which shell runs the script.
    pub shell: ShellType,
    /// The program token as written (`/bin/bash`, `zsh`, ...).
    pub program: &'a str,
    /// The single-dash option cluster that contains `c` (`-c`, `-lc`, `-ec`, ...).
    pub flag: &'a str,
    /// The script text handed to the shell.
    pub script: &'a str,
    /// Position of the script token in the argv.
    pub script_index: usize,
    /// Whether the wrapper can produce plain segments.
    pub form: WrapperForm,
}

/// Extracts a shell wrapper from `argv`, following spec 03 edge cases 2 and 20.
///
/// Shape: `[shell, opts..., cluster-with-c, opts..., script, args...]` where `shell` is
/// detected by [`detect_shell_type`], options are single-dash or plus clusters
/// (`-e`, `+x`, `-o pipefail`, `-O extglob`), long options (`--login`, `--norc`,
/// `--rcfile FILE`) or `--`, and the first non-option token after the `c` cluster is the
/// script. Tokens after the script are the script's positional parameters.
///
/// Returns `None` when the argv is not a wrapper: an unknown program, no `c` cluster
/// (`bash script.sh` runs a file and is an ordinary argv, spec 03 edge case 1), or no
/// script token after the cluster (bash refuses to start).
pub fn extract_shell_wrapper(argv: &[String]) -> Option<ShellWrapper<'_>> {
    let program = argv.first()?;
    let shell = detect_shell_type(program)?;
    let mut flag: Option<&str> = None;
    let mut index = 1;
    while let Some(token) = argv.get(index) {
        if token == "--" {
            index += 1;
            if flag.is_some() {
                // `--` after the flag ends the options: the next token is the script.
                break;
            }
            continue;
        }
        if let Some(long) = token.strip_prefix("--") {
            // Long options of bash that take a separate value.
            index += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        let Some(letters) = token.strip_prefix('-').or_else(|| token.strip_prefix('+')) else {
            break;
        };
        if letters.is_empty() || !letters.chars().all(|c| c.is_ascii_alphabetic()) {
            break;
        }
        if flag.is_none() && token.starts_with('-') && letters.contains('c') {
            flag = Some(token);
        }
        // `-o NAME` / `+O NAME`: a cluster ending in `o`/`O` consumes the next token.
        index += if letters.ends_with(['o', 'O']) { 2 } else { 1 };
    }
    let flag = flag?;
    let script = argv.get(index)?;
    let exact = argv.len() == 3 && index == 2 && matches!(flag, "-c" | "-lc");
    Some(ShellWrapper {
        shell,
        program,
        flag,
        script,
        script_index: index,
        form: if exact {
            WrapperForm::Exact
        } else {
            WrapperForm::Extended
        },
    })
}

/// Codex's `extract_bash_command`: `Some((shell, script))` only for exactly
/// `[shell, -c|-lc, script]` with `shell` detected as bash, zsh or sh (reference §1).
///
/// Airlock's own segmentation uses [`extract_shell_wrapper`]; this function exists for
/// callers that must reproduce Codex exactly (for example approval-cache
/// canonicalisation, reference §10).
pub fn extract_bash_command(argv: &[String]) -> Option<(&str, &str)> {
    let [shell, flag, script] = argv else {
        return None;
    };
    let codex_shell = matches!(
        detect_shell_type(shell),
        Some(ShellType::Bash | ShellType::Zsh | ShellType::Sh)
    );
    (codex_shell && matches!(flag.as_str(), "-c" | "-lc"))
        .then_some((shell.as_str(), script.as_str()))
}
