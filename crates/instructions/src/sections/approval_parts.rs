//! The typed pieces of the approval section and their wording (spec 08 §Sections item 2).
//!
//! Each part states one fact about how approvals work for the current combination of policy,
//! reviewer, features and profile; `approval.rs` decides which parts apply. Wording is Airlock's
//! own. Facts follow spec 03 (fallback decisions, decisions 5, 12, 13, 19), spec 06 (reviewers,
//! granular categories) and spec 07 (retry after a denial, deny-read stickiness).

use airlock_protocol::ApprovalsReviewer;

use crate::prefixes::ApprovedPrefixList;

/// A granular approval category (spec 06 §Policies), in the order they are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ApprovalCategory {
    /// `sandbox_approval`: escalation requests and heuristic prompts (spec 03 decision 13).
    SandboxApproval,
    /// `rules`: exec-policy `prompt` rules.
    Rules,
    /// `skill_approval`: skill scripts.
    SkillApproval,
    /// `request_permissions`: the `request_permissions` tool (listed only when the tool exists).
    RequestPermissions,
    /// `mcp_elicitations`: questions from MCP servers.
    McpElicitations,
}

impl ApprovalCategory {
    /// The config field name.
    #[must_use]
    pub const fn field(self) -> &'static str {
        match self {
            Self::SandboxApproval => "sandbox_approval",
            Self::Rules => "rules",
            Self::SkillApproval => "skill_approval",
            Self::RequestPermissions => "request_permissions",
            Self::McpElicitations => "mcp_elicitations",
        }
    }

    const fn meaning(self) -> &'static str {
        match self {
            Self::SandboxApproval => {
                "running a command outside the sandbox or with additional permissions, and commands that look destructive"
            }
            Self::Rules => "commands matched by a `prompt` rule of the exec policy",
            Self::SkillApproval => "running skill scripts",
            Self::RequestPermissions => "grants asked for with the `request_permissions` tool",
            Self::McpElicitations => "questions from MCP servers",
        }
    }
}

/// Which reasons to leave the sandbox exist for the current profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EscalationReasons {
    /// The filesystem is sandboxed (writes outside the roots, GUI programs).
    pub filesystem: bool,
    /// No writable root at all (so *any* write needs approval).
    pub read_only: bool,
    /// The network is restricted.
    pub network: bool,
    /// Deny-read entries exist: an approved escalation keeps the filesystem sandbox.
    pub deny_read_sticky: bool,
}

/// One piece of the approval section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalPart {
    /// `never`: nobody is asked; escalation is refused.
    NeverIntro {
        /// Commands run inside a filesystem sandbox.
        sandboxed: bool,
    },
    /// `untrusted`: most commands ask first.
    UntrustedIntro {
        /// Who answers.
        reviewer: ApprovalsReviewer,
        /// Commands run inside a filesystem sandbox.
        sandboxed: bool,
        /// A sandbox denial can lead to a retry outside the sandbox (no deny-read entries).
        retry_unsandboxed: bool,
    },
    /// `on-request`: sandboxed without asking; ask when more is needed.
    OnRequestIntro {
        /// Who answers.
        reviewer: ApprovalsReviewer,
        /// Commands run inside a filesystem sandbox.
        sandboxed: bool,
    },
    /// `granular`: categories switched on or off.
    GranularIntro {
        /// Commands run inside a filesystem sandbox.
        sandboxed: bool,
    },
    /// A catalog replacement of the policy paragraph (non-empty).
    CatalogText(String),
    /// `granular`: which categories may ask and which are auto-rejected.
    GranularCategories {
        /// Who answers the enabled ones.
        reviewer: ApprovalsReviewer,
        /// Enabled categories.
        may_prompt: Vec<ApprovalCategory>,
        /// Disabled categories.
        auto_rejected: Vec<ApprovalCategory>,
    },
    /// How a shell command is split into parts for the rules.
    CommandSegmentation {
        /// Commands run inside a filesystem sandbox (mention sandbox bypass).
        sandboxed: bool,
    },
    /// Steering toward `with_additional_permissions` (feature `exec_permission_approvals`).
    AdditionalPermissionsGuide {
        /// Who answers.
        reviewer: ApprovalsReviewer,
        /// What can be asked for.
        reasons: EscalationReasons,
    },
    /// How and when to ask for `require_escalated`.
    EscalationGuide {
        /// Who answers.
        reviewer: ApprovalsReviewer,
        /// What there is to escalate.
        reasons: EscalationReasons,
        /// Whether `with_additional_permissions` was offered first.
        after_additional_permissions: bool,
        /// A sandbox denial already leads to a retry request without the sandbox (spec 07 step
        /// 6: `untrusted`, or `granular` with `sandbox_approval`, and no deny-read entries).
        retry_is_automatic: bool,
    },
    /// Guidance on `prefix_rule` proposals (only a person can save one).
    PrefixRuleGuide,
    /// No sandbox and network enabled: nothing to escalate.
    NothingToEscalate,
    /// `granular` with `sandbox_approval = false`: escalation requests are rejected.
    EscalationSwitchedOff,
    /// The `request_permissions` tool exists.
    RequestPermissionsTool {
        /// Whether it can grant anything under this policy.
        usable: bool,
        /// Who answers.
        reviewer: ApprovalsReviewer,
        /// Commands run inside a filesystem sandbox.
        sandboxed: bool,
    },
    /// The automatic reviewer answers.
    AutoReview,
    /// The exec policy's allow prefixes (non-empty).
    ApprovedPrefixes {
        /// The prefixes.
        list: ApprovedPrefixList,
        /// Commands run inside a filesystem sandbox.
        sandboxed: bool,
        /// Whether an allowed command may leave the sandbox (no deny-read entries).
        may_bypass_sandbox: bool,
    },
}

