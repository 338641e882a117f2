//! Which environment variables a sandboxed command receives: Codex's
//! `[shell_environment_policy]` (keys `inherit`, `ignore_default_excludes`,
//! `exclude`, `set`, `include_only`), with Airlock's stricter default excludes
//! (issue 4: secrets are not inherited unless the user opts back in).
//!
//! Steps, in order: start from `inherit` (`all` — the default —, `core`, or `none`);
//! unless `ignore_default_excludes = true`, drop names matching `*KEY*`, `*SECRET*`,
//! `*TOKEN*`, `*PASSWORD*`, `*CREDENTIAL*`, and `BASH_ENV` and `ENV` (files a
//! non-interactive bash or a POSIX shell sources at start, issue 17); drop names matching any `exclude` pattern;
//! add every `set` pair; finally, if `include_only` is non-empty, keep only names
//! matching one of its patterns. Patterns are wildcards (`*` any run of characters,
//! `?` one character) matched case-insensitively against the whole name. A small
//! matcher instead of a glob library: this runs before every sandboxed command, and
//! compiling regexes for a handful of patterns cost more than the whole launch.

use std::collections::BTreeMap;
use std::ffi::OsString;

/// Variables kept by `inherit = "core"`.
pub const CORE_VARIABLES: [&str; 9] = [
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP",
];

/// Patterns dropped unless `ignore_default_excludes = true`: secret-looking names, and the
/// start-up files of shells (`BASH_ENV` for non-interactive bash, `ENV` for `sh -i` and
/// POSIX-mode shells), which would run code the policy layer never saw.
pub const DEFAULT_EXCLUDES: [&str; 7] = [
    "*KEY*",
    "*SECRET*",
    "*TOKEN*",
    "*PASSWORD*",
    "*CREDENTIAL*",
    "BASH_ENV",
    "ENV",
];

/// What to start from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Inherit {
    /// Every variable of the parent.
    #[default]
    All,
    /// Only [`CORE_VARIABLES`].
    Core,
    /// Nothing.
    None,
}

/// A parsed `[shell_environment_policy]`.
#[derive(Debug, Clone, Default)]
pub struct ShellEnvironmentPolicy {
    /// Starting set.
    pub inherit: Inherit,
    /// Keep secrets-looking names.
    pub ignore_default_excludes: bool,
    /// Extra patterns to drop.
    pub exclude: Vec<String>,
    /// Variables to set.
    pub set: BTreeMap<String, String>,
    /// If non-empty, keep only names matching these.
    pub include_only: Vec<String>,
}

/// A malformed `[shell_environment_policy]` table.
#[derive(Debug, thiserror::Error)]
pub enum EnvPolicyError {
    /// A key has the wrong type or value.
    #[error("invalid config key `shell_environment_policy.{key}`: {message}")]
    Invalid {
        /// The key below the table.
        key: String,
        /// What was expected.
        message: String,
    },
}

fn invalid(key: &str, message: impl Into<String>) -> EnvPolicyError {
    EnvPolicyError::Invalid {
        key: key.to_string(),
        message: message.into(),
    }
}

fn string_list(value: &toml::Value, key: &str) -> Result<Vec<String>, EnvPolicyError> {
    let list = value
        .as_array()
        .ok_or_else(|| invalid(key, "expected a list of strings"))?;
    list.iter()
        .map(|item| {
            item.as_str()
                .map(str::to_string)
                .ok_or_else(|| invalid(key, "expected a list of strings"))
        })
        .collect()
}

impl ShellEnvironmentPolicy {
    /// Reads the `shell_environment_policy` table of a config (absent → defaults).
    ///
    /// # Errors
    /// [`EnvPolicyError::Invalid`] naming the key and what it must be.
    pub fn from_config(config: &toml::Table) -> Result<Self, EnvPolicyError> {
        let mut policy = Self::default();
        let Some(value) = config.get("shell_environment_policy") else {
            return Ok(policy);
        };
        let table = value
            .as_table()
            .ok_or_else(|| invalid("", "expected a table"))?;
        for (key, value) in table {
            match key.as_str() {
                "inherit" => {
                    policy.inherit = match value.as_str() {
                        Some("all") => Inherit::All,
                        Some("core") => Inherit::Core,
                        Some("none") => Inherit::None,
                        _ => return Err(invalid(key, "expected \"all\", \"core\" or \"none\"")),
                    }
                }
                "ignore_default_excludes" => {
                    policy.ignore_default_excludes = value
                        .as_bool()
                        .ok_or_else(|| invalid(key, "expected true or false"))?;
                }
                "exclude" => policy.exclude = string_list(value, key)?,
                "include_only" => policy.include_only = string_list(value, key)?,
                "set" => {
                    let set = value
                        .as_table()
                        .ok_or_else(|| invalid(key, "expected a table of strings"))?;
                    for (name, v) in set {
                        let text = v
                            .as_str()
                            .ok_or_else(|| invalid(&format!("set.{name}"), "expected a string"))?;
                        policy.set.insert(name.clone(), text.to_string());
                    }
                }
                // Codex knows a few more (e.g. `experimental_use_profile`); they do not
                // change which variables a command sees here.
                _ => {}
            }
        }
        Ok(policy)
    }

