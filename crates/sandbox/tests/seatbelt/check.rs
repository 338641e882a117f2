//! A structural check of a Seatbelt command: the argv shape, balanced parentheses outside
//! string literals and comments, known top-level forms, every `(param "X")` matched by exactly
//! one `-DX=` and no unused `-D`, and no fixture path spliced into the text.

use std::collections::BTreeSet;

use airlock_sandbox::SANDBOX_EXEC_PATH;
use airlock_sandbox::SeatbeltCommand;

use crate::fixtures::HOME;

/// Top-level forms a policy may contain.
const TOP_LEVEL_FORMS: [&str; 3] = ["version", "deny", "allow"];

/// What the policy text holds, outside comments.
#[derive(Debug, Default)]
struct Scan {
    /// Heads of the top-level forms, in order.
    top_level: Vec<String>,
    /// Keys named by `(param "KEY")`.
    params: BTreeSet<String>,
    /// The text with comments and `#"…"` regex literals removed.
    without_regexes: String,
}

/// Scans SBPL: `;` comments to end of line, `"…"` and `#"…"` literals with `\` escapes.
fn scan(policy: &str) -> Result<Scan, String> {
    let chars: Vec<char> = policy.chars().collect();
    let mut out = Scan::default();
    let mut depth = 0usize;
    let mut index = 0;
    let mut line = 1;
    while let Some(&c) = chars.get(index) {
        match c {
            '\n' => {
                line += 1;
                out.without_regexes.push(c);
                index += 1;
            }
            ';' => {
                while chars.get(index).is_some_and(|&c| c != '\n') {
                    index += 1;
                }
            }
            '"' | '#' if c == '"' || chars.get(index + 1) == Some(&'"') => {
                let regex = c == '#';
                let start = index;
                index += if regex { 2 } else { 1 };
                loop {
                    match chars.get(index) {
                        None => return Err(format!("line {line}: unterminated string literal")),
                        Some('\\') => index += 2,
                        Some('"') => {
                            index += 1;
                            break;
                        }
                        Some(_) => index += 1,
                    }
                }
                if !regex {
                    out.without_regexes.extend(&chars[start..index]);
                }
            }
            '(' => {
                if depth == 0 {
                    let head: String = chars[index + 1..]
                        .iter()
                        .take_while(|c| c.is_ascii_alphanumeric() || **c == '-')
                        .collect();
                    out.top_level.push(head);
                }
                if chars[index + 1..].starts_with(&['p', 'a', 'r', 'a', 'm', ' ', '"']) {
                    let key: String = chars[index + 8..]
                        .iter()
                        .take_while(|c| **c != '"')
                        .collect();
                    out.params.insert(key);
                }
                depth += 1;
                out.without_regexes.push(c);
                index += 1;
            }
            ')' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("line {line}: `)` without a matching `(`"))?;
                out.without_regexes.push(c);
                index += 1;
            }
            _ => {
                out.without_regexes.push(c);
                index += 1;
            }
        }
    }
    if depth != 0 {
        return Err(format!("{depth} unclosed `(` at the end of the policy"));
    }
    Ok(out)
}

/// Checks `command` as generated for `expected_command`; returns every problem found.
pub fn check_command(command: &SeatbeltCommand, expected_command: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    let argv = &command.argv;
    if argv.first().map(String::as_str) != Some(SANDBOX_EXEC_PATH) {
        problems.push(format!("argv[0] is not {SANDBOX_EXEC_PATH}"));
    }
    if argv.get(1).map(String::as_str) != Some("-p") {
        problems.push("argv[1] is not -p".to_owned());
    }
    let Some(separator) = argv.iter().position(|arg| arg == "--") else {
        problems.push("no `--` before the command".to_owned());
        return problems;
    };
    if argv[separator + 1..] != *expected_command {
        problems.push("the command after `--` differs from the input".to_owned());
    }
    let mut defined = BTreeSet::new();
    for arg in argv.get(3..separator).unwrap_or_default() {
        let Some((key, value)) = arg.strip_prefix("-D").and_then(|rest| rest.split_once('='))
        else {
            problems.push(format!("unexpected argument before `--`: {arg}"));
            continue;
        };
        if !value.starts_with('/') {
            problems.push(format!("-D{key} is not an absolute path: {value}"));
        }
        if !defined.insert(key.to_owned()) {
            problems.push(format!("-D{key} is defined twice"));
        }
    }
    let scan = match scan(command.policy()) {
        Ok(scan) => scan,
        Err(problem) => {
            problems.push(problem);
            return problems;
        }
    };
    for head in &scan.top_level {
        if !TOP_LEVEL_FORMS.contains(&head.as_str()) {
            problems.push(format!("unexpected top-level form ({head} …)"));
        }
    }
    if scan.top_level.first().map(String::as_str) != Some("version") {
        problems.push("the policy does not start with (version …)".to_owned());
    }
    for key in scan.params.difference(&defined) {
        problems.push(format!("(param \"{key}\") has no -D{key}="));
    }
    for key in defined.difference(&scan.params) {
        problems.push(format!("-D{key}= is never used by the policy"));
    }
    if scan.without_regexes.contains(HOME) {
        problems.push(format!(
            "a path under {HOME} is spliced into the policy text"
        ));
    }
    problems
}

#[test]
fn checker_accepts_a_well_formed_policy() {
    let command = SeatbeltCommand {
        argv: [
            SANDBOX_EXEC_PATH,
            "-p",
            "(version 1)\n; a comment with ( and \"\n(allow file-read* (subpath (param \"A\")) (regex #\"^/x\\\"(\"))",
            "-DA=/a",
            "--",
            "true",
        ]
        .map(str::to_owned)
        .to_vec(),
        env: Default::default(),
    };
    assert_eq!(
        check_command(&command, &["true".to_owned()]),
        Vec::<String>::new()
    );
}

#[test]
fn checker_reports_unbalanced_and_unmatched_params() {
    let command = SeatbeltCommand {
        argv: [
            SANDBOX_EXEC_PATH,
            "-p",
            "(version 1)\n(allow file-read* (subpath (param \"A\"))",
            "-DB=/b",
            "--",
            "true",
        ]
        .map(str::to_owned)
        .to_vec(),
        env: Default::default(),
    };
    assert_eq!(
        check_command(&command, &["true".to_owned()]),
        vec!["1 unclosed `(` at the end of the policy".to_owned()]
    );
    let command = SeatbeltCommand {
        argv: [
            SANDBOX_EXEC_PATH,
            "-p",
            "(version 1)\n(allow file-read* (subpath (param \"A\")))",
            "-DB=/b",
            "--",
            "true",
        ]
        .map(str::to_owned)
        .to_vec(),
        env: Default::default(),
    };
    assert_eq!(
        check_command(&command, &["true".to_owned()]),
        vec![
            "(param \"A\") has no -DA=".to_owned(),
            "-DB= is never used by the policy".to_owned(),
        ]
    );
}
