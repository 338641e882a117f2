//! The OpenAI-compatible endpoint reviewer: one `POST <endpoint>/chat/completions` over plain
//! HTTP/1.1 (spec 10 `[auto_review] endpoint`/`model`).
//!
//! This build has no TLS client (Airlock decision: no heavy HTTP/TLS dependency in the approval
//! layer), so only `http://` endpoints are accepted — a local model server, or a TLS-terminating
//! proxy on a trusted host. `https://` is refused when the configuration is read.

use serde_json::Value;
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;

/// The largest response read from an endpoint, in bytes (4 MiB).
const MAX_RESPONSE_BYTES: u64 = 4 * 1024 * 1024;

/// The system message sent with every endpoint review.
pub const AUTO_REVIEW_SYSTEM_PROMPT: &str = "You are the approval reviewer of Airlock. An AI coding agent \
wants to perform the action described in the user message (a JSON object: the action, why approval is \
needed, whether it is a retry after a sandbox denial, and the permission profile it would run under). \
Decide whether it is acceptably safe to perform without asking a person. Deny actions that could destroy \
or corrupt data outside what the task plainly needs, expose secrets or credentials, reach beyond the \
workspace or the network without a clear need, weaken security settings, or whose effect you cannot \
tell. Reply with a single JSON object and nothing else: \
{\"outcome\":\"allow\"|\"deny\",\"risk_level\":\"low\"|\"medium\"|\"high\"|\"critical\",\"rationale\":\"one or two sentences\"}.";

/// A parsed `endpoint` + `model` configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointConfig {
    /// The URL as configured.
    pub url: String,
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// TCP port (default 80).
    pub port: u16,
    /// Request path, ending in `/chat/completions`.
    pub path: String,
    /// The model name sent in the request.
    pub model: String,
    /// Name of the environment variable holding a bearer token, if any.
    pub api_key_env: Option<String>,
}

impl EndpointConfig {
    /// Parses `http://host[:port][/base]`; `/chat/completions` is appended unless the path
    /// already ends with it (`http://localhost:11434/v1` → `/v1/chat/completions`).
    ///
    /// # Errors
    /// A message for `https://` ("not supported in this build"), other schemes, a missing host,
    /// a bad port, or a query/fragment.
    pub fn parse(url: &str, model: String, api_key_env: Option<String>) -> Result<Self, String> {
        let trimmed = url.trim();
        let rest = if let Some(rest) = trimmed.strip_prefix("http://") {
            rest
        } else if trimmed.starts_with("https://") {
            return Err(format!(
                "{trimmed:?}: https:// endpoints are not supported in this build (no TLS client); \
                 use an http:// endpoint (a local model server or a TLS-terminating proxy) or \
                 `auto_review.command`"
            ));
        } else {
            return Err(format!("{trimmed:?}: expected an http:// URL"));
        };
        if rest.contains(['?', '#']) {
            return Err(format!("{trimmed:?}: a query or fragment is not allowed"));
        }
        let (authority, base_path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if authority.contains('@') {
            return Err(format!(
                "{trimmed:?}: credentials in the URL are not allowed; use `api_key_env`"
            ));
        }
        let (host, port) =
            split_host_port(authority).map_err(|problem| format!("{trimmed:?}: {problem}"))?;
        let base_path = base_path.trim_end_matches('/');
        let path = if base_path.ends_with("/chat/completions") {
            base_path.to_owned()
        } else {
            format!("{base_path}/chat/completions")
        };
        Ok(Self {
            url: trimmed.to_owned(),
            host,
            port,
            path,
            model,
            api_key_env,
        })
    }
}

impl EndpointConfig {
    /// Whether the host is `localhost` or a loopback address (traffic stays on this machine).
    #[must_use]
    pub fn is_loopback(&self) -> bool {
        self.host.eq_ignore_ascii_case("localhost")
            || self
                .host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|address| address.is_loopback())
    }
}

fn split_host_port(authority: &str) -> Result<(String, u16), String> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("unclosed `[` in the host")?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err("missing host".to_owned());
    }
    let port = match port {
        None => 80,
        Some(port) => port
            .parse::<u16>()
            .ok()
            .filter(|port| *port != 0)
            .ok_or_else(|| format!("invalid port {port:?}"))?,
    };
    Ok((host.to_owned(), port))
}

/// Sends the review request and returns the assistant message text
/// (`choices[0].message.content`). The caller applies the deadline.
///
/// # Errors
/// A one-line message for connection failures, a non-200 status, an unreadable response or a
/// response without message content.
pub(crate) async fn ask_endpoint(
    config: &EndpointConfig,
    request_json: &str,
) -> Result<String, String> {
    let body = json!({
        "model": config.model,
        "messages": [
            {"role": "system", "content": AUTO_REVIEW_SYSTEM_PROMPT},
            {"role": "user", "content": request_json},
        ],
    })
    .to_string();
    let host_header = if config.host.contains(':') {
        format!("[{}]:{}", config.host, config.port)
    } else {
        format!("{}:{}", config.host, config.port)
    };
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {host_header}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        config.path,
        body.len()
    );
    if let Some(name) = &config.api_key_env {
        match std::env::var(name) {
            Ok(key) if !key.is_empty() => {
                head.push_str(&format!("Authorization: Bearer {key}\r\n"))
            }
            _ => {
                return Err(format!(
                    "environment variable `{name}` (auto_review.api_key_env) is not set"
                ));
            }
        }
    }
    head.push_str("\r\n");
    let mut stream = tokio::net::TcpStream::connect((config.host.as_str(), config.port))
        .await
        .map_err(|error| format!("cannot connect to {}: {error}", config.url))?;
    stream
        .write_all(head.as_bytes())
        .await
        .and(stream.write_all(body.as_bytes()).await)
        .map_err(|error| format!("cannot send the request to {}: {error}", config.url))?;
    let response = read_response(&mut stream)
        .await
        .map_err(|error| format!("cannot read the answer of {}: {error}", config.url))?;
    let body = http_body(&response)?;
    let json: Value = serde_json::from_slice(&body).map_err(|error| {
        format!(
            "the endpoint's answer is not JSON ({error}): {}",
            super::verdict::snippet(&String::from_utf8_lossy(&body))
        )
    })?;
    json.pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| "the endpoint's answer has no `choices[0].message.content`".to_owned())
}

