//! Which exec policy is in use, and what happens when it cannot be loaded (spec 02
//! §Policy files in use; Airlock fails closed where Codex falls back to an empty policy).
//!
//! Files: `$AIRLOCK_HOME/rules/*.rules` (sorted), then the trusted project's
//! `.airlock/rules/*.rules` (sorted); explicit rules files (`-r`) replace both. When any
//! file fails to load, the policy is **unavailable**: a clear warning is recorded and the
//! requirement computation makes every command need approval (never "no rules").

use std::path::{Path, PathBuf};

use airlock_execpolicy::{Policy, default_policy_files, load_policy_files};
use airlock_permissions::AirlockConfig;

use crate::requirement::{
    ExecApprovalRequest, RequirementError, RequirementOutcome,
    create_exec_approval_requirement_for_command, trusted_project,
};

/// Where the rules come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecPolicySources {
    /// `$AIRLOCK_HOME`; its `rules/*.rules` are loaded first.
    pub airlock_home: Option<PathBuf>,
    /// The project directory, only when the project is trusted; its
    /// `.airlock/rules/*.rules` are loaded after the home rules.
    pub trusted_project: Option<PathBuf>,
    /// Explicit rules files (`-r/--rules`, `session/start.rules`); when non-empty they
    /// replace the configured files.
    pub explicit_rules: Vec<PathBuf>,
}

impl ExecPolicySources {
    /// The sources for a configuration: `$AIRLOCK_HOME/rules/`, the rules of the trusted
    /// project containing `cwd` (if any), and `explicit_rules` (which replace both when
    /// non-empty).
    #[must_use]
    pub fn for_config(
        config: &AirlockConfig,
        airlock_home: &Path,
        cwd: &Path,
        explicit_rules: Vec<PathBuf>,
    ) -> Self {
        Self {
            airlock_home: Some(airlock_home.to_path_buf()),
            trusted_project: trusted_project(config, cwd),
            explicit_rules,
        }
    }
}

/// The loaded policy or why there is none.
#[derive(Debug, Clone)]
pub enum PolicyState {
    /// Every file loaded (possibly no file at all: an empty policy).
    Loaded(Policy),
    /// A file failed to load: every command needs approval (fail closed), except that the
    /// `forbidden` rules of the files that did load still refuse their commands.
    Unavailable {
        /// The error, with its causes, for people.
        reason: String,
        /// The `forbidden` rules of every file that loaded on its own (empty when none did).
        forbidding: Policy,
    },
}

/// The exec policy of a session: the files in use, their policy (or the failure) and the
/// warnings to show once.
#[derive(Debug, Clone)]
pub struct ExecPolicyManager {
    state: PolicyState,
    files: Vec<PathBuf>,
    warnings: Vec<String>,
}

impl ExecPolicyManager {
    /// Lists and loads the rules files of `sources` (spec 02 §Policy files in use). Never
    /// fails: a listing or load error gives [`PolicyState::Unavailable`] and a warning.
    #[must_use]
    pub fn load(sources: &ExecPolicySources) -> Self {
        let files = if sources.explicit_rules.is_empty() {
            match &sources.airlock_home {
                Some(home) => {
                    match default_policy_files(home, sources.trusted_project.as_deref()) {
                        Ok(files) => files,
                        Err(err) => {
                            return Self::unavailable(format!(
                                "cannot list rules files under {}: {err}",
                                home.display()
                            ));
                        }
                    }
                }
                None => Vec::new(),
            }
        } else {
            sources.explicit_rules.clone()
        };
        Self::load_files(files)
    }

    /// Loads exactly `files`, in order.
    #[must_use]
    pub fn load_files(files: Vec<PathBuf>) -> Self {
        match load_policy_files(&files) {
            Ok(policy) => Self {
                state: PolicyState::Loaded(policy),
                files,
                warnings: Vec::new(),
            },
            Err(err) => {
                let mut manager = Self::unavailable(error_chain(&err));
                manager.state = PolicyState::Unavailable {
                    reason: error_chain(&err),
                    forbidding: forbidden_rules_of_loadable_files(&files),
                };
                manager.files = files;
                manager
            }
        }
    }

