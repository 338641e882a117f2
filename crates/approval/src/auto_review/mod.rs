//! The automatic reviewer: an external command or an OpenAI-compatible endpoint that answers
//! allow / deny within a deadline (spec 06 step 3; spec 10 `[auto_review]`).
//!
//! Fail closed: a timeout is `timed_out`; every unusable answer (the program cannot start, exits
//! non-zero, prints garbage, the endpoint errors) is `denied` with a message that says why.
//! Each non-approval carries a [`ReviewFailureKind`] for the audit log (issue 18 item 8).

mod config;
mod endpoint;
mod request;
mod verdict;

use airlock_protocol::ReviewDecision;

pub use config::AutoReviewConfig;
pub use config::AutoReviewer;
pub use config::DEFAULT_AUTO_REVIEW_TIMEOUT;
pub(crate) use config::auto_review_from_toml;
pub use endpoint::AUTO_REVIEW_SYSTEM_PROMPT;
pub use endpoint::EndpointConfig;
pub use request::AutoReviewRequest;
pub use verdict::ReviewOutcome;
pub use verdict::ReviewerVerdict;
pub use verdict::parse_reviewer_verdict;

use crate::process::ProcessOutcome;
use crate::process::ProcessRequest;
use crate::process::run_process;

/// Why an automatic review did not approve (issue 18 item 8, field log BL-18): recorded in
/// the audit log, and the model reads each kind differently — only a risk denial is a
/// judgement of the action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewFailureKind {
    /// No answer within the deadline (`timed_out`).
    Timeout,
    /// The reviewer could not run or broke off: it did not start, exited non-zero or by a
    /// signal, or the endpoint failed.
    Crashed,
    /// The reviewer answered, but not with a usable verdict (not JSON, a missing or
    /// invalid `outcome`).
    UnusableAnswer,
    /// The reviewer judged the action too risky and denied it.
    RiskDenial,
}

impl ReviewFailureKind {
    /// The audit-log spelling: `timeout`, `crashed`, `unusable_answer`, `risk_denial`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::Crashed => "crashed",
            Self::UnusableAnswer => "unusable_answer",
            Self::RiskDenial => "risk_denial",
        }
    }
}

/// What one automatic review produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoReviewOutcome {
    /// `approved`, `denied { rejection }` or `timed_out`.
    pub decision: ReviewDecision,
    /// The reviewer's verdict when it gave a usable one.
    pub verdict: Option<ReviewerVerdict>,
    /// Why the answer was unusable, when it was (the decision is then a denial).
    pub failure: Option<String>,
    /// Why the action was not approved; `None` when it was.
    pub kind: Option<ReviewFailureKind>,
}

impl AutoReviewOutcome {
    fn from_verdict(verdict: ReviewerVerdict) -> Self {
        let decision = match verdict.outcome {
            ReviewOutcome::Allow => ReviewDecision::Approved,
            ReviewOutcome::Deny => ReviewDecision::denied_with_reason(deny_message(&verdict)),
        };
        let kind =
            (verdict.outcome == ReviewOutcome::Deny).then_some(ReviewFailureKind::RiskDenial);
        Self {
            decision,
            verdict: Some(verdict),
            failure: None,
            kind,
        }
    }

    /// A reviewer that could not run or broke off: denied, fail closed, and the model is
    /// told that nobody judged the action.
    fn crashed(reason: String) -> Self {
        Self::failed(
            ReviewFailureKind::Crashed,
            format!(
                "the automatic approval reviewer failed to run, so nobody reviewed the action and it is denied (fail closed): {reason}. This is not a verdict that the action is unsafe; ask the user for explicit approval if it is needed"
            ),
            reason,
        )
    }

    /// A reviewer whose answer was not a usable verdict: denied, fail closed.
    fn unusable(reason: String) -> Self {
        Self::failed(
            ReviewFailureKind::UnusableAnswer,
            format!(
                "the automatic approval reviewer gave an unusable answer, so the action was not reviewed and is denied (fail closed): {reason}. This is not a verdict that the action is unsafe; ask the user for explicit approval if it is needed"
            ),
            reason,
        )
    }

