//! The session approval cache: `approved_for_session` remembered in memory (spec 06 step 6,
//! spec README invariant 9).

use std::collections::HashSet;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Mutex;

use airlock_protocol::AdditionalPermissionProfile;
use airlock_protocol::ReviewDecision;
use airlock_protocol::SandboxPermissions;
use serde::Serialize;

use crate::action::ApprovalAction;
use crate::action::CommandAction;
use crate::canonical::canonicalize_command_for_approval;

/// One cache key (spec 06 step 6). Everything that changes the risk of a command is part of it
/// (invariant 9); a patch has one key per file.
///
/// Keys are compared by their JSON text, e.g.
/// `{"kind":"command","tool":"shell","environment_id":null,"command":["ls"],"cwd":"/w",
/// "tty":null,"sandbox_permissions":"use_default","additional_permissions":null}` or
/// `{"kind":"patch_file","environment_id":null,"path":"/w/a.txt"}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalCacheKey {
    /// A `shell` or `exec_command` request.
    Command {
        /// `shell` or `exec_command`: the two tools never share approvals.
        tool: &'static str,
        /// The environment (`None` = local host).
        environment_id: Option<String>,
        /// [`canonicalize_command_for_approval`] of the argv.
        command: Vec<String>,
        /// The working directory.
        cwd: PathBuf,
        /// `Some(tty)` for `exec_command`, `None` for `shell`.
        tty: Option<bool>,
        /// The requested sandbox override.
        sandbox_permissions: SandboxPermissions,
        /// The requested additional permissions.
        additional_permissions: Option<AdditionalPermissionProfile>,
    },
    /// One file an `apply_patch` touches.
    PatchFile {
        /// The environment (`None` = local host).
        environment_id: Option<String>,
        /// The absolute path.
        path: PathBuf,
    },
}

impl ApprovalCacheKey {
    fn command(tool: &'static str, action: &CommandAction, tty: Option<bool>) -> Self {
        Self::Command {
            tool,
            environment_id: action.environment_id.clone(),
            command: canonicalize_command_for_approval(&action.command),
            cwd: action.cwd.clone(),
            tty,
            sandbox_permissions: action.sandbox_permissions,
            additional_permissions: action.additional_permissions.clone(),
        }
    }

    /// The JSON text the store compares; `None` if it cannot be serialised (then the key is
    /// never cached, which only ever asks more often).
    fn text(&self) -> Option<String> {
        serde_json::to_string(self).ok()
    }
}

impl ApprovalAction {
    /// The session-cache keys of this action (spec 06 step 6): one key for a command (the
    /// canonical command plus environment, cwd, tty, sandbox permissions and additional
    /// permissions), one key per file for a patch (empty when the patch names no file, which
    /// means "never cached").
    #[must_use]
    pub fn cache_keys(&self) -> Vec<ApprovalCacheKey> {
        match self {
            Self::Shell(action) => vec![ApprovalCacheKey::command("shell", action, None)],
            Self::ExecCommand(action) => vec![ApprovalCacheKey::command(
                "exec_command",
                &action.command,
                Some(action.tty),
            )],
            Self::ApplyPatch(action) => action
                .files
                .iter()
                .map(|path| ApprovalCacheKey::PatchFile {
                    environment_id: action.environment_id.clone(),
                    path: path.clone(),
                })
                .collect(),
        }
    }
}

/// The in-memory store of session approvals; one per session, never persisted (invariant 9).
///
/// Entries live under a *scope* string chosen by the caller (the session uses a fingerprint of
/// the effective permission profile, so an approval given under one profile does not carry over
/// to another). Thread-safe; a poisoned lock is recovered, since entries are plain strings.
#[derive(Debug, Default)]
pub struct ApprovalStore {
    approved: Mutex<HashSet<(String, String)>>,
}

/// The answer of [`with_cached_approval`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedApproval {
    /// The decision (from the cache or from `fetch`).
    pub decision: ReviewDecision,
    /// `true` when every key was already approved for the session and `fetch` was not called.
    pub from_cache: bool,
}

impl ApprovalStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether **every** key holds `approved_for_session` in `scope`; `false` for no keys.
    #[must_use]
    pub fn all_approved(&self, scope: &str, keys: &[ApprovalCacheKey]) -> bool {
        if keys.is_empty() {
            return false;
        }
        let approved = self.lock();
        keys.iter().all(|key| {
            key.text()
                .is_some_and(|text| approved.contains(&(scope.to_owned(), text)))
        })
    }

    /// Records `approved_for_session` for every key in `scope`.
    pub fn approve_for_session(&self, scope: &str, keys: &[ApprovalCacheKey]) {
        let mut approved = self.lock();
        for text in keys.iter().filter_map(ApprovalCacheKey::text) {
            approved.insert((scope.to_owned(), text));
        }
    }

    /// Number of stored (scope, key) entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// `true` when nothing is stored.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<(String, String)>> {
        self.approved
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Asks `fetch` unless the session already approved every key (spec 06 step 6).
///
/// - no keys → always `fetch`, never store;
/// - every key approved for the session in `scope` → `approved_for_session` without calling
///   `fetch` (`from_cache = true`);
/// - otherwise `fetch`; if it answers `approved_for_session`, store it under **every** key, so a
///   later patch touching any subset of the files is covered.
pub async fn with_cached_approval<F, Fut>(
    store: &ApprovalStore,
    scope: &str,
    keys: &[ApprovalCacheKey],
    fetch: F,
) -> CachedApproval
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = ReviewDecision>,
{
    if store.all_approved(scope, keys) {
        return CachedApproval {
            decision: ReviewDecision::ApprovedForSession,
            from_cache: true,
        };
    }
    let decision = fetch().await;
    if decision == ReviewDecision::ApprovedForSession {
        store.approve_for_session(scope, keys);
    }
    CachedApproval {
        decision,
        from_cache: false,
    }
}
