//! The proxy over its Unix socket against loopback origin servers (nothing leaves this
//! machine): HTTP forwarding, CONNECT, SOCKS5, refusals with their reasons, every private
//! and metadata spelling, port-scoped entries, `limited` mode, no DNS for unlisted hosts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::io::Read;
use std::io::Write;
use std::net::SocketAddr;
use std::net::TcpListener;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::time::Duration;

use airlock_network_proxy::NetworkPolicy;
use airlock_network_proxy::ProxyHandle;
use airlock_network_proxy::policy::Resolver;
use airlock_permissions::network::EntrySource;
use airlock_permissions::network::HostPattern;
use airlock_permissions::network::ManagedNetwork;
use airlock_permissions::network::NetworkEntry;
use airlock_permissions::network::NetworkMode;

/// A loopback origin that answers every request with its request line and Host header.
fn origin() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                stream.set_read_timeout(Some(Duration::from_secs(10))).ok();
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match stream.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                let text = String::from_utf8_lossy(&head).into_owned();
                let line = text.lines().next().unwrap_or_default().to_owned();
                let host = text
                    .lines()
                    .find_map(|l| {
                        l.strip_prefix("Host: ")
                            .or_else(|| l.strip_prefix("host: "))
                    })
                    .unwrap_or("-")
                    .to_owned();
                let leaked = text.to_ascii_lowercase().contains("proxy-authorization");
                let body = format!("origin saw [{line}] host={host} proxy-auth-leaked={leaked}\n");
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    port
}

fn entries(patterns: &[&str]) -> Vec<NetworkEntry> {
    patterns
        .iter()
        .map(|raw| NetworkEntry {
            pattern: HostPattern::parse(raw).unwrap(),
            source: EntrySource::Config,
        })
        .collect()
}

struct Proxy {
    _dir: tempfile::TempDir,
    socket: PathBuf,
    handle: ProxyHandle,
}

fn proxy_with(network: ManagedNetwork, resolver: Option<Resolver>) -> Proxy {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("proxy.sock");
    let mut policy = NetworkPolicy::new(network);
    if let Some(resolver) = resolver {
        policy = policy.with_resolver(resolver);
    }
    let handle = airlock_network_proxy::start(policy, &socket).unwrap();
    Proxy {
        _dir: dir,
        socket,
        handle,
    }
}

fn proxy(allow: &[&str], deny: &[&str]) -> Proxy {
    proxy_with(
        ManagedNetwork {
            allow: entries(allow),
            deny: entries(deny),
            ..ManagedNetwork::default()
        },
        None,
    )
}

