//! The `filesystem` table of one profile (reference `permissions-config.md` §2–3, spec 04
//! §Config): keys (absolute, `~/…`, `:token`), access values, scoped subpath tables and globs,
//! compiled into sorted `FileSystemSandboxEntry`s with `glob_scan_max_depth`.

use std::num::NonZeroUsize;
use std::path::Path;
use std::path::PathBuf;

use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemPath;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSpecialPath;

use super::Compiler;
use crate::error::ConfigProblem;
use crate::error::Result;
use crate::paths::expand_home;
use crate::paths::is_glob;
use crate::paths::is_valid_subpath;
use crate::paths::normalize_lexically;

/// Where a filesystem key points before its value is applied.
enum Base {
    /// An absolute path (after `~` expansion); may contain glob characters.
    Path(PathBuf),
    /// `:workspace_roots` / `:project_roots`.
    WorkspaceRoots,
    /// `:root`, `:minimal`, `:tmpdir`, `:slash_tmp` (no nested entries).
    Fixed(FileSystemSpecialPath),
    /// Any other `:token`.
    Unknown(String),
}

impl Compiler<'_> {
    /// The `filesystem` table: entries in sorted key order, and `glob_scan_max_depth`.
    pub(super) fn filesystem(
        &mut self,
        value: Option<&toml::Value>,
    ) -> Result<(Vec<FileSystemSandboxEntry>, Option<NonZeroUsize>)> {
        let empty = toml::Table::new();
        let table = match value {
            None => &empty,
            Some(toml::Value::Table(table)) => table,
            Some(other) => return Err(self.wrong_type(&["filesystem"], "a table", other)),
        };
        let depth = match table.get("glob_scan_max_depth") {
            None => None,
            Some(toml::Value::Integer(depth)) => {
                let parsed = usize::try_from(*depth).ok().and_then(NonZeroUsize::new);
                match parsed {
                    Some(depth) => Some(depth),
                    None => {
                        return Err(self.error(
                            &["filesystem", "glob_scan_max_depth"],
                            ConfigProblem::GlobDepthTooSmall { value: *depth },
                        ));
                    }
                }
            }
            Some(other) => {
                return Err(self.wrong_type(
                    &["filesystem", "glob_scan_max_depth"],
                    "an integer of at least 1",
                    other,
                ));
            }
        };
        let mut keys: Vec<&String> = table
            .keys()
            .filter(|key| *key != "glob_scan_max_depth")
            .collect();
        keys.sort();
        let mut entries = Vec::new();
        for key in keys {
            let value = &table[key.as_str()];
            self.filesystem_key(key, value, &mut entries)?;
        }
        let recognised = entries.iter().any(|entry: &FileSystemSandboxEntry| {
            !matches!(
                entry.path,
                FileSystemPath::Special {
                    value: FileSystemSpecialPath::Unknown { .. }
                }
            )
        });
        if !recognised {
            let id = self.id.to_owned();
            self.warn(format!(
                "permissions profile `{id}` has no filesystem entries Airlock recognises, so commands can read and write nothing; add entries such as \":root\" = \"read\" or extend `:read-only`"
            ));
        }
        if depth.is_none() {
            let deep = entries.iter().any(|entry| {
                matches!(&entry.path, FileSystemPath::GlobPattern { pattern } if pattern.contains("**"))
            });
            if deep {
                let key = self.key(&["filesystem", "glob_scan_max_depth"]);
                self.warn(format!(
                    "deny globs with `**` are expanded by scanning the whole tree on Linux; set `{key}` to bound the scan, or list the levels (`*.env`, `*/*.env`)"
                ));
            }
        }
        Ok((entries, depth))
    }

    /// One filesystem key with a plain access or a scoped table.
    fn filesystem_key(
        &mut self,
        key: &str,
        value: &toml::Value,
        entries: &mut Vec<FileSystemSandboxEntry>,
    ) -> Result<()> {
        let base = self.parse_key(key)?;
        if let Base::Unknown(token) = &base {
            let path = self.key(&["filesystem", key]);
            self.warn(format!(
                "`{path}`: the token `{token}` is not known to this version of Airlock; the entry is kept but not enforced"
            ));
        }
        match value {
            toml::Value::Table(scoped) => {
                if matches!(base, Base::Fixed(_)) {
                    return Err(self.error(
                        &["filesystem", key],
                        ConfigProblem::NestedNotSupported {
                            path: key.to_owned(),
                        },
                    ));
                }
                let mut subpaths: Vec<&String> = scoped.keys().collect();
                subpaths.sort();
                for subpath in subpaths {
                    let access =
                        self.access(&["filesystem", key, subpath], &scoped[subpath.as_str()])?;
                    let subpath = if subpath == "." {
                        None
                    } else if is_valid_subpath(subpath) {
                        Some(subpath.as_str())
                    } else {
                        return Err(self.error(
                            &["filesystem", key, subpath],
                            ConfigProblem::BadSubpath {
                                subpath: subpath.clone(),
                            },
                        ));
                    };
                    entries.push(self.entry(key, &base, subpath, access)?);
                }
            }
            other => {
                let access = self.access(&["filesystem", key], other)?;
                entries.push(self.entry(key, &base, None, access)?);
            }
        }
        Ok(())
    }

    /// Classifies a filesystem key.
    fn parse_key(&self, key: &str) -> Result<Base> {
        if let Some(token) = key.strip_prefix(':') {
            return Ok(match token {
                "root" => Base::Fixed(FileSystemSpecialPath::Root),
                "minimal" => Base::Fixed(FileSystemSpecialPath::Minimal),
                "tmpdir" => Base::Fixed(FileSystemSpecialPath::Tmpdir),
                "slash_tmp" => Base::Fixed(FileSystemSpecialPath::SlashTmp),
                // `:project_roots` is the pre-#22624 spelling, still accepted by 0.169.
                "workspace_roots" | "project_roots" => Base::WorkspaceRoots,
                _ => Base::Unknown(key.to_owned()),
            });
        }
        match expand_home(key, self.config.home.as_deref()) {
            Ok(Some(path)) => Ok(Base::Path(normalize_lexically(&path))),
            Ok(None) if Path::new(key).is_absolute() => {
                Ok(Base::Path(normalize_lexically(Path::new(key))))
            }
            Ok(None) => Err(self.error(
                &["filesystem", key],
                ConfigProblem::PathNotAbsolute {
                    path: key.to_owned(),
                },
            )),
            Err(()) => Err(self.error(
                &["filesystem", key],
                ConfigProblem::HomeUnset {
                    path: key.to_owned(),
                },
            )),
        }
    }

    /// An access string.
    fn access(&self, rest: &[&str], value: &toml::Value) -> Result<FileSystemAccessMode> {
        let toml::Value::String(text) = value else {
            return Err(self.wrong_type(
                rest,
                "\"read\", \"write\", \"deny\" or a table of subpaths",
                value,
            ));
        };
        match text.as_str() {
            "read" => Ok(FileSystemAccessMode::Read),
            "write" => Ok(FileSystemAccessMode::Write),
            "deny" | "none" => Ok(FileSystemAccessMode::Deny),
            _ => Err(self.error(
                rest,
                ConfigProblem::InvalidAccess {
                    value: text.clone(),
                },
            )),
        }
    }

    /// The entry for `base` (+ `subpath`) with `access`, applying the glob rules.
    fn entry(
        &mut self,
        key: &str,
        base: &Base,
        subpath: Option<&str>,
        access: FileSystemAccessMode,
    ) -> Result<FileSystemSandboxEntry> {
        let mut rest = vec!["filesystem", key];
        rest.extend(subpath);
        match base {
            Base::Fixed(special) => Ok(FileSystemSandboxEntry::special(special.clone(), access)),
            Base::Unknown(token) => Ok(FileSystemSandboxEntry::special(
                FileSystemSpecialPath::Unknown {
                    path: token.clone(),
                    subpath: subpath.map(PathBuf::from),
                },
                access,
            )),
            Base::Path(path) => {
                let full = subpath.map_or_else(|| path.clone(), |sub| path.join(sub));
                let text = full.to_string_lossy().into_owned();
                if !is_glob(&text) {
                    return Ok(FileSystemSandboxEntry::path(full, access));
                }
                self.glob_entry(&rest, &text, access, |prefix| FileSystemPath::Path {
                    path: PathBuf::from(prefix),
                })
            }
            Base::WorkspaceRoots => {
                let Some(sub) = subpath else {
                    return Ok(FileSystemSandboxEntry::special(
                        FileSystemSpecialPath::ProjectRoots { subpath: None },
                        access,
                    ));
                };
                if !is_glob(sub) {
                    return Ok(FileSystemSandboxEntry::special(
                        FileSystemSpecialPath::ProjectRoots {
                            subpath: Some(sub.into()),
                        },
                        access,
                    ));
                }
                self.glob_entry(&rest, sub, access, |prefix| FileSystemPath::Special {
                    value: FileSystemSpecialPath::ProjectRoots {
                        subpath: Some(prefix.into()),
                    },
                })
            }
        }
    }

    /// A glob: `deny` keeps the pattern; `read`/`write` only with a single trailing `/**` on an
    /// otherwise literal prefix, which becomes a subtree grant (reference §3).
    fn glob_entry(
        &mut self,
        rest: &[&str],
        pattern: &str,
        access: FileSystemAccessMode,
        subtree: impl FnOnce(&str) -> FileSystemPath,
    ) -> Result<FileSystemSandboxEntry> {
        if access == FileSystemAccessMode::Deny {
            return Ok(FileSystemSandboxEntry::deny_glob(pattern));
        }
        match pattern.strip_suffix("/**") {
            Some(prefix) if !prefix.is_empty() && !is_glob(prefix) => {
                let path = self.key(rest);
                self.warn(format!(
                    "`{path}`: `{pattern}` is treated as the whole subtree `{prefix}`"
                ));
                Ok(FileSystemSandboxEntry {
                    path: subtree(prefix),
                    access,
                    missing_path_behavior: None,
                })
            }
            _ => Err(self.error(
                rest,
                ConfigProblem::GlobNeedsDeny {
                    path: pattern.to_owned(),
                },
            )),
        }
    }
}
