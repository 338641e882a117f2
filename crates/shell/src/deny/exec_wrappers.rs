//! Exec wrappers: programs that run another command given in their own argv
//! (spec 03 "Two views" item 2 and edge case 23).
//!
//! The deny view unwraps them so that `timeout 5 git push` is also seen as `git push`.
//! Each wrapper's options that take a separate value are listed so the wrapped command
//! starts at the right token; `--opt=value` forms are always skipped whole.

use std::path::Path;

/// The exec wrappers of spec 03 (also the amendment-refusal list of edge case 21):
/// a proposal or rule prefix starting with one of these would cover any command.
///
/// Spec 03's list, then the wrappers of issue 18 item 3 (field log BL-04): `setsid`,
/// `ionice`, `taskset`, `flock`, `chrt`, `watch`, `unbuffer`, and the multi-call
/// binaries `busybox`/`toybox`, whose first argument names the applet that runs.
pub const EXEC_WRAPPERS: &[&str] = &[
    "timeout", "nice", "nohup", "stdbuf", "env", "command", "builtin", "exec", "time", "xargs",
    "sudo", "doas", "setsid", "ionice", "taskset", "flock", "chrt", "watch", "unbuffer", "busybox",
    "toybox",
];

/// Whether `program` (matched by basename, so `/usr/bin/env` counts) is one of
/// [`EXEC_WRAPPERS`].
pub fn is_exec_wrapper(program: &str) -> bool {
    EXEC_WRAPPERS.contains(&basename(program))
}

/// The last path component of a program token (`/usr/bin/git` → `git`); the token itself
/// when it has no `/`.
pub fn basename(program: &str) -> &str {
    Path::new(program)
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or(program)
}

/// How one wrapper's argv is laid out.
struct WrapperSyntax {
    name: &'static str,
    /// Short options whose value is the rest of the cluster or the next token.
    short_with_value: &'static [char],
    /// Long options (without `--`) whose value may be the next token.
    long_with_value: &'static [&'static str],
    /// Tokens between the options and the command (`timeout`'s duration).
    positionals: usize,
    /// Whether `NAME=VALUE` tokens may precede the command (`env`, `sudo`).
    assignments: bool,
}

