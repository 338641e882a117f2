//! Section 2, approval (spec 08 §Sections item 2): which [`ApprovalPart`]s apply to a combination
//! of approval policy, reviewer, the two features, catalog and profile.
//!
//! Order inside the section: the policy paragraph (or its catalog replacement), granular lists,
//! how rules see a command, how to ask for more, the `request_permissions` tool, the automatic
//! reviewer, and last the approved prefixes — last so that a later "Approved command prefix saved"
//! update reads as a continuation of that list.

use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::GranularApprovalConfig;

use crate::catalog::ApprovalMessages;
use crate::prefixes::ApprovedPrefixList;
use crate::projection::ProfileProjection;
use crate::sections::approval_parts::ApprovalCategory;
use crate::sections::approval_parts::ApprovalPart;
use crate::sections::approval_parts::EscalationReasons;

/// The two feature flags the approval text depends on (spec 08 §Sections item 2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApprovalFeatures {
    /// `exec_permission_approvals`: steer toward `with_additional_permissions` under `on-request`
    /// (and under `granular` when `sandbox_approval` is on).
    pub exec_permission_approvals: bool,
    /// `request_permissions_tool`: the `request_permissions` tool exists.
    pub request_permissions_tool: bool,
}

/// Everything the approval section depends on.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalInputs<'a> {
    /// The approval policy.
    pub policy: AskForApproval,
    /// Who answers requests.
    pub reviewer: ApprovalsReviewer,
    /// Feature flags.
    pub features: ApprovalFeatures,
    /// Catalog replacements of the policy paragraph.
    pub messages: Option<&'a ApprovalMessages>,
    /// The profile facts.
    pub projection: &'a ProfileProjection,
}

/// The approval section: an ordered list of typed parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalSection {
    /// The parts, in render order.
    pub parts: Vec<ApprovalPart>,
}

impl ApprovalSection {
    /// Chooses the parts for `inputs` and the exec policy's allow `prefixes`.
    #[must_use]
    pub fn new(inputs: &ApprovalInputs<'_>, prefixes: ApprovedPrefixList) -> Self {
        let projection = inputs.projection;
        let sandboxed = projection.filesystem_sandboxed();
        let reviewer = inputs.reviewer;
        let features = inputs.features;
        let reasons = EscalationReasons {
            filesystem: sandboxed,
            read_only: matches!(
                projection.sandbox_mode,
                airlock_protocol::SandboxMode::ReadOnly
            ),
            network: !projection.network_access.is_enabled(),
            deny_read_sticky: !projection.unsandboxed_execution_allowed,
        };
        let mut parts = Vec::new();
        let messages = inputs.messages;
        let mut auto_review_replaced = false;
        match inputs.policy {
            AskForApproval::Never => {
                push_intro(
                    &mut parts,
                    messages.and_then(|m| m.never.as_ref()),
                    ApprovalPart::NeverIntro { sandboxed },
                );
                if features.request_permissions_tool {
                    parts.push(ApprovalPart::RequestPermissionsTool {
                        usable: false,
                        reviewer,
                        sandboxed,
                    });
                }
            }
            AskForApproval::UnlessTrusted => {
                push_intro(
                    &mut parts,
                    messages.and_then(|m| m.untrusted.as_ref()),
                    ApprovalPart::UntrustedIntro {
                        reviewer,
                        sandboxed,
                        retry_unsandboxed: projection.unsandboxed_execution_allowed,
                    },
                );
                parts.push(ApprovalPart::CommandSegmentation { sandboxed });
                push_escalation(
                    &mut parts,
                    projection,
                    reviewer,
                    reasons,
                    false,
                    projection.unsandboxed_execution_allowed,
                );
                push_tool(&mut parts, features, true, reviewer, sandboxed);
            }
            AskForApproval::OnRequest => {
                let auto_text = match reviewer {
                    ApprovalsReviewer::AutoReview => {
                        messages.and_then(|m| m.on_request_auto_review.as_ref())
                    }
                    ApprovalsReviewer::User => None,
                };
                auto_review_replaced = auto_text.is_some();
                push_intro(
                    &mut parts,
                    auto_text.or_else(|| messages.and_then(|m| m.on_request.as_ref())),
                    ApprovalPart::OnRequestIntro {
                        reviewer,
                        sandboxed,
                    },
                );
                parts.push(ApprovalPart::CommandSegmentation { sandboxed });
                push_escalation(
                    &mut parts,
                    projection,
                    reviewer,
                    reasons,
                    features.exec_permission_approvals,
                    false,
                );
                push_tool(&mut parts, features, true, reviewer, sandboxed);
            }
            AskForApproval::Granular(config) => {
                push_intro(
                    &mut parts,
                    messages.and_then(|m| m.granular.as_ref()),
                    ApprovalPart::GranularIntro { sandboxed },
                );
                let (may_prompt, auto_rejected) = split_categories(&config, features);
                parts.push(ApprovalPart::GranularCategories {
                    reviewer,
                    may_prompt,
                    auto_rejected,
                });
                parts.push(ApprovalPart::CommandSegmentation { sandboxed });
                if config.sandbox_approval {
                    push_escalation(
                        &mut parts,
                        projection,
                        reviewer,
                        reasons,
                        features.exec_permission_approvals,
                        projection.unsandboxed_execution_allowed,
                    );
                } else if projection.anything_to_escalate() {
                    parts.push(ApprovalPart::EscalationSwitchedOff);
                } else {
                    parts.push(ApprovalPart::NothingToEscalate);
                }
                push_tool(
                    &mut parts,
                    features,
                    config.request_permissions,
                    reviewer,
                    sandboxed,
                );
            }
        }
        if reviewer == ApprovalsReviewer::AutoReview
            && !auto_review_replaced
            && can_ask_anyone(inputs.policy, features)
        {
            parts.push(ApprovalPart::AutoReview);
        }
        if !prefixes.is_empty() {
            parts.push(ApprovalPart::ApprovedPrefixes {
                list: prefixes,
                sandboxed,
                may_bypass_sandbox: projection.unsandboxed_execution_allowed,
            });
        }
        Self { parts }
    }

