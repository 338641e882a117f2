//! A reader of git's configuration format, just enough to find keys that make git run a
//! program (issue 11 item 4). Fail closed: anything this reader does not understand is
//! a [`ConfigSyntaxError`], which the caller treats as unsafe.
//!
//! Format (git-config(1) "CONFIGURATION FILE"): `[section]`, `[section "subsection"]`
//! (subsection case-sensitive, `\"` and `\\` escapes), the deprecated `[section.sub]`
//! (subsection lower-cased); `name = value` or a bare `name` (boolean true); section
//! and variable names are case-insensitive; values may be quoted, use `\n \t \b \" \\`
//! escapes, continue on the next line after a trailing `\`, and end at an unquoted `#`
//! or `;`.

/// One `key = value` of a config file. `section` and `name` are lower-cased;
/// `subsection` keeps its case (as git compares it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    /// Section name, lower-cased.
    pub section: String,
    /// Subsection, if any.
    pub subsection: Option<String>,
    /// Variable name, lower-cased.
    pub name: String,
    /// The value; `None` for a bare `name` (boolean true).
    pub value: Option<String>,
    /// 1-based line of the variable.
    pub line: usize,
}

impl ConfigEntry {
    /// `section.subsection.name` as git prints it.
    #[must_use]
    pub fn key(&self) -> String {
        match &self.subsection {
            Some(sub) => format!("{}.{sub}.{}", self.section, self.name),
            None => format!("{}.{}", self.section, self.name),
        }
    }
}

/// A line this reader cannot parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ConfigSyntaxError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Parses a whole config file.
///
/// # Errors
/// [`ConfigSyntaxError`] for the first line that does not parse.
pub fn parse_config(text: &str) -> Result<Vec<ConfigEntry>, ConfigSyntaxError> {
    let chars: Vec<char> = text.chars().collect();
    let mut parser = Parser {
        chars: &chars,
        pos: 0,
        line: 1,
    };
    parser.entries()
}

