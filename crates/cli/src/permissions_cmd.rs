//! `airlock permissions show`: the compiled, materialised permission profile (spec 10 §CLI,
//! spec 04). For people: workspace roots, entries, writable roots with their read-only subpaths,
//! denied reads and network. With `--json`: the `PermissionProfile` JSON on one line, the same
//! text Codex 0.169 hands its sandbox helper for the same config and cwd — plus, when a writable
//! root's `.git` sends git elsewhere (a `gitdir:` pointer, a worktree's common directory, a
//! symlinked `config`), one `read` entry (`missing_path_behavior: "skip"`) per such location,
//! because enforcement keeps them read-only too (issue 11; see
//! `airlock_permissions::git_metadata`); likewise one such entry per startup or configuration
//! entry of a `$HOME` that lies inside a writable root (its top-level dot entries and the
//! missing well-known startup names, see `airlock_permissions::home_protected_paths`), and per
//! folder later runs read policy from that lies in a writable root (`$AIRLOCK_HOME`,
//! `$CODEX_HOME`, a trusted project's `.airlock`: `airlock_permissions::policy_locations_from_env`),
//! whose reasons are listed under the extra key `protected_policy_paths` (`[{path, reason}]`,
//! present only when there is one). Nested repositories are found when the sandbox starts and
//! are not listed.
//!
//! Exit codes: 0 shown, 1 the config cannot be loaded or compiled, 2 usage error. Warnings go to
//! stderr as `warning: ...`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;

use airlock_permissions::FileSystemPolicyQueries;
use airlock_permissions::GitMetadata;
use airlock_permissions::GitMetadataError;
use airlock_permissions::HomeProtection;
use airlock_permissions::PermissionProfile;
use airlock_permissions::PolicyLocation;
use airlock_permissions::ProfileSource;
use airlock_permissions::ProtectAt;
use airlock_permissions::ResolveContext;
use airlock_permissions::SelectedPermissions;
use airlock_permissions::enclosing_git_entries;
use airlock_permissions::file_system_sandbox_policy;
use airlock_permissions::load_config;
use airlock_permissions::policy_locations_from_env;
use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemPath;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSpecialPath;
use airlock_protocol::ManagedFileSystemPermissions;
use airlock_protocol::MissingPathBehavior;
use anyhow::Context;
use clap::{Args, Subcommand};

/// Arguments of `airlock permissions`.
#[derive(Debug, Args)]
pub struct PermissionsArgs {
    #[command(subcommand)]
    command: PermissionsCommand,
}

#[derive(Debug, Subcommand)]
enum PermissionsCommand {
    /// Print the active permission profile, compiled and materialised for a directory.
    ///
    /// Reads $AIRLOCK_HOME/config.toml (default ~/.airlock). Without a config, the embedded
    /// default `:workspace` applies.
    Show(ShowArgs),
    /// Whether each PATH is outside every writable root of the profile (for scripts such as
    /// `scripts/demo` that need a folder a confined command cannot write). Prints
    /// `outside PATH` or `writable PATH (under ROOT)` per path; exit 0 when every PATH is
    /// outside, 1 when one is writable (or the config cannot be used).
    #[command(hide = true)]
    Outside(OutsideArgs),
}

#[derive(Debug, Args)]
struct OutsideArgs {
    /// Profile id (as for `show`).
    #[arg(short = 'P', long = "permission-profile", value_name = "ID")]
    profile: Option<String>,

    /// Working directory (the first workspace root); default: the current directory.
    #[arg(short = 'C', long = "cd", value_name = "DIR")]
    cd: Option<PathBuf>,

    /// Config override `dotted.key=value`; repeatable.
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE", value_parser = crate::common::override_arg)]
    overrides: Vec<String>,

    /// The paths to check (need not exist).
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
}

#[derive(Debug, Args)]
struct ShowArgs {
    /// Profile id to show instead of the configured one (`:read-only`, `:workspace`,
    /// `:danger-full-access`, `:external-sandbox`, or a `[permissions.<id>]` table).
    #[arg(short = 'P', long = "permission-profile", value_name = "ID")]
    profile: Option<String>,

    /// Working directory (the first workspace root); default: the current directory.
    #[arg(short = 'C', long = "cd", value_name = "DIR")]
    cd: Option<PathBuf>,

