//! Helpers shared by the test modules.

/// An owned argv from string literals.
pub fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| (*word).to_owned()).collect()
}

/// `["bash", "-lc", script]`
pub fn bash(script: &str) -> Vec<String> {
    argv(&["bash", "-lc", script])
}

/// Segments from string literals.
pub fn segments(commands: &[&[&str]]) -> Vec<Vec<String>> {
    commands.iter().map(|words| argv(words)).collect()
}

/// The deny-view argvs of `command`.
pub fn inner(command: &[String]) -> Vec<Vec<String>> {
    airlock_shell::deny_view(command)
        .commands
        .into_iter()
        .map(|inner| inner.argv)
        .collect()
}

/// Whether the deny view of `command` contains `expected`.
pub fn inner_contains(command: &[String], expected: &[&str]) -> bool {
    inner(command).contains(&argv(expected))
}
