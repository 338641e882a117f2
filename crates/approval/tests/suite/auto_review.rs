//! The automatic reviewer: external command and HTTP endpoint (spec 06 step 3, spec 10).

use airlock_approval::AUTO_REVIEW_NOT_CONFIGURED;
use airlock_approval::AUTO_REVIEW_TIMED_OUT;
use airlock_approval::ApprovalContext;
use airlock_approval::ApprovalSession;
use airlock_approval::DecisionSource;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::ReviewDecision;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;

use crate::support::*;

fn auto_settings() -> airlock_approval::TurnSettings {
    let mut turn = settings(AskForApproval::OnRequest);
    turn.approvals_reviewer = ApprovalsReviewer::AutoReview;
    turn
}

async fn review_with(
    body: &str,
    timeout_secs: u64,
) -> (airlock_approval::ApprovalResolution, Harness) {
    let dir = tempdir();
    let reviewer = script(dir.path(), "reviewer.sh", body);
    let h = Harness::start(
        dir,
        config(&auto_review_toml(&reviewer, timeout_secs)),
        auto_settings(),
        never_answer(),
    );
    let resolution = h
        .request(
            &shell_action("c1", &["git", "push"], h.dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    (resolution, h)
}

#[tokio::test]
async fn allow_is_approved_and_the_request_json_is_complete() {
    let dir = tempdir();
    let dump = dir.path().join("request.json");
    let reviewer = script(
        dir.path(),
        "reviewer.sh",
        &format!(
            "cat > '{}'\necho 'Sure: {{\"outcome\":\"allow\",\"rationale\":\"read-only\"}}'",
            dump.display()
        ),
    );
    let h = Harness::start(
        dir,
        config(&auto_review_toml(&reviewer, 10)),
        auto_settings(),
        never_answer(),
    );
    let mut ctx = ApprovalContext::new("c1");
    ctx.approval_reason = Some("needs the network".to_owned());
    ctx.retry_reason = Some("command failed; retry without sandbox?".to_owned());
    ctx.permission_profile = Some(airlock_protocol::PermissionProfile::Disabled);
    let resolution = h
        .request(&shell_action("c1", &["git", "fetch"], h.dir.path()), &ctx)
        .await;
    assert_eq!(resolution.decision, ReviewDecision::Approved);
    assert_eq!(resolution.source, DecisionSource::AutoReview);
    assert_eq!(h.asked(), 0, "the user is not asked");
    let request: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).unwrap();
    assert_eq!(request["action"]["tool"], "shell");
    assert_eq!(
        request["action"]["command"],
        serde_json::json!(["git", "fetch"])
    );
    assert_eq!(request["approval_reason"], "needs the network");
    assert_eq!(
        request["retry_reason"],
        "command failed; retry without sandbox?"
    );
    assert_eq!(
        request["permission_profile"],
        serde_json::json!({"type": "disabled"})
    );
    assert_eq!(request["approval_policy"], "on-request");
    assert_eq!(request["call_id"], "c1");
}

#[tokio::test]
async fn deny_carries_the_rationale() {
    let (resolution, _h) = review_with(
        "cat > /dev/null\necho '{\"outcome\":\"deny\",\"risk_level\":\"high\",\"rationale\":\"force-push to main\"}'",
        10,
    )
    .await;
    assert_eq!(resolution.source, DecisionSource::AutoReview);
    let message = resolution.into_tool_result().unwrap_err().message;
    assert!(
        message.contains("force-push to main") && message.contains("risk: high"),
        "{message}"
    );
    assert!(message.contains("Do not try to work around"), "{message}");
}

#[tokio::test]
async fn slow_reviewer_times_out() {
    let started = std::time::Instant::now();
    let (resolution, h) = review_with(
        "cat > /dev/null\nsleep 30\necho '{\"outcome\":\"allow\"}'",
        1,
    )
    .await;
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(resolution.decision, ReviewDecision::TimedOut);
    let error = resolution.into_tool_result().unwrap_err();
    assert_eq!(error.message, AUTO_REVIEW_TIMED_OUT);
    assert!(!error.interrupts_turn);
    let warnings = h.flushed_warnings().await;
    assert!(
        warnings.iter().any(|w| w.contains("timed out after 1 s")),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn garbage_and_failures_are_denied_with_a_clear_message() {
    let cases = [
        (
            "cat > /dev/null\necho 'I think it is fine'",
            "no JSON object",
        ),
        (
            "cat > /dev/null\necho '{\"outcome\": \"yes\"}'",
            "expected \"allow\" or \"deny\"",
        ),
        (
            "cat > /dev/null\necho '{\"verdict\": \"allow\"}'",
            "no string `outcome`",
        ),
        ("cat > /dev/null\necho '{outcome: allow}'", "invalid JSON"),
        (
            "cat > /dev/null\necho '{\"outcome\":\"allow\"}'\necho 'crashed' >&2\nexit 3",
            "exited with status 3: crashed",
        ),
    ];
    for (body, needle) in cases {
        let (resolution, _h) = review_with(body, 10).await;
        assert!(
            matches!(resolution.decision, ReviewDecision::Denied { .. }),
            "{body}: {resolution:?}"
        );
        let message = resolution.into_tool_result().unwrap_err().message;
        assert!(
            message.contains("fail closed") && message.contains(needle),
            "{body}: {message}"
        );
    }
}

#[tokio::test]
async fn reviewer_that_cannot_start_is_denied() {
    let dir = tempdir();
    let toml = "[auto_review]\ncommand = [\"/nonexistent/airlock-reviewer\"]\n";
    let h = Harness::start(dir, config(toml), auto_settings(), never_answer());
    let resolution = h
        .request(
            &shell_action("c1", &["ls"], h.dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    let message = resolution.into_tool_result().unwrap_err().message;
    assert!(
        message.contains("/nonexistent/airlock-reviewer"),
        "{message}"
    );
}

#[tokio::test]
async fn reviewer_routed_but_not_configured_is_denied() {
    let dir = tempdir();
    let session = ApprovalSession::new("s", config(""), None);
    let turn = session.start_turn(auto_settings());
    let resolution = session
        .request_approval(
            &turn,
            &shell_action("c1", &["ls"], dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    assert_eq!(
        resolution.into_tool_result().unwrap_err().message,
        AUTO_REVIEW_NOT_CONFIGURED
    );
}

#[tokio::test]
async fn strict_auto_review_overrides_the_user_reviewer_and_is_never_cached() {
    let dir = tempdir();
    let count = dir.path().join("count");
    let reviewer = script(
        dir.path(),
        "reviewer.sh",
        &format!(
            "cat > /dev/null\necho x >> '{}'\necho '{{\"outcome\":\"allow\"}}'",
            count.display()
        ),
    );
    let h = Harness::start(
        dir,
        config(&auto_review_toml(&reviewer, 10)),
        settings(AskForApproval::OnRequest),
        always(ReviewDecision::ApprovedForSession),
    );
    let mut ctx = ApprovalContext::new("c1");
    ctx.strict_auto_review = true;
    let action = shell_action("c1", &["ls"], h.dir.path());
    for _ in 0..2 {
        let resolution = h.request(&action, &ctx).await;
        assert_eq!(resolution.source, DecisionSource::AutoReview);
    }
    assert_eq!(
        std::fs::read_to_string(&count).unwrap().lines().count(),
        2,
        "every strict review is fresh"
    );
    assert_eq!(h.asked(), 0);
}

/// A one-shot fake chat-completions server on localhost; returns its URL and (once answered) the
/// request text. It answers with `Content-Length` and then keeps the connection open, as a
/// keep-alive server may: the client must stop reading at the end of the body.
async fn fake_endpoint(
    status: &'static str,
    content: &'static str,
) -> (String, tokio::sync::oneshot::Receiver<String>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (request_tx, request_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buffer = [0u8; 4096];
        // Read the head, then the body by Content-Length.
        loop {
            let n = socket.read(&mut buffer).await.unwrap();
            request.extend_from_slice(&buffer[..n]);
            let text = String::from_utf8_lossy(&request).to_string();
            if let Some(split) = text.find("\r\n\r\n") {
                let length: usize = text
                    .lines()
                    .find_map(|line| {
                        line.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .unwrap();
                if request.len() >= split + 4 + length {
                    break;
                }
            }
            if n == 0 {
                break;
            }
        }
        let body = serde_json::json!({"choices": [{"message": {"role": "assistant", "content": content}}]}).to_string();
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        socket.write_all(response.as_bytes()).await.unwrap();
        request_tx
            .send(String::from_utf8(request).unwrap())
            .unwrap();
        std::future::pending::<()>().await;
        drop(socket);
    });
    (url, request_rx)
}

#[tokio::test]
async fn endpoint_reviewer_allows_and_denies() {
    for (content, approved) in [
        (
            "```json\n{\"outcome\":\"allow\",\"rationale\":\"harmless\"}\n```",
            true,
        ),
        (
            "{\"outcome\":\"deny\",\"rationale\":\"exfiltration\"}",
            false,
        ),
    ] {
        let (url, server) = fake_endpoint("200 OK", content).await;
        let dir = tempdir();
        let toml = format!(
            "[auto_review]\nendpoint = {url:?}\nmodel = \"reviewer-1\"\ntimeout_secs = 10\n"
        );
        let h = Harness::start(dir, config(&toml), auto_settings(), never_answer());
        let resolution = h
            .request(
                &shell_action("c1", &["ls"], h.dir.path()),
                &ApprovalContext::new("c1"),
            )
            .await;
        assert_eq!(resolution.source, DecisionSource::AutoReview);
        if approved {
            assert_eq!(resolution.decision, ReviewDecision::Approved);
        } else {
            assert!(
                resolution
                    .into_tool_result()
                    .unwrap_err()
                    .message
                    .contains("exfiltration")
            );
        }
        let request = server.await.unwrap();
        assert!(
            request.starts_with("POST /v1/chat/completions HTTP/1.1\r\n"),
            "{request}"
        );
        let body: serde_json::Value =
            serde_json::from_str(&request[request.find("\r\n\r\n").unwrap() + 4..]).unwrap();
        assert_eq!(body["model"], "reviewer-1");
        let user: serde_json::Value =
            serde_json::from_str(body["messages"][1]["content"].as_str().unwrap()).unwrap();
        assert_eq!(user["action"]["command"], serde_json::json!(["ls"]));
    }
}

#[tokio::test]
async fn endpoint_errors_are_denied() {
    let (url, server) = fake_endpoint("500 Internal Server Error", "boom").await;
    let dir = tempdir();
    let toml = format!("[auto_review]\nendpoint = {url:?}\nmodel = \"m\"\n");
    let h = Harness::start(dir, config(&toml), auto_settings(), never_answer());
    let resolution = h
        .request(
            &shell_action("c1", &["ls"], h.dir.path()),
            &ApprovalContext::new("c1"),
        )
        .await;
    let message = resolution.into_tool_result().unwrap_err().message;
    assert!(
        message.contains("500") && message.contains("fail closed"),
        "{message}"
    );
    server.await.unwrap();
}

#[test]
fn https_endpoints_are_refused_at_load_time() {
    let table: toml::Table =
        "[auto_review]\nendpoint = \"https://api.example.com/v1\"\nmodel = \"m\"\n"
            .parse()
            .unwrap();
    let error = airlock_approval::ApprovalConfig::from_config_table(&table, "config.toml", None)
        .unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("config.toml")
            && text.contains("auto_review.endpoint")
            && text.contains("not supported in this build"),
        "{text}"
    );
}

// ------------------------------ issue 18 item 8: failure kinds (field log BL-18)

/// Every way the reviewer can fail to approve carries its kind, and the model reads a
/// failure differently from a risk denial: only the latter judges the action.
#[tokio::test]
async fn reviewer_failures_carry_a_kind_and_read_differently() {
    use airlock_approval::ReviewFailureKind;
    let cases = [
        (
            "cat > /dev/null\necho '{\"outcome\":\"deny\",\"risk_level\":\"high\",\"rationale\":\"wipes the disk\"}'",
            10,
            ReviewFailureKind::RiskDenial,
        ),
        ("cat > /dev/null\nsleep 30", 1, ReviewFailureKind::Timeout),
        (
            "cat > /dev/null\necho 'oops' >&2\nexit 3",
            10,
            ReviewFailureKind::Crashed,
        ),
        (
            "cat > /dev/null\nkill -9 $$",
            10,
            ReviewFailureKind::Crashed,
        ),
        (
            "cat > /dev/null\necho 'sure, go ahead!'",
            10,
            ReviewFailureKind::UnusableAnswer,
        ),
        (
            "cat > /dev/null\necho '{\"outcome\":\"maybe\"}'",
            10,
            ReviewFailureKind::UnusableAnswer,
        ),
    ];
    for (body, timeout, kind) in cases {
        let (resolution, _h) = review_with(body, timeout).await;
        assert_eq!(resolution.review_failure, Some(kind), "{body}");
        let audit = serde_json::to_value(&resolution).unwrap();
        assert_eq!(audit["review_failure"], kind.as_str(), "{body}");
        let message = resolution.into_tool_result().unwrap_err().message;
        match kind {
            ReviewFailureKind::RiskDenial => {
                assert!(
                    message.contains("denied the action (risk: high)"),
                    "{message}"
                );
                assert!(!message.contains("not a verdict"), "{message}");
            }
            _ => assert!(
                message.contains("not a verdict that the action is unsafe"),
                "{kind:?}: {message}"
            ),
        }
    }
    let (approved, _h) = review_with("cat > /dev/null\necho '{\"outcome\":\"allow\"}'", 10).await;
    assert_eq!(approved.review_failure, None);
    assert!(
        serde_json::to_value(&approved)
            .unwrap()
            .get("review_failure")
            .is_none()
    );
}
