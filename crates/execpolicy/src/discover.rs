//! Which rules files are in use (spec 02 §Policy files in use): every `*.rules` file
//! of `$AIRLOCK_HOME/rules/`, sorted by name, then the trusted project's
//! `.airlock/rules/*.rules`, sorted. Explicit `--rules` files replace both.

use std::io;
use std::path::{Path, PathBuf};

/// The `*.rules` files directly inside `dir`, sorted by file name. A missing folder
/// yields an empty list; any other I/O error is returned (callers fail closed).
///
/// # Errors
/// The error of reading `dir` or one of its entries.
pub fn rules_files_in(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "rules") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The policy files in use, in load order: `airlock_home/rules/*.rules`, then
/// `project/.airlock/rules/*.rules` when `trusted_project` is given.
///
/// # Errors
/// As [`rules_files_in`].
pub fn default_policy_files(
    airlock_home: &Path,
    trusted_project: Option<&Path>,
) -> io::Result<Vec<PathBuf>> {
    let mut files = rules_files_in(&airlock_home.join("rules"))?;
    if let Some(project) = trusted_project {
        files.extend(rules_files_in(&project.join(".airlock").join("rules"))?);
    }
    Ok(files)
}

/// Where amendments are written: `airlock_home/rules/default.rules`.
pub fn default_amendment_file(airlock_home: &Path) -> PathBuf {
    airlock_home.join("rules").join("default.rules")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_sorted_rules_files_home_first_then_project() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("rules/sub.rules")).unwrap();
        for name in ["b.rules", "a.rules", "notes.txt"] {
            std::fs::write(home.path().join("rules").join(name), "").unwrap();
        }
        std::fs::create_dir_all(project.path().join(".airlock/rules")).unwrap();
        std::fs::write(project.path().join(".airlock/rules/0.rules"), "").unwrap();
        let names: Vec<String> = default_policy_files(home.path(), Some(project.path()))
            .unwrap()
            .iter()
            .map(|p| {
                p.strip_prefix(p.parent().unwrap().parent().unwrap())
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect();
        // `sub.rules` is a folder; it is listed so that loading it fails loudly
        // instead of being skipped silently.
        assert_eq!(
            names,
            [
                "rules/a.rules",
                "rules/b.rules",
                "rules/sub.rules",
                "rules/0.rules"
            ]
        );
        assert!(default_policy_files(home.path(), None).unwrap().len() == 3);
        assert!(
            rules_files_in(&home.path().join("missing"))
                .unwrap()
                .is_empty()
        );
    }
}
