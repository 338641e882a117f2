//! Airlock's approval layer (spec `06-approval.md`).