    /// Config override `dotted.key=value` (value parsed as TOML, else a string); repeatable.
    #[arg(short = 'c', long = "config", value_name = "KEY=VALUE", value_parser = crate::common::override_arg)]
    overrides: Vec<String>,

    /// Print the materialised `PermissionProfile` JSON instead of the summary.
    #[arg(long)]
    json: bool,
}

/// Runs `airlock permissions ...`.
pub fn run(args: PermissionsArgs) -> ExitCode {
    match args.command {
        PermissionsCommand::Show(show) => match run_show(&show) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => crate::report_error(&error),
        },
        PermissionsCommand::Outside(outside) => match run_outside(&outside) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(error) => crate::report_error(&error),
        },
    }
}

/// `permissions outside`: `Ok(true)` when every path is outside every writable root.
fn run_outside(args: &OutsideArgs) -> anyhow::Result<bool> {
    let cwd = crate::common::working_directory(args.cd.as_deref())?;
    let env = crate::common::config_env()?;
    let config = load_config(&env, &args.overrides)?;
    let selected = crate::common::select_profile(&config, args.profile.as_deref(), &cwd)?;
    let policy = file_system_sandbox_policy(&selected.materialized());
    let ctx = ResolveContext::new(&cwd);
    let mut all_outside = true;
    let mut out = String::new();
    for path in &args.paths {
        let absolute = airlock_permissions::absolutize(path, &cwd);
        if airlock_permissions::is_writable_under(&policy, &absolute, &ctx) {
            all_outside = false;
            let _ = writeln!(out, "writable {}", absolute.display());
        } else {
            let _ = writeln!(out, "outside {}", absolute.display());
        }
    }
    crate::common::write_stdout(&crate::terminal_text::lines(&out))?;
    Ok(all_outside)
}

fn run_show(args: &ShowArgs) -> anyhow::Result<()> {
    let cwd = crate::common::working_directory(args.cd.as_deref())?;
    let env = crate::common::config_env()?;
    let config = load_config(&env, &args.overrides)?;
    let selected = crate::common::select_profile(&config, args.profile.as_deref(), &cwd)?;
    let mut stderr = std::io::stderr().lock();
    for warning in &selected.warnings {
        // A closed stderr must not turn a successful show into a failure.
        let _ = writeln!(stderr, "warning: {}", crate::terminal_text::safe(warning));
    }
    if let Err(refusal) = crate::common::refuse_root_workspace(&cwd, selected.symbolic()) {
        // `exec` and `sandbox` refuse to run here; say so instead of looking fine.
        let _ = writeln!(
            stderr,
            "warning: `airlock exec` and `airlock sandbox` refuse to run here: {refusal}"
        );
    }
    let profile = selected.materialized();
    let text = if args.json {
        let shown = with_git_locations(&profile, &cwd);
        let mut json = serde_json::to_string(&shown).context("cannot serialise the profile")?;
        let policy_paths = protected_policy_paths(&profile, &cwd);
        // Appended as the last key, so that the profile's own keys keep Codex's order.
        if !policy_paths.is_empty() && json.ends_with('}') {
            let list = serde_json::to_string(&policy_paths)
                .context("cannot serialise the protected policy paths")?;
            json.pop();
            json.push_str(&format!(",\"protected_policy_paths\":{list}}}"));
        }
        json.push('\n');
        json
    } else {
        let managed = crate::managed_network::effective(&config, &env, &selected, &cwd, Vec::new())
            .map_err(|error| format!("{error:#}"));
        // Roots and entries are paths (the cwd's name is anyone's): escaped line by line.
        crate::terminal_text::lines(&summary(&selected, &profile, &cwd, &managed))
    };
    crate::common::write_stdout(&text)?;
    Ok(())
}

