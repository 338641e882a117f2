//! Behaviour tests of `airlock-shell`, one module per concern.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod bad_input;
mod bash_differential;
mod code_loading;
mod danger;
mod deny_view;
mod exec_wrappers;
mod expanding_words;
mod heredoc;
mod heredoc_bounds;
mod parsed;
mod plain;
mod random_scripts;
mod real_world;
mod safe;
mod support;
mod syntax_errors;
mod unmodelled;
mod wrapper;