    /// The section text, or `None` when every part was emptied by the catalog.
    #[must_use]
    pub fn render(&self) -> Option<String> {
        self.render_parts(true)
    }

    /// The section as if the exec policy had no allow prefixes (what a `Current` snapshot hashes).
    #[must_use]
    pub fn render_without_prefixes(&self) -> Option<String> {
        self.render_parts(false)
    }

    /// The listed prefixes, if any.
    #[must_use]
    pub fn approved_prefixes(&self) -> Option<&ApprovedPrefixList> {
        self.parts.iter().find_map(|part| match part {
            ApprovalPart::ApprovedPrefixes { list, .. } => Some(list),
            _ => None,
        })
    }

    fn render_parts(&self, with_prefixes: bool) -> Option<String> {
        let rendered: Vec<String> = self
            .parts
            .iter()
            .filter(|part| with_prefixes || !matches!(part, ApprovalPart::ApprovedPrefixes { .. }))
            .map(ApprovalPart::render)
            .filter(|text| !text.is_empty())
            .collect();
        (!rendered.is_empty()).then(|| rendered.join("\n\n"))
    }
}

/// The policy paragraph, its catalog replacement, or nothing for an empty replacement.
fn push_intro(parts: &mut Vec<ApprovalPart>, catalog: Option<&String>, built_in: ApprovalPart) {
    match catalog {
        Some(text) if text.is_empty() => {}
        Some(text) => parts.push(ApprovalPart::CatalogText(text.clone())),
        None => parts.push(built_in),
    }
}

/// Escalation guidance when there is something to escalate, else the "nothing to escalate" note.
fn push_escalation(
    parts: &mut Vec<ApprovalPart>,
    projection: &ProfileProjection,
    reviewer: ApprovalsReviewer,
    reasons: EscalationReasons,
    additional_permissions: bool,
    retry_is_automatic: bool,
) {
    if !projection.anything_to_escalate() {
        parts.push(ApprovalPart::NothingToEscalate);
        return;
    }
    if additional_permissions {
        parts.push(ApprovalPart::AdditionalPermissionsGuide { reviewer, reasons });
    }
    parts.push(ApprovalPart::EscalationGuide {
        reviewer,
        reasons,
        after_additional_permissions: additional_permissions,
        retry_is_automatic,
    });
    // Only a person can accept a proposed rule; the automatic reviewer answers allow or deny.
    if reviewer == ApprovalsReviewer::User {
        parts.push(ApprovalPart::PrefixRuleGuide);
    }
}

fn push_tool(
    parts: &mut Vec<ApprovalPart>,
    features: ApprovalFeatures,
    usable: bool,
    reviewer: ApprovalsReviewer,
    sandboxed: bool,
) {
    if features.request_permissions_tool {
        parts.push(ApprovalPart::RequestPermissionsTool {
            usable,
            reviewer,
            sandboxed,
        });
    }
}

/// Enabled and disabled categories, in spec order; `request_permissions` only when the tool
/// exists (otherwise the category is meaningless to the model).
fn split_categories(
    config: &GranularApprovalConfig,
    features: ApprovalFeatures,
) -> (Vec<ApprovalCategory>, Vec<ApprovalCategory>) {
    let mut all = vec![
        (ApprovalCategory::SandboxApproval, config.sandbox_approval),
        (ApprovalCategory::Rules, config.rules),
        (ApprovalCategory::SkillApproval, config.skill_approval),
    ];
    if features.request_permissions_tool {
        all.push((
            ApprovalCategory::RequestPermissions,
            config.request_permissions,
        ));
    }
    all.push((ApprovalCategory::McpElicitations, config.mcp_elicitations));
    let (on, off): (Vec<_>, Vec<_>) = all.into_iter().partition(|(_, enabled)| *enabled);
    (
        on.into_iter().map(|(category, _)| category).collect(),
        off.into_iter().map(|(category, _)| category).collect(),
    )
}

/// Whether any request can reach a reviewer under `policy` (the auto-review note is pointless
/// otherwise — spec 08 leaves it out under `never`, and so does an all-off granular config).
fn can_ask_anyone(policy: AskForApproval, features: ApprovalFeatures) -> bool {
    match policy {
        AskForApproval::Never => false,
        AskForApproval::UnlessTrusted | AskForApproval::OnRequest => true,
        AskForApproval::Granular(config) => {
            let (may_prompt, _) = split_categories(&config, features);
            !may_prompt.is_empty()
        }
    }
}
