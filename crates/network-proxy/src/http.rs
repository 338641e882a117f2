//! HTTP/1.1 on the proxy socket: absolute-form forwarding and `CONNECT` tunnels
//! (spec 12 §The proxy).
//!
//! Only the request head is parsed (at most [`MAX_HEAD`] bytes, no obsolete line folding);
//! after the decision the proxy dials a checked address, sends the head rewritten to
//! origin-form with hop-by-hop and `Proxy-Authorization` headers removed and
//! `Connection: close` added, then splices bytes both ways. One request per client
//! connection: a client cannot reuse the tunnel for another host.

use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;

use airlock_permissions::network::NetworkMode;
use airlock_permissions::network::canonicalize_host;

use crate::policy::BlockReason;
use crate::policy::Protocol;
use crate::policy::Refusal;
use crate::server::Conn;
use crate::server::Shared;

/// The largest request head accepted.
pub const MAX_HEAD: usize = 64 * 1024;

/// Headers that concern one hop only (RFC 9110 §7.6.1) plus the proxy's credentials.
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "upgrade",
];

struct Head {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
}

/// Serves one HTTP client whose first bytes are in `buffered`.
pub(crate) async fn serve<C: Conn>(mut client: C, mut buffered: Vec<u8>, shared: &Shared) {
    let end = loop {
        if let Some(at) = find_head_end(&buffered) {
            break at;
        }
        if buffered.len() > MAX_HEAD {
            return reply(
                &mut client,
                431,
                "Request Header Fields Too Large",
                "request head too large\n",
                None,
            )
            .await;
        }
        let mut chunk = [0u8; 8192];
        match client.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffered.extend_from_slice(&chunk[..n]),
        }
    };
    let rest = buffered.split_off(end);
    let Some(head) = parse_head(&buffered) else {
        return reply(
            &mut client,
            400,
            "Bad Request",
            "malformed request head\n",
            None,
        )
        .await;
    };
    if head.method == "CONNECT" {
        connect(client, head, rest, shared).await;
    } else {
        forward(client, head, rest, shared).await;
    }
}

async fn connect<C: Conn>(mut client: C, head: Head, rest: Vec<u8>, shared: &Shared) {
    let Some((host, port)) = split_authority(&head.target) else {
        return reply(
            &mut client,
            400,
            "Bad Request",
            "CONNECT needs host:port\n",
            None,
        )
        .await;
    };
    if shared.policy.network().mode == NetworkMode::Limited {
        let refusal = limited(&host, port, "CONNECT");
        shared.record(&refusal, Protocol::HttpsConnect);
        return refuse(&mut client, &refusal).await;
    }
    let upstream = match shared.dial(&host, port, Protocol::HttpsConnect).await {
        Ok(upstream) => upstream,
        Err(Some(refusal)) => return refuse(&mut client, &refusal).await,
        Err(None) => {
            return reply(
                &mut client,
                502,
                "Bad Gateway",
                "could not connect to the destination\n",
                None,
            )
            .await;
        }
    };
    if client
        .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        .await
        .is_err()
    {
        return;
    }
    crate::server::splice(client, upstream, rest).await;
}

