//! Where later Airlock runs read their policy and configuration from (issue 11, red-team
//! finding F5): nothing a confined command can write may become policy for a later run.
//!
//! The locations, each a directory kept read-only (existing or missing: a missing one must
//! not be creatable) wherever a writable root contains it:
//! - `$AIRLOCK_HOME` (default `~/.airlock`): `config.toml`, `rules/*.rules` (amendments
//!   included), `hooks.json`, the audit log (spec 10 §Configuration);
//! - `$CODEX_HOME` (default `~/.codex`): the Codex configuration a Codex user shares;
//! - every project the configuration trusts (`[projects."<abs path>"] trust_level =
//!   "trusted"` in `$AIRLOCK_HOME/config.toml`): its `.airlock` directory, whose
//!   `config.toml` and `rules/*.rules` every later run in the project loads (spec 10, spec 02
//!   §Policy files in use). A project *inside* a writable root without being that root (a
//!   project nested in the workspace, a project under `/tmp` while the workspace is elsewhere)
//!   is not covered by the protected names at the top of each root; this list covers it.
//!
//! The trusted projects are read from the configuration file as it is on disk, which a
//! confined command cannot change (it lies in `$AIRLOCK_HOME`). Projects trusted only by a
//! `-c` override of one invocation are not listed. A file that cannot be read or parsed lists
//! no project: a later run cannot load such a file either, so it trusts none.
//!
//! Must not: decide what is writable (the queries do), or follow symlinks (the callers
//! resolve).

use std::path::Path;
use std::path::PathBuf;

use crate::builtins::AIRLOCK_PROJECT_DIR;
use crate::paths::absolutize;
use crate::paths::normalize_lexically;

/// Largest configuration file read for its trusted projects (a bigger one lists none; the
/// configuration loader reads it whole and would take long on it anyway).
const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// Why a later run trusts a location.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PolicySource {
    /// `$AIRLOCK_HOME` (or its default `~/.airlock`).
    AirlockHome,
    /// `$CODEX_HOME` (or its default `~/.codex`).
    CodexHome,
    /// The `.airlock` folder of a project the configuration trusts.
    TrustedProject {
        /// The project, as the configuration spells it.
        project: PathBuf,
        /// The configuration file that trusts it.
        config: PathBuf,
    },
}

/// One folder later runs read policy or configuration from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyLocation {
    /// The folder (absolute, lexically normalised, symlinks not resolved).
    pub path: PathBuf,
    /// Why.
    pub source: PolicySource,
}

impl PolicyLocation {
    /// Why the location is read-only, in words (for `permissions show` and refusals).
    #[must_use]
    pub fn reason(&self) -> String {
        match &self.source {
            PolicySource::AirlockHome | PolicySource::CodexHome => {
                "Airlock's or Codex's home: config, rules and audit log, always read-only"
                    .to_owned()
            }
            PolicySource::TrustedProject { project, config } => format!(
                "policy of the trusted project {}: later runs there load its .airlock/config.toml and .airlock/rules (trusted in {}); always read-only, must not be created",
                project.display(),
                config.display()
            ),
        }
    }
}

