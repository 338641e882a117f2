//! Codex's built-in known-safe programs and their argument checks (reference §4),
//! with Airlock's adjustments (spec 03 "Known-safe commands", edge case 9).

use crate::git::split_git;

/// Programs that are safe with any arguments (reference §4; `numfmt` and `tac` are
/// Linux-only in Codex, listed unconditionally in spec 03).
const ALWAYS_SAFE: &[&str] = &[
    "cat", "cd", "cut", "echo", "expr", "false", "grep", "head", "id", "ls", "nl", "paste", "pwd",
    "rev", "seq", "stat", "tail", "tr", "true", "uname", "uniq", "wc", "which", "whoami", "numfmt",
    "tac",
];

/// Whether `argv` (program already reduced to its basename `name`) is on the built-in
/// safe list with acceptable arguments.
pub(super) fn is_builtin_safe(name: &str, argv: &[String]) -> bool {
    let args = argv.get(1..).unwrap_or_default();
    match name {
        _ if ALWAYS_SAFE.contains(&name) => true,
        "base64" => base64_is_safe(args),
        "find" => find_is_safe(args),
        "rg" => rg_is_safe(args),
        "git" => git_is_safe(argv),
        "sed" => sed_is_safe(argv),
        _ => false,
    }
}

/// `base64` writes a file with `-o FILE`, `-oFILE`, `--output FILE`, `--output=FILE`.
fn base64_is_safe(args: &[String]) -> bool {
    !args.iter().any(|arg| {
        arg == "--output"
            || arg.starts_with("--output=")
            || (arg.starts_with("-o") && !arg.starts_with("--"))
    })
}

/// `find` actions that run programs or write/delete files.
const FIND_UNSAFE: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf",
];

fn find_is_safe(args: &[String]) -> bool {
    !args.iter().any(|arg| FIND_UNSAFE.contains(&arg.as_str()))
}

/// `rg --pre CMD` and `--hostname-bin CMD` run programs; `-z`/`--search-zip` runs
/// decompressors. Airlock also refuses `z` inside a short-option cluster (`-iz`), which
/// Codex misses.
fn rg_is_safe(args: &[String]) -> bool {
    !args.iter().any(|arg| {
        let runs_program = ["--pre", "--hostname-bin"].iter().any(|option| {
            arg == option
                || arg
                    .strip_prefix(option)
                    .is_some_and(|tail| tail.starts_with('='))
        });
        let short_z = !arg.starts_with("--") && arg.starts_with('-') && arg.contains('z');
        runs_program || arg == "--search-zip" || short_z
    })
}

/// Options that redirect git's configuration, repository or helper programs; unsafe
/// anywhere in the argv (reference §4).
const GIT_REDIRECTING: &[&str] = &[
    "-c",
    "--config-env",
    "--exec-path",
    "--git-dir",
    "--namespace",
    "--super-prefix",
    "--work-tree",
];

/// Subcommand options that write files or run helper programs (reference §4), plus
/// `--paginate` which starts a pager (spec 03 edge case 9).
const GIT_UNSAFE_ARGS: &[&str] = &[
    "--output",
    "--ext-diff",
    "--textconv",
    "--exec",
    "--paginate",
];

/// Read-only `git branch` flags (reference §4).
const GIT_BRANCH_READ_ONLY: &[&str] = &[
    "--list",
    "-l",
    "--show-current",
    "-a",
    "--all",
    "-r",
    "--remotes",
    "-v",
    "-vv",
    "--verbose",
];

fn git_is_safe(argv: &[String]) -> bool {
    let args = argv.get(1..).unwrap_or_default();
    let redirects = args.iter().any(|arg| {
        GIT_REDIRECTING.iter().any(|option| {
            arg == option
                || arg
                    .strip_prefix(option)
                    .is_some_and(|tail| tail.starts_with('='))
        }) || (arg.starts_with("-c") && !arg.starts_with("--"))
    });
    if redirects || args.iter().any(|arg| arg == "--paginate") {
        return false;
    }
    let git = split_git(argv);
    // `-p` starts a pager only as a global option; `git log -p` is a patch listing
    // (spec 03 edge case 9).
    if git.globals.iter().any(|global| global == "-p") {
        return false;
    }
    let unsafe_arg = git.args.iter().any(|arg| {
        GIT_UNSAFE_ARGS.contains(&arg.as_str())
            || arg.starts_with("--output=")
            || arg.starts_with("--exec=")
    });
    if unsafe_arg {
        return false;
    }
    match git.subcommand {
        Some("status" | "log" | "diff" | "show") => true,
        Some("branch") => git.args.iter().all(|arg| {
            GIT_BRANCH_READ_ONLY.contains(&arg.as_str()) || arg.starts_with("--format=")
        }),
        _ => false,
    }
}

/// Only `sed -n N p` / `sed -n M,Np` with at most one file (reference §4).
fn sed_is_safe(argv: &[String]) -> bool {
    if argv.len() > 4 || argv.get(1).map(String::as_str) != Some("-n") {
        return false;
    }
    argv.get(2).is_some_and(|script| is_line_print(script))
}

/// `^(\d+,)?\d+p$`
fn is_line_print(script: &str) -> bool {
    let Some(range) = script.strip_suffix('p') else {
        return false;
    };
    let all_digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    match range.split_once(',') {
        Some((start, end)) => all_digits(start) && all_digits(end),
        None => all_digits(range),
    }
}
