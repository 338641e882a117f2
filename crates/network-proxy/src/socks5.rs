//! SOCKS5 (RFC 1928) on the proxy socket: `CONNECT` to a domain or an IP, no
//! authentication; `BIND` and `UDP ASSOCIATE` are refused (spec 12 §The proxy).

use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;

use airlock_permissions::network::NetworkMode;

use crate::policy::BlockReason;
use crate::policy::Protocol;
use crate::policy::Refusal;
use crate::server::Conn;
use crate::server::Shared;

/// Reply codes used.
const SUCCEEDED: u8 = 0x00;
const GENERAL_FAILURE: u8 = 0x01;
const NOT_ALLOWED_BY_RULESET: u8 = 0x02;
const COMMAND_NOT_SUPPORTED: u8 = 0x07;
const ADDRESS_TYPE_NOT_SUPPORTED: u8 = 0x08;

/// Serves one SOCKS5 client (the version byte already seen is in `buffered`).
pub(crate) async fn serve<C: Conn>(mut client: C, buffered: Vec<u8>, shared: &Shared) {
    let mut reader = Prefixed { buffered, at: 0 };
    let Some(count) = reader
        .byte(&mut client)
        .await
        .and(reader.byte(&mut client).await)
    else {
        return;
    };
    let mut methods = vec![0u8; usize::from(count)];
    if reader.exact(&mut client, &mut methods).await.is_none() {
        return;
    }
    if !methods.contains(&0x00) {
        let _ = client.write_all(&[0x05, 0xff]).await;
        return;
    }
    if client.write_all(&[0x05, 0x00]).await.is_err() {
        return;
    }
    let mut request = [0u8; 4];
    if reader.exact(&mut client, &mut request).await.is_none() || request[0] != 0x05 {
        return;
    }
    let host = match request[3] {
        0x01 => {
            let mut ip = [0u8; 4];
            if reader.exact(&mut client, &mut ip).await.is_none() {
                return;
            }
            std::net::Ipv4Addr::from(ip).to_string()
        }
        0x04 => {
            let mut ip = [0u8; 16];
            if reader.exact(&mut client, &mut ip).await.is_none() {
                return;
            }
            format!("[{}]", std::net::Ipv6Addr::from(ip))
        }
        0x03 => {
            let Some(len) = reader.byte(&mut client).await else {
                return;
            };
            let mut name = vec![0u8; usize::from(len)];
            if reader.exact(&mut client, &mut name).await.is_none() {
                return;
            }
            // Invalid UTF-8 becomes U+FFFD, which host canonicalisation refuses.
            String::from_utf8_lossy(&name).into_owned()
        }
        _ => return answer(&mut client, ADDRESS_TYPE_NOT_SUPPORTED).await,
    };
    let mut port = [0u8; 2];
    if reader.exact(&mut client, &mut port).await.is_none() {
        return;
    }
    let port = u16::from_be_bytes(port);
    if request[1] != 0x01 {
        return answer(&mut client, COMMAND_NOT_SUPPORTED).await;
    }
    if shared.policy.network().mode == NetworkMode::Limited {
        let refusal = Refusal {
            reason: BlockReason::MethodNotAllowed,
            host: host.escape_debug().to_string(),
            port,
            detail: "SOCKS5 is blocked by network mode \"limited\"".into(),
        };
        shared.record(&refusal, Protocol::Socks5Tcp);
        return answer(&mut client, NOT_ALLOWED_BY_RULESET).await;
    }
    let upstream = match shared.dial(&host, port, Protocol::Socks5Tcp).await {
        Ok(upstream) => upstream,
        Err(Some(_)) => return answer(&mut client, NOT_ALLOWED_BY_RULESET).await,
        Err(None) => return answer(&mut client, GENERAL_FAILURE).await,
    };
    if client
        .write_all(&[0x05, SUCCEEDED, 0x00, 0x01, 0, 0, 0, 0, 0, 0])
        .await
        .is_err()
    {
        return;
    }
    let rest = reader
        .buffered
        .split_off(reader.at.min(reader.buffered.len()));
    crate::server::splice(client, upstream, rest).await;
}

async fn answer<C: Conn>(client: &mut C, code: u8) {
    let _ = client
        .write_all(&[0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0])
        .await;
    let _ = client.shutdown().await;
}

/// Reads from bytes already received first, then from the stream.
struct Prefixed {
    buffered: Vec<u8>,
    at: usize,
}

impl Prefixed {
    async fn byte<C: Conn>(&mut self, client: &mut C) -> Option<u8> {
        let mut one = [0u8; 1];
        self.exact(client, &mut one).await?;
        Some(one[0])
    }

    async fn exact<C: Conn>(&mut self, client: &mut C, out: &mut [u8]) -> Option<()> {
        let available = (self.buffered.len() - self.at).min(out.len());
        out[..available].copy_from_slice(&self.buffered[self.at..self.at + available]);
        self.at += available;
        if available < out.len() {
            client.read_exact(&mut out[available..]).await.ok()?;
        }
        Some(())
    }
}