/// The human summary.
fn summary(
    selected: &SelectedPermissions,
    profile: &PermissionProfile,
    cwd: &Path,
    managed: &Result<Option<airlock_permissions::network::ManagedNetwork>, String>,
) -> String {
    let mut out = String::new();
    let active = &selected.compiled.active;
    let _ = write!(out, "profile: {}", active.id);
    if let Some(parent) = &active.extends {
        let _ = write!(out, " (extends {parent})");
    }
    out.push('\n');
    if let Some(description) = &selected.compiled.description {
        let _ = writeln!(out, "description: {description}");
    }
    let _ = writeln!(out, "selected by: {}", describe_source(selected.source));
    let roots: Vec<String> = selected
        .workspace_roots
        .iter()
        .map(|root| root.display().to_string())
        .collect();
    let _ = writeln!(out, "workspace roots: {}", roots.join(", "));
    let enforcement = match profile {
        PermissionProfile::Managed { .. } => "managed (Airlock's sandbox)",
        PermissionProfile::Disabled => "disabled (no sandbox)",
        PermissionProfile::External { .. } => "external (a container or VM isolates commands)",
    };
    let _ = writeln!(out, "enforcement: {enforcement}");

    let policy = file_system_sandbox_policy(profile);
    let ctx = ResolveContext::new(cwd);
    let locations = policy_locations_from_env(cwd);
    if let PermissionProfile::Managed { .. } = profile {
        let kind = if policy.has_full_disk_write_access() {
            "full read and write"
        } else if policy.has_full_disk_read_access() {
            "full read, restricted write"
        } else {
            "restricted"
        };
        let _ = writeln!(out, "filesystem: {kind}");
        if let Some(depth) = policy.glob_scan_max_depth {
            let _ = writeln!(out, "glob scan depth: {depth}");
        }
        let _ = writeln!(out, "entries:");
        for entry in &policy.entries {
            let _ = writeln!(out, "  {}", describe_entry(entry));
        }
        let _ = writeln!(out, "writable roots:");
        let writable = policy.get_writable_roots(&ctx);
        if writable.is_empty() {
            let _ = writeln!(out, "  (none)");
        }
        let canonical_roots: Vec<PathBuf> = writable
            .iter()
            .map(|w| std::fs::canonicalize(&w.root).unwrap_or_else(|_| w.root.clone()))
            .collect();
        for (root, canonical) in writable.iter().zip(&canonical_roots) {
            let _ = writeln!(out, "  {}", root.root.display());
            let dot_git = root.root.join(".git");
            let git = airlock_permissions::git_metadata(&dot_git);
            let above = enclosing_git_entries(canonical, &canonical_roots);
            let above_git = above
                .existing
                .as_deref()
                .map(airlock_permissions::git_metadata);
            let home_paths: Vec<(PathBuf, HomeProtection)> = ctx
                .user_homes
                .iter()
                .flat_map(|home| {
                    airlock_permissions::home_protected_paths(&root.root, canonical, home)
                })
                .collect();
            for subpath in &root.read_only_subpaths {
                let home_note = home_paths
                    .iter()
                    .find(|(path, _)| path == subpath)
                    .map(|(_, why)| home_entry_note(why));
                let note = if *subpath == dot_git {
                    git_entry_note(&git)
                } else if let Some(location) = policy_location(&locations, subpath) {
                    format!(" ({})", location.reason())
                } else if let Some(note) = home_note {
                    note
                } else if above.skipped.contains(subpath) {
                    " (not a git directory above this root: kept as it is)".to_owned()
                } else if above.missing.contains(subpath) {
                    " (missing: must not be created, git would find it from this root)".to_owned()
                } else if above.existing.as_ref() == Some(subpath) {
                    " (the repository git finds above this root)".to_owned()
                } else {
                    let own = git_location_note(&git, subpath, &dot_git);
                    match (&above_git, &above.existing) {
                        (Some(outer), Some(outer_git)) if own.is_empty() => {
                            git_location_note(outer, subpath, outer_git)
                        }
                        _ => own,
                    }
                };
                let _ = writeln!(out, "    read-only: {}{note}", subpath.display());
            }
        }
        let refused = policy.get_refused_writable_roots(&ctx);
        let uses_tmpdir = policy.entries.iter().any(|e| {
            matches!(
                &e.path,
                FileSystemPath::Special {
                    value: FileSystemSpecialPath::Tmpdir
                }
            )
        });
        let ignored = ctx.ignored_tmpdir.as_ref().filter(|_| uses_tmpdir);
        if !refused.is_empty() || ignored.is_some() {
            let _ = writeln!(out, "write entries kept read-only:");
            if let Some(ignored) = ignored {
                let _ = writeln!(
                    out,
                    "  TMPDIR={} (ignored: {})",
                    ignored.value.display(),
                    ignored.reason
                );
            }
            for root in &refused {
                let what = if root.from_tmpdir { "TMPDIR=" } else { "" };
                let _ = writeln!(
                    out,
                    "  {what}{} (resolves to {}; not writable: {})",
                    root.root.display(),
                    root.resolved.display(),
                    root.reason
                );
            }
        }
        let _ = writeln!(out, "denied reads:");
        let roots = policy.get_unreadable_roots(&ctx);
        let globs = policy.get_unreadable_globs_with_cwd(cwd);
        if roots.is_empty() && globs.is_empty() {
            let _ = writeln!(out, "  (none)");
        }
        for root in roots {
            let _ = writeln!(out, "  path {}", root.display());
        }
        for glob in globs {
            let _ = writeln!(out, "  glob {glob}");
        }
        let _ = writeln!(
            out,
            "unsandboxed execution allowed: {}",
            if policy.unsandboxed_execution_allowed() {
                "yes"
            } else {
                "no (deny-read entries keep the filesystem sandbox on)"
            }
        );
    }
    match managed {
        Ok(Some(network)) => {
            for line in network.describe() {
                let _ = writeln!(out, "{line}");
            }
        }
        Err(error) => {
            let _ = writeln!(out, "network: managed proxy, but it cannot start: {error}");
        }
        Ok(None) => {
            let network = if profile.network().is_enabled() {
                "enabled"
            } else {
                "restricted"
            };
            let _ = writeln!(out, "network: {network}");
        }
    }
    out
}

