//! Airlock permission profiles (spec `04-permissions.md`): the capability axis as data.
//!
//! Pipeline: [`load_config`] reads `$AIRLOCK_HOME/config.toml` (Codex-compatible keys) and `-c`
//! overrides; [`select_permission_profile`] picks the active profile (`-P`, `default_permissions`,
//! legacy `sandbox_mode`, or the embedded `:workspace` default) and compiles it with
//! [`compile_permission_profile`] into a symbolic [`PermissionProfile`];
//! [`materialize_project_roots_with_workspace_roots`] turns `:workspace_roots` entries into
//! concrete paths; [`FileSystemPolicyQueries`] and [`ReadDenyMatcher`] answer what enforcement
//! asks. [`intersect_permission_profiles`] and [`effective_permission_profile`] handle per-command
//! additional permissions; [`to_legacy_sandbox_policy`] projects onto the legacy policy.
//! [`git_metadata()`] and [`enclosing_git_entries`] find everything git reads a repository from,
//! so that a protected `.git` protects its repository wherever it lives. Writable roots are
//! judged by where they resolve to (`root_judge`): `$TMPDIR` is validated, `$AIRLOCK_HOME` and
//! `$CODEX_HOME` are never writable (nor the `.airlock` of a trusted project:
//! [`policy_locations_from_env`]), and a symlinked root into a protected, denied or
//! read-only place stays read-only ([`RefusedWritableRoot`] says why). A user's `$HOME` inside a
//! writable root keeps its startup and configuration entries read-only ([`home_protected_paths`]).
//!
//! Rules kept throughout (spec README): never a silently wider permission — unknown tokens are
//! kept but not enforced, unresolvable entries resolve to nothing, invalid globs deny every read,
//! errors stop loading instead of falling back; `External` never becomes `Managed`.
//!
//! Wire types live in `airlock-protocol`; this crate holds the logic.

mod additional;
mod builtins;
mod compile;
mod config;
mod context;
mod error;
mod full_access;
mod git_directory;
mod git_includes;
mod git_metadata;
mod home_dotfiles;
mod inherit;
mod legacy;
mod materialize;
pub mod network;
mod overrides;
mod paths;
mod policy_locations;
mod queries;
mod read_deny;
pub mod resolution_memo;
mod root_judge;
mod runtime;
mod section_keys;
mod select;
mod untrusted_file;
mod writable;

pub use additional::effective_permission_profile;
pub use additional::intersect_permission_profiles;
pub use additional::normalize_additional_permissions;
pub use airlock_protocol::PermissionProfile;
pub use builtins::AIRLOCK_PROJECT_DIR;
pub use builtins::BUILT_IN_IDS;
pub use builtins::DANGER_FULL_ACCESS;
pub use builtins::ENFORCED_PROTECTED_NAMES;
pub use builtins::EXTERNAL_SANDBOX;
pub use builtins::PROTECTED_METADATA_NAMES;
pub use builtins::READ_ONLY;
pub use builtins::WORKSPACE;
pub use builtins::built_in_profile;
pub use builtins::is_built_in;
pub use compile::CompiledPermissionProfile;
pub use compile::compile_permission_profile;
pub use config::AirlockConfig;
pub use config::ConfigEnv;
pub use config::load_config;
pub use context::IgnoredTmpdir;
pub use context::ResolveContext;
pub use context::protected_homes_from_env;
pub use context::tmpdir_from_env;
pub use context::tmpdir_problem;
pub use context::user_homes_from_env;
pub use error::ConfigProblem;
pub use error::PermissionsError;
pub use error::Result;
pub use full_access::has_full_access;
pub use git_directory::GitDirEnv;
pub use git_directory::common_dir;
pub use git_directory::is_git_directory;
pub use git_metadata::EnclosingGit;
pub use git_metadata::GitMetadata;
pub use git_metadata::GitMetadataError;
pub use git_metadata::GitMetadataPath;
pub use git_metadata::GitMetadataRole;
pub use git_metadata::LINKED_METADATA_NAMES;
pub use git_metadata::MAX_GIT_FILE_BYTES;
pub use git_metadata::MAX_INCLUDE_DEPTH;
pub use git_metadata::ProtectAt;
pub use git_metadata::enclosing_git_entries;
pub use git_metadata::git_metadata;
pub use git_metadata::parse_commondir;
pub use git_metadata::parse_git_file;
pub use git_metadata::protect_at;
pub use home_dotfiles::HOME_STARTUP_NAMES;
pub use home_dotfiles::HomeEntries;
pub use home_dotfiles::HomeEntryKind;
pub use home_dotfiles::HomeProtection;
pub use home_dotfiles::MAX_HOME_DOT_ENTRIES;
pub use home_dotfiles::StartupName;
pub use home_dotfiles::home_entries;
pub use home_dotfiles::home_protected_paths;
pub use home_dotfiles::startup_name;
pub use legacy::permission_profile_from_legacy;
pub use legacy::to_legacy_sandbox_policy;
pub use materialize::materialize_entries;
pub use materialize::materialize_project_roots_with_workspace_roots;
pub use overrides::apply_override;
pub use overrides::parse_override;
pub use paths::absolutize;
pub use paths::normalize_lexically;
pub use policy_locations::PolicyLocation;
pub use policy_locations::PolicySource;
pub use policy_locations::policy_locations_from_env;
pub use policy_locations::trusted_project_dirs;
pub use policy_locations::trusted_projects_in_file;
pub use queries::FileSystemPolicyQueries;
pub use queries::RefusedWritableRoot;
pub use queries::WritableRoot;
pub use queries::write_entry_paths;
pub use read_deny::ReadDenyMatcher;
pub use runtime::file_system_sandbox_policy;
pub use runtime::from_runtime_permissions;
pub use runtime::network_sandbox_policy;
pub use select::ProfileSource;
pub use select::SelectedPermissions;
pub use select::select_permission_profile;
pub use untrusted_file::Follow;
pub use untrusted_file::Limit;
pub use untrusted_file::UntrustedFileError;
pub use untrusted_file::UntrustedProblem;
pub use untrusted_file::read_untrusted;
pub use writable::is_writable_under;
