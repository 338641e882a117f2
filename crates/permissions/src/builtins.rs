//! Built-in profiles (reference `permissions-config.md` §1, spec 04 §Config).
//!
//! `:read-only` and `:workspace` can be extended: a child merges over their TOML projection.
//! Selected directly, `:workspace` compiles like the legacy workspace-write mode, which lists the
//! protected metadata entries explicitly (observed in Codex 0.169's helper arguments).
//! `:danger-full-access` is `Disabled` and cannot be extended. `:external-sandbox` is Airlock's:
//! `External`, with the network of a profile that extends it.

use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSpecialPath;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::MissingPathBehavior;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::PermissionProfile;

/// `:read-only`.
pub const READ_ONLY: &str = ":read-only";
/// `:workspace`.
pub const WORKSPACE: &str = ":workspace";
/// `:danger-full-access`.
pub const DANGER_FULL_ACCESS: &str = ":danger-full-access";
/// `:external-sandbox` (Airlock only).
pub const EXTERNAL_SANDBOX: &str = ":external-sandbox";

/// Every built-in id, in display order.
pub const BUILT_IN_IDS: [&str; 4] = [READ_ONLY, WORKSPACE, DANGER_FULL_ACCESS, EXTERNAL_SANDBOX];

/// Names protected read-only at the top of every writable root and listed as entries of the
/// built-in `:workspace` profile, exactly as Codex does (reference §6; `.aws` observed in 0.169).
pub const PROTECTED_METADATA_NAMES: [&str; 4] = [".git", ".agents", ".codex", ".aws"];

/// Airlock's own per-project folder: a trusted project's `.airlock/config.toml` and
/// `.airlock/rules/*.rules` are loaded as configuration, so a sandboxed command must never be
/// able to write them (it would grant itself rules that run outside the sandbox).
pub const AIRLOCK_PROJECT_DIR: &str = ".airlock";

/// Every name enforcement keeps read-only at the top of each writable root: Codex's
/// [`PROTECTED_METADATA_NAMES`] plus [`AIRLOCK_PROJECT_DIR`]. Profile JSON stays Codex's; the
/// queries (and so every backend and the model-facing text) use this list.
pub const ENFORCED_PROTECTED_NAMES: [&str; 5] =
    [".git", ".agents", ".codex", ".aws", AIRLOCK_PROJECT_DIR];

/// Whether `id` is a built-in.
#[must_use]
pub fn is_built_in(id: &str) -> bool {
    BUILT_IN_IDS.contains(&id)
}

/// The TOML projection of an extensible built-in, or `None` (`:danger-full-access`, unknown).
/// `:external-sandbox` projects to an empty table; its enforcement is applied after merging.
pub(crate) fn toml_projection(id: &str) -> Option<toml::Table> {
    let text = match id {
        READ_ONLY => "[filesystem]\n\":root\" = \"read\"\n",
        WORKSPACE => concat!(
            "[filesystem]\n\":root\" = \"read\"\n\":slash_tmp\" = \"write\"\n",
            "\":tmpdir\" = \"write\"\n\":workspace_roots\" = { \".\" = \"write\" }\n"
        ),
        EXTERNAL_SANDBOX => "",
        _ => return None,
    };
    text.parse().ok()
}

/// The profile of a built-in selected directly, in symbolic form (not yet materialised).
#[must_use]
pub fn built_in_profile(id: &str) -> Option<PermissionProfile> {
    let managed = |entries| PermissionProfile::Managed {
        file_system: ManagedFileSystemPermissions::Restricted {
            entries,
            glob_scan_max_depth: None,
        },
        network: NetworkSandboxPolicy::Restricted,
    };
    match id {
        READ_ONLY => Some(managed(vec![root_read()])),
        WORKSPACE => Some(managed(workspace_entries(true, true))),
        DANGER_FULL_ACCESS => Some(PermissionProfile::Disabled),
        EXTERNAL_SANDBOX => Some(PermissionProfile::External {
            network: NetworkSandboxPolicy::Restricted,
        }),
        _ => None,
    }
}

/// `:root` read.
pub(crate) const fn root_read() -> FileSystemSandboxEntry {
    FileSystemSandboxEntry::special(FileSystemSpecialPath::Root, FileSystemAccessMode::Read)
}

/// The workspace-write entries in Codex's order: `:root` read, workspace roots write, `/tmp`
/// and `$TMPDIR` write unless excluded, then the protected metadata under each workspace root.
pub(crate) fn workspace_entries(slash_tmp: bool, tmpdir: bool) -> Vec<FileSystemSandboxEntry> {
    let mut entries = vec![
        root_read(),
        FileSystemSandboxEntry::special(
            FileSystemSpecialPath::ProjectRoots { subpath: None },
            FileSystemAccessMode::Write,
        ),
    ];
    if slash_tmp {
        entries.push(FileSystemSandboxEntry::special(
            FileSystemSpecialPath::SlashTmp,
            FileSystemAccessMode::Write,
        ));
    }
    if tmpdir {
        entries.push(FileSystemSandboxEntry::special(
            FileSystemSpecialPath::Tmpdir,
            FileSystemAccessMode::Write,
        ));
    }
    entries.extend(metadata_entries_for_workspace_roots());
    entries
}

/// `project_roots{<name>}` read with `missing_path_behavior = skip` for each protected name.
pub(crate) fn metadata_entries_for_workspace_roots() -> impl Iterator<Item = FileSystemSandboxEntry>
{
    PROTECTED_METADATA_NAMES
        .into_iter()
        .map(|name| FileSystemSandboxEntry {
            missing_path_behavior: Some(MissingPathBehavior::Skip),
            ..FileSystemSandboxEntry::special(
                FileSystemSpecialPath::ProjectRoots {
                    subpath: Some(name.into()),
                },
                FileSystemAccessMode::Read,
            )
        })
}
