//! `-c key=value` overrides in Codex's syntax (spec 10 §CLI): the key is a dotted path, the
//! value is parsed as a TOML value and, if that fails, taken as a plain string.
//!
//! Codex splits the key on every `.`; Airlock also accepts a double-quoted segment
//! (`permissions.dev.filesystem.":tmpdir"=read`) so that keys containing dots or colons can be
//! reached. Every key Codex accepts means the same here.

use crate::error::PermissionsError;
use crate::error::Result;

/// Splits `raw` (`a.b."c.d"=value`) into key segments and the TOML value.
///
/// # Errors
/// [`PermissionsError::InvalidOverride`] when there is no `=`, the key is empty, a segment is
/// empty or a quote is not closed.
pub fn parse_override(raw: &str) -> Result<(Vec<String>, toml::Value)> {
    let invalid = |reason: &str| PermissionsError::InvalidOverride {
        raw: raw.to_owned(),
        reason: reason.to_owned(),
    };
    let (key, value) = split_key_value(raw).ok_or_else(|| invalid("missing `=`"))?;
    let segments = split_key(key.trim()).ok_or_else(|| invalid("malformed key"))?;
    if segments.is_empty() || segments.iter().any(String::is_empty) {
        return Err(invalid("empty key segment"));
    }
    Ok((segments, parse_value(value.trim())))
}

/// Splits at the first `=` outside double quotes.
fn split_key_value(raw: &str) -> Option<(&str, &str)> {
    let mut quoted = false;
    for (index, c) in raw.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '=' if !quoted => return Some((&raw[..index], &raw[index + 1..])),
            _ => {}
        }
    }
    None
}

/// Splits a dotted key, honouring double-quoted segments; `None` on an unclosed quote.
fn split_key(key: &str) -> Option<Vec<String>> {
    let mut segments = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in key.chars() {
        match c {
            '"' => quoted = !quoted,
            '.' if !quoted => segments.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    if quoted {
        return None;
    }
    // A quoted empty segment (`""`) is still empty and is rejected by the caller.
    segments.push(current);
    Some(segments)
}

/// The value as TOML (`true`, `3`, `"x"`, `["a"]`, `{a = 1}`), else the raw text as a string.
fn parse_value(text: &str) -> toml::Value {
    let document = format!("value = {text}");
    match document.parse::<toml::Table>() {
        Ok(mut table) => table
            .remove("value")
            .unwrap_or_else(|| toml::Value::String(text.to_owned())),
        Err(_) => toml::Value::String(text.to_owned()),
    }
}

/// Sets `segments` to `value` in `table`, creating (or replacing non-table) intermediate tables.
pub fn apply_override(table: &mut toml::Table, segments: &[String], value: toml::Value) {
    let Some((last, parents)) = segments.split_last() else {
        return;
    };
    let mut current = table;
    for segment in parents {
        let slot = current
            .entry(segment.clone())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !slot.is_table() {
            *slot = toml::Value::Table(toml::Table::new());
        }
        let toml::Value::Table(next) = slot else {
            return;
        };
        current = next;
    }
    current.insert(last.clone(), value);
}
