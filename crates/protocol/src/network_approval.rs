//! The context of an approval request for blocked network access.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

/// Which blocked network request an approval is about (reference `protocol.md` §8).
///
/// JSON: `{"host":"example.com","protocol":"https"}`. Both fields are required.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct NetworkApprovalContext {
    /// The host the command tried to reach.
    pub host: String,
    /// How it tried to reach it.
    pub protocol: NetworkApprovalProtocol,
}

/// The protocol of a blocked network request (reference `protocol.md` §8).
///
/// JSON: `"http"`, `"https"`, `"socks5_tcp"`, `"socks5_udp"`. The legacy spellings
/// `"https_connect"` and `"http-connect"` (an HTTP `CONNECT` tunnel) are accepted as input aliases
/// of `"https"` and never written. Other strings fail with serde's "unknown variant" error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NetworkApprovalProtocol {
    /// Plain HTTP through the proxy.
    Http,
    /// HTTPS (a `CONNECT` tunnel through the proxy).
    #[serde(alias = "https_connect", alias = "http-connect")]
    Https,
    /// SOCKS5 TCP.
    Socks5Tcp,
    /// SOCKS5 UDP.
    Socks5Udp,
}