    fn failed(kind: ReviewFailureKind, message: String, reason: String) -> Self {
        Self {
            decision: ReviewDecision::denied_with_reason(message),
            verdict: None,
            failure: Some(reason),
            kind: Some(kind),
        }
    }

    const fn timed_out() -> Self {
        Self {
            decision: ReviewDecision::TimedOut,
            verdict: None,
            failure: None,
            kind: Some(ReviewFailureKind::Timeout),
        }
    }
}

/// The model-visible text of a reviewer's deny (reference §11: the reason, and no working
/// around it).
fn deny_message(verdict: &ReviewerVerdict) -> String {
    let risk = verdict
        .risk_level
        .as_deref()
        .map(|risk| format!(" (risk: {risk})"))
        .unwrap_or_default();
    let rationale = verdict.rationale.as_deref().unwrap_or("no rationale given");
    format!(
        "automatic approval review denied the action{risk}: {rationale}. Do not try to work around \
         this decision; propose a materially safer alternative or ask the user for explicit approval."
    )
}

/// Asks the configured reviewer about `request` (spec 06 step 3), within `config.timeout`.
pub async fn run_auto_review(
    config: &AutoReviewConfig,
    request: &AutoReviewRequest<'_>,
) -> AutoReviewOutcome {
    let request_json = match serde_json::to_string(request) {
        Ok(json) => json,
        Err(error) => {
            return AutoReviewOutcome::crashed(format!("cannot encode the request: {error}"));
        }
    };
    match &config.reviewer {
        AutoReviewer::Command { argv } => {
            review_by_command(argv, request_json, config.timeout).await
        }
        AutoReviewer::Endpoint(endpoint) => {
            match tokio::time::timeout(
                config.timeout,
                endpoint::ask_endpoint(endpoint, &request_json),
            )
            .await
            {
                Err(_) => AutoReviewOutcome::timed_out(),
                Ok(Err(reason)) => AutoReviewOutcome::crashed(reason),
                Ok(Ok(text)) => match parse_reviewer_verdict(&text) {
                    Ok(verdict) => AutoReviewOutcome::from_verdict(verdict),
                    Err(reason) => AutoReviewOutcome::unusable(format!("the endpoint's {reason}")),
                },
            }
        }
    }
}

async fn review_by_command(
    argv: &[String],
    request_json: String,
    timeout: std::time::Duration,
) -> AutoReviewOutcome {
    let Some((program, args)) = argv.split_first() else {
        return AutoReviewOutcome::crashed("`auto_review.command` is empty".to_owned());
    };
    let label = format!("reviewer `{program}`");
    let outcome = run_process(ProcessRequest {
        program: program.into(),
        args: args.to_vec(),
        stdin: request_json.into_bytes(),
        cwd: None,
        timeout,
    })
    .await;
    match outcome {
        ProcessOutcome::TimedOut => AutoReviewOutcome::timed_out(),
        ProcessOutcome::SpawnFailed(reason) => {
            AutoReviewOutcome::crashed(format!("{label}: {reason}"))
        }
        ProcessOutcome::Exited {
            code: Some(0),
            stdout,
            ..
        } => match parse_reviewer_verdict(&stdout) {
            Ok(verdict) => AutoReviewOutcome::from_verdict(verdict),
            Err(reason) => {
                AutoReviewOutcome::unusable(format!("{label} printed an unusable answer: {reason}"))
            }
        },
        ProcessOutcome::Exited { code, stderr, .. } => {
            let status = code.map_or_else(
                || "was terminated by a signal".to_owned(),
                |code| format!("exited with status {code}"),
            );
            let detail = stderr
                .lines()
                .map(str::trim)
                .find(|line| !line.is_empty())
                .map(|line| format!(": {}", verdict::snippet(line)))
                .unwrap_or_default();
            AutoReviewOutcome::crashed(format!("{label} {status}{detail}"))
        }
    }
}
