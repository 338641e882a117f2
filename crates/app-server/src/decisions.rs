//! v2 decisions ↔ core [`ReviewDecision`]s (reference `codex/app-server.md` §B4). Anything
//! unusable fails closed: `decline` (a denial), never an approval.

use airlock_app_server_protocol::CommandExecutionApprovalDecision as V2;
use airlock_app_server_protocol::CommandExecutionRequestApprovalResponse;
use airlock_app_server_protocol::FileChangeApprovalDecision;
use airlock_app_server_protocol::FileChangeRequestApprovalResponse;
use airlock_jsonrpc::ClientReply;
use airlock_protocol::ExecPolicyAmendment;
use airlock_protocol::ReviewDecision;

/// The v2 spelling of an offered core decision; `None` for decisions v2 cannot express
/// (`timed_out`, MCP amendments), which are then not offered.
pub fn offered_v2(decision: &ReviewDecision) -> Option<V2> {
    Some(match decision {
        ReviewDecision::Approved => V2::Accept,
        ReviewDecision::ApprovedForSession => V2::AcceptForSession,
        ReviewDecision::ApprovedExecpolicyAmendment {
            proposed_execpolicy_amendment,
        } => V2::AcceptWithExecpolicyAmendment {
            execpolicy_amendment: proposed_execpolicy_amendment.command().to_vec(),
        },
        ReviewDecision::NetworkPolicyAmendment {
            network_policy_amendment,
        } => V2::ApplyNetworkPolicyAmendment {
            network_policy_amendment: network_policy_amendment.clone(),
        },
        ReviewDecision::Denied { .. } => V2::Decline,
        ReviewDecision::Abort => V2::Cancel,
        ReviewDecision::TimedOut | ReviewDecision::ApprovedMcpPolicyAmendment => return None,
    })
}

fn v2_to_core(decision: V2) -> ReviewDecision {
    match decision {
        V2::Accept => ReviewDecision::Approved,
        V2::AcceptForSession => ReviewDecision::ApprovedForSession,
        V2::AcceptWithExecpolicyAmendment {
            execpolicy_amendment,
        } => ReviewDecision::ApprovedExecpolicyAmendment {
            proposed_execpolicy_amendment: ExecPolicyAmendment::new(execpolicy_amendment),
        },
        V2::ApplyNetworkPolicyAmendment {
            network_policy_amendment,
        } => ReviewDecision::NetworkPolicyAmendment {
            network_policy_amendment,
        },
        V2::Decline => ReviewDecision::denied_with_reason("rejected by user"),
        V2::Cancel => ReviewDecision::Abort,
    }
}

/// The core decision for the client's answer to a command approval. A JSON-RPC error or a
/// result that does not parse is a denial naming why (the approval layer then also refuses
/// any approving decision that was not offered).
pub fn command_answer(reply: ClientReply) -> (ReviewDecision, Option<String>) {
    match reply {
        ClientReply::Result(value) => {
            let checked = strict_shape(
                &value,
                &[
                    "acceptWithExecpolicyAmendment",
                    "applyNetworkPolicyAmendment",
                ],
            )
            .and_then(|()| {
                serde_json::from_value::<CommandExecutionRequestApprovalResponse>(value)
                    .map_err(|error| error.to_string())
            });
            match checked {
                Ok(response) => (v2_to_core(response.decision), None),
                Err(error) => unusable(format!(
                    "the client's approval answer is unusable ({error}); treated as decline"
                )),
            }
        }
        ClientReply::Error(error) => unusable(format!(
            "the client answered the approval with error {} ({}); treated as decline",
            error.code, error.message
        )),
    }
}

/// As [`command_answer`] for a file-change approval.
pub fn patch_answer(reply: ClientReply) -> (ReviewDecision, Option<String>) {
    match reply {
        ClientReply::Result(value) => {
            let checked = strict_shape(&value, &[]).and_then(|()| {
                serde_json::from_value::<FileChangeRequestApprovalResponse>(value)
                    .map_err(|error| error.to_string())
            });
            match checked {
                Ok(response) => (
                    match response.decision {
                        FileChangeApprovalDecision::Accept => ReviewDecision::Approved,
                        FileChangeApprovalDecision::AcceptForSession => {
                            ReviewDecision::ApprovedForSession
                        }
                        FileChangeApprovalDecision::Decline => {
                            ReviewDecision::denied_with_reason("rejected by user")
                        }
                        FileChangeApprovalDecision::Cancel => ReviewDecision::Abort,
                    },
                    None,
                ),
                Err(error) => unusable(format!(
                    "the client's patch approval answer is unusable ({error}); treated as decline"
                )),
            }
        }
        ClientReply::Error(error) => unusable(format!(
            "the client answered the patch approval with error {} ({}); treated as decline",
            error.code, error.message
        )),
    }
}