    /// A manager around an already built policy.
    #[must_use]
    pub fn from_policy(policy: Policy) -> Self {
        Self {
            state: PolicyState::Loaded(policy),
            files: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// A manager whose policy is unavailable for `reason` (fail closed).
    #[must_use]
    pub fn unavailable(reason: String) -> Self {
        let warning = format!(
            "exec policy unavailable ({reason}); every command will need approval until it is fixed"
        );
        Self {
            state: PolicyState::Unavailable {
                reason,
                forbidding: Policy::empty(),
            },
            files: Vec::new(),
            warnings: vec![warning],
        }
    }

    /// The loaded policy, or `None` when unavailable.
    #[must_use]
    pub fn policy(&self) -> Option<&Policy> {
        match &self.state {
            PolicyState::Loaded(policy) => Some(policy),
            PolicyState::Unavailable { .. } => None,
        }
    }

    /// The state: loaded or unavailable.
    #[must_use]
    pub fn state(&self) -> &PolicyState {
        &self.state
    }

    /// The rules files in use, in load order.
    #[must_use]
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Warnings to show to the user (a failed load).
    #[must_use]
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Adds an accepted amendment to the live policy (after it was persisted). No effect
    /// while the policy is unavailable: a broken policy stays fail-closed.
    pub fn add_allow_prefix_rule(&mut self, prefix: &[String]) {
        if let PolicyState::Loaded(policy) = &mut self.state {
            policy.add_allow_prefix_rule(prefix);
        }
    }

    /// [`create_exec_approval_requirement_for_command`] with this manager's policy.
    ///
    /// # Errors
    /// As [`create_exec_approval_requirement_for_command`] (input errors only).
    pub fn create_exec_approval_requirement_for_command(
        &self,
        request: &ExecApprovalRequest<'_>,
    ) -> Result<RequirementOutcome, RequirementError> {
        match &self.state {
            PolicyState::Loaded(policy) => {
                create_exec_approval_requirement_for_command(Some(policy), request)
            }
            PolicyState::Unavailable { forbidding, .. } => {
                requirement_while_unavailable(forbidding, request)
            }
        }
    }
}

/// The `forbidden` rules of each of `files` that loads on its own (in order), skipping
/// the ones that fail: a broken file must not disarm the refusals of the others.
fn forbidden_rules_of_loadable_files(files: &[PathBuf]) -> Policy {
    let mut forbidding = Policy::empty();
    for file in files {
        if let Ok(policy) = load_policy_files(std::slice::from_ref(file)) {
            for rule in policy.forbidden_only().rules() {
                let name = &rule.pattern.first;
                if let Some(paths) = policy.host_executable(name) {
                    forbidding.set_host_executable(name.clone(), paths.to_vec());
                }
                forbidding.push_rule(rule.clone());
            }
        }
    }
    forbidding
}

/// The requirement while the policy is unavailable (spec 02: every command needs
/// approval), made stricter: a command that a `forbidden` rule of a file that did load
/// refuses stays refused, and its reason says that another file failed to load.
///
/// # Errors
/// As [`create_exec_approval_requirement_for_command`] (input errors only).
pub fn requirement_while_unavailable(
    forbidding: &Policy,
    request: &ExecApprovalRequest<'_>,
) -> Result<RequirementOutcome, RequirementError> {
    let unavailable = create_exec_approval_requirement_for_command(None, request)?;
    if forbidding.rules().is_empty() {
        return Ok(unavailable);
    }
    let mut strict = create_exec_approval_requirement_for_command(Some(forbidding), request)?;
    let airlock_protocol::ExecApprovalRequirement::Forbidden { reason } = &mut strict.requirement
    else {
        return Ok(unavailable);
    };
    if matches!(
        unavailable.requirement,
        airlock_protocol::ExecApprovalRequirement::Forbidden { .. }
    ) {
        return Ok(unavailable);
    }
    let rule = strict
        .segments
        .iter()
        .flat_map(|verdict| verdict.matches.iter())
        .chain(strict.deny_view_matches.iter().map(|inner| &inner.rule))
        .find_map(|found| match found {
            airlock_execpolicy::RuleMatch::PrefixRuleMatch {
                matched_prefix,
                decision: airlock_execpolicy::Decision::Forbidden,
                ..
            } => Some(format!("{matched_prefix:?}")),
            _ => None,
        })
        .unwrap_or_else(|| "?".to_owned());
    reason.push_str(&format!(
        " (forbidden by rule {rule} of a rules file that loaded; another rules file failed to \
         load, so every other command needs approval until it is fixed)"
    ));
    strict.policy_unavailable = unavailable.policy_unavailable;
    Ok(strict)
}

/// `error: cause: cause ...` on one line; rules-file example errors in their form for
/// people ([`airlock_execpolicy::ParseError::for_people`]).
fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let show = |error: &(dyn std::error::Error + 'static)| {
        error
            .downcast_ref::<airlock_execpolicy::ParseError>()
            .map_or_else(
                || error.to_string(),
                airlock_execpolicy::ParseError::for_people,
            )
    };
    let mut text = show(err);
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&show(cause));
        source = cause.source();
    }
    text
}