/// The policy location (`$AIRLOCK_HOME`, `$CODEX_HOME`, a trusted project's `.airlock`) that
/// `path` is, as listed under a writable root (spelled as the location or resolved).
fn policy_location<'a>(locations: &'a [PolicyLocation], path: &Path) -> Option<&'a PolicyLocation> {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    locations
        .iter()
        .find(|location| location.path == path || real(&location.path) == real(path))
}

/// `{"path", "reason"}` for every policy location listed as a read-only subpath of a writable
/// root of `profile` (issue 11, finding F5), for `--json`.
fn protected_policy_paths(profile: &PermissionProfile, cwd: &Path) -> Vec<serde_json::Value> {
    let policy = file_system_sandbox_policy(profile);
    let ctx = ResolveContext::new(cwd);
    let locations = policy_locations_from_env(cwd);
    let mut out: Vec<serde_json::Value> = Vec::new();
    for root in policy.get_writable_roots(&ctx) {
        for subpath in &root.read_only_subpaths {
            if let Some(location) = policy_location(&locations, subpath) {
                let entry = serde_json::json!({
                    "path": subpath.display().to_string(),
                    "reason": location.reason(),
                });
                if !out.contains(&entry) {
                    out.push(entry);
                }
            }
        }
    }
    out
}

/// What `permissions show` adds after a path the `$HOME` rule protects (issue 11).
fn home_entry_note(why: &HomeProtection) -> String {
    match why {
        HomeProtection::Existing {
            home,
            symlink: false,
        } => format!(
            " (startup or configuration entry of the home directory {}, which lies in this writable root)",
            home.display()
        ),
        HomeProtection::Existing {
            home,
            symlink: true,
        } => format!(
            " (startup or configuration entry of the home directory {}; a symlink, which a confined command could replace: the Linux sandbox refuses to start — work from a project directory, or replace the link with what it points to)",
            home.display()
        ),
        HomeProtection::LinkTarget { link } => format!(
            " (what {} points to, a startup or configuration entry of the home directory)",
            link.display()
        ),
        HomeProtection::Missing { home, name } => format!(
            " (missing startup name of the home directory {}, read by {}: must not be created)",
            home.display(),
            name.read_by
        ),
        HomeProtection::Whole { reason } => format!(
            " (the home directory, read-only as a whole because its entries cannot be listed: {reason})"
        ),
        _ => " (startup or configuration entry of the home directory)".to_owned(),
    }
}

/// What `permissions show` adds after a writable root's `.git` line when git would not use it
/// or Airlock cannot read it.
fn git_entry_note(git: &Result<GitMetadata, GitMetadataError>) -> String {
    match git {
        Ok(metadata) => metadata
            .invalid
            .as_ref()
            .map(|why| format!(" (not a repository to git: {why})"))
            .unwrap_or_default(),
        Err(error) => format!(" ({error}; the sandbox refuses to start)"),
    }
}

/// ` (git directory of /ws/.git)` for a location git reads that repository from.
fn git_location_note(
    git: &Result<GitMetadata, GitMetadataError>,
    subpath: &Path,
    dot_git: &Path,
) -> String {
    let Ok(metadata) = git else {
        return String::new();
    };
    let Some(location) = metadata.paths.iter().find(|p| p.protect.path() == subpath) else {
        return String::new();
    };
    let missing = match location.protect {
        ProtectAt::Existing(_) => "",
        ProtectAt::Missing(_) => ", missing: must not be created",
    };
    format!(
        " ({} of {}{missing})",
        location.role.describe(),
        dot_git.display()
    )
}