fn who(reviewer: ApprovalsReviewer) -> &'static str {
    match reviewer {
        ApprovalsReviewer::User => "the user",
        ApprovalsReviewer::AutoReview => "the automatic reviewer",
    }
}

impl ApprovalPart {
    /// The text of this part (no trailing newline).
    #[must_use]
    pub fn render(&self) -> String {
        match self {
            Self::NeverIntro { sandboxed } => never_intro(*sandboxed),
            Self::UntrustedIntro {
                reviewer,
                sandboxed,
                retry_unsandboxed,
            } => untrusted_intro(*reviewer, *sandboxed, *retry_unsandboxed),
            Self::OnRequestIntro {
                reviewer,
                sandboxed,
            } => on_request_intro(*reviewer, *sandboxed),
            Self::GranularIntro { sandboxed } => granular_intro(*sandboxed),
            Self::CatalogText(text) => text.trim_end().to_owned(),
            Self::GranularCategories {
                reviewer,
                may_prompt,
                auto_rejected,
            } => granular_categories(*reviewer, may_prompt, auto_rejected),
            Self::CommandSegmentation { sandboxed } => command_segmentation(*sandboxed),
            Self::AdditionalPermissionsGuide { reviewer, reasons } => {
                additional_permissions_guide(*reviewer, *reasons)
            }
            Self::EscalationGuide {
                reviewer,
                reasons,
                after_additional_permissions,
                retry_is_automatic,
            } => escalation_guide(
                *reviewer,
                *reasons,
                *after_additional_permissions,
                *retry_is_automatic,
            ),
            Self::PrefixRuleGuide => PREFIX_RULE_GUIDE.to_owned(),
            Self::NothingToEscalate => NOTHING_TO_ESCALATE.to_owned(),
            Self::EscalationSwitchedOff => ESCALATION_SWITCHED_OFF.to_owned(),
            Self::RequestPermissionsTool {
                usable,
                reviewer,
                sandboxed,
            } => request_permissions_tool(*usable, *reviewer, *sandboxed),
            Self::AutoReview => AUTO_REVIEW.to_owned(),
            Self::ApprovedPrefixes {
                list,
                sandboxed,
                may_bypass_sandbox,
            } => approved_prefixes(list, *sandboxed, *may_bypass_sandbox),
        }
    }
}

fn never_intro(sandboxed: bool) -> String {
    let mut text = String::from(
        "# Approvals\nApproval policy is `never`: nobody is ever asked to approve anything, so do \
         not ask for approval and do not wait for it.",
    );
    if sandboxed {
        text.push_str(
            " Every command runs within the permissions described here; when the sandbox blocks \
             one, it fails and the error comes back to you.",
        );
    } else {
        text.push_str(" Commands run without a filesystem sandbox.");
    }
    text.push_str(
        " Do not set `sandbox_permissions` to `require_escalated` or \
         `with_additional_permissions`: such requests are refused. Commands that would need \
         approval, such as those matched by a `prompt` rule",
    );
    if sandboxed {
        text.push_str(" and destructive commands like `rm -rf`");
    }
    text.push_str(
        ", are refused as well. Wherever this message says something requires approval, it \
         cannot be done under this policy: find a way within these permissions, or tell the \
         user what is blocked.",
    );
    text
}

fn untrusted_intro(reviewer: ApprovalsReviewer, sandboxed: bool, retry: bool) -> String {
    let who = who(reviewer);
    let mut text = format!(
        "# Approvals\nApproval policy is `untrusted`: most commands wait for approval from {who} \
         before they run. Only commands the exec policy allows, and a small set of known-safe \
         read-only commands such as `ls`, `cat` or `git status`, run without asking."
    );
    if sandboxed {
        text.push_str(
            " Approved commands still run inside the sandbox unless the approval was for running \
             outside it.",
        );
        if retry {
            text.push_str(&format!(
                " When the sandbox blocks a command, {who} may be asked whether to run it again \
                 without the sandbox."
            ));
        }
    }
    text
}

