//! Shared helpers for the execpolicy integration tests (each test binary uses a subset).
#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use airlock_execpolicy::{
    Evaluation, MatchOptions, ParseError, Policy, PolicyParser, ResolutionContext,
};

/// Loads `source` as one file named `test.rules`.
pub fn load(source: &str) -> Result<Policy, ParseError> {
    let mut parser = PolicyParser::new();
    parser.parse("test.rules", source)?;
    Ok(parser.build())
}

/// Loads `source`, panicking with the error text if it fails.
pub fn policy(source: &str) -> Policy {
    load(source).unwrap_or_else(|e| panic!("policy failed to load: {e}"))
}

/// The error text of a source that must fail to load.
pub fn load_error(source: &str) -> String {
    match load(source) {
        Ok(_) => panic!("expected a load error for:\n{source}"),
        Err(e) => e.to_string(),
    }
}

/// The `error: ...` key line of a Starlark diagnostic, else the first line (the same
/// rule as the conformance script's `stderr_key`).
pub fn key_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("error:"))
        .or_else(|| message.lines().next())
        .unwrap_or_default()
        .to_string()
}

pub fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

pub fn ctx() -> ResolutionContext {
    ResolutionContext {
        cwd: Some("/work/repo".into()),
        home: Some("/home/me".into()),
    }
}

pub fn check(policy: &Policy, words: &[&str]) -> Evaluation {
    policy.check(&argv(words), &MatchOptions::default())
}

pub fn check_resolved(policy: &Policy, words: &[&str]) -> Evaluation {
    let options = MatchOptions {
        resolve_host_executables: true,
        resolution: Some(ctx()),
    };
    policy.check(&argv(words), &options)
}

pub fn json(evaluation: &Evaluation) -> String {
    serde_json::to_string(evaluation).unwrap()
}
