//! Fixed inputs so the generated text is the same on every Linux host: invented macOS paths
//! that do not exist here (so canonicalisation leaves them alone) and `/tmp`, which does.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use airlock_permissions::AirlockConfig;
use airlock_permissions::ConfigEnv;
use airlock_permissions::built_in_profile;
use airlock_permissions::file_system_sandbox_policy;
use airlock_permissions::network_sandbox_policy;
use airlock_permissions::select_permission_profile;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_protocol::PermissionProfile;
use airlock_sandbox::ManagedProxy;
use airlock_sandbox::SeatbeltCommand;
use airlock_sandbox::SeatbeltOptions;
use airlock_sandbox::UnixSocketAccess;
use airlock_sandbox::create_seatbelt_command_args;

/// The user's home; no path under it may appear in a policy text outside a glob regex.
pub const HOME: &str = "/Users/airlock";
/// The workspace (the policy cwd).
pub const CWD: &str = "/Users/airlock/proj";
/// `$TMPDIR`.
pub const TMPDIR: &str = "/private/var/folders/zz/airlock/T";
/// `DARWIN_USER_CACHE_DIR`.
pub const CACHE_DIR: &str = "/private/var/folders/zz/airlock/C";

/// The command every golden case wraps.
pub fn command() -> Vec<String> {
    vec!["git".to_owned(), "status".to_owned()]
}

/// Options with the fixed `$TMPDIR` and cache directory, no managed network.
pub fn options() -> SeatbeltOptions {
    SeatbeltOptions {
        tmpdir: Some(PathBuf::from(TMPDIR)),
        darwin_user_cache_dir: Some(PathBuf::from(CACHE_DIR)),
        ..SeatbeltOptions::default()
    }
}

/// Options of a session behind a managed loopback proxy with local binding and one socket.
pub fn proxy_options() -> SeatbeltOptions {
    let env: BTreeMap<String, String> = [
        ("HTTP_PROXY", "http://127.0.0.1:3128"),
        ("HTTPS_PROXY", "http://127.0.0.1:3128"),
        ("ALL_PROXY", "socks5h://localhost:8081"),
        ("NO_PROXY", "localhost,127.0.0.1"),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value.to_owned()))
    .collect();
    SeatbeltOptions {
        enforce_managed_network: true,
        managed_proxy: Some(ManagedProxy {
            env,
            allow_local_binding: true,
            unix_sockets: UnixSocketAccess::Paths(vec![PathBuf::from(
                "/Users/airlock/.airlock/agent.sock",
            )]),
            denied_unix_sockets: Vec::new(),
        }),
        ..options()
    }
}

/// The runtime policies of a profile.
pub fn policies(profile: &PermissionProfile) -> (FileSystemSandboxPolicy, NetworkSandboxPolicy) {
    (
        file_system_sandbox_policy(profile),
        network_sandbox_policy(profile),
    )
}

/// A built-in profile by id (symbolic; `:workspace_roots` resolves against the cwd).
pub fn built_in(id: &str) -> PermissionProfile {
    built_in_profile(id).expect("built-in profile")
}

/// Profile `id` of a config text, selected and materialised against [`CWD`] like a real run.
pub fn configured(config: &str, id: &str) -> PermissionProfile {
    configured_with_network(config, id).0
}

/// [`configured`], with the profile's managed network (spec 12), if it has one.
pub fn configured_with_network(
    config: &str,
    id: &str,
) -> (
    PermissionProfile,
    Option<airlock_permissions::network::ManagedNetwork>,
) {
    let env = ConfigEnv {
        airlock_home: PathBuf::from("/Users/airlock/.airlock"),
        home: Some(PathBuf::from(HOME)),
    };
    let config = AirlockConfig::from_toml_str(
        config,
        Path::new("/Users/airlock/.airlock/config.toml"),
        &env,
    )
    .expect("config parses");
    let selected =
        select_permission_profile(&config, Some(id), Path::new(CWD)).expect("profile compiles");
    (
        selected.materialized(),
        selected.compiled.managed_network.clone(),
    )
}

/// The Seatbelt command of `profile` with `options`, network overridden when asked.
pub fn generate(
    profile: &PermissionProfile,
    network: Option<NetworkSandboxPolicy>,
    options: &SeatbeltOptions,
) -> SeatbeltCommand {
    let (fs, profile_network) = policies(profile);
    create_seatbelt_command_args(
        command(),
        &fs,
        network.unwrap_or(profile_network),
        Path::new(CWD),
        options,
    )
    .expect("seatbelt command")
}