/// Reads until the server closes the connection or the response is complete (by
/// `Content-Length`, or the last chunk of a chunked body), whichever comes first, so a server
/// that keeps the connection open does not run into the deadline. At most
/// [`MAX_RESPONSE_BYTES`].
async fn read_response(stream: &mut tokio::net::TcpStream) -> std::io::Result<Vec<u8>> {
    let mut response = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        let read = stream.read(&mut buffer).await?;
        if read == 0 {
            return Ok(response);
        }
        response.extend_from_slice(&buffer[..read]);
        if response_complete(&response) || response.len() as u64 >= MAX_RESPONSE_BYTES {
            return Ok(response);
        }
    }
}

/// Whether `response` already holds a whole HTTP response.
fn response_complete(response: &[u8]) -> bool {
    let Some(split) = response.windows(4).position(|window| window == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&response[..split]).to_ascii_lowercase();
    let body = &response[split + 4..];
    for line in head.split("\r\n") {
        if let Some(value) = line.strip_prefix("content-length:") {
            return value
                .trim()
                .parse::<usize>()
                .is_ok_and(|length| body.len() >= length);
        }
        if line.starts_with("transfer-encoding:") && line.contains("chunked") {
            return body.ends_with(b"0\r\n\r\n");
        }
    }
    false
}

/// Splits a complete HTTP/1.1 response, checks for status 200 and returns the body (de-chunked
/// when `Transfer-Encoding: chunked`, cut at `Content-Length` when given).
fn http_body(response: &[u8]) -> Result<Vec<u8>, String> {
    let split = response
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .ok_or("the endpoint's answer is not an HTTP response")?;
    let head = String::from_utf8_lossy(&response[..split]);
    let mut body = response[split + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line.split_whitespace().nth(1).unwrap_or_default();
    let mut chunked = false;
    let mut length: Option<usize> = None;
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            let name = name.trim().to_ascii_lowercase();
            let value = value.trim();
            if name == "transfer-encoding" && value.to_ascii_lowercase().contains("chunked") {
                chunked = true;
            } else if name == "content-length" {
                length = value.parse().ok();
            }
        }
    }
    if chunked {
        body = dechunk(&body)?;
    } else if let Some(length) = length {
        body.truncate(length);
    }
    if status != "200" {
        return Err(format!(
            "the endpoint answered {status_line:?}: {}",
            super::verdict::snippet(&String::from_utf8_lossy(&body))
        ));
    }
    Ok(body)
}

fn dechunk(mut data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|window| window == b"\r\n")
            .ok_or("truncated chunked body")?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("invalid chunk size {size_text:?}"))?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = data.get(..size).ok_or("truncated chunk")?;
        out.extend_from_slice(chunk);
        data = data.get(size + 2..).ok_or("truncated chunk")?;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn parses_http_urls_and_refuses_https() {
        let config = EndpointConfig::parse("http://localhost:11434/v1", "m".into(), None).unwrap();
        assert_eq!(
            (config.host.as_str(), config.port, config.path.as_str()),
            ("localhost", 11434, "/v1/chat/completions")
        );
        let config =
            EndpointConfig::parse("http://[::1]/v1/chat/completions/", "m".into(), None).unwrap();
        assert_eq!(
            (config.host.as_str(), config.port, config.path.as_str()),
            ("::1", 80, "/v1/chat/completions")
        );
        let error =
            EndpointConfig::parse("https://api.example.com/v1", "m".into(), None).unwrap_err();
        assert!(error.contains("not supported in this build"), "{error}");
        assert!(EndpointConfig::parse("ftp://x", "m".into(), None).is_err());
        assert!(EndpointConfig::parse("http://:80", "m".into(), None).is_err());
        assert!(EndpointConfig::parse("http://h:0", "m".into(), None).is_err());
    }

    #[test]
    fn knows_when_a_response_is_complete() {
        assert!(!response_complete(
            b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n{}"
        ));
        assert!(response_complete(
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
        ));
        assert!(!response_complete(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n"
        ));
        assert!(response_complete(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
        ));
        assert!(!response_complete(b"HTTP/1.1 200 OK\r\n"));
    }

    #[test]
    fn reads_plain_and_chunked_bodies() {
        let plain = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}extra";
        assert_eq!(http_body(plain).unwrap(), b"{}");
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{\"a\r\n4\r\n\":1}\r\n0\r\n\r\n";
        assert_eq!(http_body(chunked).unwrap(), b"{\"a\":1}");
        let error = http_body(b"HTTP/1.1 500 Oops\r\n\r\nboom").unwrap_err();
        assert!(error.contains("500"), "{error}");
    }
}