fn on_request_intro(reviewer: ApprovalsReviewer, sandboxed: bool) -> String {
    let who = who(reviewer);
    let (run, limit) = if sandboxed {
        ("inside the sandbox", "the sandbox allows")
    } else {
        (
            "with the permissions described here",
            "these permissions allow",
        )
    };
    format!(
        "# Approvals\nApproval policy is `on-request`: commands run {run} without asking anyone. \
         When a command needs more than {limit}, you can ask {who} for approval as described \
         below. Commands matched by a `prompt` rule, and commands that look destructive, wait \
         for {who} on their own."
    )
}

fn granular_intro(sandboxed: bool) -> String {
    let run = if sandboxed {
        "inside the sandbox"
    } else {
        "with the permissions described here"
    };
    format!(
        "# Approvals\nApproval policy is `granular`: commands run {run} without asking anyone, \
         and each kind of approval request is switched on or off on its own. A request of a kind \
         that is switched off is rejected at once without asking anyone; treat that as a final \
         refusal, not as something to retry."
    )
}

fn granular_categories(
    reviewer: ApprovalsReviewer,
    may_prompt: &[ApprovalCategory],
    auto_rejected: &[ApprovalCategory],
) -> String {
    let list = |categories: &[ApprovalCategory]| -> String {
        if categories.is_empty() {
            return "- (none)".to_owned();
        }
        categories
            .iter()
            .map(|category| format!("- `{}`: {}", category.field(), category.meaning()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "These kinds of request may ask {}:\n{}\n\nThese kinds of request are rejected without \
         asking anyone:\n{}",
        who(reviewer),
        list(may_prompt),
        list(auto_rejected)
    )
}

fn command_segmentation(sandboxed: bool) -> String {
    let mut text = String::from(
        "## How the exec policy sees a command\nA shell command is split at control operators \
         (`|`, `&&`, `||`, `;`, and subshells `( ... )` or `$( ... )`) into simple commands, and \
         each one is checked against the rules on its own: `git pull | tee out.txt` is checked as \
         `[\"git\", \"pull\"]` and `[\"tee\", \"out.txt\"]`. The strictest verdict among the parts \
         decides.",
    );
    if sandboxed {
        text.push_str(
            " A command runs outside the sandbox on a rule's authority only when every part \
             matches an allow rule. Scripts that use more than plain commands joined by these \
             operators (for example file redirections, command substitution, variable \
             assignments or wildcards) are not matched part by part, and a rule never lets them \
             leave the sandbox.",
        );
    } else {
        text.push_str(
            " Scripts that use more than plain commands joined by these operators (for example \
             file redirections, command substitution, variable assignments or wildcards) are not \
             matched part by part.",
        );
    }
    text
}

fn additional_permissions_guide(reviewer: ApprovalsReviewer, reasons: EscalationReasons) -> String {
    let mut kinds = Vec::new();
    if reasons.network {
        kinds.push("`{\"network\": {\"enabled\": true}}` for network access".to_owned());
    }
    if reasons.filesystem {
        kinds.push(
            "`{\"file_system\": {\"read\": [...], \"write\": [...]}}` with absolute paths for files"
                .to_owned(),
        );
    }
    format!(
        "## Asking for additional permissions\nPrefer staying inside the sandbox with a little \
         more permission over leaving it. Call the command with `sandbox_permissions` set to \
         `\"with_additional_permissions\"` and `additional_permissions` naming only what it \
         needs: {}. If {} approves, the command runs inside the sandbox with what was granted, \
         never more than you asked for. Exec-policy allow rules are applied first, so a command \
         they allow needs no request.",
        kinds.join("; "),
        who(reviewer)
    )
}

fn escalation_guide(
    reviewer: ApprovalsReviewer,
    reasons: EscalationReasons,
    after_additional_permissions: bool,
    retry_is_automatic: bool,
) -> String {
    let who = who(reviewer);
    let mut text = String::from("## Running a command outside the sandbox\n");
    if after_additional_permissions {
        text.push_str("Use this only when additional permissions cannot do the job. ");
    }
    text.push_str(&format!(
        "Call the command with `sandbox_permissions` set to `\"require_escalated\"` and a \
         `justification`: one short question {who} can answer with yes or no, such as \"Allow \
         `npm install` to download packages?\"."
    ));
    if reasons.deny_read_sticky {
        text.push_str(
            " Even when approved, the command keeps the filesystem sandbox because this profile \
             denies some reads (see below); only the other limits are lifted.",
        );
    }
    let mut blocked = Vec::new();
    if reasons.filesystem {
        blocked.push(if reasons.read_only {
            "a failed write"
        } else {
            "a failed write outside the writable roots"
        });
    }
    if reasons.network {
        blocked.push("a network error");
    }
    blocked.push("a permission error");
    if retry_is_automatic {
        // The orchestrator asks for the unsandboxed retry itself; a second request from the
        // model would only ask the same question again.
        text.push_str(&format!(
            "\n- If the sandbox blocks a command (for example {}), approval to run it again \
             without the sandbox is requested for you and you get the final result; do not \
             re-run it with `\"require_escalated\"` yourself.",
            join_or(&blocked)
        ));
    } else {
        text.push_str(&format!(
            "\n- If a command failed because the sandbox blocked it (for example {}), run it \
             again right away with `\"require_escalated\"`; do not ask in the chat first.",
            join_or(&blocked)
        ));
    }
    let mut when = Vec::new();
    if reasons.filesystem {
        when.push(if reasons.read_only {
            "writing any file"
        } else {
            "writing files outside the writable roots"
        });
    }
    if reasons.network {
        when.push("commands that need the network, such as installing packages or fetching");
    }
    if reasons.filesystem {
        when.push("GUI programs such as `open`, `xdg-open` or `osascript`");
    }
    text.push_str(&format!(
        "\n- Good reasons to ask: {}.\n- Ask sparingly, and never reach the same result through \
         another tool to avoid an approval.",
        when.join("; ")
    ));
    text
}

/// `a`, `a or b`, `a, b or c`.
fn join_or(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [only] => (*only).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

const PREFIX_RULE_GUIDE: &str = "## Suggesting a `prefix_rule`\nWith an escalation request you may \
add `prefix_rule`: a command prefix the user can choose to approve once for every later command \
that starts with it.\n- Make it a narrow category, usually shorter than the full command: \
`[\"cargo\", \"test\"]`, `[\"npm\", \"run\", \"dev\"]`, `[\"gh\", \"pr\", \"checks\"]`.\n- Never \
an interpreter or shell on its own (`[\"python3\"]`, `[\"python\", \"-\"]`, `[\"bash\", \"-c\"]`), \
never a wrapper such as `sudo`, `env`, `xargs` or `timeout`, never a destructive command such as \
`rm`, and never for a command with a heredoc or here-string.";

const NOTHING_TO_ESCALATE: &str = "There is no filesystem sandbox here and the network is enabled, \
so there is nothing to escalate: leave `sandbox_permissions` unset.";

const ESCALATION_SWITCHED_OFF: &str = "Escalation requests (`sandbox_permissions` set to \
`require_escalated` or `with_additional_permissions`) belong to `sandbox_approval`, which is \
switched off: do not make them, they are rejected. Wherever this message says something requires \
approval, it cannot be done here.";

fn request_permissions_tool(usable: bool, reviewer: ApprovalsReviewer, sandboxed: bool) -> String {
    if !usable {
        return "# The `request_permissions` tool\n`request_permissions` cannot grant anything under \
                this approval policy; do not call it."
            .to_owned();
    }
    let still_sandboxed = if sandboxed {
        ", and those commands still run inside the sandbox"
    } else {
        ""
    };
    format!(
        "# The `request_permissions` tool\nCall `request_permissions` to ask in advance for \
         network access or extra filesystem access that several upcoming commands will need. It \
         can request only `network` and `file_system` permissions; ask for no more than those \
         commands need. What {} grants applies to later commands of this turn, or of the whole \
         session when granted that way{still_sandboxed}.",
        who(reviewer)
    )
}

const AUTO_REVIEW: &str = "## Automatic review\n`approvals_reviewer` is `auto_review`: an \
automatic reviewer, not a person, answers approval requests and checks each one against policy. \
If it rejects a request, do not try to reach the same result another way (a different spelling, \
another tool, or splitting the command). Continue with a clearly safer alternative, or gather \
evidence that the action is authorized and low-risk before asking again. Finish whatever the \
rejection does not affect without asking, then report what is still blocked and why.";

fn approved_prefixes(list: &ApprovedPrefixList, sandboxed: bool, may_bypass: bool) -> String {
    let effect = match (sandboxed, may_bypass) {
        (true, true) => "run without approval and outside the sandbox",
        (true, false) => "run without approval, still inside the filesystem sandbox",
        (false, _) => "run without approval",
    };
    format!(
        "## Approved command prefixes\nThe exec policy allows these command prefixes. Commands \
         whose every part starts with one of them {effect}:\n{}",
        list.render_lines()
    )
}
