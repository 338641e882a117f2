//! Real Codex configs (`../shared/conformance/real-world/configs`): every file that is TOML loads,
//! and the mode, network, writable roots and denied reads match what Codex 0.169 made of it
//! (index.jsonl), for the same cwd, `HOME` and no `TMPDIR`. Skipped (with a note) when the
//! shared folder is not beside the repository.

use std::path::Path;
use std::path::PathBuf;

use airlock_permissions::AirlockConfig;
use airlock_permissions::ConfigEnv;
use airlock_permissions::FileSystemPolicyQueries;
use airlock_permissions::PermissionProfile;
use airlock_permissions::ResolveContext;
use airlock_permissions::file_system_sandbox_policy;
use airlock_permissions::select_permission_profile;
use airlock_permissions::to_legacy_sandbox_policy;
use airlock_protocol::SandboxPolicy;
use serde_json::Value;

const CWD: &str = "/tmp/realworld-config-ws";

/// `$AIRLOCK_SHARED` (as in `scripts/test`), else `shared/` beside the repository.
fn configs_dir() -> Option<PathBuf> {
    let shared = std::env::var_os("AIRLOCK_SHARED").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        PathBuf::from,
    );
    let dir = shared.join("conformance/real-world/configs");
    dir.join("index.jsonl").is_file().then_some(dir)
}

#[test]
fn real_world_configs_load_like_codex() {
    let Some(dir) = configs_dir() else {
        eprintln!("note: shared/conformance/real-world/configs not found; skipping");
        return;
    };
    let index = match std::fs::read_to_string(dir.join("index.jsonl")) {
        Ok(text) => text,
        Err(error) => panic!("{error}"),
    };
    let env = ConfigEnv {
        airlock_home: PathBuf::from("/home/oracle/.codex"),
        home: Some(PathBuf::from("/home/oracle")),
    };
    let mut checked = 0;
    for line in index.lines() {
        let record: Value = match serde_json::from_str(line) {
            Ok(record) => record,
            Err(error) => panic!("{error}"),
        };
        let file = record["file"].as_str().unwrap_or_default();
        if record["parses_as_toml"] != Value::Bool(true) {
            continue;
        }
        let text = match std::fs::read_to_string(dir.join(file)) {
            Ok(text) => text,
            Err(error) => panic!("{file}: {error}"),
        };
        let config = match AirlockConfig::from_toml_str(&text, &dir.join(file), &env) {
            Ok(config) => config,
            Err(error) => panic!("{file} must load: {error}"),
        };
        // Airlock accepts `untrusted` (spec 01), so the two configs Codex refuses load here.
        let selected = match select_permission_profile(&config, None, Path::new(CWD)) {
            Ok(selected) => selected,
            Err(error) => panic!("{file} must select a profile: {error}"),
        };
        let codex = &record["codex"];
        if codex["loads"] != Value::Bool(true) || file.starts_with("berlysia") {
            // berlysia's relative writable root resolves against Codex's home, which differs.
            continue;
        }
        if selected.source == airlock_permissions::ProfileSource::EmbeddedDefault {
            // A deliberate departure (issue 17): a config that selects no profile keeps
            // Airlock's embedded `:workspace` where Codex falls back to a trust-based legacy mode.
            assert_eq!(selected.compiled.active.id, ":workspace", "{file}");
            checked += 1;
            continue;
        }
        let profile = selected.materialized();
        let mode = match to_legacy_sandbox_policy(&profile, Path::new(CWD)) {
            Ok(SandboxPolicy::DangerFullAccess) => "danger-full-access",
            Ok(SandboxPolicy::ReadOnly { .. }) => "read-only",
            Ok(SandboxPolicy::WorkspaceWrite { .. }) => "workspace-write",
            other => panic!("{file}: unexpected projection {other:?}"),
        };
        assert_eq!(Some(mode), codex["sandbox_mode"].as_str(), "{file}");
        let network = if profile.network().is_enabled() {
            "enabled"
        } else {
            "restricted"
        };
        assert_eq!(Some(network), codex["network"].as_str(), "{file}");
        let policy = file_system_sandbox_policy(&profile);
        let ctx = ResolveContext::with_tmpdir(Path::new(CWD), None);
        let mut roots: Vec<String> = if matches!(profile, PermissionProfile::Managed { .. }) {
            policy
                .get_writable_roots(&ctx)
                .into_iter()
                .map(|root| root.root.display().to_string())
                .collect()
        } else {
            Vec::new()
        };
        roots.sort();
        let expected: Vec<String> = codex["writable_roots"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        assert_eq!(roots, expected, "{file}");
        let mut denied: Vec<String> = policy
            .get_unreadable_roots(&ctx)
            .iter()
            .map(|p| format!("path {}", p.display()))
            .collect();
        denied.extend(
            policy
                .get_unreadable_globs_with_cwd(Path::new(CWD))
                .into_iter()
                .map(|g| format!("glob {g}")),
        );
        denied.sort();
        let expected: Vec<String> = codex["denied_reads"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        assert_eq!(denied, expected, "{file}");
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} configs compared");
}
