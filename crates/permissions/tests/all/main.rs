//! Integration tests for `airlock-permissions` (spec 04): golden profiles from Codex 0.169, every
//! reference error message, config loading, queries, materialisation, legacy projection,
//! additional permissions, property tests, and the real-world Codex configs.

mod additional;
mod config;
mod errors;
mod golden;
mod home_dotfiles;
mod legacy;
mod network;
mod properties;
mod queries;
mod real_world;
mod support;
