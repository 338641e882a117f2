//! Wire-form tests for `airlock-protocol` (spec 01): every type and every variant round-trips
//! JSON → value → JSON using examples from reference `protocol.md`; legacy input aliases read as
//! the canonical form; invalid inputs are rejected; every top-level type has a JSON Schema.

mod amendments;
mod approval_policy;
mod approvals_reviewer;
mod network_approval;
mod permissions;
mod requirement;
mod review_decision;
mod sandbox_mode;
mod sandbox_permissions;
mod schema;
mod support;
