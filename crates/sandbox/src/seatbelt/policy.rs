//! Assembly of the whole SBPL text from its sections (reference `seatbelt.md` §2).

/// `(version 1)`, `(deny default)` and the process, sysctl, preference and terminal allowances
/// every command needs (reference §2.1).
pub(crate) const BASE_POLICY: &str = include_str!("sbpl/base.sbpl");

/// File reads of system locations for restricted-read (`:minimal`) profiles (reference §6).
pub(crate) const PLATFORM_DEFAULTS: &str = include_str!("sbpl/platform_defaults.sbpl");

/// Non-file runtime services for restricted-read (`:minimal`) profiles (reference §6).
pub(crate) const RUNTIME_DEFAULTS: &str = include_str!("sbpl/runtime_defaults.sbpl");

/// The Docker Desktop denials of reference §2.1.
///
/// Codex lists them in its base policy. Seatbelt lets a later rule override an earlier one
/// (that is how the deny-glob section beats `(allow file-read*)`), so here they close the
/// policy instead: after `(allow file-read*)`, a full-write rule or `(allow network-outbound)`
/// they still hold.
pub(crate) const DOCKER_DENIES: &str = include_str!("sbpl/docker_denies.sbpl");

/// The sections of one policy, each already rendered (empty = absent).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PolicySections {
    pub(crate) read: String,
    pub(crate) write: String,
    pub(crate) deny_globs: String,
    pub(crate) network: String,
    pub(crate) platform_defaults: bool,
}

impl PolicySections {
    /// Base, reads, writes, deny globs, network, platform defaults (when asked), Docker
    /// denials; non-empty sections joined with one blank line.
    pub(crate) fn render(&self) -> String {
        let defaults = self
            .platform_defaults
            .then(|| format!("{PLATFORM_DEFAULTS}\n{RUNTIME_DEFAULTS}"));
        [
            Some(BASE_POLICY),
            Some(self.read.as_str()),
            Some(self.write.as_str()),
            Some(self.deny_globs.as_str()),
            Some(self.network.as_str()),
            defaults.as_deref(),
            Some(DOCKER_DENIES),
        ]
        .into_iter()
        .flatten()
        .filter(|section| !section.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
    }
}
