//! `PermissionsInstructions`: the developer-role `<permissions instructions>` block built from a
//! profile (spec 08 §Projection of a profile, §Sections).

use std::collections::BTreeSet;
use std::path::Path;
use std::path::PathBuf;

use airlock_execpolicy::Policy;
use airlock_permissions::ResolveContext;
use airlock_permissions::normalize_lexically;
use airlock_protocol::ApprovalsReviewer;
use airlock_protocol::AskForApproval;
use airlock_protocol::PermissionProfile;

use crate::catalog::InstructionsCatalog;
use crate::fragment::FragmentRole;
use crate::fragment::wrap_in_markers;
use crate::hash::InstructionsHash;
use crate::prefixes::ApprovedPrefixList;
use crate::projection::ProfileProjection;
use crate::sections::approval::ApprovalFeatures;
use crate::sections::approval::ApprovalInputs;
use crate::sections::approval::ApprovalSection;
use crate::sections::denied_reads::DeniedReadsSection;
use crate::sections::sandbox::SandboxSection;
use crate::sections::writable_roots::WritableRootsSection;

/// Who answers approvals and which catalog texts replace the built-in ones.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApprovalPromptContext<'a> {
    /// `approvals_reviewer` (spec 06).
    pub reviewer: ApprovalsReviewer,
    /// Model-catalog overrides, if the model has any.
    pub catalog: Option<&'a InstructionsCatalog>,
}

impl<'a> ApprovalPromptContext<'a> {
    /// A context for `reviewer` with optional catalog overrides.
    #[must_use]
    pub const fn new(
        reviewer: ApprovalsReviewer,
        catalog: Option<&'a InstructionsCatalog>,
    ) -> Self {
        Self { reviewer, catalog }
    }
}

/// The rendered-on-demand permissions instructions for one environment.
///
/// Built only from typed sections; [`Self::body`] joins them with blank lines and ends with
/// `\n`; [`Self::render`] wraps the body in the `<permissions instructions>` markers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionsInstructions {
    projection: ProfileProjection,
    sandbox: Option<SandboxSection>,
    approval: ApprovalSection,
    writable_roots: Option<WritableRootsSection>,
    denied_reads: Option<DeniedReadsSection>,
}

impl PermissionsInstructions {
    /// Spec 08's constructor: projects `profile` (materialised) for `cwd`, with `$TMPDIR` taken
    /// from the process as the sandbox does, and lists the exec policy's allow prefixes.
    /// A relative `cwd` is resolved against the process's current directory.
    #[must_use]
    pub fn from_permission_profile(
        profile: &PermissionProfile,
        approval_policy: AskForApproval,
        approval_context: ApprovalPromptContext<'_>,
        exec_policy: &Policy,
        cwd: &Path,
        exec_permission_approvals_enabled: bool,
        request_permissions_tool_enabled: bool,
    ) -> Self {
        let cwd = absolute_cwd(cwd);
        Self::from_permission_profile_in(
            profile,
            approval_policy,
            approval_context,
            exec_policy.get_allowed_prefixes(),
            &ResolveContext::new(&cwd),
            ApprovalFeatures {
                exec_permission_approvals: exec_permission_approvals_enabled,
                request_permissions_tool: request_permissions_tool_enabled,
            },
        )
    }

    /// Like [`Self::from_permission_profile`] with an explicit [`ResolveContext`] (cwd and
    /// `$TMPDIR`) and the approved prefixes given directly — for remote environments and
    /// deterministic tests.
    #[must_use]
    pub fn from_permission_profile_in<I>(
        profile: &PermissionProfile,
        approval_policy: AskForApproval,
        approval_context: ApprovalPromptContext<'_>,
        approved_prefixes: I,
        ctx: &ResolveContext,
        features: ApprovalFeatures,
    ) -> Self
    where
        I: IntoIterator<Item = Vec<String>>,
    {
        let projection = ProfileProjection::new(profile, ctx);
        let catalog = approval_context.catalog;
        let sandbox = SandboxSection::new(
            projection.sandbox_mode,
            projection.network_access,
            catalog.map(|catalog| &catalog.sandbox),
        );
        let approval = ApprovalSection::new(
            &ApprovalInputs {
                policy: approval_policy,
                reviewer: approval_context.reviewer,
                features,
                messages: catalog.map(|catalog| &catalog.approvals),
                projection: &projection,
            },
            ApprovedPrefixList::new(approved_prefixes),
        );
        let writable_roots = WritableRootsSection::new(
            &projection.writable_roots,
            &ctx.user_homes,
            &ctx.cwd,
            projection.cwd_writable,
        );
        let denied_reads =
            DeniedReadsSection::new(&projection.denied_paths, &projection.denied_globs);
        Self {
            projection,
            sandbox,
            approval,
            writable_roots,
            denied_reads,
        }
    }

