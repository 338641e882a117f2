//! Seatbelt generator tests: golden policies and argv for built-in and custom profiles, a
//! structural checker run on every generated command, and behaviour checks that need real
//! files (reference `seatbelt.md`, spec 05 §macOS).
//!
//! Regenerate the golden files with `UPDATE_GOLDEN=1 cargo test -p airlock-sandbox --test seatbelt`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod behaviour;
mod check;
mod fixtures;
mod golden;
