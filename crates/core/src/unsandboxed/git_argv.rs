//! `git` arguments that make git run a program or take configuration from the command
//! line (red-team review of issue 11 item 4). The repository check in [`super::git_repo`]
//! covers what git reads from disk; these name the program, the config or the directory
//! of programs outright, so an allow rule for `git fetch` or `git clone` would otherwise
//! run `git fetch --upload-pack='<anything>'` unconfined, and `git clone --template=DIR`
//! would copy hooks from a directory the sandbox wrote and run them.

/// Global options (before the subcommand) that set configuration or where git finds its
/// programs; `=` forms are matched by prefix.
const GLOBAL: &[&str] = &["-c", "--config-env", "--exec-path="];

/// Subcommand options that name a program to run or a directory to copy hooks from, by
/// subcommand (`*` for every subcommand: git spells them alike wherever they exist).
const PROGRAM_OPTIONS: &[(&str, &[&str])] = &[
    (
        "*",
        &[
            "--upload-pack",
            "--receive-pack",
            "--template",
            "--extcmd",
            "--open-files-in-pager",
            "--exec",
            "--smtp-server",
            "--to-cmd",
            "--cc-cmd",
            "--sendmail-cmd",
        ],
    ),
    ("clone", &["-u"]),
    ("ls-remote", &["-u"]),
    ("archive", &["--remote"]),
    ("grep", &["-O"]),
    ("difftool", &["-x"]),
    ("rebase", &["-x"]),
];

/// Options that make git write a file it names (`git log --output=~/.bashrc
/// --format=…`): outside the sandbox that is a write outside every writable root.
const WRITE_OPTIONS: &[(&str, &[&str])] = &[
    ("*", &["--output", "--output-directory"]),
    ("format-patch", &["-o"]),
    ("archive", &["-o"]),
];

/// Subcommands that run programs given on their command line or serve the repository;
/// `submodule foreach`, `bisect run` and a `config` that may write are handled apart.
const PROGRAM_SUBCOMMANDS: &[&str] = &["filter-branch", "instaweb", "daemon", "web--browse"];

/// Why `argv` (a git command line, `argv[0]` the program) runs a program it names, if it
/// does.
pub(super) fn runs_program(argv: &[String]) -> Option<String> {
    let mut index = 1;
    while let Some(token) = argv.get(index) {
        if GLOBAL.iter().any(|option| token.starts_with(option)) {
            return Some(format!("sets `{token}`"));
        }
        match token.as_str() {
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" => index += 2,
            other if other.starts_with('-') => index += 1,
            _ => break,
        }
    }
    let (subcommand, rest) = split_subcommand(argv)?;
    if PROGRAM_SUBCOMMANDS.contains(&subcommand) {
        return Some(format!(
            "runs `git {subcommand}`, which runs programs it is given"
        ));
    }
    let first = rest
        .iter()
        .find(|arg| !arg.starts_with('-'))
        .map(String::as_str);
    match (subcommand, first) {
        ("submodule", Some("foreach")) | ("bisect", Some("run")) => {
            return Some(format!(
                "runs `git {subcommand} {}`, which runs a command it is given",
                first.unwrap_or("")
            ));
        }
        ("config", _) if !reads_config_only(rest) => {
            return Some("may write git configuration, which later git runs execute".into());
        }
        _ => {}
    }
    for arg in rest {
        if arg == "--" {
            break;
        }
        for (name, options) in PROGRAM_OPTIONS {
            if *name != "*" && *name != subcommand {
                continue;
            }
            if let Some(option) = options.iter().find(|option| names_option(arg, option)) {
                return Some(format!(
                    "passes `{option}`, which names a program or hook directory"
                ));
            }
        }
        for (name, options) in WRITE_OPTIONS {
            if *name != "*" && *name != subcommand {
                continue;
            }
            if let Some(option) = options.iter().find(|option| names_option(arg, option)) {
                return Some(format!("passes `{option}`, which names a file git writes"));
            }
        }
    }
    None
}

/// The subcommand of a git argv and the arguments after it, skipping global options.
pub(super) fn split_subcommand(argv: &[String]) -> Option<(&str, &[String])> {
    let mut index = 1;
    while let Some(token) = argv.get(index) {
        match token.as_str() {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" => {
                index += 2;
            }
            other if other.starts_with('-') => index += 1,
            _ => break,
        }
    }
    Some((argv.get(index)?.as_str(), &argv[index + 1..]))
}

/// Subcommands that talk to another repository, which for a local one means running
/// `git-receive-pack` or `git-upload-pack` *in* it: its hooks (`pre-receive`, `update`,
/// `post-update`, `reference-transaction`) and configuration
/// (`core.alternateRefsCommand`) run.
pub(super) const TRANSPORT_SUBCOMMANDS: &[&str] = &[
    "push",
    "fetch",
    "pull",
    "clone",
    "ls-remote",
    "archive",
    "remote",
    "submodule",
    "request-pull",
    "send-pack",
    "fetch-pack",
];

/// `arg` is `option`, its `=` form, or (short options) its attached form.
fn names_option(arg: &str, option: &str) -> bool {
    if option.starts_with("--") {
        arg == option || arg.starts_with(&format!("{option}="))
    } else {
        arg.starts_with(option)
    }
}

/// `git config` that only reads (`--get*`, `--list`/`-l`, `get`, `list`).
fn reads_config_only(rest: &[String]) -> bool {
    rest.iter().any(|arg| {
        arg.starts_with("--get") || matches!(arg.as_str(), "--list" | "-l" | "get" | "list")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(words: &str) -> Option<String> {
        let argv: Vec<String> = words.split(' ').map(str::to_owned).collect();
        runs_program(&argv)
    }

    #[test]
    fn options_that_name_programs_are_found() {
        for words in [
            "git -c core.pager=x log",
            "git --config-env=core.pager=X log",
            "git --exec-path=/tmp/x status",
            "git fetch --upload-pack=x origin",
            "git clone -u x . dst",
            "git clone --template=tpl src dst",
            "git init --template tpl",
            "git grep -Ox pattern",
            "git grep --open-files-in-pager=x pattern",
            "git rebase -x x main",
            "git rebase --exec=x main",
            "git difftool --extcmd=x",
            "git push --receive-pack=x origin",
            "git submodule foreach x",
            "git submodule --quiet foreach x",
            "git bisect run x",
            "git filter-branch --tree-filter x",
            "git config core.fsmonitor x",
            "git -C sub config --add core.pager x",
            "git log --output=/root/.bashrc --format=format:x",
            "git diff --output /x",
            "git format-patch -o/x HEAD~1",
        ] {
            assert!(check(words).is_some(), "{words}");
        }
        for words in [
            "git status",
            "git -C sub log --oneline",
            "git fetch origin",
            "git clone src dst",
            "git config --get user.name",
            "git config -l",
            "git cherry-pick -x abc",
            "git grep -- -O",
            "git log -u",
        ] {
            assert_eq!(check(words), None, "{words}");
        }
    }
}