/// `profile` with a read entry for every git location of a writable root's `.git` and every
/// path the `$HOME` rule protects that is not an entry already (see the module docs);
/// unchanged when there is none.
fn with_git_locations(profile: &PermissionProfile, cwd: &Path) -> PermissionProfile {
    let mut shown = profile.clone();
    let PermissionProfile::Managed {
        file_system: ManagedFileSystemPermissions::Restricted { entries, .. },
        ..
    } = &mut shown
    else {
        return shown;
    };
    let policy = file_system_sandbox_policy(profile);
    let ctx = ResolveContext::new(cwd);
    let locations = policy_locations_from_env(cwd);
    for root in policy.get_writable_roots(&ctx) {
        let canonical = std::fs::canonicalize(&root.root).unwrap_or_else(|_| root.root.clone());
        let git: Vec<PathBuf> = airlock_permissions::git_metadata(&root.root.join(".git"))
            .map(|metadata| metadata.protected_paths().map(Path::to_path_buf).collect())
            .unwrap_or_default();
        let home = ctx.user_homes.iter().flat_map(|home| {
            airlock_permissions::home_protected_paths(&root.root, &canonical, home)
                .into_iter()
                .map(|(path, _)| path)
        });
        let policy: Vec<PathBuf> = root
            .read_only_subpaths
            .iter()
            .filter(|subpath| policy_location(&locations, subpath).is_some())
            .cloned()
            .collect();
        for path in git.into_iter().chain(home).chain(policy) {
            let listed = root.read_only_subpaths.contains(&path);
            let known = entries
                .iter()
                .any(|e| matches!(&e.path, FileSystemPath::Path { path: p } if *p == path));
            if listed && !known {
                entries.push(FileSystemSandboxEntry {
                    path: FileSystemPath::Path { path },
                    access: FileSystemAccessMode::Read,
                    missing_path_behavior: Some(MissingPathBehavior::Skip),
                });
            }
        }
    }
    shown
}

/// Where the selection came from, in words (issue 17: no Rust enum names).
fn describe_source(source: ProfileSource) -> &'static str {
    match source {
        ProfileSource::CommandLine => "the command line (-P)",
        ProfileSource::DefaultPermissions => "default_permissions in the config",
        ProfileSource::AllowedProfilesDefault => {
            "allowed_permission_profiles in the config (it allows :workspace and :read-only and no default is set)"
        }
        ProfileSource::LegacySandboxMode => "the legacy sandbox_mode key in the config",
        ProfileSource::EmbeddedDefault => {
            "the embedded default (no config file, or a config that selects no profile)"
        }
    }
}

/// `write  /path`, `deny   glob /x/**/*.env`, `read   :root`, with `(skip if missing)`.
fn describe_entry(entry: &FileSystemSandboxEntry) -> String {
    let access = match entry.access {
        FileSystemAccessMode::Read => "read ",
        FileSystemAccessMode::Write => "write",
        FileSystemAccessMode::Deny => "deny ",
    };
    let target = match &entry.path {
        FileSystemPath::Path { path } => path.display().to_string(),
        FileSystemPath::GlobPattern { pattern } => format!("glob {pattern}"),
        FileSystemPath::Special { value } => match value {
            FileSystemSpecialPath::Root => ":root".to_owned(),
            FileSystemSpecialPath::Minimal => ":minimal".to_owned(),
            FileSystemSpecialPath::ProjectRoots { subpath: None } => ":workspace_roots".to_owned(),
            FileSystemSpecialPath::ProjectRoots {
                subpath: Some(subpath),
            } => format!(":workspace_roots/{}", subpath.display()),
            FileSystemSpecialPath::Tmpdir => ":tmpdir".to_owned(),
            FileSystemSpecialPath::SlashTmp => ":slash_tmp".to_owned(),
            FileSystemSpecialPath::Unknown { path, .. } => {
                format!("{path} (unknown, not enforced)")
            }
        },
    };
    let skip = if entry.missing_path_behavior.is_some() {
        " (skipped if missing)"
    } else {
        ""
    };
    format!("{access} {target}{skip}")
}
