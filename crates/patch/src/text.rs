//! A text file as lines that keep their own endings (spec 11: "Line endings are kept per
//! file"; Codex's newer `text_file.rs`).

/// The file's lines without endings, each line's ending, and the style new lines get.
pub(crate) struct TextLines {
    /// Line contents, without `\n` / `\r\n`.
    pub lines: Vec<String>,
    /// The ending of each line (`"\n"`, `"\r\n"`, or `""` for a last line without one).
    pub endings: Vec<&'static str>,
}

impl TextLines {
    /// Splits `text` on `\n`, keeping a `\r` before it as part of the ending.
    pub(crate) fn split(text: &str) -> Self {
        let mut lines = Vec::new();
        let mut endings = Vec::new();
        for piece in text.split_inclusive('\n') {
            let (content, ending) = if let Some(content) = piece.strip_suffix("\r\n") {
                (content, "\r\n")
            } else if let Some(content) = piece.strip_suffix('\n') {
                (content, "\n")
            } else {
                (piece, "")
            };
            lines.push(content.to_owned());
            endings.push(ending);
        }
        Self { lines, endings }
    }

    /// The ending new lines get: the first line's, or `\n` for a file with no line ending.
    pub(crate) fn style(&self) -> &'static str {
        match self.endings.first() {
            Some(&"\r\n") => "\r\n",
            _ => "\n",
        }
    }
}
