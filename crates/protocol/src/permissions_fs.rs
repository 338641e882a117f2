//! Filesystem permission wire types: access modes, paths, entries and the runtime policy
//! (reference `protocol.md` §6, spec 01 and spec 04 §Types).

use std::num::NonZeroUsize;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

/// What an entry allows on the paths it covers.
///
/// JSON: `"read"`, `"write"`, `"deny"`; `"none"` is accepted as the pre-0.169 input spelling of
/// `"deny"` and never written (reference `protocol.md` §6). The declaration order is the
/// tie-break precedence when two entries are equally specific: deny > write > read (spec 04).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FileSystemAccessMode {
    /// Read (and list, execute) but not modify.
    Read,
    /// Read and modify.
    Write,
    /// Neither read nor write; wins ties against the other two.
    #[serde(alias = "none")]
    Deny,
}

impl FileSystemAccessMode {
    /// `true` for `read` and `write`.
    #[must_use]
    pub const fn can_read(self) -> bool {
        !matches!(self, Self::Deny)
    }

    /// `true` only for `write`.
    #[must_use]
    pub const fn can_write(self) -> bool {
        matches!(self, Self::Write)
    }
}

/// A symbolic location that is resolved late, against the cwd, the workspace roots or the
/// environment (reference `protocol.md` §6 table).
///
/// JSON is tagged by `"kind"`, snake_case: `{"kind":"root"}`, `{"kind":"minimal"}`,
/// `{"kind":"project_roots","subpath":"docs"}` (`subpath` omitted when absent; the old tag
/// `current_working_directory` is read as `project_roots`), `{"kind":"tmpdir"}`,
/// `{"kind":"slash_tmp"}`, `{"kind":"unknown","path":":foo","subpath":"x"}`.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FileSystemSpecialPath {
    /// The root of the cwd's filesystem (`/`); config token `:root`.
    Root,
    /// The platform's default read roots (system libraries and binaries); token `:minimal`.
    Minimal,
    /// Each workspace root, optionally joined with a relative `subpath`; token `:workspace_roots`
    /// (alias `:project_roots`).
    #[serde(alias = "current_working_directory")]
    ProjectRoots {
        /// Relative, only normal components; `None` = the root itself.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subpath: Option<PathBuf>,
    },
    /// `$TMPDIR` when set and non-empty, otherwise nothing; token `:tmpdir`.
    Tmpdir,
    /// `/tmp` when it is a directory; token `:slash_tmp`.
    SlashTmp,
    /// A `:token` this version does not know; kept for forward compatibility and ignored by
    /// enforcement (reference `permissions-config.md` §3).
    Unknown {
        /// The token as written, leading colon included.
        path: String,
        /// The scoped subpath, if the token was used with a nested table.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subpath: Option<PathBuf>,
    },
}

/// Where an entry applies.
///
/// JSON is tagged by `"type"`, snake_case: `{"type":"path","path":"/abs"}`,
/// `{"type":"glob_pattern","pattern":"/abs/**/*.env"}` (git-style; only `deny` is meaningful),
/// `{"type":"special","value":{"kind":"root"}}`.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FileSystemPath {
    /// A concrete path; absolute in every compiled profile.
    Path {
        /// The path.
        path: PathBuf,
    },
    /// A git-style glob (`*` and `?` stay within one component, `**` crosses them). A relative
    /// pattern is relative to each workspace root (Airlock's symbolic form, spec 04).
    GlobPattern {
        /// The pattern text.
        pattern: String,
    },
    /// A symbolic location.
    Special {
        /// Which one.
        value: FileSystemSpecialPath,
    },
}

/// What to do when an entry's path does not exist at sandbox time (Codex 0.169, reference
/// `protocol.md` §6). JSON: `"skip"`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum MissingPathBehavior {
    /// Leave the entry out of enforcement if the path is missing (Linux masks it with an empty
    /// read-only placeholder instead when it protects metadata).
    Skip,
}

