//! The Starlark builtins of `.rules` files: `prefix_rule`, `host_executable`,
//! `network_rule` (spec 02 §Language, reference `execpolicy.md` §4).
//!
//! Each builtin validates its arguments in Codex's order and records the result in
//! the [`FileBuilder`] reachable through `Evaluator::extra`.

use std::cell::RefCell;

use starlark::any::ProvidesStaticType;
use starlark::environment::GlobalsBuilder;
use starlark::eval::Evaluator;
use starlark::values::Value;
use starlark::values::list::{ListRef, UnpackList};
use starlark::values::none::NoneType;
use starlark::values::tuple::TupleRef;

use crate::decision::Decision;
use crate::error::RuleError;
use crate::host::{validate_host_executable_name, validate_host_executable_path};
use crate::network::{NetworkRule, validate_justification};
use crate::pattern::{PatternToken, PrefixPattern};
use crate::rule::{AbsolutePathBuf, PrefixRule};

/// What one `prefix_rule` call produced: its rules plus the examples to check
/// against exactly those rules once the file has been evaluated.
#[derive(Debug, Clone)]
pub(crate) struct RuleCall {
    pub(crate) rules: Vec<PrefixRule>,
    pub(crate) matches: Vec<Vec<String>>,
    pub(crate) not_matches: Vec<Vec<String>>,
}

/// One definition in source order; the policy applies them in this order.
#[derive(Debug, Clone)]
pub(crate) enum Definition {
    Rule(RuleCall),
    HostExecutable {
        name: String,
        paths: Vec<AbsolutePathBuf>,
    },
    Network(NetworkRule),
}

// `ProvidesStaticType`'s derive emits an `unsafe impl`; it is starlark's own, sound
// way to pass host data through `Evaluator::extra`, so the lint is lifted here only.
#[allow(unsafe_code)]
mod file_builder {
    use super::{Definition, ProvidesStaticType, RefCell};

    /// Collects the definitions of the file being evaluated.
    #[derive(Debug, Default, ProvidesStaticType)]
    pub(crate) struct FileBuilder {
        pub(crate) definitions: RefCell<Vec<Definition>>,
    }
}
pub(crate) use file_builder::FileBuilder;

fn record(eval: &Evaluator, definition: Definition) -> anyhow::Result<NoneType> {
    let builder = eval
        .extra
        .and_then(|extra| extra.downcast_ref::<FileBuilder>())
        .ok_or_else(|| anyhow::anyhow!("internal error: policy builder missing"))?;
    builder.definitions.borrow_mut().push(definition);
    Ok(NoneType)
}

#[starlark::starlark_module]
pub(crate) fn policy_builtins(builder: &mut GlobalsBuilder) {
    fn prefix_rule<'v>(
        pattern: UnpackList<Value<'v>>,
        decision: Option<&str>,
        r#match: Option<UnpackList<Value<'v>>>,
        not_match: Option<UnpackList<Value<'v>>>,
        justification: Option<&str>,
        canonical_matching: Option<bool>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<NoneType> {
        let decision = match decision {
            Some(raw) => Decision::parse(raw)?,
            None => Decision::Allow,
        };
        let justification = validate_justification(justification)?;
        let (firsts, rest) = parse_pattern(&pattern.items)?;
        let matches = parse_examples(r#match.map(|l| l.items).unwrap_or_default())?;
        let not_matches = parse_examples(not_match.map(|l| l.items).unwrap_or_default())?;
        let canonical = canonical_matching.unwrap_or(false);
        let rules = firsts
            .into_iter()
            .map(|first| PrefixRule {
                pattern: PrefixPattern::new(first, rest.clone(), canonical),
                decision,
                justification: justification.clone(),
            })
            .collect();
        record(
            eval,
            Definition::Rule(RuleCall {
                rules,
                matches,
                not_matches,
            }),
        )
    }

    fn host_executable<'v>(
        name: &str,
        paths: UnpackList<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<NoneType> {
        validate_host_executable_name(name)?;
        let mut resolved = Vec::with_capacity(paths.items.len());
        for value in paths.items {
            let raw = value.unpack_str().ok_or_else(|| {
                RuleError::InvalidRule(format!(
                    "host_executable paths must be strings (got {})",
                    value.get_type()
                ))
            })?;
            resolved.push(validate_host_executable_path(name, raw)?);
        }
        record(
            eval,
            Definition::HostExecutable {
                name: name.to_string(),
                paths: resolved,
            },
        )
    }

    fn network_rule<'v>(
        host: &str,
        protocol: &str,
        decision: &str,
        justification: Option<&str>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<NoneType> {
        let rule = NetworkRule::parse(host, protocol, decision, justification)?;
        record(eval, Definition::Network(rule))
    }
}

/// Splits a pattern into its first-position alternatives and the remaining positions.
fn parse_pattern(items: &[Value]) -> Result<(Vec<String>, Vec<PatternToken>), RuleError> {
    let mut positions = items.iter().map(|v| parse_pattern_element(*v));
    let first = match positions.next() {
        None => return Err(RuleError::InvalidPattern("pattern cannot be empty".into())),
        Some(first) => first?,
    };
    let rest = positions.collect::<Result<Vec<_>, _>>()?;
    Ok((first.alternatives().to_vec(), rest))
}

fn parse_pattern_element(value: Value) -> Result<PatternToken, RuleError> {
    if let Some(token) = value.unpack_str() {
        return Ok(PatternToken::Single(token.to_string()));
    }
    let Some(list) = ListRef::from_value(value) else {
        return Err(RuleError::InvalidPattern(format!(
            "pattern element must be a string or list of strings (got {})",
            value.get_type()
        )));
    };
    let alts = list
        .iter()
        .map(|alt| {
            alt.unpack_str().map(str::to_string).ok_or_else(|| {
                RuleError::InvalidPattern(format!(
                    "pattern alternative must be a string (got {})",
                    alt.get_type()
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    match alts.len() {
        0 => Err(RuleError::InvalidPattern(
            "pattern alternatives cannot be empty".into(),
        )),
        // A one-element list behaves exactly like the bare string.
        1 => Ok(PatternToken::Single(
            alts.into_iter().next().unwrap_or_default(),
        )),
        _ => Ok(PatternToken::Alts(alts)),
    }
}

fn parse_examples(items: Vec<Value>) -> Result<Vec<Vec<String>>, RuleError> {
    items.into_iter().map(parse_example).collect()
}

/// An example is a list of strings, or a string split with POSIX shell rules.
fn parse_example(value: Value) -> Result<Vec<String>, RuleError> {
    let invalid = |msg: String| RuleError::InvalidExample(msg);
    if let Some(text) = value.unpack_str() {
        let tokens = shlex::split(text)
            .ok_or_else(|| invalid("example string has invalid shell syntax".into()))?;
        if tokens.is_empty() {
            return Err(invalid("example cannot be an empty string".into()));
        }
        return Ok(tokens);
    }
    let Some(list) = ListRef::from_value(value) else {
        let got = if TupleRef::from_value(value).is_some() {
            "tuple"
        } else {
            value.get_type()
        };
        return Err(invalid(format!(
            "example must be a string or list of strings (got {got})"
        )));
    };
    if list.is_empty() {
        return Err(invalid("example cannot be an empty list".into()));
    }
    list.iter()
        .map(|tok| {
            tok.unpack_str().map(str::to_string).ok_or_else(|| {
                invalid(format!(
                    "example tokens must be strings (got {})",
                    tok.get_type()
                ))
            })
        })
        .collect()
}
