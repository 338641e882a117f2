//! Which environment the instructions describe (spec 08 §Which environment): the primary one, with
//! symbolic roots materialised against its own workspace roots and its own cwd; without a primary
//! environment, the turn-level profile and cwd. Non-primary environments are never merged in.

use std::path::PathBuf;

use airlock_permissions::materialize_project_roots_with_workspace_roots;
use airlock_protocol::PermissionProfile;

/// One environment of a step, as the orchestrator sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvironmentPermissions {
    /// Environment id (e.g. `local` or an exec-server name).
    pub id: String,
    /// Whether this is the step's primary environment.
    pub primary: bool,
    /// Its working directory (absolute, in the environment's own filesystem).
    pub cwd: PathBuf,
    /// Its workspace roots (symbolic `:workspace_roots` entries expand against these).
    pub workspace_roots: Vec<PathBuf>,
    /// Its profile, possibly symbolic.
    pub profile: PermissionProfile,
}

/// The turn-level fallback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnPermissions {
    /// The turn's profile, possibly symbolic.
    pub profile: PermissionProfile,
    /// The turn's cwd (absolute).
    pub cwd: PathBuf,
    /// The turn's workspace roots; empty means "just the cwd".
    pub workspace_roots: Vec<PathBuf>,
}

/// Where the described profile came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstructionsSource {
    /// The primary environment with this id.
    PrimaryEnvironment(String),
    /// No primary environment: the turn-level profile.
    Turn,
}

/// The profile (materialised) and cwd to describe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionsTarget {
    /// Materialised profile.
    pub profile: PermissionProfile,
    /// The cwd to resolve it against.
    pub cwd: PathBuf,
    /// Where it came from.
    pub source: InstructionsSource,
}

/// Picks the first environment marked primary, else falls back to `turn`.
#[must_use]
pub fn select_instructions_target(
    environments: &[EnvironmentPermissions],
    turn: &TurnPermissions,
) -> InstructionsTarget {
    if let Some(primary) = environments.iter().find(|environment| environment.primary) {
        return InstructionsTarget {
            profile: materialize_project_roots_with_workspace_roots(
                &primary.profile,
                &primary.workspace_roots,
            ),
            cwd: primary.cwd.clone(),
            source: InstructionsSource::PrimaryEnvironment(primary.id.clone()),
        };
    }
    let roots = if turn.workspace_roots.is_empty() {
        vec![turn.cwd.clone()]
    } else {
        turn.workspace_roots.clone()
    };
    InstructionsTarget {
        profile: materialize_project_roots_with_workspace_roots(&turn.profile, &roots),
        cwd: turn.cwd.clone(),
        source: InstructionsSource::Turn,
    }
}