fn connect(proxy: &Proxy) -> UnixStream {
    let stream = UnixStream::connect(&proxy.socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream
}

fn exchange(proxy: &Proxy, request: &[u8]) -> String {
    let mut stream = connect(proxy);
    stream.write_all(request).unwrap();
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn get(proxy: &Proxy, target: &str, host: &str) -> String {
    exchange(
        proxy,
        format!(
            "GET {target} HTTP/1.1\r\nHost: {host}\r\nProxy-Authorization: Basic c2VjcmV0\r\n\r\n"
        )
        .as_bytes(),
    )
}

#[test]
fn forwards_http_to_an_allowed_host_and_strips_proxy_headers() {
    let port = origin();
    let proxy = proxy(&[&format!("127.0.0.1:{port}")], &[]);
    let response = get(
        &proxy,
        &format!("http://127.0.0.1:{port}/path?q=1"),
        &format!("127.0.0.1:{port}"),
    );
    assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
    assert!(
        response.contains("origin saw [GET /path?q=1 HTTP/1.1]"),
        "{response}"
    );
    assert!(response.contains("proxy-auth-leaked=false"), "{response}");
}

#[test]
fn tunnels_connect_to_an_allowed_host() {
    let port = origin();
    let proxy = proxy(&[&format!("localhost:{port}")], &[]);
    let mut stream = connect(&proxy);
    write!(stream, "CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\nGET /inside HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.starts_with("HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 200 OK"),
        "{text}"
    );
    assert!(text.contains("[GET /inside HTTP/1.1]"), "{text}");
}

fn socks(proxy: &Proxy, atyp_and_addr: &[u8], port: u16) -> (u8, UnixStream) {
    let mut stream = connect(proxy);
    stream.write_all(&[5, 1, 0]).unwrap();
    let mut choice = [0u8; 2];
    stream.read_exact(&mut choice).unwrap();
    assert_eq!(choice, [5, 0]);
    let mut request = vec![5, 1, 0];
    request.extend_from_slice(atyp_and_addr);
    request.extend_from_slice(&port.to_be_bytes());
    stream.write_all(&request).unwrap();
    let mut reply = [0u8; 10];
    stream.read_exact(&mut reply).unwrap();
    (reply[1], stream)
}

fn domain(name: &[u8]) -> Vec<u8> {
    let mut out = vec![3, u8::try_from(name.len()).unwrap()];
    out.extend_from_slice(name);
    out
}

#[test]
fn socks5_connects_to_an_allowed_host_by_name_and_refuses_others() {
    let port = origin();
    let proxy = proxy(&[&format!("localhost:{port}")], &[]);
    let (code, mut stream) = socks(&proxy, &domain(b"localhost"), port);
    assert_eq!(code, 0);
    stream
        .write_all(b"GET /socks HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut out = String::new();
    let _ = stream.read_to_string(&mut out);
    assert!(out.contains("[GET /socks HTTP/1.1]"), "{out}");
    let (code, _) = socks(&proxy, &[1, 127, 0, 0, 1], port);
    assert_eq!(code, 2, "the IPv4 literal is not named by the allow list");
    let (code, _) = socks(&proxy, &domain(b"localhost"), port + 1);
    assert_eq!(code, 2, "another port is not allowed");
}

#[test]
fn socks5_refuses_udp_associate_and_bind() {
    let proxy = proxy(&["*"], &[]);
    for command in [2u8, 3] {
        let mut stream = connect(&proxy);
        stream.write_all(&[5, 1, 0]).unwrap();
        let mut choice = [0u8; 2];
        stream.read_exact(&mut choice).unwrap();
        stream
            .write_all(&[5, command, 0, 1, 127, 0, 0, 1, 0, 80])
            .unwrap();
        let mut reply = [0u8; 10];
        stream.read_exact(&mut reply).unwrap();
        assert_eq!(reply[1], 7, "command {command}");
    }
}

#[test]
fn denied_host_is_refused_with_its_rule() {
    let proxy = proxy(&["*"], &["evil.test"]);
    let response = get(&proxy, "http://evil.test/", "evil.test");
    assert!(response.starts_with("HTTP/1.1 403 Forbidden"), "{response}");
    assert!(
        response.contains("x-proxy-error: blocked-by-denylist"),
        "{response}"
    );
    assert!(
        response.contains(
            "Network access to \"evil.test\" was blocked: matches deny entry `evil.test` (denied)."
        ),
        "{response}"
    );
    let blocked = proxy.handle.blocked();
    assert_eq!(blocked.len(), 1);
    assert_eq!(blocked[0].refusal.reason.code(), "denied");
    assert_eq!(blocked[0].protocol, "http");
}

#[test]
fn every_private_and_metadata_spelling_is_refused_even_under_a_global_allow() {
    let port = origin();
    let proxy = proxy(&["*"], &[]);
    for host in [
        "127.0.0.1",
        "127.1",
        "2130706433",
        "0x7f000001",
        "0x7f.1",
        "0177.0.0.1",
        "127.0.0.1.",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[64:ff9b::7f00:1]",
        "[2002:7f00:1::]",
        "[::127.0.0.1]",
        "localhost",
        "foo.localhost",
        "0.0.0.0",
        "0",
        "10.0.0.1",
        "192.168.0.1",
        "172.16.0.1",
        "100.64.0.1",
        "169.254.169.254",
        "2852039166",
        "[::ffff:169.254.169.254]",
        "[fd00:ec2::254]",
        "168.63.129.16",
        "100.100.100.200",
        "192.0.0.192",
        "[fe80::1]",
        "[fc00::1]",
    ] {
        let response = get(
            &proxy,
            &format!("http://{host}:{port}/"),
            &format!("{host}:{port}"),
        );
        assert!(response.starts_with("HTTP/1.1 403"), "{host}: {response}");
        assert!(
            response.contains("(not_allowed_local)"),
            "{host}: {response}"
        );
        let connect = exchange(
            &proxy,
            format!("CONNECT {host}:{port} HTTP/1.1\r\n\r\n").as_bytes(),
        );
        assert!(
            connect.starts_with("HTTP/1.1 403"),
            "CONNECT {host}: {connect}"
        );
    }
    assert!(
        proxy
            .handle
            .blocked()
            .iter()
            .all(|b| b.refusal.reason.code() == "not_allowed_local")
    );
}

#[test]
fn a_name_resolving_to_loopback_is_refused_and_the_lookup_happens_once() {
    let port = origin();
    let lookups = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&lookups);
    let resolver: Resolver = Arc::new(move |name: String, port: u16| {
        counter.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let ip = if name == "rebind.test" {
                "127.0.0.1"
            } else {
                "::1"
            };
            Ok(vec![SocketAddr::new(ip.parse().unwrap(), port)])
        })
    });
    let proxy = proxy_with(
        ManagedNetwork {
            allow: entries(&["rebind.test", "**.v6.test"]),
            ..ManagedNetwork::default()
        },
        Some(resolver),
    );
    let response = get(
        &proxy,
        &format!("http://rebind.test:{port}/"),
        &format!("rebind.test:{port}"),
    );
    assert!(response.contains("resolves to 127.0.0.1"), "{response}");
    assert!(response.contains("(not_allowed_local)"), "{response}");
    let (code, _) = socks(&proxy, &domain(b"a.v6.test"), port);
    assert_eq!(code, 2);
    assert_eq!(lookups.load(Ordering::SeqCst), 2);
    let response = get(&proxy, "http://unlisted.test/", "unlisted.test");
    assert!(response.contains("(not_allowed)"), "{response}");
    assert_eq!(
        lookups.load(Ordering::SeqCst),
        2,
        "an unlisted host is never resolved"
    );
}