/// One filesystem rule.
///
/// JSON: `{"path":<FileSystemPath>,"access":"read"|"write"|"deny","missing_path_behavior"?:"skip"}`
/// (`missing_path_behavior` omitted when absent).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub struct FileSystemSandboxEntry {
    /// Where the rule applies.
    pub path: FileSystemPath,
    /// What it allows.
    pub access: FileSystemAccessMode,
    /// Set on the automatic metadata carve-outs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_path_behavior: Option<MissingPathBehavior>,
}

impl FileSystemSandboxEntry {
    /// An entry for a concrete path.
    #[must_use]
    pub fn path(path: impl Into<PathBuf>, access: FileSystemAccessMode) -> Self {
        Self {
            path: FileSystemPath::Path { path: path.into() },
            access,
            missing_path_behavior: None,
        }
    }

    /// An entry for a symbolic location.
    #[must_use]
    pub const fn special(value: FileSystemSpecialPath, access: FileSystemAccessMode) -> Self {
        Self {
            path: FileSystemPath::Special { value },
            access,
            missing_path_behavior: None,
        }
    }

    /// A `deny` entry for a glob pattern.
    #[must_use]
    pub fn deny_glob(pattern: impl Into<String>) -> Self {
        Self {
            path: FileSystemPath::GlobPattern {
                pattern: pattern.into(),
            },
            access: FileSystemAccessMode::Deny,
            missing_path_behavior: None,
        }
    }
}

/// Which kind of filesystem policy applies. JSON (kebab-case): `"restricted"` (default),
/// `"unrestricted"`, `"external-sandbox"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FileSystemSandboxKind {
    /// Only what the entries allow.
    #[default]
    Restricted,
    /// Everything (no filesystem sandbox).
    Unrestricted,
    /// Someone else (a container, a VM) confines the process.
    ExternalSandbox,
}

/// The runtime filesystem policy that enforcement reads (reference `protocol.md` §6).
///
/// JSON: `{"kind":"restricted","glob_scan_max_depth"?:n,"entries"?:[...]}`; `kind` defaults to
/// `restricted`, `glob_scan_max_depth` (≥ 1, directory levels scanned when expanding deny globs)
/// is omitted when unset, `entries` is omitted when empty. `Default` is restricted with the one
/// entry `:root` read.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct FileSystemSandboxPolicy {
    /// The kind of policy.
    #[serde(default)]
    pub kind: FileSystemSandboxKind,
    /// Maximum directory depth scanned when deny globs must be expanded ahead of time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob_scan_max_depth: Option<NonZeroUsize>,
    /// The rules; only meaningful for `restricted`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<FileSystemSandboxEntry>,
}

impl Default for FileSystemSandboxPolicy {
    fn default() -> Self {
        Self::restricted(vec![FileSystemSandboxEntry::special(
            FileSystemSpecialPath::Root,
            FileSystemAccessMode::Read,
        )])
    }
}

impl FileSystemSandboxPolicy {
    /// A restricted policy with these entries and no glob depth.
    #[must_use]
    pub const fn restricted(entries: Vec<FileSystemSandboxEntry>) -> Self {
        Self {
            kind: FileSystemSandboxKind::Restricted,
            glob_scan_max_depth: None,
            entries,
        }
    }

    /// The unrestricted policy (no entries).
    #[must_use]
    pub const fn unrestricted() -> Self {
        Self {
            kind: FileSystemSandboxKind::Unrestricted,
            glob_scan_max_depth: None,
            entries: Vec::new(),
        }
    }

    /// The external-sandbox policy (no entries).
    #[must_use]
    pub const fn external_sandbox() -> Self {
        Self {
            kind: FileSystemSandboxKind::ExternalSandbox,
            glob_scan_max_depth: None,
            entries: Vec::new(),
        }
    }
}

/// Whether sandboxed commands may use the network. JSON (kebab-case): `"restricted"` (default)
/// or `"enabled"` (reference `protocol.md` §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkSandboxPolicy {
    /// No network (only what a managed proxy allows, when one runs).
    #[default]
    Restricted,
    /// Full network.
    Enabled,
}

impl NetworkSandboxPolicy {
    /// `true` for `enabled`.
    #[must_use]
    pub const fn is_enabled(self) -> bool {
        matches!(self, Self::Enabled)
    }
}
