//! User-configured additions to the known-safe list (`[shell] extra_safe_commands`,
//! spec 03 "Known-safe commands", spec 10 "Configuration").
//!
//! Each entry is argument-aware like the built-in list: a command prefix that must
//! match, and optional arguments that disqualify the command. Accepted TOML forms:
//!
//! ```toml
//! [shell]
//! extra_safe_commands = [
//!   "make lint",                                         # a shell-quoted prefix
//!   ["cargo", "check"],                                  # a prefix as words
//!   { command = "just fmt", forbidden_args = ["--exec"] },  # with disqualifying args
//! ]
//! ```

use serde::Deserialize;

use crate::deny::basename;

/// Why an `extra_safe_commands` entry is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExtraSafeCommandError {
    /// The entry names no program.
    #[error("invalid extra safe command: empty command")]
    Empty,
    /// The string form could not be split into words (unbalanced quotes).
    #[error("invalid extra safe command `{0}`: unbalanced quotes")]
    Unsplittable(String),
    /// A word of the prefix, or a forbidden argument, is empty.
    #[error("invalid extra safe command `{0}`: empty word")]
    EmptyWord(String),
}

/// One `[shell] extra_safe_commands` entry: `argv` is safe when its program matches
/// `prefix[0]` (by basename, or exactly when `prefix[0]` is a path), the next arguments
/// equal the rest of `prefix`, and no later argument is one of `forbidden_args` (exactly,
/// or as `ARG=value`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "EntrySpec")]
pub struct ExtraSafeCommand {
    prefix: Vec<String>,
    forbidden_args: Vec<String>,
}

impl ExtraSafeCommand {
    /// Builds an entry from its prefix words and disqualifying arguments.
    ///
    /// Errors: [`ExtraSafeCommandError::Empty`] without words,
    /// [`ExtraSafeCommandError::EmptyWord`] when any word is empty.
    pub fn new(
        prefix: Vec<String>,
        forbidden_args: Vec<String>,
    ) -> Result<Self, ExtraSafeCommandError> {
        if prefix.is_empty() {
            return Err(ExtraSafeCommandError::Empty);
        }
        if prefix.iter().chain(&forbidden_args).any(String::is_empty) {
            return Err(ExtraSafeCommandError::EmptyWord(prefix.join(" ")));
        }
        Ok(Self {
            prefix,
            forbidden_args,
        })
    }

    /// Parses the string form (`"make lint"`), split with shell quoting rules.
    ///
    /// Errors: as [`Self::new`], plus [`ExtraSafeCommandError::Unsplittable`].
    pub fn parse(line: &str) -> Result<Self, ExtraSafeCommandError> {
        let words = shlex::split(line)
            .ok_or_else(|| ExtraSafeCommandError::Unsplittable(line.to_owned()))?;
        Self::new(words, Vec::new())
    }

    /// The prefix words.
    pub fn prefix(&self) -> &[String] {
        &self.prefix
    }

    /// The disqualifying arguments.
    pub fn forbidden_args(&self) -> &[String] {
        &self.forbidden_args
    }

    /// Whether `argv` matches this entry (program, prefix, no forbidden argument). Does
    /// not check the program path's trustworthiness or danger; see
    /// [`crate::is_known_safe_command`].
    pub fn matches(&self, argv: &[String]) -> bool {
        let (Some(program), Some(wanted)) = (argv.first(), self.prefix.first()) else {
            return false;
        };
        let program_matches = if wanted.contains('/') {
            program == wanted
        } else {
            basename(program) == wanted
        };
        if !program_matches || !argv[1..].starts_with(&self.prefix[1..]) {
            return false;
        }
        let rest = argv.get(self.prefix.len()..).unwrap_or_default();
        !rest.iter().any(|arg| {
            self.forbidden_args.iter().any(|forbidden| {
                arg == forbidden
                    || arg
                        .strip_prefix(forbidden.as_str())
                        .is_some_and(|tail| tail.starts_with('='))
            })
        })
    }
}

/// The accepted configuration shapes, before validation.
#[derive(Deserialize)]
#[serde(untagged)]
enum EntrySpec {
    Line(String),
    Words(Vec<String>),
    Table {
        command: CommandSpec,
        #[serde(default)]
        forbidden_args: Vec<String>,
    },
}

#[derive(Deserialize)]
#[serde(untagged)]
enum CommandSpec {
    Line(String),
    Words(Vec<String>),
}

impl TryFrom<EntrySpec> for ExtraSafeCommand {
    type Error = ExtraSafeCommandError;

    fn try_from(spec: EntrySpec) -> Result<Self, Self::Error> {
        match spec {
            EntrySpec::Line(line) => Self::parse(&line),
            EntrySpec::Words(words) => Self::new(words, Vec::new()),
            EntrySpec::Table {
                command,
                forbidden_args,
            } => {
                let prefix = match command {
                    CommandSpec::Line(line) => {
                        shlex::split(&line).ok_or(ExtraSafeCommandError::Unsplittable(line))?
                    }
                    CommandSpec::Words(words) => words,
                };
                Self::new(prefix, forbidden_args)
            }
        }
    }
}
