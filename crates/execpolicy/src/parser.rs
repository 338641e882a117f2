//! Loading `.rules` source into a [`Policy`]: Starlark evaluation, then example
//! validation (reference `execpolicy.md` §3, §4.2, §6).

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};
use std::time::Instant;

use starlark::environment::FrozenModule;
use starlark::environment::{Globals, GlobalsBuilder, Module};
use starlark::eval::{BeforeStmtFunc, Evaluator, FileLoader};
use starlark::syntax::{AstModule, Dialect};

use crate::builtins::{Definition, FileBuilder, RuleCall, policy_builtins};
use crate::error::{ExampleSite, LoadError, ParseError, RuleError};
use crate::limits::{EvalLimits, Limit, LimitHook, Watch};
use crate::literal_eval;
use crate::nesting::TooDeep;
use crate::policy::{MatchOptions, Policy};

/// Accumulates a policy from several files, in order.
///
/// Later `host_executable` definitions replace earlier ones across files; rules keep
/// load order. Examples are validated per file, right after it is evaluated.
///
/// Files made only of literal builtin calls are read straight from the syntax tree
/// (`literal_eval`); the rest are evaluated by Starlark, whose globals are built on
/// first need because building them is most of the cost of a small file.
pub struct PolicyParser {
    policy: Policy,
    globals: Option<Globals>,
    limits: EvalLimits,
}

impl Default for PolicyParser {
    fn default() -> Self {
        Self::new()
    }
}

impl PolicyParser {
    /// A parser with an empty policy. Cheap: no Starlark state is built yet.
    pub fn new() -> Self {
        Self {
            policy: Policy::empty(),
            globals: None,
            limits: EvalLimits::default(),
        }
    }