/// The answer's shape exactly as the v2 schema writes it, before serde reads it: an object
/// whose only member is `decision`, which is a string (a unit decision) or an object with
/// one member named in `struct_variants` whose value is an object. serde alone would also
/// take an array for the struct, `{"accept": null}` for a unit decision and ignore unknown
/// members: an answer outside the schema must never approve (red-team F9).
fn strict_shape(value: &serde_json::Value, struct_variants: &[&str]) -> Result<(), String> {
    use serde_json::Value;
    let Value::Object(object) = value else {
        return Err("the result must be an object with a `decision` member".to_owned());
    };
    if let Some(other) = object.keys().find(|key| key.as_str() != "decision") {
        return Err(format!(
            "unknown member `{other}` (only `decision` is allowed)"
        ));
    }
    match object.get("decision") {
        None => Err("missing member `decision`".to_owned()),
        Some(Value::String(_)) => Ok(()),
        Some(Value::Object(inner)) => match inner.iter().next() {
            Some((name, Value::Object(_)))
                if inner.len() == 1 && struct_variants.contains(&name.as_str()) =>
            {
                Ok(())
            }
            _ => Err(format!(
                "`decision` as an object must be one of {struct_variants:?} holding an object"
            )),
        },
        Some(other) => Err(format!("`decision` must be a string, got {other}")),
    }
}

fn unusable(warning: String) -> (ReviewDecision, Option<String>) {
    (
        ReviewDecision::denied_with_reason(warning.clone()),
        Some(warning),
    )
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn maps_each_v2_answer() {
        let answer = |v| command_answer(ClientReply::Result(json!({"decision": v}))).0;
        assert_eq!(answer(json!("accept")), ReviewDecision::Approved);
        assert_eq!(
            answer(json!("acceptForSession")),
            ReviewDecision::ApprovedForSession
        );
        assert_eq!(answer(json!("cancel")), ReviewDecision::Abort);
        assert!(matches!(
            answer(json!("decline")),
            ReviewDecision::Denied { .. }
        ));
        assert_eq!(
            answer(
                json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["git", "pull"]}})
            ),
            ReviewDecision::ApprovedExecpolicyAmendment {
                proposed_execpolicy_amendment: ExecPolicyAmendment::new(vec![
                    "git".into(),
                    "pull".into()
                ])
            }
        );
    }

    #[test]
    fn unusable_answers_are_denials() {
        for garbage in [
            json!({"decision": "approved"}),
            json!("accept"),
            json!({}),
            json!({"decision": 1}),
            json!(["accept"]),
            json!({"decision": {"accept": null}}),
            json!({"decision": "acceptForSession", "x": 1}),
            json!({"decision": {"acceptWithExecpolicyAmendment": ["git"]}}),
        ] {
            let (decision, warning) = command_answer(ClientReply::Result(garbage));
            assert!(matches!(decision, ReviewDecision::Denied { .. }));
            assert!(warning.is_some());
        }
        let error = airlock_jsonrpc::ErrorObject::new(-1, "no");
        assert!(matches!(
            command_answer(ClientReply::Error(error.clone())).0,
            ReviewDecision::Denied { .. }
        ));
        assert!(matches!(
            patch_answer(ClientReply::Error(error)).0,
            ReviewDecision::Denied { .. }
        ));
        assert!(matches!(
            patch_answer(ClientReply::Result(
                json!({"decision": "acceptWithExecpolicyAmendment"})
            ))
            .0,
            ReviewDecision::Denied { .. }
        ));
        for garbage in [
            json!(["accept"]),
            json!({"decision": {"accept": null}}),
            json!({"decision": "accept", "extra": true}),
        ] {
            assert!(matches!(
                patch_answer(ClientReply::Result(garbage)).0,
                ReviewDecision::Denied { .. }
            ));
        }
    }
}