const SYNTAX: &[WrapperSyntax] = &[
    WrapperSyntax {
        name: "timeout",
        short_with_value: &['s', 'k'],
        long_with_value: &["signal", "kill-after"],
        positionals: 1,
        assignments: false,
    },
    WrapperSyntax {
        name: "nice",
        short_with_value: &['n'],
        long_with_value: &["adjustment"],
        positionals: 0,
        assignments: false,
    },
    WrapperSyntax {
        name: "nohup",
        short_with_value: &[],
        long_with_value: &[],
        positionals: 0,
        assignments: false,
    },
    WrapperSyntax {
        name: "stdbuf",
        short_with_value: &['i', 'o', 'e'],
        long_with_value: &["input", "output", "error"],
        positionals: 0,
        assignments: false,
    },
    WrapperSyntax {
        // `-P altpath` is BSD/macOS env.
        name: "env",
        short_with_value: &['u', 'C', 'S', 'P'],
        long_with_value: &["unset", "chdir", "split-string"],
        positionals: 0,
        assignments: true,
    },
    WrapperSyntax {
        name: "command",
        short_with_value: &[],
        long_with_value: &[],
        positionals: 0,
        assignments: false,
    },
    WrapperSyntax {
        name: "builtin",
        short_with_value: &[],
        long_with_value: &[],
        positionals: 0,
        assignments: false,
    },
    WrapperSyntax {
        name: "exec",
        short_with_value: &['a'],
        long_with_value: &[],
        positionals: 0,
        assignments: false,
    },
    WrapperSyntax {
        // GNU time's `-f FORMAT` and `-o FILE` also take values.
        name: "time",
        short_with_value: &['f', 'o'],
        long_with_value: &["format", "output"],
        positionals: 0,
        assignments: false,
    },
    WrapperSyntax {
        // `-J`, `-R`, `-S` are BSD/macOS xargs.
        name: "xargs",
        short_with_value: &['n', 'L', 'P', 's', 'd', 'E', 'I', 'a', 'J', 'R', 'S'],
        long_with_value: &[
            "max-args",
            "max-lines",
            "max-procs",
            "max-chars",
            "delimiter",
            "arg-file",
            "process-slot-var",
        ],
        positionals: 0,
        assignments: false,
    },
    WrapperSyntax {
        // `-R` (chroot) and `-T` (timeout) also take values in current sudo.
        name: "sudo",
        short_with_value: &['u', 'g', 'h', 'p', 'C', 'D', 'r', 't', 'U', 'R', 'T'],
        long_with_value: &[
            "user",
            "group",
            "host",
            "prompt",
            "close-from",
            "chdir",
            "role",
            "type",
            "other-user",
            "chroot",
            "command-timeout",
        ],
        positionals: 0,
        assignments: true,
    },
    WrapperSyntax {
        name: "setsid",
        short_with_value: &[],
        long_with_value: &[],
        positionals: 0,
        assignments: false,
    },
    WrapperSyntax {
        // `-p PID`, `-P PGID`, `-u UID` act on running processes (no command).
        name: "ionice",
        short_with_value: &['c', 'n', 'p', 'P', 'u'],
        long_with_value: &["class", "classdata", "pid", "pgid", "uid"],
        positionals: 0,
        assignments: false,
    },
    WrapperSyntax {
        // The affinity mask (or `-c` list) comes before the command.
        name: "taskset",
        short_with_value: &[],
        long_with_value: &[],
        positionals: 1,
        assignments: false,
    },
    WrapperSyntax {
        // `flock FILE COMMAND...` or `flock FILE -c SCRIPT`; `-c` is handled below.
        name: "flock",
        short_with_value: &['w', 'E'],
        long_with_value: &["timeout", "conflict-exit-code"],
        positionals: 1,
        assignments: false,
    },
    WrapperSyntax {
        // The priority comes before the command.
        name: "chrt",
        short_with_value: &['T', 'P', 'D'],
        long_with_value: &["sched-runtime", "sched-period", "sched-deadline"],
        positionals: 1,
        assignments: false,
    },
    WrapperSyntax {
        // Without `-x` the command words are joined and run by `sh -c`.
        name: "watch",
        short_with_value: &['n', 'q'],
        long_with_value: &["interval", "equexit"],
        positionals: 0,
        assignments: false,
    },
    WrapperSyntax {
        name: "unbuffer",
        short_with_value: &[],
        long_with_value: &[],
        positionals: 0,
        assignments: false,
    },
    WrapperSyntax {
        name: "busybox",
        short_with_value: &[],
        long_with_value: &[],
        positionals: 0,
        assignments: false,
    },
    WrapperSyntax {
        name: "toybox",
        short_with_value: &[],
        long_with_value: &[],
        positionals: 0,
        assignments: false,
    },
    WrapperSyntax {
        // `-a style` is OpenBSD doas.
        name: "doas",
        short_with_value: &['u', 'C', 'a'],
        long_with_value: &[],
        positionals: 0,
        assignments: false,
    },
];

/// What an exec wrapper runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unwrapped<'a> {
    /// The wrapper's basename (`env`, `sudo`, ..., or `eval`).
    pub wrapper: &'a str,
    /// The wrapped command's argv; empty when the wrapper runs nothing from its argv
    /// (`env` alone prints the environment) or when the command is in [`Self::script`].
    pub command: &'a [String],
    /// `NAME=VALUE` tokens given to `env` or `sudo` before the command.
    pub assignments: Vec<(&'a str, &'a str)>,
    /// A command line the wrapper re-splits or evaluates: the `env -S` string followed
    /// by the remaining arguments (spec 03 edge case 23), or `eval`'s arguments joined
    /// with spaces. Parsed as a script by the deny view.
    pub script: Option<String>,
}

