//! Behaviour that golden files cannot show: real symlinks, nested roots, errors, environment.

use std::path::Path;
use std::path::PathBuf;

use airlock_protocol::FileSystemAccessMode;
use airlock_protocol::FileSystemSandboxEntry;
use airlock_protocol::FileSystemSandboxPolicy;
use airlock_protocol::FileSystemSpecialPath;
use airlock_protocol::NetworkSandboxPolicy;
use airlock_sandbox::ManagedProxy;
use airlock_sandbox::SeatbeltCommand;
use airlock_sandbox::SeatbeltError;
use airlock_sandbox::SeatbeltOptions;
use airlock_sandbox::UnixSocketAccess;
use airlock_sandbox::create_seatbelt_command_args;
use pretty_assertions::assert_eq;

use crate::check::check_command;
use crate::fixtures::CWD;
use crate::fixtures::command;
use crate::fixtures::options;

fn root_read() -> FileSystemSandboxEntry {
    FileSystemSandboxEntry::special(FileSystemSpecialPath::Root, FileSystemAccessMode::Read)
}

fn path(path: &str, access: FileSystemAccessMode) -> FileSystemSandboxEntry {
    FileSystemSandboxEntry::path(path, access)
}

fn build(
    policy: &FileSystemSandboxPolicy,
    network: NetworkSandboxPolicy,
    cwd: &Path,
    options: &SeatbeltOptions,
) -> SeatbeltCommand {
    let generated = create_seatbelt_command_args(command(), policy, network, cwd, options)
        .expect("seatbelt command");
    assert_eq!(check_command(&generated, &command()), Vec::<String>::new());
    generated
}

/// The `-D` parameters as (key, value) pairs, in order.
fn params(generated: &SeatbeltCommand) -> Vec<(String, String)> {
    generated
        .argv
        .iter()
        .skip(3)
        .take_while(|arg| *arg != "--")
        .filter_map(|arg| arg.strip_prefix("-D")?.split_once('='))
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect()
}

fn param<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value.as_str())
}

#[test]
fn nested_writable_root_keeps_its_metadata_read_only_in_the_outer_root() {
    let policy = FileSystemSandboxPolicy::restricted(vec![
        root_read(),
        path("/Users/airlock/outer", FileSystemAccessMode::Write),
        path("/Users/airlock/outer/inner", FileSystemAccessMode::Write),
    ]);
    let generated = build(
        &policy,
        NetworkSandboxPolicy::Restricted,
        Path::new(CWD),
        &options(),
    );
    let pairs = params(&generated);
    let outer_exclusions: Vec<&str> = pairs
        .iter()
        .filter(|(key, _)| key.starts_with("WRITABLE_ROOT_0_EXCLUDED_"))
        .map(|(_, value)| value.as_str())
        .collect();
    for name in [".git", ".agents", ".codex", ".aws"] {
        assert!(
            outer_exclusions.contains(&format!("/Users/airlock/outer/inner/{name}").as_str()),
            "outer root does not exclude inner/{name}: {outer_exclusions:?}"
        );
    }
    assert_eq!(
        param(&pairs, "WRITABLE_ROOT_1"),
        Some("/Users/airlock/outer/inner")
    );
}

#[test]
fn symlinked_metadata_is_excluded_as_the_link_and_as_its_target() -> std::io::Result<()> {
    let dir = tempfile::tempdir()?;
    let workspace = std::fs::canonicalize(dir.path())?.join("ws");
    std::fs::create_dir_all(workspace.join("real-git"))?;
    std::os::unix::fs::symlink("real-git", workspace.join(".git"))?;
    let policy = FileSystemSandboxPolicy::restricted(vec![
        root_read(),
        FileSystemSandboxEntry::special(
            FileSystemSpecialPath::ProjectRoots { subpath: None },
            FileSystemAccessMode::Write,
        ),
    ]);
    let generated = build(
        &policy,
        NetworkSandboxPolicy::Restricted,
        &workspace,
        &options(),
    );
    let pairs = params(&generated);
    let values: Vec<&str> = pairs.iter().map(|(_, value)| value.as_str()).collect();
    let link = workspace.join(".git");
    let target = workspace.join("real-git");
    assert!(
        values.contains(&link.to_str().unwrap_or_default()),
        "{values:?}"
    );
    assert!(
        values.contains(&target.to_str().unwrap_or_default()),
        "{values:?}"
    );
    Ok(())
}