    /// The body: sections in spec order, separated by blank lines, ending with `\n` (empty only
    /// when the catalog emptied every section).
    #[must_use]
    pub fn body(&self) -> String {
        self.body_with(true)
    }

    /// The body as if the exec policy had no allow prefixes: what a `Current` snapshot hashes
    /// (spec 08 §Snapshot and diff).
    #[must_use]
    pub fn body_without_prefixes(&self) -> String {
        self.body_with(false)
    }

    /// The full developer-role text, body wrapped in `<permissions instructions>` markers.
    #[must_use]
    pub fn render(&self) -> String {
        wrap_in_markers(&self.body())
    }

    /// The role the text is sent with.
    #[must_use]
    pub const fn role(&self) -> FragmentRole {
        FragmentRole::Developer
    }

    /// Fingerprint of [`Self::body_without_prefixes`].
    #[must_use]
    pub fn instructions_hash(&self) -> InstructionsHash {
        InstructionsHash::of_text(&self.body_without_prefixes())
    }

    /// Fingerprint of the full [`Self::body`] (what a `Legacy` snapshot holds).
    #[must_use]
    pub fn full_text_hash(&self) -> InstructionsHash {
        InstructionsHash::of_text(&self.body())
    }

    /// The approved prefixes listed in the text.
    #[must_use]
    pub fn approved_command_prefixes(&self) -> BTreeSet<Vec<String>> {
        self.approval
            .approved_prefixes()
            .map(ApprovedPrefixList::to_set)
            .unwrap_or_default()
    }

    /// The profile facts the text was derived from.
    #[must_use]
    pub const fn projection(&self) -> &ProfileProjection {
        &self.projection
    }

    /// The sandbox section, unless the catalog omitted it.
    #[must_use]
    pub const fn sandbox_section(&self) -> Option<&SandboxSection> {
        self.sandbox.as_ref()
    }

    /// The approval section.
    #[must_use]
    pub const fn approval_section(&self) -> &ApprovalSection {
        &self.approval
    }

    /// The writable-roots section, when there are writable roots.
    #[must_use]
    pub const fn writable_roots_section(&self) -> Option<&WritableRootsSection> {
        self.writable_roots.as_ref()
    }

    /// The denied-reads section, when reads are denied.
    #[must_use]
    pub const fn denied_reads_section(&self) -> Option<&DeniedReadsSection> {
        self.denied_reads.as_ref()
    }

    fn body_with(&self, with_prefixes: bool) -> String {
        let approval = if with_prefixes {
            self.approval.render()
        } else {
            self.approval.render_without_prefixes()
        };
        let sections: Vec<String> = [
            self.sandbox.as_ref().map(SandboxSection::render),
            approval,
            self.writable_roots
                .as_ref()
                .map(WritableRootsSection::render),
            self.denied_reads.as_ref().map(DeniedReadsSection::render),
        ]
        .into_iter()
        .flatten()
        .filter(|text| !text.is_empty())
        .collect();
        if sections.is_empty() {
            return String::new();
        }
        let mut body = sections.join("\n\n");
        body.push('\n');
        body
    }
}

fn absolute_cwd(cwd: &Path) -> PathBuf {
    if cwd.is_absolute() {
        return normalize_lexically(cwd);
    }
    match std::env::current_dir() {
        Ok(current) => normalize_lexically(&current.join(cwd)),
        // Without a current directory the path stays relative; resolution then treats entries
        // lexically, which is still what enforcement would see for the same input.
        Err(_) => cwd.to_path_buf(),
    }
}