/// Unwraps one level of exec wrapper from `argv`.
///
/// Recognises [`EXEC_WRAPPERS`] by basename, plus `eval` (its arguments are a script;
/// not in spec 03's list, added because it executes code the same way), `trap` (its
/// action is a script) and `coproc` (issue 18 item 2). Option values
/// follow spec 03 edge case 23. Returns `None` when `argv[0]` is not a wrapper.
pub fn unwrap_exec_wrapper(argv: &[String]) -> Option<Unwrapped<'_>> {
    let program = basename(argv.first()?);
    if program == "eval" {
        let script = argv.get(1..).unwrap_or_default().join(" ");
        return Some(Unwrapped {
            wrapper: program,
            command: &[],
            assignments: Vec::new(),
            script: Some(script),
        });
    }
    if program == "trap" {
        return unwrap_trap(argv);
    }
    if program == "coproc" {
        return Some(unwrap_coproc(argv));
    }
    let syntax = SYNTAX.iter().find(|syntax| syntax.name == program)?;
    let mut split_string: Option<&str> = None;
    let mut index = 1;
    while let Some(token) = argv.get(index) {
        if token == "--" {
            index += 1;
            break;
        }
        if syntax.name == "env" && token == "-" {
            // `env -` is an old spelling of `env -i`.
            index += 1;
            continue;
        }
        if let Some(long) = token.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            let takes_value = syntax.long_with_value.contains(&name);
            let value = match inline {
                Some(value) => Some(value),
                None if takes_value => argv.get(index + 1).map(String::as_str),
                None => None,
            };
            if syntax.name == "env" && name == "split-string" {
                split_string = value;
            }
            index += if takes_value && inline.is_none() {
                2
            } else {
                1
            };
            continue;
        }
        let Some(cluster) = token
            .strip_prefix('-')
            .filter(|cluster| !cluster.is_empty())
        else {
            break;
        };
        let mut consumed = 1;
        for (position, flag) in cluster.char_indices() {
            if !syntax.short_with_value.contains(&flag) {
                continue;
            }
            let glued = cluster
                .get(position + flag.len_utf8()..)
                .unwrap_or_default();
            let value = if glued.is_empty() {
                consumed = 2;
                argv.get(index + 1).map(String::as_str)
            } else {
                Some(glued)
            };
            if syntax.name == "env" && flag == 'S' {
                split_string = value;
            }
            break;
        }
        index += consumed;
    }
    let mut assignments = Vec::new();
    if syntax.assignments {
        while let Some((name, value)) = argv.get(index).and_then(|token| split_assignment(token)) {
            assignments.push((name, value));
            index += 1;
        }
    }
    index += syntax.positionals;
    let mut rest = argv.get(index..).unwrap_or_default();
    if syntax.name == "command" && describes_only(argv.get(1..index).unwrap_or_default()) {
        // `command -v git` / `command -V git` only report what `git` would be.
        rest = &[];
    }
    let options = argv.get(1..index).unwrap_or_default();
    match syntax.name {
        // `-p` acts on a running process; `chrt -m` only prints limits.
        "ionice" | "taskset" | "chrt"
            if options.iter().any(|option| {
                option.starts_with("--pid")
                    || option.starts_with("--pgid")
                    || option.starts_with("--uid")
                    || option == "--max"
                    || (!option.starts_with("--")
                        && option.starts_with('-')
                        && option.contains(['p', 'P', 'u', 'm']))
            }) =>
        {
            rest = &[];
        }
        "flock" => {
            // Options may follow the lock file: `flock FILE -c SCRIPT`.
            let script = match rest.first().map(String::as_str) {
                Some("-c" | "--command") => rest.get(1).cloned(),
                Some(option) => option
                    .strip_prefix("--command=")
                    .or_else(|| option.strip_prefix("-c").filter(|glued| !glued.is_empty()))
                    .map(str::to_owned),
                None => None,
            };
            if script.is_some() {
                return Some(Unwrapped {
                    wrapper: program,
                    command: &[],
                    assignments,
                    script,
                });
            }
        }
        "watch"
            if !options
                .iter()
                .any(|option| option == "-x" || option == "--exec") =>
        {
            let joined = rest.join(" ");
            return Some(Unwrapped {
                wrapper: program,
                command: &[],
                assignments,
                script: (!rest.is_empty()).then_some(joined),
            });
        }
        _ => {}
    }
    if let Some(split) = split_string {
        // `env -S STRING ARGS...` runs the words of STRING followed by ARGS.
        let mut script = split.to_owned();
        for arg in rest {
            script.push(' ');
            script.push_str(
                &shlex::try_quote(arg)
                    .map(|quoted| quoted.into_owned())
                    .unwrap_or_default(),
            );
        }
        return Some(Unwrapped {
            wrapper: program,
            command: &[],
            assignments,
            script: Some(script),
        });
    }
    Some(Unwrapped {
        wrapper: program,
        command: rest,
        assignments,
        script: None,
    })
}