struct Parser<'a> {
    chars: &'a [char],
    pos: usize,
    line: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn error(&self, message: impl Into<String>) -> ConfigSyntaxError {
        ConfigSyntaxError {
            line: self.line,
            message: message.into(),
        }
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\r')) {
            self.bump();
        }
    }

    fn skip_to_line_end(&mut self) {
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            self.bump();
        }
    }

    fn entries(&mut self) -> Result<Vec<ConfigEntry>, ConfigSyntaxError> {
        let mut out = Vec::new();
        let mut section: Option<(String, Option<String>)> = None;
        // A UTF-8 byte order mark is allowed at the start.
        if self.peek() == Some('\u{feff}') {
            self.bump();
        }
        loop {
            self.skip_blanks();
            match self.peek() {
                None => return Ok(out),
                Some('\n') => {
                    self.bump();
                }
                Some('#' | ';') => self.skip_to_line_end(),
                Some('[') => {
                    self.bump();
                    section = Some(self.section_header()?);
                }
                Some(c) if c.is_ascii_alphabetic() => {
                    let Some((name, sub)) = &section else {
                        return Err(self.error("a variable before any [section]"));
                    };
                    let (name_text, sub) = (name.clone(), sub.clone());
                    let line = self.line;
                    let (var, value) = self.variable()?;
                    out.push(ConfigEntry {
                        section: name_text,
                        subsection: sub,
                        name: var,
                        value,
                        line,
                    });
                }
                Some(other) => return Err(self.error(format!("unexpected character {other:?}"))),
            }
        }
    }

    /// After `[`: `name]`, `name "sub"]` or `name.sub]`.
    fn section_header(&mut self) -> Result<(String, Option<String>), ConfigSyntaxError> {
        let mut name = String::new();
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                name.push(c.to_ascii_lowercase());
                self.bump();
            } else {
                break;
            }
        }
        if name.is_empty() {
            return Err(self.error("empty section name"));
        }
        self.skip_blanks();
        let subsection = match self.peek() {
            Some(']') => {
                self.bump();
                // `[a.b]`: deprecated subsection syntax, compared lower-cased.
                return Ok(match name.split_once('.') {
                    Some((section, sub)) => (section.to_owned(), Some(sub.to_owned())),
                    None => (name, None),
                });
            }
            Some('"') => {
                self.bump();
                let mut sub = String::new();
                loop {
                    match self.bump() {
                        None | Some('\n') => return Err(self.error("unterminated subsection")),
                        Some('"') => break,
                        Some('\\') => match self.bump() {
                            None | Some('\n') => {
                                return Err(self.error("unterminated subsection"));
                            }
                            Some(escaped) => sub.push(escaped),
                        },
                        Some(c) => sub.push(c),
                    }
                }
                Some(sub)
            }
            _ => return Err(self.error("malformed section header")),
        };
        if name.contains('.') {
            return Err(self.error("a dotted section name cannot also have a quoted subsection"));
        }
        self.skip_blanks();
        if self.bump() != Some(']') {
            return Err(self.error("missing `]` after the subsection"));
        }
        Ok((name, subsection))
    }

    /// `name`, `name = value` up to the end of the (continued) line.
    fn variable(&mut self) -> Result<(String, Option<String>), ConfigSyntaxError> {
        let mut name = String::new();
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '-' {
                name.push(c.to_ascii_lowercase());
                self.bump();
            } else {
                break;
            }
        }
        self.skip_blanks();
        match self.peek() {
            None | Some('\n') => return Ok((name, None)),
            Some('#' | ';') => {
                self.skip_to_line_end();
                return Ok((name, None));
            }
            Some('=') => {
                self.bump();
            }
            Some(other) => {
                return Err(self.error(format!("unexpected {other:?} after variable `{name}`")));
            }
        }
        self.skip_blanks();
        let mut value = String::new();
        let mut quoted = false;
        // Trailing unquoted whitespace is dropped; `pending` holds it until more text.
        let mut pending = String::new();
        loop {
            match self.peek() {
                None | Some('\n') => {
                    if quoted {
                        return Err(self.error("unterminated quoted value"));
                    }
                    break;
                }
                Some('#' | ';') if !quoted => {
                    self.skip_to_line_end();
                    break;
                }
                Some(c @ (' ' | '\t')) if !quoted => {
                    self.bump();
                    if !value.is_empty() {
                        pending.push(c);
                    }
                }
                Some('"') => {
                    self.bump();
                    value.push_str(&std::mem::take(&mut pending));
                    quoted = !quoted;
                }
                Some('\\') => {
                    self.bump();
                    value.push_str(&std::mem::take(&mut pending));
                    match self.bump() {
                        Some('\n') => {}
                        Some('\r') if self.peek() == Some('\n') => {
                            self.bump();
                        }
                        Some('n') => value.push('\n'),
                        Some('t') => value.push('\t'),
                        Some('b') => {
                            value.pop();
                        }
                        Some(c @ ('"' | '\\')) => value.push(c),
                        other => {
                            return Err(self.error(format!("invalid escape \\{other:?}")));
                        }
                    }
                }
                Some('\r') if !quoted => {
                    self.bump();
                }
                Some(c) => {
                    self.bump();
                    value.push_str(&std::mem::take(&mut pending));
                    value.push(c);
                }
            }
        }
        Ok((name, Some(value)))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn keys(text: &str) -> Vec<(String, Option<String>)> {
        parse_config(text)
            .unwrap()
            .into_iter()
            .map(|e| (e.key(), e.value))
            .collect()
    }

    #[test]
    fn sections_subsections_and_case() {
        let text = "[Core]\n\tFSMonitor = /tmp/x\n[diff \"Foo\"]\n\ttextconv = cat\n[Remote.Origin]\n\tURL = u\n";
        assert_eq!(
            keys(text),
            vec![
                ("core.fsmonitor".into(), Some("/tmp/x".into())),
                ("diff.Foo.textconv".into(), Some("cat".into())),
                ("remote.origin.url".into(), Some("u".into())),
            ]
        );
    }

    #[test]
    fn values_quotes_escapes_comments_and_continuations() {
        let text = "[a]\n b = \"x # y\" ; comment\n c = one \\\n two\n d\n e = \"q\\\"\\\\\" tail  \n f = x\\ty\n";
        assert_eq!(
            keys(text),
            vec![
                ("a.b".into(), Some("x # y".into())),
                ("a.c".into(), Some("one  two".into())),
                ("a.d".into(), None),
                ("a.e".into(), Some("q\"\\ tail".into())),
                ("a.f".into(), Some("x\ty".into())),
            ]
        );
    }

    #[test]
    fn subsection_escapes_and_includes() {
        let text = "[includeIf \"gitdir:~/w/\\\"x\"]\n path = ../other\n[include]\npath=/etc/x\n";
        assert_eq!(
            keys(text),
            vec![
                (
                    "includeif.gitdir:~/w/\"x.path".into(),
                    Some("../other".into())
                ),
                ("include.path".into(), Some("/etc/x".into())),
            ]
        );
    }

    #[test]
    fn malformed_input_is_an_error() {
        for text in [
            "b = 1\n",
            "[a\n",
            "[a \"x]\n",
            "[a]\n b = \"open\n",
            "[a]\n b = \\q\n",
            "[a]\n !x = 1\n",
        ] {
            assert!(parse_config(text).is_err(), "{text:?}");
        }
    }
}
