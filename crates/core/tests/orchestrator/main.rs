#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `ToolOrchestrator::run` step by step (spec 07 §Algorithm) with a scripted tool runtime:
//! the runtime records every attempt it is given and returns scripted results, and the
//! reviewers are real hook / automatic-review scripts run by the approval layer. No process
//! is confined here (the end-to-end tests under the real sandbox are in `crates/cli/tests`).

mod first_attempt;
mod retry;
mod support;
