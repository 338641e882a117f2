//! Resolution of readable entries to concrete paths.
//!
//! `airlock-permissions` answers "which roots are writable" and "which are unreadable" but has
//! no public "which roots are readable" query, which a restricted-read Seatbelt policy needs
//! (reference `seatbelt.md` §2.2). This mirrors its entry resolution (reference
//! `permissions-config.md` §5) for that one purpose; the access decision itself still comes
//! from [`FileSystemPolicyQueries::resolve_access`].

use std::path::Path;
use std::path::PathBuf;

use airlock_permissions::FileSystemPolicyQueries;
use airlock_permissions::ResolveContext;
use airlock_permissions::absolutize;
use airlock_protocol::FileSystemPath;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::FileSystemSpecialPath;

/// The concrete path of an entry, or `None` for globs, `:minimal`, unknown tokens, an unset
/// `:tmpdir` and a missing `/tmp`.
fn resolve_entry(path: &FileSystemPath, ctx: &ResolveContext) -> Option<PathBuf> {
    match path {
        FileSystemPath::Path { path } => Some(absolutize(path, &ctx.cwd)),
        FileSystemPath::GlobPattern { .. } => None,
        FileSystemPath::Special { value } => match value {
            FileSystemSpecialPath::Root => Some(PathBuf::from("/")),
            FileSystemSpecialPath::ProjectRoots { subpath } => Some(match subpath {
                Some(sub) => absolutize(&ctx.cwd.join(sub), &ctx.cwd),
                None => absolutize(&ctx.cwd, &ctx.cwd),
            }),
            FileSystemSpecialPath::Tmpdir => {
                ctx.tmpdir.as_deref().map(|dir| absolutize(dir, &ctx.cwd))
            }
            FileSystemSpecialPath::SlashTmp => {
                let tmp = Path::new("/tmp");
                tmp.is_dir().then(|| tmp.to_path_buf())
            }
            FileSystemSpecialPath::Minimal | FileSystemSpecialPath::Unknown { .. } => None,
        },
    }
}

/// Resolved entries that grant reading and whose effective access (most specific entry, deny
/// globs included) is still readable, in entry order, without repeats.
pub(crate) fn readable_entry_paths(
    policy: &FileSystemSandboxPolicy,
    ctx: &ResolveContext,
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for entry in &policy.entries {
        if !entry.access.can_read() {
            continue;
        }
        let Some(path) = resolve_entry(&entry.path, ctx) else {
            continue;
        };
        if policy.resolve_access(&path, ctx).can_read() && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// Whether the filesystem root itself is readable under the policy.
pub(crate) fn root_is_readable(policy: &FileSystemSandboxPolicy, ctx: &ResolveContext) -> bool {
    policy.resolve_access(Path::new("/"), ctx).can_read()
}
