//! Airlock wire types (spec `01-protocol.md`).
