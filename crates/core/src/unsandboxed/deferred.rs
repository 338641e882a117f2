//! The review of a command that starts in the sandbox, computed only if it leaves it.
//!
//! A command whose requirement neither bypasses the sandbox nor asks to escalate runs
//! confined first; the review matters only if it then runs outside (an unsandboxed retry
//! after a denial, or a launch without a sandbox). Most such commands never do, and the
//! review reads the PATH, the repository's metadata and the judged writable roots (about a
//! quarter of a millisecond per call in `airlock serve`, issue 13). Computed at the first
//! question, it also sees what the confined attempt changed.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use airlock_protocol::FileSystemSandboxPolicy;
use airlock_shell::ParsedCommand;

use super::{ReviewContext, UnsandboxedReview, review_command};

/// What [`review_command`] needs, kept until the review is asked for.
#[derive(Debug, Clone)]
pub struct DeferredReview {
    parsed: ParsedCommand,
    cwd: PathBuf,
    env: BTreeMap<String, String>,
    fs_policy: FileSystemSandboxPolicy,
    pins_git: bool,
    review: OnceLock<UnsandboxedReview>,
}

impl DeferredReview {
    /// Keeps copies of the review's inputs (see [`ReviewContext`]).
    #[must_use]
    pub fn new(parsed: &ParsedCommand, ctx: &ReviewContext<'_>) -> Self {
        Self {
            parsed: parsed.clone(),
            cwd: ctx.cwd.to_path_buf(),
            env: ctx.env.clone(),
            fs_policy: ctx.fs_policy.clone(),
            pins_git: ctx.pins_git,
            review: OnceLock::new(),
        }
    }

    /// The review, computed on the first call: what [`super::apply_review`] gives for a
    /// command that does not leave the sandbox by its requirement (the refusal and the git
    /// pin are kept; notes about build tools are not, they concern a bypass).
    pub fn get(&self) -> &UnsandboxedReview {
        self.review.get_or_init(|| {
            let mut review = review_command(
                &self.parsed,
                &ReviewContext {
                    cwd: &self.cwd,
                    env: &self.env,
                    fs_policy: &self.fs_policy,
                    pins_git: self.pins_git,
                },
            );
            review.notes.clear();
            review
        })
    }

    /// The review, if it was asked for.
    #[must_use]
    pub fn computed(&self) -> Option<&UnsandboxedReview> {
        self.review.get()
    }
}