    /// The same parser with other evaluation bounds (the defaults are
    /// [`crate::MAX_EVALUATION_TIME`] and [`crate::MAX_EVALUATION_HEAP_BYTES`]).
    #[must_use]
    pub fn with_limits(mut self, limits: EvalLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Reads and evaluates one file; `path` is named in errors exactly as given.
    ///
    /// # Errors
    /// [`LoadError::Read`] if the file is missing, a directory or not UTF-8;
    /// [`LoadError::Parse`] if it is not a valid policy.
    pub fn load_file(&mut self, path: &Path) -> Result<(), LoadError> {
        let source = std::fs::read_to_string(path).map_err(|source| LoadError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        self.parse(&path.display().to_string(), &source)
            .map_err(|source| LoadError::Parse {
                path: path.to_path_buf(),
                source,
            })
    }

    /// Evaluates `source` as the file `label` (used in diagnostics).
    ///
    /// On error nothing of this file is added to the policy.
    ///
    /// # Errors
    /// [`ParseError::Starlark`] for syntax, name and builtin errors;
    /// [`ParseError::Example`] when a `match`/`not_match` example fails;
    /// [`ParseError::TooDeep`] / [`ParseError::TooLong`] for sources whose syntax tree
    /// would exhaust the stack.
    pub fn parse(&mut self, label: &str, source: &str) -> Result<(), ParseError> {
        let depth = crate::nesting::measure(source).map_err(|limit| match limit {
            TooDeep::Nesting(line) => ParseError::TooDeep {
                label: label.to_string(),
                line,
                max: crate::nesting::MAX_NESTING,
            },
            TooDeep::Operators(line) => ParseError::TooLong {
                label: label.to_string(),
                line,
                max: crate::nesting::MAX_OPERATORS,
            },
        })?;
        let limits = self.limits;
        let definitions = if depth.fits_in_place() {
            evaluate_source(label, source, &mut self.globals, limits, false)?
        } else {
            // Deep syntax trees make the parser and compiler recurse deeply; give them a
            // stack they cannot exhaust within the limits `measure` enforces.
            let globals = &mut self.globals;
            std::thread::scope(|scope| {
                std::thread::Builder::new()
                    .name("airlock-rules-deep".into())
                    .stack_size(crate::nesting::DEEP_SOURCE_STACK)
                    .spawn_scoped(scope, move || {
                        evaluate_source(label, source, globals, limits, true)
                    })
                    .map_err(ParseError::Thread)?
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })?
        };

        let mut next = self.policy.clone();
        let mut calls = Vec::new();
        for definition in definitions {
            match definition {
                // Only calls with examples keep a copy of their rules for validation;
                // the rest move straight into the policy (most calls have none).
                Definition::Rule(call)
                    if call.matches.is_empty() && call.not_matches.is_empty() =>
                {
                    for rule in call.rules {
                        next.push_rule(rule);
                    }
                }
                Definition::Rule(call) => {
                    for rule in &call.rules {
                        next.push_rule(rule.clone());
                    }
                    calls.push(call);
                }
                Definition::HostExecutable { name, paths } => next.set_host_executable(name, paths),
                Definition::Network(rule) => next.push_network_rule(rule),
            }
        }
        for call in &calls {
            validate_examples(call, &next, label).map_err(ParseError::Example)?;
        }
        self.policy = next;
        Ok(())
    }

    /// The policy built so far.
    pub fn build(self) -> Policy {
        self.policy
    }
}

/// Parses `source` and returns its definitions: from the literal fast path when it
/// answers, else from Starlark (building `globals` on first need) within `limits`;
/// `deep` gives the evaluation thread a stack for deeply nested sources.
fn evaluate_source(
    label: &str,
    source: &str,
    globals: &mut Option<Globals>,
    limits: EvalLimits,
    deep: bool,
) -> Result<Vec<Definition>, ParseError> {
    let dialect = Dialect {
        enable_f_strings: true,
        ..Dialect::Extended
    };
    let ast = AstModule::parse(label, source.to_owned(), &dialect).map_err(|error| {
        let at_end = error.to_string().contains("unexpected new line");
        match crate::unclosed::last_unclosed_bracket(source) {
            Some((line, bracket)) if at_end => ParseError::Unclosed {
                error,
                label: label.to_owned(),
                line,
                bracket,
            },
            _ => ParseError::Starlark(error),
        }
    })?;
    // `@starlark-rust:` comments switch on checks (e.g. typechecking) that only
    // Starlark performs.
    let literal = match source.contains("@starlark-rust") {
        true => None,
        false => literal_eval::evaluate(&ast),
    };
    match literal {
        Some(definitions) => Ok(definitions),
        None => {
            let globals = globals
                .get_or_insert_with(|| GlobalsBuilder::standard().with(policy_builtins).build());
            evaluate_limited(label, ast, globals.clone(), limits, deep)
        }
    }
}

/// [`evaluate_with_starlark`] on a worker thread, waited for at most `limits.time`, with
/// a statement hook that stops at the deadline or when the heap passes
/// `limits.heap_bytes` (issue 18 item 9, see [`crate::limits`]). The worker is detached:
/// when the loader stops waiting it tells the worker to stop at its next statement.
fn evaluate_limited(
    label: &str,
    ast: AstModule,
    globals: Globals,
    limits: EvalLimits,
    deep: bool,
) -> Result<Vec<Definition>, ParseError> {
    let watch = Arc::new(Watch::default());
    let deadline = Instant::now() + limits.time;
    let (sender, receiver) = mpsc::channel();
    let hook_watch = watch.clone();
    let stack = if deep {
        crate::nesting::DEEP_SOURCE_STACK
    } else {
        EVALUATION_STACK
    };
    std::thread::Builder::new()
        .name("airlock-rules-eval".into())
        .stack_size(stack)
        .spawn(move || {
            let hook = LimitHook {
                watch: hook_watch,
                deadline,
                heap_bytes: limits.heap_bytes,
            };
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                evaluate_hooked(ast, &globals, hook)
            }));
            // The loader may have stopped waiting; nothing to do then.
            let _ = sender.send(result);
        })
        .map_err(ParseError::Thread)?;
    let limit_error = |limit| ParseError::Limit {
        label: label.to_owned(),
        limit,
        limits,
    };
    match receiver.recv_timeout(limits.time) {
        Ok(Ok(result)) => match watch.tripped() {
            Some(limit) => Err(limit_error(Some(limit))),
            None => result.map_err(ParseError::Starlark),
        },
        // The evaluation panicked: an allocation failed (bumpalo reports out of memory
        // by panicking) or Starlark broke an invariant. The file does not load.
        Ok(Err(_panic)) => Err(limit_error(watch.tripped())),
        Err(_) => {
            watch.cancelled.store(true, Ordering::SeqCst);
            Err(limit_error(Some(Limit::Time)))
        }
    }
}

/// Stack of the evaluation thread for ordinary sources (the main thread's usual size).
const EVALUATION_STACK: usize = 8 << 20;

