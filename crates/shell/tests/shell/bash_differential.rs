//! Findings F2 and F4 as one property, checked against the real bash: whenever the plain
//! view accepts a script, its segments are the commands and words bash runs. Scripts are
//! built from pieces that bash expands, quotes, joins or splits (globs, braces, tildes,
//! backslashes, line continuations, separators); each command is `printf '<N:%s>' …`, so
//! bash's output shows every word it passed. The only differences allowed are the two
//! spec 03 keeps on purpose: a leading `~` (bash: `$HOME`) and a backslash that quotes a
//! special character (Codex keeps it in the segment).

use std::process::Command;

use airlock_shell::parse_plain_commands;

const PIECES: &[&str] = &[
    "a",
    "-x",
    "*",
    "?",
    "[a]",
    "{a,b}",
    "{a..b}",
    "~",
    "~/",
    "x=~",
    "\\ ",
    "\\a",
    "\\*",
    "\\\n",
    "\"q\"",
    "'r'",
    "\"$x\"",
    "$x",
    "\"a\\\"b\"",
    "\"\\q\"",
    "}",
    "{",
    "{}",
    "!",
    "a#b",
    "=",
    ":",
    "%",
    "@",
    "+",
    "..",
    ",",
    "\\;",
    "\\\\",
    "é",
    "\\~",
    "$",
    "$'a'",
    "(",
    "&",
    "|",
    "`a`",
    "HEAD~1",
    "-",
    "--",
    "\"a\"b",
    "'a'\\;",
    "{a,\"b\"}",
    "\"*\"",
    "a\"*\"",
    "-r\\f",
    "\\\n ",
    "\n\\",
    "\t",
];

const SEPARATORS: &[&str] = &[
    ";", "\n", " && ", "\n\\\n", "\\\n", " ", "\n\n", "\t;\t", " || ",
];

/// Characters a backslash may quote while the word stays plain (see `literal.rs`).
const QUOTABLE: &str = " \t|&;()<>'\"\\`$*?[]{}~#!";

/// A small deterministic generator (no dependency, same scripts on every run).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, bound: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % bound as u64) as usize
    }
}

/// What bash passes for a segment word, given the two differences kept on purpose.
fn as_bash_passes(word: &str) -> String {
    let (mut out, rest) = match word.strip_prefix('~') {
        Some(rest) => ("/home/test".to_owned(), rest),
        None => (String::new(), word),
    };
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match chars.peek() {
            Some(&next) if c == '\\' && QUOTABLE.contains(next) => {
                out.push(next);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

#[test]
fn plain_segments_are_what_bash_runs() {
    if !std::path::Path::new("/bin/bash").exists() {
        eprintln!("SKIPPED: no /bin/bash on this machine");
        return;
    }
    // Planted names make globs match (`-exe?` is `-exec` here).
    let dir = std::env::temp_dir().join(format!("airlock-shell-bash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for planted in ["-exec", "-rf", "a", "b", "ab"] {
        std::fs::write(dir.join(planted), "").unwrap();
    }
    let mut random = Lcg(0x5eed);
    let mut compared = 0;
    for _ in 0..600 {
        let commands = 1 + random.below(3);
        let mut script = String::new();
        for index in 0..commands {
            if index > 0 {
                script.push_str(SEPARATORS[random.below(SEPARATORS.len())]);
            }
            script.push_str(&format!("printf '<{index}:%s>'"));
            for _ in 0..random.below(3) {
                script.push(' ');
                for _ in 0..=random.below(2) {
                    script.push_str(PIECES[random.below(PIECES.len())]);
                }
            }
        }
        let Some(segments) = parse_plain_commands(&script) else {
            continue;
        };
        // Only scripts whose every segment is one of our printf commands say what bash
        // passed; a pipe hides the left side's output.
        let readable = !script.contains('|')
            && segments.iter().all(|segment| {
                segment.first().is_some_and(|program| program == "printf")
                    && segment
                        .get(1)
                        .is_some_and(|format| format.starts_with('<') && format.ends_with(":%s>"))
            });
        if !readable {
            continue;
        }
        let expected: String = segments
            .iter()
            .map(|segment| {
                let format = &segment[1];
                let words: Vec<String> = segment[2..].iter().map(|w| as_bash_passes(w)).collect();
                if words.is_empty() {
                    format.replace("%s", "")
                } else {
                    words
                        .iter()
                        .map(|word| format.replace("%s", word))
                        .collect()
                }
            })
            .collect();
        let run = Command::new("/bin/bash")
            .args(["-c", &script])
            .current_dir(&dir)
            .env_clear()
            .env("HOME", "/home/test")
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&run.stdout),
            expected,
            "{script:?} read as {segments:?}"
        );
        compared += 1;
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(compared > 50, "only {compared} scripts compared");
}
