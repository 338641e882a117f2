#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `airlock apply-patch` end to end (spec 11; issue 12): the real binary, the real sandbox
//! (bubblewrap + seccomp), real files under `target/tmp` (not `/tmp`, which `:workspace` makes
//! writable). Reviewers are hook scripts; the per-file session cache runs through a library
//! session with a scripted user.

#[path = "../exec_support/mod.rs"]
mod exec_support;

mod bad_input;
mod cache;
mod cli;
mod links;
mod sandbox;
mod support;