#[test]
fn full_read_with_a_deny_root_reopens_a_readable_entry_inside_it() {
    let policy = FileSystemSandboxPolicy::restricted(vec![
        root_read(),
        path("/Users/airlock/private", FileSystemAccessMode::Deny),
        path("/Users/airlock/private/public", FileSystemAccessMode::Read),
    ]);
    let generated = build(
        &policy,
        NetworkSandboxPolicy::Restricted,
        Path::new(CWD),
        &options(),
    );
    let pairs = params(&generated);
    assert_eq!(
        pairs.get(..3).map(<[_]>::to_vec),
        Some(vec![
            ("READABLE_ROOT_0".to_owned(), "/".to_owned()),
            (
                "READABLE_ROOT_0_EXCLUDED_0".to_owned(),
                "/Users/airlock/private".to_owned()
            ),
            (
                "READABLE_ROOT_1".to_owned(),
                "/Users/airlock/private/public".to_owned()
            ),
        ])
    );
    assert!(!generated.policy().contains("(allow file-read*)\n"));
}

#[test]
fn restricted_reads_skip_covered_entries_but_keep_reopened_ones() {
    let policy = FileSystemSandboxPolicy::restricted(vec![
        FileSystemSandboxEntry::special(FileSystemSpecialPath::Minimal, FileSystemAccessMode::Read),
        path("/Users/airlock/proj", FileSystemAccessMode::Read),
        path("/Users/airlock/proj/sub", FileSystemAccessMode::Write),
        path("/Users/airlock/proj/secret", FileSystemAccessMode::Deny),
        path("/Users/airlock/proj/secret/pub", FileSystemAccessMode::Read),
    ]);
    let generated = build(
        &policy,
        NetworkSandboxPolicy::Restricted,
        Path::new(CWD),
        &options(),
    );
    let readable: Vec<(String, String)> = params(&generated)
        .into_iter()
        .filter(|(key, _)| key.starts_with("READABLE_ROOT_"))
        .collect();
    let expected = [
        ("READABLE_ROOT_0", "/Users/airlock/proj"),
        ("READABLE_ROOT_0_EXCLUDED_0", "/Users/airlock/proj/secret"),
        ("READABLE_ROOT_1", "/Users/airlock/proj/secret/pub"),
    ]
    .map(|(key, value)| (key.to_owned(), value.to_owned()))
    .to_vec();
    assert_eq!(readable, expected);
    assert!(generated.policy().contains("; platform defaults"));
}

#[test]
fn external_and_unrestricted_policies_open_the_whole_filesystem() {
    for policy in [
        FileSystemSandboxPolicy::external_sandbox(),
        FileSystemSandboxPolicy::unrestricted(),
    ] {
        let generated = build(
            &policy,
            NetworkSandboxPolicy::Restricted,
            Path::new(CWD),
            &options(),
        );
        assert!(generated.policy().contains("(allow file-read*)\n"));
        assert!(
            generated
                .policy()
                .contains("(allow file-write* (regex #\"^/\"))\n")
        );
        assert_eq!(params(&generated), Vec::<(String, String)>::new());
    }
}

#[test]
fn environment_marks_seatbelt_and_a_closed_network() {
    let policy = FileSystemSandboxPolicy::restricted(vec![root_read()]);
    let closed = build(
        &policy,
        NetworkSandboxPolicy::Restricted,
        Path::new(CWD),
        &options(),
    );
    let keys: Vec<&str> = closed.env.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        vec![
            "AIRLOCK_SANDBOX",
            "AIRLOCK_SANDBOX_NETWORK_DISABLED",
            "CODEX_SANDBOX",
            "CODEX_SANDBOX_NETWORK_DISABLED",
        ]
    );
    assert_eq!(
        closed.env.get("CODEX_SANDBOX").map(String::as_str),
        Some("seatbelt")
    );
    let open = build(
        &policy,
        NetworkSandboxPolicy::Enabled,
        Path::new(CWD),
        &options(),
    );
    let keys: Vec<&str> = open.env.keys().map(String::as_str).collect();
    assert_eq!(keys, vec!["AIRLOCK_SANDBOX", "CODEX_SANDBOX"]);
}

