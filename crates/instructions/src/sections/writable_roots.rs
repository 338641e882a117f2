//! Section 3, writable roots (spec 08 §Sections: "when any").
//!
//! Lists exactly the roots enforcement makes writable, and — so the text stays accurate — the
//! paths inside them that stay read-only, and whether the cwd itself is writable (the mandated
//! workspace-write sentence says "editing files in `cwd`", which a custom profile can contradict).
//! The startup entries of a `$HOME` inside a root (issue 11; `home_protected_paths`) are
//! summarised in two sentences per home instead of one path each.

use std::path::Path;
use std::path::PathBuf;

use airlock_permissions::ENFORCED_PROTECTED_NAMES;
use airlock_permissions::HomeProtection;
use airlock_permissions::WritableRoot;
use airlock_permissions::home_protected_paths;

/// The startup entries of one `$HOME` inside a writable root, as the text states them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HomeSummary {
    /// The home, spelled under its root.
    pub home: PathBuf,
    /// Existing dot entries an explicit entry keeps writable (sorted names).
    pub except: Vec<String>,
    /// Missing well-known startup names that cannot be created (list order).
    pub missing: Vec<String>,
}

/// The summaries of `homes` under `roots`, and every path they cover.
fn home_summaries(roots: &[WritableRoot], homes: &[PathBuf]) -> (Vec<HomeSummary>, Vec<PathBuf>) {
    let mut summaries: Vec<HomeSummary> = Vec::new();
    let mut covered = Vec::new();
    for root in roots {
        let canonical = std::fs::canonicalize(&root.root).unwrap_or_else(|_| root.root.clone());
        for home in homes {
            let mut summary = HomeSummary {
                home: PathBuf::new(),
                except: Vec::new(),
                missing: Vec::new(),
            };
            for (path, why) in home_protected_paths(&root.root, &canonical, home) {
                let listed = root.read_only_subpaths.contains(&path);
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                match why {
                    HomeProtection::Existing { home, .. } => {
                        summary.home = home;
                        if listed {
                            covered.push(path);
                        } else {
                            summary.except.push(name);
                        }
                    }
                    HomeProtection::Missing { home, .. } => {
                        summary.home = home;
                        if listed {
                            covered.push(path);
                            summary.missing.push(name);
                        }
                    }
                    // Listed as paths: the home itself, a symlink's target.
                    _ => {}
                }
            }
            if !summary.home.as_os_str().is_empty()
                && !summaries.iter().any(|s| s.home == summary.home)
            {
                summary.except.sort();
                summaries.push(summary);
            }
        }
    }
    (summaries, covered)
}

/// The writable-roots section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritableRootsSection {
    /// The roots, sorted (never empty).
    pub roots: Vec<PathBuf>,
    /// Protected metadata names (`.git`, …) that stay read-only directly under *every* root.
    pub protected_names: Vec<String>,
    /// Every other read-only path inside a root, sorted (absolute).
    pub read_only_paths: Vec<PathBuf>,
    /// The startup entries of each `$HOME` inside a root.
    pub homes: Vec<HomeSummary>,
    /// The cwd, when it is not writable.
    pub unwritable_cwd: Option<PathBuf>,
}

impl WritableRootsSection {
    /// The section for `roots` (with `homes`, the user's `$HOME` directories, see
    /// `airlock_permissions::ResolveContext::user_homes`), or `None` when there are none.
    #[must_use]
    pub fn new(
        roots: &[WritableRoot],
        homes: &[PathBuf],
        cwd: &Path,
        cwd_writable: bool,
    ) -> Option<Self> {
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
        let (homes, in_homes) = home_summaries(roots, homes);
        let mut read_only_paths: Vec<PathBuf> = roots
            .iter()
            .flat_map(|root| root.read_only_subpaths.iter())
            .filter(|path| !summarised(path) && !in_homes.contains(path))
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
            homes,
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
        for home in &self.homes {
            let except = if home.except.is_empty() {
                String::new()
            } else {
                format!(", except {}", quote_all(home.except.iter().cloned()))
            };
            lines.push(format!(
                "In the home directory `{}`, every existing entry whose name starts with `.` stays read-only{except}.",
                home.home.display()
            ));
            if !home.missing.is_empty() {
                lines.push(format!(
                    "These startup names in the home directory `{}` do not exist and cannot be created: {}.",
                    home.home.display(),
                    quote_all(home.missing.iter().cloned())
                ));
            }
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
    #![allow(clippy::unwrap_used)]

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
        let section = WritableRootsSection::new(&roots, &[], Path::new("/a"), true).unwrap();
        assert_eq!(section.protected_names, [".agents", ".codex", ".aws"]);
        assert_eq!(
            section.render(),
            "The writable roots are `/a`, `/b`.\n\
             Directly under every writable root, `.agents`, `.codex`, `.aws` stay read-only.\n\
             These paths inside the writable roots stay read-only: `/a/.git`, `/a/docs`, \
             `/elsewhere/gitdir`."
        );
    }

    /// A `$HOME` that is the workspace: its dot entries and missing startup names are said
    /// in two sentences, not path by path; an entry the profile lifts is named as an
    /// exception, and the user's other files are not mentioned.
    #[test]
    fn a_home_inside_a_root_is_summarised() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().canonicalize().unwrap();
        std::fs::write(home.join(".bashrc"), "").unwrap();
        std::fs::create_dir(home.join(".cache")).unwrap();
        std::fs::write(home.join("notes.txt"), "").unwrap();
        let mut read_only: Vec<PathBuf> = home_protected_paths(&home, &home, &home)
            .into_iter()
            .map(|(path, _)| path)
            .filter(|path| !path.ends_with(".cache"))
            .collect();
        read_only.push(home.join("docs"));
        let roots = [WritableRoot {
            root: home.clone(),
            read_only_subpaths: read_only,
        }];
        let section =
            WritableRootsSection::new(&roots, std::slice::from_ref(&home), &home, true).unwrap();
        assert_eq!(section.read_only_paths, [home.join("docs")]);
        let text = section.render();
        let h = home.display();
        assert!(
            text.contains(&format!(
                "In the home directory `{h}`, every existing entry whose name starts with `.` stays read-only, except `.cache`.\n"
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "These startup names in the home directory `{h}` do not exist and cannot be created: `.bash_profile`,"
            )),
            "{text}"
        );
        assert!(
            !text.contains("`.bashrc`") && !text.contains("notes.txt"),
            "{text}"
        );
    }

    #[test]
    fn single_root_unwritable_cwd_and_no_roots() {
        let roots = [root("/opt", &[])];
        let section = WritableRootsSection::new(&roots, &[], Path::new("/home/me"), false).unwrap();
        assert_eq!(
            section.render(),
            "The writable root is `/opt`.\nThe current directory `/home/me` is not writable."
        );
        assert!(WritableRootsSection::new(&[], &[], Path::new("/"), false).is_none());
    }
}
