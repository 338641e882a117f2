//! The patch language's tests: the reference's worked examples, every Codex quirk kept or
//! improved, bad input, shell-call recognition and properties.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bad_input;
mod invocation;
mod properties;
mod quirks;
mod support;
mod worked_examples;
