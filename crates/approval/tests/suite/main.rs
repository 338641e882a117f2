//! Integration tests of the approval layer (one binary, to keep link time low).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod auto_review;
mod concurrency;
mod granular;
mod hooks;
mod network;
mod support;
mod units;
mod user_decisions;
