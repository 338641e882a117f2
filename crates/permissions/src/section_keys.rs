//! Unknown keys inside the `[exec_policy]`, `[sandbox]` and `[shell_environment_policy]`
//! tables of `config.toml` (spec 10 §Configuration). Those tables are read by other layers
//! (core, sandbox), which look up only the keys they know; a misspelt key would otherwise
//! be silently ignored and leave the default in force (e.g. a typo in
//! `allow_rules_bypass_sandbox = false` keeps allow rules bypassing the sandbox). This
//! module only warns; the owning layers still validate the values.

/// One table whose keys are checked: its name, the keys Airlock reads, and the keys a
/// Codex config may carry that Airlock accepts but does not use (no warning).
struct Section {
    name: &'static str,
    used: &'static [&'static str],
    accepted_ignored: &'static [&'static str],
}

const SECTIONS: [Section; 3] = [
    Section {
        name: "exec_policy",
        used: &["allow_rules_bypass_sandbox"],
        accepted_ignored: &[],
    },
    Section {
        name: "sandbox",
        used: &["bwrap_path"],
        accepted_ignored: &[],
    },
    Section {
        name: "shell_environment_policy",
        used: &[
            "inherit",
            "ignore_default_excludes",
            "exclude",
            "include_only",
            "set",
        ],
        // Codex's profile switch; it does not change which variables a command sees here.
        accepted_ignored: &["experimental_use_profile"],
    },
];

/// One warning per unknown key of the checked tables, naming `origin` (the config file),
/// the table and the key, with the closest known key when one is near.
pub(crate) fn unknown_section_keys(origin: &str, table: &toml::Table) -> Vec<String> {
    let mut warnings = Vec::new();
    for section in &SECTIONS {
        let Some(toml::Value::Table(keys)) = table.get(section.name) else {
            continue;
        };
        for key in keys.keys() {
            if section.used.contains(&key.as_str())
                || section.accepted_ignored.contains(&key.as_str())
            {
                continue;
            }
            let hint = closest(key, section.used)
                .map(|known| format!(" (did you mean {known}?)"))
                .unwrap_or_default();
            warnings.push(format!(
                "{origin}: ignoring key `{key}` in [{}]: Airlock does not use it{hint}; known keys: {}",
                section.name,
                section.used.join(", ")
            ));
        }
    }
    warnings
}

/// The known key nearest to `key` by edit distance, if it is close enough to be a typo
/// (at most a third of the key's length, at least 1).
fn closest(key: &str, known: &[&'static str]) -> Option<&'static str> {
    let limit = (key.chars().count() / 3).max(1);
    known
        .iter()
        .map(|candidate| (edit_distance(key, candidate), *candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance over characters (keys are short; quadratic is fine).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(text: &str) -> Vec<String> {
        let table: toml::Table = text.parse().unwrap_or_default();
        unknown_section_keys("cfg.toml", &table)
    }

    #[test]
    fn typos_get_the_closest_known_key() {
        let all = warnings(
            "[exec_policy]\nallow_rules_bypass_sandox = false\n[sandbox]\nbwrapp_path = \"/x\"\n\
             [shell_environment_policy]\nignore_default_exclude = true\nfoo = 1\n",
        )
        .join("\n");
        assert!(
            all.contains("`allow_rules_bypass_sandox` in [exec_policy]")
                && all.contains("did you mean allow_rules_bypass_sandbox?"),
            "{all}"
        );
        assert!(all.contains("did you mean bwrap_path?"), "{all}");
        assert!(
            all.contains("did you mean ignore_default_excludes?"),
            "{all}"
        );
        assert!(all.contains("`foo` in [shell_environment_policy]"), "{all}");
        assert!(!all.contains("`foo` in [shell_environment_policy]: Airlock does not use it (did"));
    }

    #[test]
    fn known_and_accepted_keys_are_quiet() {
        assert!(
            warnings(
                "[exec_policy]\nallow_rules_bypass_sandbox = false\n[sandbox]\nbwrap_path = \"/x\"\n\
                 [shell_environment_policy]\ninherit = \"core\"\nexperimental_use_profile = true\n"
            )
            .is_empty()
        );
    }
}