async fn forward<C: Conn>(mut client: C, head: Head, rest: Vec<u8>, shared: &Shared) {
    let Some(after) = head.target.strip_prefix("http://") else {
        return reply(
            &mut client,
            400,
            "Bad Request",
            "only absolute http:// targets are forwarded; use CONNECT for https\n",
            None,
        )
        .await;
    };
    let (authority, path) = match after.find(['/', '?']) {
        Some(at) => (&after[..at], &after[at..]),
        None => (after, "/"),
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_owned()
    };
    let (host, port) = match split_authority(authority) {
        Some(pair) => pair,
        None if !authority.contains(':') => (authority.to_owned(), 80),
        None => {
            return reply(
                &mut client,
                400,
                "Bad Request",
                "invalid request target\n",
                None,
            )
            .await;
        }
    };
    if let Some((_, value)) = head
        .headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        let (header_host, header_port) = match split_authority(value.trim()) {
            Some(pair) => pair,
            None => (value.trim().to_owned(), 80),
        };
        let same = canonicalize_host(&header_host).ok() == canonicalize_host(&host).ok()
            && canonicalize_host(&host).is_ok()
            && header_port == port;
        if !same {
            return reply(
                &mut client,
                400,
                "Bad Request",
                "Host header does not match request target\n",
                None,
            )
            .await;
        }
    }
    if shared.policy.network().mode == NetworkMode::Limited
        && !matches!(head.method.as_str(), "GET" | "HEAD" | "OPTIONS")
    {
        let refusal = limited(&host, port, &head.method);
        shared.record(&refusal, Protocol::Http);
        return refuse(&mut client, &refusal).await;
    }
    let mut upstream = match shared.dial(&host, port, Protocol::Http).await {
        Ok(upstream) => upstream,
        Err(Some(refusal)) => return refuse(&mut client, &refusal).await,
        Err(None) => {
            return reply(
                &mut client,
                502,
                "Bad Gateway",
                "could not connect to the destination\n",
                None,
            )
            .await;
        }
    };
    let listed: Vec<String> = head
        .headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("connection"))
        .flat_map(|(_, value)| value.split(',').map(|v| v.trim().to_ascii_lowercase()))
        .collect();
    let mut out = format!("{} {path} HTTP/1.1\r\n", head.method);
    let mut has_host = false;
    for (name, value) in &head.headers {
        let lower = name.to_ascii_lowercase();
        if HOP_BY_HOP.contains(&lower.as_str()) || listed.contains(&lower) {
            continue;
        }
        has_host |= lower == "host";
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    if !has_host {
        out.push_str(&format!("Host: {authority}\r\n"));
    }
    out.push_str("Connection: close\r\n\r\n");
    if upstream.write_all(out.as_bytes()).await.is_err() {
        return;
    }
    crate::server::splice(client, upstream, rest).await;
}

fn limited(host: &str, port: u16, method: &str) -> Refusal {
    Refusal {
        reason: BlockReason::MethodNotAllowed,
        host: host.escape_debug().to_string(),
        port,
        detail: format!(
            "{method} is blocked by network mode \"limited\" (only GET, HEAD and OPTIONS over plain HTTP)"
        ),
    }
}

async fn refuse<C: Conn>(client: &mut C, refusal: &Refusal) {
    let tag = match refusal.reason {
        BlockReason::Denied => "blocked-by-denylist",
        BlockReason::MethodNotAllowed => "blocked-by-method-policy",
        BlockReason::NotAllowed | BlockReason::NotAllowedLocal => "blocked-by-allowlist",
    };
    let body = format!("{}\n", refusal.message());
    reply(client, 403, "Forbidden", &body, Some(tag)).await;
}

async fn reply<C: Conn>(client: &mut C, code: u16, text: &str, body: &str, tag: Option<&str>) {
    let tag = tag
        .map(|t| format!("x-proxy-error: {t}\r\n"))
        .unwrap_or_default();
    let response = format!(
        "HTTP/1.1 {code} {text}\r\ncontent-type: text/plain; charset=utf-8\r\n{tag}content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.write_all(response.as_bytes()).await;
    let _ = client.shutdown().await;
}

fn find_head_end(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| at + 4)
}

fn parse_head(bytes: &[u8]) -> Option<Head> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.split("\r\n");
    let mut parts = lines.next()?.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some()
        || !version.starts_with("HTTP/1.")
        || method.is_empty()
        || !method.bytes().all(|b| b.is_ascii_uppercase() || b == b'-')
        || target.bytes().any(|b| b.is_ascii_control() || b == b' ')
    {
        return None;
    }
    let mut headers = Vec::new();
    for line in lines {
        if line.is_empty() {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            return None;
        }
        let (name, value) = line.split_once(':')?;
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_!#$%&'*+.^`|~".contains(&b))
        {
            return None;
        }
        if value.bytes().any(|b| b.is_ascii_control() && b != b'\t') {
            return None;
        }
        headers.push((name.to_owned(), value.trim().to_owned()));
    }
    Some(Head {
        method: method.to_owned(),
        target: target.to_owned(),
        headers,
    })
}

/// `host:port` or `[v6]:port` with a valid port; the host comes back without brackets
/// only when it was bracketed IPv6 (kept bracketed for [`canonicalize_host`]).
pub(crate) fn split_authority(authority: &str) -> Option<(String, u16)> {
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']')?;
        let port = authority[end + 1..].strip_prefix(':')?;
        (&authority[..=end], port)
    } else {
        let (host, port) = authority.rsplit_once(':')?;
        if host.contains(':') {
            return None;
        }
        (host, port)
    };
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) || port.len() > 5 {
        return None;
    }
    let port: u16 = port.parse().ok()?;
    (port != 0).then(|| (host.to_owned(), port))
}
