//! Validation of a raw argv before it is segmented (spec 03 edge case 16).

use std::ffi::OsString;

use crate::error::{Result, ShellError};

/// Checks that `argv` can describe a command: at least one token, a non-empty first
/// token, and no NUL byte in any token.
///
/// Errors: [`ShellError::EmptyArgv`], [`ShellError::EmptyProgram`] (spec 03 edge case 16),
/// [`ShellError::NulByte`] with the index of the first offending token.
pub fn validate_argv(argv: &[String]) -> Result<()> {
    let Some(program) = argv.first() else {
        return Err(ShellError::EmptyArgv);
    };
    if program.is_empty() {
        return Err(ShellError::EmptyProgram);
    }
    if let Some(index) = argv.iter().position(|token| token.contains('\0')) {
        return Err(ShellError::NulByte { index });
    }
    Ok(())
}

/// Converts an OS-level argv (as received by a CLI) into UTF-8 strings and validates it
/// with [`validate_argv`].
///
/// Errors: [`ShellError::InvalidUtf8`] for the first token that is not UTF-8 (rules and
/// heuristics work on text, and a lossy conversion would match a different command than
/// the one that would run), then every error of [`validate_argv`].
pub fn argv_from_os<I>(args: I) -> Result<Vec<String>>
where
    I: IntoIterator<Item = OsString>,
{
    let argv = args
        .into_iter()
        .enumerate()
        .map(|(index, arg)| {
            arg.into_string()
                .map_err(|_| ShellError::InvalidUtf8 { index })
        })
        .collect::<Result<Vec<String>>>()?;
    validate_argv(&argv)?;
    Ok(argv)
}