#[test]
fn without_a_cache_directory_no_parameter_is_passed_for_it() {
    let policy = FileSystemSandboxPolicy::restricted(vec![root_read()]);
    let options = SeatbeltOptions {
        darwin_user_cache_dir: None,
        ..options()
    };
    let generated = build(
        &policy,
        NetworkSandboxPolicy::Enabled,
        Path::new(CWD),
        &options,
    );
    assert!(!generated.policy().contains("DARWIN_USER_CACHE_DIR"));
    assert!(generated.policy().contains("(allow network-outbound)\n"));
}

#[test]
fn enforced_managed_network_without_a_proxy_opens_no_endpoint() {
    let policy = FileSystemSandboxPolicy::restricted(vec![root_read()]);
    let options = SeatbeltOptions {
        enforce_managed_network: true,
        ..options()
    };
    let generated = build(
        &policy,
        NetworkSandboxPolicy::Enabled,
        Path::new(CWD),
        &options,
    );
    assert!(!generated.policy().contains("(allow network-outbound"));
    assert!(!generated.policy().contains("(allow network-inbound"));
}

#[test]
fn a_proxy_on_another_host_opens_no_endpoint() {
    let policy = FileSystemSandboxPolicy::restricted(vec![root_read()]);
    let options = SeatbeltOptions {
        managed_proxy: Some(ManagedProxy {
            env: [(
                "HTTPS_PROXY".to_owned(),
                "http://proxy.corp:3128".to_owned(),
            )]
            .into(),
            ..ManagedProxy::default()
        }),
        ..options()
    };
    let generated = build(
        &policy,
        NetworkSandboxPolicy::Enabled,
        Path::new(CWD),
        &options,
    );
    assert!(!generated.policy().contains("(allow network-outbound"));
}

#[test]
fn unix_sockets_alone_do_not_open_the_network() {
    let policy = FileSystemSandboxPolicy::restricted(vec![root_read()]);
    let options = SeatbeltOptions {
        managed_proxy: Some(ManagedProxy {
            unix_sockets: UnixSocketAccess::AllowAll,
            ..ManagedProxy::default()
        }),
        ..options()
    };
    let generated = build(
        &policy,
        NetworkSandboxPolicy::Restricted,
        Path::new(CWD),
        &options,
    );
    let text = generated.policy();
    assert!(text.contains("(allow system-socket (socket-domain AF_UNIX))\n"));
    assert!(text.contains("(allow network-outbound (remote unix-socket))\n"));
    assert!(!text.contains("(allow network-outbound)\n"));
    assert!(!text.contains("(remote ip"));
}

#[test]
fn errors_before_anything_runs() {
    let policy = FileSystemSandboxPolicy::restricted(vec![root_read()]);
    let network = NetworkSandboxPolicy::Restricted;
    assert_eq!(
        create_seatbelt_command_args(Vec::new(), &policy, network, Path::new(CWD), &options()),
        Err(SeatbeltError::EmptyCommand)
    );
    assert_eq!(
        create_seatbelt_command_args(command(), &policy, network, Path::new("proj"), &options()),
        Err(SeatbeltError::RelativeCwd {
            path: PathBuf::from("proj")
        })
    );
    let bad_glob = FileSystemSandboxPolicy::restricted(vec![
        root_read(),
        FileSystemSandboxEntry::deny_glob("/Users/airlock/proj/{a,b"),
    ]);
    let result =
        create_seatbelt_command_args(command(), &bad_glob, network, Path::new(CWD), &options());
    assert!(
        matches!(&result, Err(SeatbeltError::InvalidGlob { message }) if message.contains("{a,b")),
        "{result:?}"
    );
}