/// [`evaluate_with_starlark`] with a statement hook installed.
fn evaluate_hooked(
    ast: AstModule,
    globals: &Globals,
    hook: LimitHook,
) -> starlark::Result<Vec<Definition>> {
    let file = FileBuilder::default();
    Module::with_temp_heap(|module| {
        let mut eval = Evaluator::new(&module);
        eval.extra = Some(&file);
        eval.set_loader(&NoImports);
        eval.before_stmt_for_dap(BeforeStmtFunc::from_dyn(Box::new(hook)));
        eval.eval_module(ast, globals).map(|_| ())
    })?;
    Ok(file.definitions.into_inner())
}

/// Evaluates one parsed file with Starlark, returning the definitions it made.
#[cfg(test)]
pub(crate) fn evaluate_with_starlark(
    ast: AstModule,
    globals: &Globals,
) -> starlark::Result<Vec<Definition>> {
    let file = FileBuilder::default();
    Module::with_temp_heap(|module| {
        let mut eval = Evaluator::new(&module);
        eval.extra = Some(&file);
        eval.set_loader(&NoImports);
        eval.eval_module(ast, globals).map(|_| ())
    })?;
    Ok(file.definitions.into_inner())
}

/// `.rules` files are self-contained: `load()` is refused with a message that says so
/// (the key text `No imports are available, you tried ...` is Codex's).
struct NoImports;

impl FileLoader for NoImports {
    fn load(&self, path: &str) -> starlark::Result<FrozenModule> {
        Err(starlark::Error::new_other(anyhow::anyhow!(
            "No imports are available, you tried `{path}`"
        )))
    }
}

/// Checks one call's examples against a policy holding only that call's rules plus
/// the host bindings of `loaded` (everything loaded up to the end of this file).
fn validate_examples(call: &RuleCall, loaded: &Policy, label: &str) -> Result<(), RuleError> {
    if call.matches.is_empty() && call.not_matches.is_empty() {
        return Ok(());
    }
    let own = loaded.with_only_rules(&call.rules);
    let options = MatchOptions::resolving();
    let at = call.line.map(|line| format!("{label}:{line}"));
    for example in &call.not_matches {
        if let Some(first) = own
            .matches_for_command_with_options(example, &options)
            .first()
        {
            let shown = call
                .rules
                .iter()
                .find(|rule| {
                    !loaded
                        .with_only_rules(std::slice::from_ref(*rule))
                        .matches_for_command_with_options(example, &options)
                        .is_empty()
                })
                .map(rule_source)
                .into_iter()
                .collect();
            return Err(RuleError::ExampleDidMatch {
                rule: format!("{first:?}"),
                example: join_example(example),
                site: Box::new(ExampleSite { shown, at }),
            });
        }
    }
    let unmatched: Vec<String> = call
        .matches
        .iter()
        .filter(|example| {
            own.matches_for_command_with_options(example, &options)
                .is_empty()
        })
        .map(|example| join_example(example))
        .collect();
    if unmatched.is_empty() {
        return Ok(());
    }
    Err(RuleError::ExamplesDidNotMatch {
        rules: call.rules.iter().map(|r| format!("{r:?}")).collect(),
        examples: unmatched,
        site: Box::new(ExampleSite {
            shown: call.rules.iter().map(rule_source).collect(),
            at,
        }),
    })
}

/// `rule` as a rules file spells it: `prefix_rule(pattern=["git", ["push", "pull"]],
/// decision="prompt")`.
fn rule_source(rule: &crate::rule::PrefixRule) -> String {
    use crate::pattern::PatternToken;
    let mut tokens = vec![format!("{:?}", rule.pattern.first)];
    for token in &rule.pattern.rest {
        tokens.push(match token {
            PatternToken::Single(word) => format!("{word:?}"),
            PatternToken::Alts(words) => format!(
                "[{}]",
                words
                    .iter()
                    .map(|word| format!("{word:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    }
    format!(
        "prefix_rule(pattern=[{}], decision=\"{}\")",
        tokens.join(", "),
        rule.decision.as_str()
    )
}

fn join_example(tokens: &[String]) -> String {
    shlex::try_join(tokens.iter().map(String::as_str)).unwrap_or_else(|_| tokens.join(" "))
}

/// Loads `paths` in order into one policy; the first failing file stops loading.
///
/// # Errors
/// The first file's [`LoadError`].
pub fn load_policy_files<P: AsRef<Path>>(paths: &[P]) -> Result<Policy, LoadError> {
    let mut parser = PolicyParser::new();
    for path in paths {
        parser.load_file(path.as_ref())?;
    }
    Ok(parser.build())
}