    /// Applies the policy to `vars` (the parent environment).
    pub fn apply(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> Vec<(OsString, OsString)> {
        let matches_any = |patterns: &[String], name: &OsString| {
            let name = name.to_string_lossy();
            patterns.iter().any(|p| wildcard_match(p, &name))
        };
        let mut out: BTreeMap<OsString, OsString> = vars
            .into_iter()
            .filter(|(name, _)| match self.inherit {
                Inherit::All => true,
                Inherit::Core => CORE_VARIABLES.iter().any(|core| name == core),
                Inherit::None => false,
            })
            .filter(|(name, _)| {
                self.ignore_default_excludes
                    || !DEFAULT_EXCLUDES
                        .iter()
                        .any(|p| wildcard_match(p, &name.to_string_lossy()))
            })
            .filter(|(name, _)| !matches_any(&self.exclude, name))
            .collect();
        for (name, value) in &self.set {
            out.insert(name.into(), value.into());
        }
        if !self.include_only.is_empty() {
            out.retain(|name, _| matches_any(&self.include_only, name));
        }
        out.into_iter().collect()
    }
}

/// Case-insensitive whole-string match of `pattern` (`*`, `?`) against `name`, by
/// backtracking on the last `*` (linear for the patterns used here).
///
/// Runs for every variable against every pattern on each launch, so the common case
/// (both ASCII) compares bytes in place; anything else is lower-cased first.
pub fn wildcard_match(pattern: &str, name: &str) -> bool {
    if pattern.is_ascii() && name.is_ascii() {
        return match_folded(pattern.as_bytes(), name.as_bytes(), |a, b| {
            a.eq_ignore_ascii_case(b)
        });
    }
    let p: Vec<char> = pattern.chars().flat_map(char::to_lowercase).collect();
    let n: Vec<char> = name.chars().flat_map(char::to_lowercase).collect();
    match_folded(&p, &n, |a, b| a == b)
}

/// The matcher of [`wildcard_match`] over already comparable units; `*` and `?` are
/// recognised in `p` by `unit_eq` against the ASCII wildcard characters.
fn match_folded<T: Copy + From<u8>>(p: &[T], n: &[T], unit_eq: impl Fn(&T, &T) -> bool) -> bool {
    let (star_unit, any_unit) = (T::from(b'*'), T::from(b'?'));
    let is = |unit: &T, wildcard: &T| unit_eq(unit, wildcard);
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len()
            && !is(&p[pi], &star_unit)
            && (is(&p[pi], &any_unit) || unit_eq(&p[pi], &n[ni]))
        {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && is(&p[pi], &star_unit) {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| is(c, &star_unit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(list: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        list.iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    fn names(out: &[(OsString, OsString)]) -> Vec<String> {
        out.iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    fn policy(toml_text: &str) -> ShellEnvironmentPolicy {
        ShellEnvironmentPolicy::from_config(&toml_text.parse::<toml::Table>().unwrap()).unwrap()
    }

    const PARENT: &[(&str, &str)] = &[
        ("PATH", "/bin"),
        ("HOME", "/root"),
        ("OPENAI_API_KEY", "sk"),
        ("github_token", "t"),
        ("DB_PASSWORD", "p"),
        ("AWS_SECRET_ACCESS_KEY", "s"),
        ("GOOGLE_APPLICATION_CREDENTIALS", "c"),
        ("LANG", "C.UTF-8"),
    ];

    #[test]
    fn default_drops_secret_looking_names_case_insensitively() {
        let out = policy("").apply(vars(PARENT));
        assert_eq!(names(&out), ["HOME", "LANG", "PATH"]);
    }

    #[test]
    fn shell_start_up_files_are_dropped_by_default() {
        let parent = vars(&[
            ("BASH_ENV", "/tmp/x"),
            ("ENV", "/tmp/y"),
            ("ENVIRONMENT", "prod"),
        ]);
        assert_eq!(names(&policy("").apply(parent.clone())), ["ENVIRONMENT"]);
        let kept = policy("[shell_environment_policy]\nignore_default_excludes = true\n");
        assert_eq!(
            names(&kept.apply(parent)),
            ["BASH_ENV", "ENV", "ENVIRONMENT"]
        );
    }

    #[test]
    fn codex_keys_in_order() {
        let p = policy(
            r#"[shell_environment_policy]
inherit = "core"
ignore_default_excludes = true
exclude = ["HO*"]
set = { CI = "1", OPENAI_API_KEY = "x" }
include_only = ["PATH", "CI", "*_KEY"]"#,
        );
        let out = p.apply(vars(PARENT));
        assert_eq!(names(&out), ["CI", "OPENAI_API_KEY", "PATH"]);
        assert_eq!(
            policy("[shell_environment_policy]\ninherit = \"none\"").apply(vars(PARENT)),
            vec![]
        );
    }

    #[test]
    fn wildcards() {
        assert!(wildcard_match("*KEY*", "openai_api_key"));
        assert!(wildcard_match("*key*", "KEYRING"));
        assert!(!wildcard_match("*KEY*", "MONKEE"));
        assert!(wildcard_match("HO?E", "home"));
        assert!(wildcard_match("*_KEY", "A_B_KEY"));
        assert!(!wildcard_match("*_KEY", "A_KEYS"));
        assert!(wildcard_match("*", ""));
        assert!(!wildcard_match("?", ""));
        // Non-ASCII names and patterns are lower-cased before matching.
        assert!(wildcard_match("*KEY*", "ÄPI_KEY"));
        assert!(wildcard_match("ÄB*", "äbc"));
        assert!(!wildcard_match("ÄB?", "äb"));
        assert!(wildcard_match("*_token", "Ünïcode_TOKEN"));
    }

    #[test]
    fn bad_values_name_the_key() {
        let table: toml::Table = "[shell_environment_policy]\ninherit = \"some\""
            .parse()
            .unwrap();
        let err = ShellEnvironmentPolicy::from_config(&table).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid config key `shell_environment_policy.inherit`: expected \"all\", \"core\" or \"none\""
        );
        let table: toml::Table = "[shell_environment_policy]\nexclude = \"X\""
            .parse()
            .unwrap();
        assert!(
            ShellEnvironmentPolicy::from_config(&table)
                .unwrap_err()
                .to_string()
                .contains("exclude")
        );
    }
}