/// The projects `table` (a parsed `config.toml`) trusts: every `[projects."<path>"]` whose
/// `trust_level` is `"trusted"` and whose key is an absolute path, lexically normalised.
/// A key that is not absolute never matches a run's cwd, so it trusts nothing.
#[must_use]
pub fn trusted_project_dirs(table: &toml::Table) -> Vec<PathBuf> {
    let Some(projects) = table.get("projects").and_then(toml::Value::as_table) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = Vec::new();
    for (key, project) in projects {
        let trusted = project
            .get("trust_level")
            .and_then(toml::Value::as_str)
            .is_some_and(|level| level == "trusted");
        let path = Path::new(key);
        if trusted && path.is_absolute() {
            let path = normalize_lexically(path);
            if path.parent().is_some() && !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

/// A configuration file as last read: its path, identity and trusted projects.
type ReadConfig = (PathBuf, [i64; 7], Vec<PathBuf>);

/// The projects the configuration file `config` trusts (see [`trusted_project_dirs`]);
/// empty when it is missing, too big, not UTF-8 or not TOML.
///
/// A launch asks several times (every resolve context of the plan names the policy
/// locations), and a server asks on every call: the answer is kept per process with the
/// identity of the file it was read from (device, inode, size, modification and change
/// times, taken from the opened file), and the file is parsed again only when that changed.
#[must_use]
pub fn trusted_projects_in_file(config: &Path) -> Vec<PathBuf> {
    use std::io::Read as _;
    use std::os::unix::fs::MetadataExt as _;
    static LAST: std::sync::Mutex<Option<ReadConfig>> = std::sync::Mutex::new(None);
    let Ok(file) = std::fs::File::open(config) else {
        return Vec::new();
    };
    let identity = file.metadata().ok().map(|m| {
        [
            m.dev() as i64,
            m.ino() as i64,
            m.size() as i64,
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        ]
    });
    let mut last = LAST
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let (Some(identity), Some((path, known, projects))) = (identity, last.as_ref())
        && path == config
        && *known == identity
    {
        return projects.clone();
    }
    let mut text = String::new();
    if file
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)
        .is_err()
        || text.len() as u64 > MAX_CONFIG_BYTES
    {
        return Vec::new();
    }
    let projects = text
        .parse::<toml::Table>()
        .map(|table| trusted_project_dirs(&table))
        .unwrap_or_default();
    if let Some(identity) = identity {
        *last = Some((config.to_path_buf(), identity, projects.clone()));
    }
    projects
}

/// Every policy location of this process: `$AIRLOCK_HOME`, `$CODEX_HOME` (defaults under
/// `$HOME`; an unset one without `$HOME` is left out), then the `.airlock` folder of each
/// project `$AIRLOCK_HOME/config.toml` trusts. Absolute against `cwd`, without repeats.
#[must_use]
pub fn policy_locations_from_env(cwd: &Path) -> Vec<PolicyLocation> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = var("HOME");
    let mut out: Vec<PolicyLocation> = Vec::new();
    let mut push = |path: PathBuf, source: PolicySource| {
        if path.parent().is_some() && !out.iter().any(|l| l.path == path) {
            out.push(PolicyLocation { path, source });
        }
    };
    let mut airlock_home = None;
    for (name, default, source) in [
        ("AIRLOCK_HOME", ".airlock", PolicySource::AirlockHome),
        ("CODEX_HOME", ".codex", PolicySource::CodexHome),
    ] {
        if let Some(dir) = var(name).or_else(|| home.as_ref().map(|h| h.join(default))) {
            let dir = absolutize(&dir, cwd);
            if source == PolicySource::AirlockHome {
                airlock_home = Some(dir.clone());
            }
            push(dir, source);
        }
    }
    if let Some(airlock_home) = airlock_home {
        let config = airlock_home.join("config.toml");
        for project in trusted_projects_in_file(&config) {
            push(
                project.join(AIRLOCK_PROJECT_DIR),
                PolicySource::TrustedProject {
                    project,
                    config: config.clone(),
                },
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn only_absolute_trusted_projects_are_listed() {
        let table: toml::Table = "[projects.\"/w/a\"]\ntrust_level = \"trusted\"\n\
             [projects.\"/w/b\"]\ntrust_level = \"untrusted\"\n\
             [projects.\"rel\"]\ntrust_level = \"trusted\"\n\
             [projects.\"/w/c/../d/\"]\ntrust_level = \"trusted\"\n\
             [projects.\"/\"]\ntrust_level = \"trusted\"\n\
             [projects.\"/w/e\"]\nother = 1\n"
            .parse()
            .unwrap();
        assert_eq!(
            trusted_project_dirs(&table),
            [PathBuf::from("/w/a"), PathBuf::from("/w/d")]
        );
        assert!(trusted_project_dirs(&toml::Table::new()).is_empty());
    }

    #[test]
    fn a_config_file_that_cannot_be_read_trusts_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        assert!(trusted_projects_in_file(&config).is_empty());
        std::fs::write(&config, "[projects.\"/w/a\"\n").unwrap();
        assert!(trusted_projects_in_file(&config).is_empty());
        std::fs::write(&config, "[projects.\"/w/a\"]\ntrust_level = \"trusted\"\n").unwrap();
        assert_eq!(trusted_projects_in_file(&config), [PathBuf::from("/w/a")]);
    }

    #[test]
    fn a_changed_or_replaced_config_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        let trusting =
            |project: &str| format!("[projects.\"{project}\"]\ntrust_level = \"trusted\"\n");
        std::fs::write(&config, trusting("/w/a")).unwrap();
        assert_eq!(trusted_projects_in_file(&config), [PathBuf::from("/w/a")]);
        assert_eq!(
            trusted_projects_in_file(&config),
            [PathBuf::from("/w/a")],
            "kept"
        );
        // Rewritten in place (another size).
        std::fs::write(&config, trusting("/w/long-name")).unwrap();
        assert_eq!(
            trusted_projects_in_file(&config),
            [PathBuf::from("/w/long-name")]
        );
        // Replaced by a file of the same size (another inode), as editors save.
        let next = dir.path().join("config.toml.new");
        std::fs::write(&next, trusting("/w/long-nbme")).unwrap();
        std::fs::rename(&next, &config).unwrap();
        assert_eq!(
            trusted_projects_in_file(&config),
            [PathBuf::from("/w/long-nbme")]
        );
        std::fs::remove_file(&config).unwrap();
        assert!(trusted_projects_in_file(&config).is_empty(), "removed");
    }

    #[test]
    fn reasons_name_the_project_and_the_config() {
        let location = PolicyLocation {
            path: PathBuf::from("/w/a/.airlock"),
            source: PolicySource::TrustedProject {
                project: PathBuf::from("/w/a"),
                config: PathBuf::from("/h/.airlock/config.toml"),
            },
        };
        let reason = location.reason();
        assert!(
            reason.starts_with("policy of the trusted project /w/a:"),
            "{reason}"
        );
        assert!(reason.contains("/h/.airlock/config.toml"), "{reason}");
    }
}
