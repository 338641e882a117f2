//! The access-rule builder and the file-read / file-write sections
//! (reference `seatbelt.md` §2.2, §2.3 and §3).

use super::error::Result;
use super::params::SeatbeltParams;
use super::roots::AccessRoot;
use super::roots::AccessScope;

/// One `(allow <action> …)` rule over `roots`, each root bound to `<PREFIX>_<i>` and each of
/// its exclusions to `<PREFIX>_<i>_EXCLUDED_<j>` (reference §3). An excluded path is refused
/// both as a literal and as a subtree, so the protected name itself cannot be created. One
/// component (and one `require-not`) per line; the reference joins them with spaces, which
/// SBPL reads the same. Empty when there are no roots.
pub(crate) fn access_rule(
    action: &str,
    prefix: &str,
    roots: &[AccessRoot],
    params: &mut SeatbeltParams,
) -> Result<String> {
    if roots.is_empty() {
        return Ok(String::new());
    }
    let mut components = Vec::with_capacity(roots.len());
    for (index, root) in roots.iter().enumerate() {
        let key = format!("{prefix}_{index}");
        let root_param = params.define(key.clone(), &root.root)?;
        let subpath = format!("(subpath {root_param})");
        if root.excluded.is_empty() {
            components.push(subpath);
            continue;
        }
        let mut parts = vec![subpath];
        for (excluded_index, excluded) in root.excluded.iter().enumerate() {
            let param = params.define(format!("{key}_EXCLUDED_{excluded_index}"), excluded)?;
            parts.push(format!("(require-not (literal {param}))"));
            parts.push(format!("(require-not (subpath {param}))"));
        }
        components.push(format!("(require-all\n    {})", parts.join("\n    ")));
    }
    Ok(format!("(allow {action}\n  {}\n)", components.join("\n  ")))
}

/// The file-read section: `(allow file-read*)` for everything, else the access rule with
/// prefix `READABLE_ROOT`; empty when nothing is readable by path (reference §2.2).
pub(crate) fn read_section(scope: &AccessScope, params: &mut SeatbeltParams) -> Result<String> {
    let rule = match scope {
        AccessScope::Everything => "(allow file-read*)".to_owned(),
        AccessScope::Roots(roots) => access_rule("file-read*", "READABLE_ROOT", roots, params)?,
    };
    Ok(with_comment("; file reads", rule))
}

/// The file-write section: every path for full write, else the access rule with prefix
/// `WRITABLE_ROOT`; empty when nothing is writable (reference §2.3).
pub(crate) fn write_section(scope: &AccessScope, params: &mut SeatbeltParams) -> Result<String> {
    let rule = match scope {
        AccessScope::Everything => "(allow file-write* (regex #\"^/\"))".to_owned(),
        AccessScope::Roots(roots) => access_rule("file-write*", "WRITABLE_ROOT", roots, params)?,
    };
    Ok(with_comment("; file writes", rule))
}

fn with_comment(comment: &str, rule: String) -> String {
    if rule.is_empty() {
        rule
    } else {
        format!("{comment}\n{rule}\n")
    }
}
