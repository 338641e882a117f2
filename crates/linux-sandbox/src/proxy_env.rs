//! The environment a command behind the managed proxy gets (spec 12 §Enforcement):
//! platform-independent, so the macOS Seatbelt policy can be generated from the same list.

/// Set for the command: the HTTP proxy address (`127.0.0.1:<port>`).
pub const HTTP_PROXY_ADDRESS_ENV: &str = "AIRLOCK_NETWORK_PROXY_HTTP";

/// Where the `airlock` binary appears inside the Linux sandbox (the bridge's executable).
pub const BRIDGE_EXE: &str = "/dev/.airlock-bridge";
/// The hidden subcommand that tunnels stdin/stdout through the proxy (ssh `ProxyCommand`).
pub const PROXY_CONNECT_SUBCOMMAND: &str = "proxy-connect";

/// The proxy variables the command gets (spec 12 §Enforcement; Codex's list): `http` and
/// `socks` are the `host:port` of the HTTP and SOCKS5 endpoints it can reach (on Linux the
/// in-sandbox bridge's loopback ports). `GIT_SSH_COMMAND` names the Linux bridge's
/// `proxy-connect`.
#[must_use]
pub fn proxy_env(http: &str, socks: &str) -> Vec<(String, String)> {
    let http_url = format!("http://{http}");
    let socks_url = format!("socks5h://{socks}");
    let mut env = Vec::new();
    for key in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "http_proxy",
        "https_proxy",
        "YARN_HTTP_PROXY",
        "YARN_HTTPS_PROXY",
        "npm_config_proxy",
        "npm_config_https_proxy",
        "NPM_CONFIG_PROXY",
        "NPM_CONFIG_HTTPS_PROXY",
        "PIP_PROXY",
        "CARGO_HTTP_PROXY",
        "BUNDLE_HTTP_PROXY",
        "BUNDLE_HTTPS_PROXY",
    ] {
        env.push((key.to_owned(), http_url.clone()));
    }
    for key in ["ALL_PROXY", "all_proxy", "FTP_PROXY", "ftp_proxy"] {
        env.push((key.to_owned(), socks_url.clone()));
    }
    for key in [
        "NO_PROXY",
        "no_proxy",
        "npm_config_noproxy",
        "NPM_CONFIG_NOPROXY",
    ] {
        env.push((key.to_owned(), String::new()));
    }
    env.push(("NODE_USE_ENV_PROXY".to_owned(), "1".to_owned()));
    env.push(("AIRLOCK_NETWORK_PROXY_ACTIVE".to_owned(), "1".to_owned()));
    env.push((HTTP_PROXY_ADDRESS_ENV.to_owned(), http.to_owned()));
    env.push((
        "GIT_SSH_COMMAND".to_owned(),
        format!("ssh -o ProxyCommand='{BRIDGE_EXE} {PROXY_CONNECT_SUBCOMMAND} %h %p'"),
    ));
    env
}
