//! Section 3, writable roots (spec 08 §Sections: "when any").
//!
//! Lists exactly the roots enforcement makes writable, and — so the text stays accurate — the
//! paths inside them that stay read-only, and whether the cwd itself is writable (the mandated
//! workspace-write sentence says "editing files in `cwd`", which a custom profile can contradict).

use std::path::Path;
use std::path::PathBuf;

use airlock_permissions::ENFORCED_PROTECTED_NAMES;
use airlock_permissions::WritableRoot;

/// The writable-roots section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritableRootsSection {
    /// The roots, sorted (never empty).
    pub roots: Vec<PathBuf>,
    /// Protected metadata names (`.git`, …) that stay read-only directly under *every* root.
    pub protected_names: Vec<String>,
    /// Every other read-only path inside a root, sorted (absolute).
    pub read_only_paths: Vec<PathBuf>,
    /// The cwd, when it is not writable.
    pub unwritable_cwd: Option<PathBuf>,
}

impl WritableRootsSection {
    /// The section for `roots`, or `None` when there are none.
    #[must_use]
    pub fn new(roots: &[WritableRoot], cwd: &Path, cwd_writable: bool) -> Option<Self> {
        if roots.is_empty() {
            return None;
        }
        // A protected name is summarised only when every root protects it, so the short form
        // never claims protection that some root lacks (an explicit entry can lift it).
        let protected_names: Vec<String> = ENFORCED_PROTECTED_NAMES
            .iter()
            .filter(|name| {
                roots
                    .iter()
                    .all(|root| root.read_only_subpaths.contains(&root.root.join(name)))
            })
            .map(|name| (*name).to_owned())
            .collect();
        // A path already covered by the summary (a protected name directly under *some* root,
        // possibly listed again under an enclosing root such as `/tmp`) is not repeated.
        let summarised = |path: &PathBuf| {
            roots.iter().any(|root| {
                protected_names
                    .iter()
                    .any(|name| *path == root.root.join(name))
            })
        };
        let mut read_only_paths: Vec<PathBuf> = roots
            .iter()
            .flat_map(|root| root.read_only_subpaths.iter())
            .filter(|path| !summarised(path))
            .cloned()
            .collect();
        read_only_paths.sort();
        read_only_paths.dedup();
        let mut sorted: Vec<PathBuf> = roots.iter().map(|root| root.root.clone()).collect();
        sorted.sort();
        sorted.dedup();
        Some(Self {
            roots: sorted,
            protected_names,
            read_only_paths,
            unwritable_cwd: (!cwd_writable).then(|| cwd.to_path_buf()),
        })
    }

    /// The section text (no trailing newline).
    #[must_use]
    pub fn render(&self) -> String {
        let mut lines = Vec::new();
        let quoted = quote_all(self.roots.iter().map(|root| root.display().to_string()));
        lines.push(if self.roots.len() == 1 {
            format!("The writable root is {quoted}.")
        } else {
            format!("The writable roots are {quoted}.")
        });
        if !self.protected_names.is_empty() {
            let names = quote_all(self.protected_names.iter().cloned());
            lines.push(format!(
                "Directly under every writable root, {names} stay read-only."
            ));
        }
        if !self.read_only_paths.is_empty() {
            let paths = quote_all(self.read_only_paths.iter().map(|p| p.display().to_string()));
            lines.push(format!(
                "These paths inside the writable roots stay read-only: {paths}."
            ));
        }
        if let Some(cwd) = &self.unwritable_cwd {
            lines.push(format!(
                "The current directory `{}` is not writable.",
                cwd.display()
            ));
        }
        lines.join("\n")
    }
}

/// `` `a`, `b` `` — backticked and comma-separated.
pub(crate) fn quote_all(items: impl Iterator<Item = String>) -> String {
    items
        .map(|item| format!("`{item}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(path: &str, read_only: &[&str]) -> WritableRoot {
        WritableRoot {
            root: PathBuf::from(path),
            read_only_subpaths: read_only.iter().map(PathBuf::from).collect(),
        }
    }

    #[test]
    fn summarises_only_names_protected_at_every_root() {
        let roots = [
            root(
                "/b",
                &["/b/.agents", "/b/.codex", "/b/.aws", "/elsewhere/gitdir"],
            ),
            root(
                "/a",
                &["/a/.git", "/a/.agents", "/a/.codex", "/a/.aws", "/a/docs"],
            ),
        ];
        let section = WritableRootsSection::new(&roots, Path::new("/a"), true).unwrap();
        assert_eq!(section.protected_names, [".agents", ".codex", ".aws"]);
        assert_eq!(
            section.render(),
            "The writable roots are `/a`, `/b`.\n\
             Directly under every writable root, `.agents`, `.codex`, `.aws` stay read-only.\n\
             These paths inside the writable roots stay read-only: `/a/.git`, `/a/docs`, \
             `/elsewhere/gitdir`."
        );
    }

    #[test]
    fn single_root_unwritable_cwd_and_no_roots() {
        let roots = [root("/opt", &[])];
        let section = WritableRootsSection::new(&roots, Path::new("/home/me"), false).unwrap();
        assert_eq!(
            section.render(),
            "The writable root is `/opt`.\nThe current directory `/home/me` is not writable."
        );
        assert!(WritableRootsSection::new(&[], Path::new("/"), false).is_none());
    }
}
