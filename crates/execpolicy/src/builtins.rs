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
use starlark::values::list::UnpackList;
use starlark::values::none::NoneType;

use crate::arg_value::ArgValue;
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
    /// 1-based line of the `prefix_rule(` call, for example errors (`None` when unknown).
    pub(crate) line: Option<usize>,
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
        let definition = prefix_rule_definition(PrefixRuleArgs {
            pattern: &ArgValue::from_starlark_items(&pattern.items),
            decision,
            matches: &ArgValue::from_starlark_items(&r#match.map(|l| l.items).unwrap_or_default()),
            not_matches: &ArgValue::from_starlark_items(
                &not_match.map(|l| l.items).unwrap_or_default(),
            ),
            justification,
            canonical_matching,
        })?;
        let line = eval
            .call_stack_top_location()
            .map(|span| span.resolve_span().begin.line + 1);
        record(eval, with_line(definition, line))
    }

    fn host_executable<'v>(
        name: &str,
        paths: UnpackList<Value<'v>>,
        eval: &mut Evaluator<'v, '_, '_>,
    ) -> anyhow::Result<NoneType> {
        let definition =
            host_executable_definition(name, &ArgValue::from_starlark_items(&paths.items))?;
        record(eval, definition)
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

/// The arguments of one `prefix_rule` call; absent lists are empty.
pub(crate) struct PrefixRuleArgs<'a> {
    pub(crate) pattern: &'a [ArgValue],
    pub(crate) decision: Option<&'a str>,
    pub(crate) matches: &'a [ArgValue],
    pub(crate) not_matches: &'a [ArgValue],
    pub(crate) justification: Option<&'a str>,
    pub(crate) canonical_matching: Option<bool>,
}

/// `prefix_rule`: validates in Codex's order (decision, justification, pattern,
/// `match`, `not_match`) and returns the call's rules with its examples.
///
/// Shared by the Starlark builtin and the literal fast path (`literal_eval`), so both
/// accept exactly the same calls.
pub(crate) fn prefix_rule_definition(args: PrefixRuleArgs) -> Result<Definition, RuleError> {
    let decision = match args.decision {
        Some(raw) => Decision::parse(raw)?,
        None => Decision::Allow,
    };
    let justification = validate_justification(args.justification)?;
    let (firsts, rest) = parse_pattern(args.pattern)?;
    let matches = parse_examples(args.matches)?;
    let not_matches = parse_examples(args.not_matches)?;
    let canonical = args.canonical_matching.unwrap_or(false);
    let rules = firsts
        .into_iter()
        .map(|first| PrefixRule {
            pattern: PrefixPattern::new(first, rest.clone(), canonical),
            decision,
            justification: justification.clone(),
        })
        .collect();
    Ok(Definition::Rule(RuleCall {
        rules,
        matches,
        not_matches,
        line: None,
    }))
}

/// `definition` with the line of its `prefix_rule` call (other definitions unchanged).
pub(crate) fn with_line(definition: Definition, line: Option<usize>) -> Definition {
    match definition {
        Definition::Rule(call) => Definition::Rule(RuleCall { line, ..call }),
        other => other,
    }
}

/// `host_executable`: the name, then every path in order.
pub(crate) fn host_executable_definition(
    name: &str,
    paths: &[ArgValue],
) -> Result<Definition, RuleError> {
    validate_host_executable_name(name)?;
    let mut resolved = Vec::with_capacity(paths.len());
    for value in paths {
        let raw = value.as_str().ok_or_else(|| {
            RuleError::InvalidRule(format!(
                "host_executable paths must be strings (got {})",
                value.type_name()
            ))
        })?;
        resolved.push(validate_host_executable_path(name, raw)?);
    }
    Ok(Definition::HostExecutable {
        name: name.to_string(),
        paths: resolved,
    })
}

/// Splits a pattern into its first-position alternatives and the remaining positions.
fn parse_pattern(items: &[ArgValue]) -> Result<(Vec<String>, Vec<PatternToken>), RuleError> {
    let mut positions = items.iter().map(parse_pattern_element);
    let first = match positions.next() {
        None => return Err(RuleError::InvalidPattern("pattern cannot be empty".into())),
        Some(first) => first?,
    };
    let rest = positions.collect::<Result<Vec<_>, _>>()?;
    Ok((first.alternatives().to_vec(), rest))
}

fn parse_pattern_element(value: &ArgValue) -> Result<PatternToken, RuleError> {
    let list = match value {
        ArgValue::Str(token) => return Ok(PatternToken::Single(token.clone())),
        ArgValue::List(list) => list,
        ArgValue::Other(_) => {
            return Err(RuleError::InvalidPattern(format!(
                "pattern element must be a string or list of strings (got {})",
                value.type_name()
            )));
        }
    };
    let alts = list
        .iter()
        .map(|alt| {
            alt.as_str().map(str::to_string).ok_or_else(|| {
                RuleError::InvalidPattern(format!(
                    "pattern alternative must be a string (got {})",
                    alt.type_name()
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

fn parse_examples(items: &[ArgValue]) -> Result<Vec<Vec<String>>, RuleError> {
    items.iter().map(parse_example).collect()
}

/// An example is a list of strings, or a string split with POSIX shell rules.
fn parse_example(value: &ArgValue) -> Result<Vec<String>, RuleError> {
    let invalid = |msg: String| RuleError::InvalidExample(msg);
    let list = match value {
        ArgValue::Str(text) => {
            let tokens = shlex::split(text)
                .ok_or_else(|| invalid("example string has invalid shell syntax".into()))?;
            if tokens.is_empty() {
                return Err(invalid("example cannot be an empty string".into()));
            }
            return Ok(tokens);
        }
        ArgValue::List(list) => list,
        ArgValue::Other(_) => {
            return Err(invalid(format!(
                "example must be a string or list of strings (got {})",
                value.type_name()
            )));
        }
    };
    if list.is_empty() {
        return Err(invalid("example cannot be an empty list".into()));
    }
    list.iter()
        .map(|tok| {
            tok.as_str().map(str::to_string).ok_or_else(|| {
                invalid(format!(
                    "example tokens must be strings (got {})",
                    tok.type_name()
                ))
            })
        })
        .collect()
}
