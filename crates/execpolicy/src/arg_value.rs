//! The shapes of builtin arguments that `.rules` validation looks at.
//!
//! The builtins only ever inspect two list levels (a pattern's elements and their
//! alternatives; `match`'s examples and their tokens), so an argument is reduced to
//! strings, lists of those, and "something else" carrying its Starlark type name for
//! the error message. Both evaluators build these: the Starlark builtins from runtime
//! values, the literal fast path (`literal_eval`) from syntax.

use starlark::values::Value;
use starlark::values::list::ListRef;

/// One argument value, at most [`ArgValue::MAX_DEPTH`] lists deep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ArgValue {
    /// A string.
    Str(String),
    /// A list (not a tuple: the builtins refuse tuples).
    List(Vec<ArgValue>),
    /// Any other value, or a list nested deeper than validation looks; holds the
    /// Starlark type name (`int`, `tuple`, `NoneType`, `list`, ...).
    Other(String),
}

impl ArgValue {
    /// List levels below an argument's own items that validation inspects.
    const MAX_DEPTH: u8 = 1;

    /// Converts the items of a list argument. Deeper lists become
    /// [`ArgValue::Other`], which also keeps self-referencing lists finite.
    pub(crate) fn from_starlark_items(items: &[Value]) -> Vec<ArgValue> {
        items
            .iter()
            .map(|v| Self::from_starlark(*v, Self::MAX_DEPTH))
            .collect()
    }

    fn from_starlark(value: Value, depth: u8) -> ArgValue {
        if let Some(text) = value.unpack_str() {
            return ArgValue::Str(text.to_string());
        }
        match ListRef::from_value(value) {
            Some(list) if depth > 0 => ArgValue::List(
                list.iter()
                    .map(|item| Self::from_starlark(item, depth - 1))
                    .collect(),
            ),
            _ => ArgValue::Other(value.get_type().to_string()),
        }
    }

    /// The string, if this is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            ArgValue::Str(text) => Some(text),
            _ => None,
        }
    }

    /// The Starlark type name, as error messages print it.
    pub(crate) fn type_name(&self) -> &str {
        match self {
            ArgValue::Str(_) => "string",
            ArgValue::List(_) => "list",
            ArgValue::Other(name) => name,
        }
    }
}
