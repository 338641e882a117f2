//! The `include.path` and `includeIf.<condition>.path` values of a git configuration file —
//! git reads those files as more configuration of the repository, so they are repository
//! metadata as much as `config` itself (an included file can set `core.fsmonitor`) — and
//! `core.hooksPath`, where git takes the repository's hooks from.
//!
//! A small reader of git's configuration syntax, enough for these two keys: sections
//! `[name]`, `[name "subsection"]` and the legacy `[name.subsection]` (names case-insensitive),
//! a variable on the header's line, `#`/`;` comments, quoted values with git's escapes, and
//! backslash-newline continuations. Conditions of `includeIf` are not evaluated: every
//! candidate is reported, which can only protect more. Must not: interpret anything else.

/// The raw `path` values of `[include]` and `[includeIf …]` sections of `text`, in order.
#[must_use]
pub fn include_paths(text: &[u8]) -> Vec<Vec<u8>> {
    values(text, &[(b"include", b"path"), (b"includeif", b"path")])
}

/// The raw `core.hooksPath` values of `text`, in order (git uses the last one).
#[must_use]
pub fn hooks_paths(text: &[u8]) -> Vec<Vec<u8>> {
    values(text, &[(b"core", b"hookspath")])
}

/// The raw values of the `(section, key)` pairs (lowercase) in `text`, in order.
fn values(text: &[u8], wanted: &[(&[u8], &[u8])]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut section: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'#' || c == b';' {
            i = end_of_line(text, i);
        } else if c == b'[' {
            let (name, next) = section_header(text, i + 1);
            section = name;
            i = next;
        } else if c.is_ascii_alphabetic() {
            let start = i;
            while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'-') {
                i += 1;
            }
            let key = text[start..i].to_ascii_lowercase();
            while i < text.len() && (text[i] == b' ' || text[i] == b'\t') {
                i += 1;
            }
            if i < text.len() && text[i] == b'=' {
                let (value, next) = value(text, i + 1);
                if wanted
                    .iter()
                    .any(|(s, k)| *s == section.as_slice() && *k == key.as_slice())
                {
                    out.push(value);
                }
                i = next;
            } else {
                // A boolean variable, or garbage git would reject: skip the line.
                i = end_of_line(text, i);
            }
        } else {
            i = end_of_line(text, i);
        }
    }
    out
}

fn end_of_line(text: &[u8], from: usize) -> usize {
    text[from..]
        .iter()
        .position(|b| *b == b'\n')
        .map_or(text.len(), |p| from + p + 1)
}

/// The lowercased section name of a header starting after `[`, and where parsing goes on
/// (after `]`, so that a variable on the same line is read).
fn section_header(text: &[u8], mut i: usize) -> (Vec<u8>, usize) {
    let start = i;
    while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'-') {
        i += 1;
    }
    let name = text[start..i].to_ascii_lowercase();
    let mut quoted = false;
    while i < text.len() {
        match text[i] {
            b'\\' if quoted => i += 1,
            b'"' => quoted = !quoted,
            b']' if !quoted => return (name, i + 1),
            b'\n' => return (Vec::new(), i + 1), // broken header: git rejects the file
            _ => {}
        }
        i += 1;
    }
    (Vec::new(), i)
}

/// A value starting after `=`, as git reads it, and where parsing goes on.
fn value(text: &[u8], mut i: usize) -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    // Unquoted whitespace is kept only when something follows it.
    let mut pending_space = 0usize;
    let mut quoted = false;
    while i < text.len() && (text[i] == b' ' || text[i] == b'\t') {
        i += 1;
    }
    while i < text.len() {
        let c = text[i];
        i += 1;
        match c {
            b'\n' if !quoted => return (out, i),
            b'\n' => return (out, i), // unterminated quote: git rejects the file
            b'#' | b';' if !quoted => return (out, end_of_line(text, i - 1)),
            b' ' | b'\t' if !quoted => pending_space += 1,
            b'"' => quoted = !quoted,
            b'\\' => {
                let Some(&next) = text.get(i) else {
                    break;
                };
                i += 1;
                let escaped = match next {
                    b'\n' => continue,
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'b' => {
                        out.pop();
                        continue;
                    }
                    other => other,
                };
                out.extend(std::iter::repeat_n(b' ', pending_space));
                pending_space = 0;
                out.push(escaped);
            }
            other => {
                out.extend(std::iter::repeat_n(b' ', pending_space));
                pending_space = 0;
                out.push(other);
            }
        }
    }
    (out, i)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
mod tests {
    use super::*;

    fn paths(text: &str) -> Vec<String> {
        include_paths(text.as_bytes())
            .into_iter()
            .map(|p| String::from_utf8(p).unwrap())
            .collect()
    }

    #[test]
    fn include_and_include_if_paths_are_found() {
        let text = "[core]\n\tbare = false\n\tpath = not-this\n[include]\n\tpath = ../shared.gitconfig\n\
                    [includeIf \"gitdir:~/work/\"]\n  PATH = \"/abs/with space\" ; comment\n\
                    [Include] path = same-line # trailing\n[include.legacy]\npath=x\\\ny\n\
                    [other]\npath = no\n";
        assert_eq!(
            paths(text),
            ["../shared.gitconfig", "/abs/with space", "same-line", "xy"]
        );
    }

    #[test]
    fn hooks_path_is_found() {
        let text = "[core]\n\thooksPath = /tmp/hooks\n[include]\n\thookspath = no\n";
        assert_eq!(hooks_paths(text.as_bytes()), [b"/tmp/hooks".to_vec()]);
        assert!(include_paths(text.as_bytes()).is_empty());
    }

    #[test]
    fn quoting_escapes_and_garbage() {
        assert_eq!(paths("[include]\npath = \"a\\\"b\" c \n"), ["a\"b c"]);
        assert_eq!(paths("[include]\npath = a\\tb\n"), ["a\tb"]);
        assert_eq!(
            paths("[include]\npath\n[include \"x]\"]\npath = q\n"),
            ["q"]
        );
        assert!(paths("garbage ] [ = \n\0\u{1}").is_empty());
        assert!(paths("[include").is_empty());
        assert_eq!(
            paths("[include]\npath = \"unterminated\n"),
            ["unterminated"]
        );
    }
}
