//! `--listen` and `--ws-token-file` (spec 09 §Transport): which forms are accepted, and the
//! rule that a WebSocket listener on a non-loopback address needs a bearer token.

use std::net::SocketAddr;
use std::path::Path;
use std::path::PathBuf;

use sha2::Digest as _;

/// Where the server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// One connection over stdin/stdout, one JSON message per line.
    Stdio,
    /// WebSocket on `ADDR:PORT`, one JSON-RPC message per text frame.
    WebSocket(SocketAddr),
    /// A Unix socket at an absolute path, one JSON message per line.
    Unix(PathBuf),
}

/// A refused `--listen` / token set-up. Nothing is listening.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// Not one of the accepted forms.
    #[error(
        "--listen {0:?} is not supported; use stdio, ws://ADDR:PORT (for example ws://127.0.0.1:4500) or unix:/absolute/path"
    )]
    Form(String),
    /// A non-loopback WebSocket address without a token.
    #[error(
        "--listen {0} is not a loopback address, so a bearer token is required: pass --ws-token-file FILE (the file holds the token)"
    )]
    TokenRequired(SocketAddr),
    /// The token file cannot be used.
    #[error("--ws-token-file {path}: {message}")]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A token given for a transport that does not use it.
    #[error(
        "--ws-token-file only applies to ws:// listeners; a Unix socket is protected by its file permissions and stdio by whoever starts the server"
    )]
    TokenNotApplicable,
}

impl Listen {
    /// Parses a `--listen` value.
    ///
    /// # Errors
    /// [`ListenError::Form`].
    pub fn parse(text: &str) -> Result<Self, ListenError> {
        if text == "stdio" || text == "stdio://" {
            return Ok(Self::Stdio);
        }
        if let Some(path) = text.strip_prefix("unix:") {
            let path = PathBuf::from(path.strip_prefix("//").unwrap_or(path));
            return if path.is_absolute() {
                Ok(Self::Unix(path))
            } else {
                Err(ListenError::Form(text.to_owned()))
            };
        }
        if let Some(rest) = text.strip_prefix("ws://") {
            let rest = rest.strip_suffix('/').unwrap_or(rest);
            return rest
                .parse::<SocketAddr>()
                .map(Self::WebSocket)
                .map_err(|_| ListenError::Form(text.to_owned()));
        }
        Err(ListenError::Form(text.to_owned()))
    }

    /// Checks the token rule: a non-loopback WebSocket address needs `token`.
    ///
    /// # Errors
    /// [`ListenError::TokenRequired`], [`ListenError::TokenNotApplicable`].
    pub fn check_token(&self, token: Option<&TokenDigest>) -> Result<(), ListenError> {
        match (self, token) {
            (Self::WebSocket(addr), None) if !addr.ip().is_loopback() => {
                Err(ListenError::TokenRequired(*addr))
            }
            (Self::Stdio | Self::Unix(_), Some(_)) => Err(ListenError::TokenNotApplicable),
            _ => Ok(()),
        }
    }
}

/// The SHA-256 digest of the bearer token; presented tokens are hashed and compared in
/// constant time (spec 09), so neither the token's length nor a prefix leaks through timing.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenDigest([u8; 32]);

impl std::fmt::Debug for TokenDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenDigest(..)")
    }
}

impl TokenDigest {
    /// The digest of `token`.
    #[must_use]
    pub fn of(token: &str) -> Self {
        Self(sha2::Sha256::digest(token.as_bytes()).into())
    }

    /// Reads the token from `path`: the file's content without surrounding whitespace.
    ///
    /// # Errors
    /// [`ListenError::TokenFile`] when the file cannot be read or holds no token.
    pub fn from_file(path: &Path) -> Result<Self, ListenError> {
        let fail = |message: String| ListenError::TokenFile {
            path: path.to_owned(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
        let token = text.trim();
        if token.is_empty() {
            return Err(fail("the file is empty; write the token into it".into()));
        }
        if token.len() < 16 {
            return Err(fail(
                "the token is shorter than 16 characters; use a long random token".into(),
            ));
        }
        Ok(Self::of(token))
    }

    /// Whether `presented` is the token, in time independent of where they differ.
    #[must_use]
    pub fn matches(&self, presented: &str) -> bool {
        let other = Self::of(presented);
        let difference = self
            .0
            .iter()
            .zip(other.0.iter())
            .fold(0_u8, |acc, (a, b)| acc | (a ^ b));
        std::hint::black_box(difference) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_forms() {
        assert_eq!(Listen::parse("stdio").unwrap(), Listen::Stdio);
        assert_eq!(
            Listen::parse("ws://127.0.0.1:4500").unwrap(),
            Listen::WebSocket("127.0.0.1:4500".parse().unwrap())
        );
        assert_eq!(
            Listen::parse("unix:/run/x.sock").unwrap(),
            Listen::Unix("/run/x.sock".into())
        );
        assert!(Listen::parse("unix:rel.sock").is_err());
        assert!(Listen::parse("http://127.0.0.1:1").is_err());
        assert!(Listen::parse("ws://localhost:1").is_err());
    }

    #[test]
    fn non_loopback_websocket_needs_a_token() {
        let open = Listen::parse("ws://0.0.0.0:4500").unwrap();
        assert!(matches!(
            open.check_token(None),
            Err(ListenError::TokenRequired(_))
        ));
        assert!(open.check_token(Some(&TokenDigest::of("x"))).is_ok());
        let local = Listen::parse("ws://[::1]:4500").unwrap();
        assert!(local.check_token(None).is_ok());
    }

    #[test]
    fn token_comparison() {
        let digest = TokenDigest::of("correct horse battery staple");
        assert!(digest.matches("correct horse battery staple"));
        assert!(!digest.matches("correct horse battery stapl"));
        assert!(!digest.matches(""));
    }
}