/// `trap [-lp] [--] [ACTION] SIGNAL...`: ACTION is a script the shell runs later (issue 18
/// item 2). `None` when there is no action (`trap`, `trap -p`, `trap - EXIT`).
fn unwrap_trap(argv: &[String]) -> Option<Unwrapped<'_>> {
    let mut rest = argv.get(1..).unwrap_or_default();
    while let Some((first, tail)) = rest.split_first() {
        if first == "--" {
            rest = tail;
            break;
        }
        if first.starts_with('-') && first.len() > 1 {
            rest = tail;
            continue;
        }
        break;
    }
    let action = rest
        .first()
        .filter(|action| *action != "-" && rest.len() > 1)?;
    Some(Unwrapped {
        wrapper: "trap",
        command: &[],
        assignments: Vec::new(),
        script: Some(action.clone()),
    })
}

/// Keywords that open a compound command (the body of `coproc NAME { ...; }`).
const COMPOUND_OPENERS: &[&str] = &[
    "{", "(", "((", "if", "while", "until", "for", "case", "select", "[[",
];

/// `coproc [NAME] COMMAND`: runs COMMAND in the background (issue 18 item 2). A simple
/// command is unwrapped as it is; a compound one (tree-sitter reads it as words) is
/// handed back as a script, without the NAME.
fn unwrap_coproc(argv: &[String]) -> Unwrapped<'_> {
    let rest = argv.get(1..).unwrap_or_default();
    let opens_compound = |index: usize| {
        rest.get(index)
            .is_some_and(|word| COMPOUND_OPENERS.contains(&word.as_str()))
    };
    let body = if opens_compound(0) {
        Some(rest)
    } else if rest.first().is_some_and(|name| is_variable_name(name)) && opens_compound(1) {
        rest.get(1..)
    } else {
        None
    };
    match body {
        Some(body) => Unwrapped {
            wrapper: "coproc",
            command: &[],
            assignments: Vec::new(),
            script: Some(body.join(" ")),
        },
        None => Unwrapped {
            wrapper: "coproc",
            command: rest,
            assignments: Vec::new(),
            script: None,
        },
    }
}

/// The commands `find` runs: each `-exec`/`-execdir`/`-ok`/`-okdir` action up to its
/// `;` or `+` terminator (an unterminated one runs to the end; issue 18 item 2). Empty
/// when `argv` is not `find`.
pub(crate) fn find_actions(argv: &[String]) -> Vec<&[String]> {
    let mut actions = Vec::new();
    if argv
        .first()
        .is_none_or(|program| basename(program) != "find")
    {
        return actions;
    }
    let mut index = 1;
    while let Some(token) = argv.get(index) {
        index += 1;
        if !matches!(token.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            continue;
        }
        let start = index;
        while argv
            .get(index)
            .is_some_and(|token| token != ";" && token != "+")
        {
            index += 1;
        }
        if let Some(action) = argv.get(start..index).filter(|action| !action.is_empty()) {
            actions.push(action);
        }
        index += 1;
    }
    actions
}

/// Whether `command`'s options include `-v` or `-V` (describe, do not run).
fn describes_only(options: &[String]) -> bool {
    options.iter().any(|option| {
        option
            .strip_prefix('-')
            .is_some_and(|cluster| !cluster.starts_with('-') && cluster.contains(['v', 'V']))
    })
}

/// Splits `NAME=VALUE` when `NAME` is a valid shell variable name.
pub(crate) fn split_assignment(token: &str) -> Option<(&str, &str)> {
    let (name, value) = token.split_once('=')?;
    is_variable_name(name).then_some((name, value))
}

/// `[A-Za-z_][A-Za-z0-9_]*`
pub(crate) fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
