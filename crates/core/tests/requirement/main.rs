#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report
//! The requirement computation end to end: the seeds' matrix of issue 5, every decision
//! source, spec 03 edge cases 12, 18 and 19, the red-team rule on program paths,
//! amendments and bad input.

mod decisions;
mod escalation_and_paths;
mod inputs;
mod spellings;
mod support;