#[test]
fn non_utf8_paths_are_refused_rather_than_mangled() {
    use std::os::unix::ffi::OsStrExt;
    let odd = PathBuf::from(std::ffi::OsStr::from_bytes(b"/Users/airlock/\xff"));
    let policy = FileSystemSandboxPolicy::restricted(vec![
        root_read(),
        FileSystemSandboxEntry::path(odd.clone(), FileSystemAccessMode::Write),
    ]);
    assert_eq!(
        create_seatbelt_command_args(
            command(),
            &policy,
            NetworkSandboxPolicy::Restricted,
            Path::new(CWD),
            &options()
        ),
        Err(SeatbeltError::NonUtf8Path { path: odd })
    );
}

fn managed_network(toml: &str) -> airlock_permissions::network::ManagedNetwork {
    crate::fixtures::configured_with_network(
        &format!(
            "[permissions.m]\nextends = \":workspace\"\n[permissions.m.network]\nenabled = true\n{toml}"
        ),
        "m",
    )
    .1
    .expect("managed network")
}

#[test]
fn a_managed_network_maps_to_its_endpoints_local_binding_and_sockets() {
    let network = managed_network(
        "allow_local_binding = true\n[permissions.m.network.domains]\n\"a.test\" = \"allow\"\n\
         [permissions.m.network.unix_sockets]\n\"/run/a.sock\" = \"allow\"\n\"/run/b.sock\" = \"deny\"\n",
    );
    let endpoints = airlock_sandbox::ProxyEndpoints {
        http: "127.0.0.1:41001".parse().unwrap(),
        socks: "127.0.0.1:41002".parse().unwrap(),
    };
    let proxy = ManagedProxy::for_managed_network(&network, Some(&endpoints));
    assert_eq!(
        proxy.env.get("HTTPS_PROXY").map(String::as_str),
        Some("http://127.0.0.1:41001")
    );
    assert_eq!(
        proxy.env.get("ALL_PROXY").map(String::as_str),
        Some("socks5h://127.0.0.1:41002")
    );
    assert!(!proxy.env.contains_key("GIT_SSH_COMMAND"));
    assert!(proxy.allow_local_binding);
    assert_eq!(
        proxy.unix_sockets,
        UnixSocketAccess::Paths(vec![PathBuf::from("/run/a.sock")])
    );
    assert_eq!(
        proxy.denied_unix_sockets,
        vec![PathBuf::from("/run/b.sock")]
    );
    let text = build(
        &FileSystemSandboxPolicy::restricted(vec![root_read()]),
        NetworkSandboxPolicy::Enabled,
        Path::new(CWD),
        &options().with_managed_network(Some(&network), Some(&endpoints)),
    )
    .policy()
    .to_owned();
    assert!(text.contains("(allow network-outbound (remote ip \"localhost:41001\"))\n"));
    assert!(text.contains("(allow network-outbound (remote ip \"localhost:41002\"))\n"));
    assert!(
        !text.contains("*:53"),
        "no direct DNS to any host (spec 12: only the proxy's loopback ports)"
    );
    assert!(!text.contains("(allow network-outbound)\n"));
}

#[test]
fn without_a_managed_network_the_options_are_unchanged_and_denials_need_a_grant() {
    assert_eq!(options().with_managed_network(None, None), options());
    let network = managed_network(
        "[permissions.m.network.domains]\n\"a.test\" = \"allow\"\n\
         [permissions.m.network.unix_sockets]\n\"/run/b.sock\" = \"deny\"\n",
    );
    let options = options().with_managed_network(Some(&network), None);
    assert!(options.enforce_managed_network);
    let text = build(
        &FileSystemSandboxPolicy::restricted(vec![root_read()]),
        NetworkSandboxPolicy::Enabled,
        Path::new(CWD),
        &options,
    )
    .policy()
    .to_owned();
    assert!(!text.contains("(remote ip"), "no endpoint, no IP network");
    assert!(
        !text.contains("AF_UNIX"),
        "nothing granted: no socket rules"
    );
    assert!(!text.contains("UNIX_SOCKET_DENY_PATH"));
}
