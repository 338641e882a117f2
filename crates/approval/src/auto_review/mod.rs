//! The automatic reviewer: an external command or an OpenAI-compatible endpoint that answers
//! allow / deny within a deadline (spec 06 step 3; spec 10 `[auto_review]`).
//!
//! Fail closed: a timeout is `timed_out`; every unusable answer (the program cannot start, exits
//! non-zero, prints garbage, the endpoint errors) is `denied` with a message that says why.

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

/// What one automatic review produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoReviewOutcome {
    /// `approved`, `denied { rejection }` or `timed_out`.
    pub decision: ReviewDecision,
    /// The reviewer's verdict when it gave a usable one.
    pub verdict: Option<ReviewerVerdict>,
    /// Why the answer was unusable, when it was (the decision is then a denial).
    pub failure: Option<String>,
}

impl AutoReviewOutcome {
    fn from_verdict(verdict: ReviewerVerdict) -> Self {
        let decision = match verdict.outcome {
            ReviewOutcome::Allow => ReviewDecision::Approved,
            ReviewOutcome::Deny => ReviewDecision::denied_with_reason(deny_message(&verdict)),
        };
        Self {
            decision,
            verdict: Some(verdict),
            failure: None,
        }
    }

    fn failed(reason: String) -> Self {
        Self {
            decision: ReviewDecision::denied_with_reason(format!(
                "automatic approval review failed, so the action is denied (fail closed): {reason}"
            )),
            verdict: None,
            failure: Some(reason),
        }
    }

    const fn timed_out() -> Self {
        Self {
            decision: ReviewDecision::TimedOut,
            verdict: None,
            failure: None,
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
            return AutoReviewOutcome::failed(format!("cannot encode the request: {error}"));
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
                Ok(Err(reason)) => AutoReviewOutcome::failed(reason),
                Ok(Ok(text)) => match parse_reviewer_verdict(&text) {
                    Ok(verdict) => AutoReviewOutcome::from_verdict(verdict),
                    Err(reason) => AutoReviewOutcome::failed(format!("the endpoint's {reason}")),
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
        return AutoReviewOutcome::failed("`auto_review.command` is empty".to_owned());
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
            AutoReviewOutcome::failed(format!("{label}: {reason}"))
        }
        ProcessOutcome::Exited {
            code: Some(0),
            stdout,
            ..
        } => match parse_reviewer_verdict(&stdout) {
            Ok(verdict) => AutoReviewOutcome::from_verdict(verdict),
            Err(reason) => {
                AutoReviewOutcome::failed(format!("{label} printed an unusable answer: {reason}"))
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
            AutoReviewOutcome::failed(format!("{label} {status}{detail}"))
        }
    }
}