#[test]
fn a_name_resolving_to_loopback_is_reachable_only_with_the_ip_literal_allowed() {
    let port = origin();
    let resolver: Resolver = Arc::new(|_name: String, port: u16| {
        Box::pin(async move { Ok(vec![SocketAddr::new("127.0.0.1".parse().unwrap(), port)]) })
    });
    let proxy = proxy_with(
        ManagedNetwork {
            allow: entries(&["dev.test", &format!("127.0.0.1:{port}")]),
            ..ManagedNetwork::default()
        },
        Some(resolver),
    );
    let response = get(
        &proxy,
        &format!("http://dev.test:{port}/"),
        &format!("dev.test:{port}"),
    );
    assert!(response.contains("host=dev.test"), "{response}");
}

#[test]
fn control_characters_and_nul_in_hosts_are_refused() {
    let port = origin();
    let proxy = proxy(&["**.allowed.test", &format!("localhost:{port}")], &[]);
    for name in [
        &b"evil.test\0.allowed.test"[..],
        b"evil.test\n.allowed.test",
        b"a b.allowed.test",
        b"x@allowed.test",
        b"localhost\0",
    ] {
        let (code, _) = socks(&proxy, &domain(name), port);
        assert_eq!(code, 2, "{name:?}");
    }
    let response = exchange(
        &proxy,
        b"CONNECT evil.test%00.allowed.test:443 HTTP/1.1\r\n\r\n",
    );
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
    assert!(response.contains("invalid host"), "{response}");
    let blocked = proxy.handle.blocked();
    assert!(
        blocked
            .iter()
            .all(|b| b.refusal.detail.starts_with("invalid host")),
        "{blocked:?}"
    );
    assert!(
        blocked.iter().any(|b| b.refusal.host.contains("\\0")),
        "{blocked:?}"
    );
}

#[test]
fn port_scoped_entries_allow_one_port_only() {
    let open = origin();
    let other = origin();
    let proxy = proxy(&[&format!("localhost:{open}")], &[]);
    let ok = get(
        &proxy,
        &format!("http://localhost:{open}/"),
        &format!("localhost:{open}"),
    );
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    let refused = get(
        &proxy,
        &format!("http://localhost:{other}/"),
        &format!("localhost:{other}"),
    );
    assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
}

#[test]
fn limited_mode_allows_only_read_methods_over_plain_http() {
    let port = origin();
    let proxy = proxy_with(
        ManagedNetwork {
            allow: entries(&[&format!("127.0.0.1:{port}")]),
            mode: NetworkMode::Limited,
            ..ManagedNetwork::default()
        },
        None,
    );
    let target = format!("http://127.0.0.1:{port}/");
    let host = format!("127.0.0.1:{port}");
    assert!(get(&proxy, &target, &host).starts_with("HTTP/1.1 200"));
    let post = exchange(
        &proxy,
        format!("POST {target} HTTP/1.1\r\nHost: {host}\r\ncontent-length: 0\r\n\r\n").as_bytes(),
    );
    assert!(post.contains("(method_not_allowed)"), "{post}");
    let tunnel = exchange(
        &proxy,
        format!("CONNECT {host} HTTP/1.1\r\n\r\n").as_bytes(),
    );
    assert!(tunnel.contains("(method_not_allowed)"), "{tunnel}");
    let (code, _) = socks(&proxy, &[1, 127, 0, 0, 1], port);
    assert_eq!(code, 2);
}

#[test]
fn a_host_header_that_disagrees_with_the_target_is_rejected() {
    let port = origin();
    let proxy = proxy(&[&format!("127.0.0.1:{port}")], &[]);
    let response = get(
        &proxy,
        &format!("http://127.0.0.1:{port}/"),
        "internal.test",
    );
    assert!(response.starts_with("HTTP/1.1 400"), "{response}");
    let folded = exchange(
        &proxy,
        format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n").as_bytes(),
    );
    assert!(folded.starts_with("HTTP/1.1 400"), "{folded}");
}

#[test]
fn no_allow_entry_refuses_every_host() {
    let proxy = proxy(&[], &[]);
    let response = get(&proxy, "http://example.test/", "example.test");
    assert!(response.contains("is not on the allow list"), "{response}");
}
