#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `apply_patch` in crate core (spec 11): the safety assessment and pre-checks against real
//! profiles, and the atomic writer on real files (no sandbox here; the end-to-end tests under
//! the real sandbox are in `crates/cli/tests/apply_patch.rs`).

mod files;
mod safety;
mod write;
