//! `ReadDenyMatcher`: the read check for in-process tools (reference `permissions-config.md` §5).

use std::path::Path;
use std::path::PathBuf;

use airlock_protocol::FileSystemSandboxPolicy;
use globset::GlobBuilder;
use globset::GlobMatcher;

use crate::context::ResolveContext;
use crate::error::PermissionsError;
use crate::error::Result;
use crate::paths::absolutize;
use crate::queries::FileSystemPolicyQueries;

/// Answers "may this path be read?" for a policy's deny entries.
///
/// Deny roots match as subtree prefixes against both the lexical and the canonical spelling of
/// the path (so a symlink into a denied directory is caught). Deny globs are git-style: `*` and
/// `?` stay inside one component, `**` crosses components, an unclosed `[` is a literal; a glob
/// that matches a directory denies everything below it. If a glob cannot be compiled, the
/// matcher built by [`ReadDenyMatcher::new`] denies every read (fail closed).
#[derive(Debug, Clone)]
pub struct ReadDenyMatcher {
    roots: Vec<PathBuf>,
    globs: Vec<GlobMatcher>,
    cwd: PathBuf,
    deny_all: bool,
}

impl ReadDenyMatcher {
    /// Builds the matcher; an invalid glob makes it deny everything.
    #[must_use]
    pub fn new(policy: &FileSystemSandboxPolicy, ctx: &ResolveContext) -> Self {
        Self::try_new(policy, ctx).unwrap_or_else(|_| Self {
            roots: Vec::new(),
            globs: Vec::new(),
            cwd: ctx.cwd.clone(),
            deny_all: true,
        })
    }

    /// Builds the matcher, or reports the first glob that does not compile.
    ///
    /// # Errors
    /// [`PermissionsError::InvalidGlob`].
    pub fn try_new(policy: &FileSystemSandboxPolicy, ctx: &ResolveContext) -> Result<Self> {
        let mut roots = Vec::new();
        for root in policy.get_unreadable_roots(ctx) {
            if let Ok(canonical) = crate::resolution_memo::canonicalize(&root)
                && canonical != root
            {
                roots.push(canonical);
            }
            roots.push(root);
        }
        let globs = policy
            .get_unreadable_globs_with_cwd(&ctx.cwd)
            .iter()
            .map(|pattern| compile_glob(pattern))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            roots,
            globs,
            cwd: ctx.cwd.clone(),
            deny_all: false,
        })
    }

    /// `true` when no read is allowed at all (an invalid glob was found).
    #[must_use]
    pub const fn denies_everything(&self) -> bool {
        self.deny_all
    }

    /// Whether reading `path` (relative → against the cwd) is denied.
    #[must_use]
    pub fn is_read_denied(&self, path: &Path) -> bool {
        if self.deny_all {
            return true;
        }
        let lexical = absolutize(path, &self.cwd);
        let canonical = canonicalize_existing_prefix(&lexical);
        let spellings = std::iter::once(&lexical).chain(canonical.as_ref());
        for spelling in spellings {
            if self.roots.iter().any(|root| spelling.starts_with(root)) {
                return true;
            }
            let denied = spelling
                .ancestors()
                .any(|candidate| self.globs.iter().any(|glob| glob.is_match(candidate)));
            if denied {
                return true;
            }
        }
        false
    }
}

/// The path with its longest existing prefix canonicalised (symlinks resolved) and the missing
/// rest appended, so a not-yet-created file behind a symlink is still recognised.
fn canonicalize_existing_prefix(path: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut current = path;
    loop {
        if let Ok(canonical) = crate::resolution_memo::canonicalize(current) {
            let mut out = canonical;
            out.extend(rest.iter().rev());
            return Some(out);
        }
        rest.push(current.file_name()?);
        current = current.parent()?;
    }
}

/// Compiles a git-style glob (unclosed `[` escaped to a literal).
pub(crate) fn compile_glob(pattern: &str) -> Result<GlobMatcher> {
    GlobBuilder::new(&escape_unclosed_brackets(pattern))
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|error| PermissionsError::InvalidGlob {
            pattern: pattern.to_owned(),
            message: error.kind().to_string(),
        })
}

/// Whether `pattern` matches `path` or one of its ancestors; an invalid pattern matches
/// everything (fail closed).
pub(crate) fn glob_matches_path_or_ancestor(pattern: &str, path: &Path) -> bool {
    compile_glob(pattern).map_or(true, |glob| {
        path.ancestors().any(|candidate| glob.is_match(candidate))
    })
}

/// Escapes each `[` that has no later `]`, so it matches itself as git does.
fn escape_unclosed_brackets(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    for (index, c) in pattern.char_indices() {
        if c == '[' && !pattern[index + 1..].contains(']') {
            out.push_str("\\[");
        } else {
            out.push(c);
        }
    }
    out
}
