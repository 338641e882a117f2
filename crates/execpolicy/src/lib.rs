//! Airlock's exec-policy engine: the policy layer's `.rules` files.
//!
//! Owns: the Starlark `.rules` language (`prefix_rule`, `host_executable`,
//! `network_rule`), loading several files in order, matching a command (exact stage,
//! canonical matching, host-executable basename fallback), the strictest-decision
//! evaluation, `check_multiple` with a heuristics fallback, and amendments appended
//! to rules files. Drop-in compatible with Codex 0.169 (`../shared/spec/02-execpolicy.md`,
//! reference `execpolicy.md`): same matches, same key error lines.
//!
//! Loading: files made only of literal builtin calls (nearly all of them) are read
//! from the syntax tree by `literal_eval`, which shares its validation with the
//! Starlark builtins and answers only when Starlark would succeed identically;
//! everything else, and every error message, comes from the `starlark` interpreter,
//! whose globals are built only when such a file appears.
//!
//! Must not: parse shell scripts (crate `shell` splits them into segments first),
//! decide approval or sandboxing (crates `core`/`approval`), or touch any file but
//! the rules files it is asked to read or amend.

mod amend;
mod arg_value;
mod builtins;
mod canonical;
mod decision;
mod discover;
mod error;
mod host;
mod limits;
mod literal_eval;
mod nesting;
mod network;
mod parser;
mod pattern;
mod policy;
mod rule;
mod unclosed;

pub use amend::{blocking_append_allow_prefix_rule, blocking_append_network_rule};
pub use canonical::canonical_key;
pub use decision::Decision;
pub use discover::{default_amendment_file, default_policy_files, rules_files_in};
pub use error::{AmendError, ExampleSite, LoadError, ParseError, RuleError};
pub use host::{ResolutionContext, normalize_lexically};
pub use limits::{EvalLimits, Limit, MAX_EVALUATION_HEAP_BYTES, MAX_EVALUATION_TIME};
pub use network::{NetworkRule, NetworkRuleProtocol, normalize_network_host};
pub use parser::{PolicyParser, load_policy_files};
pub use pattern::{PatternToken, PrefixPattern};
pub use policy::{Evaluation, MatchOptions, Policy};
pub use rule::{AbsolutePathBuf, PrefixRule, RuleMatch};
