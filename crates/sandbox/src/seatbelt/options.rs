//! Inputs of the Seatbelt generator besides the profile: the environment the entries resolve
//! against and the managed-network settings (reference `seatbelt.md` §1 and §5).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::host::host_darwin_user_cache_dir;

/// Everything the generator needs beyond the command, the policies and the cwd. Explicit so
/// the output is a pure function of its inputs (golden-testable on any host);
/// [`SeatbeltOptions::from_host`] fills it from the running process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeatbeltOptions {
    /// `$TMPDIR`, which `:tmpdir` entries resolve to (`None`: they resolve to nothing).
    pub tmpdir: Option<PathBuf>,
    /// `$AIRLOCK_HOME`, `$CODEX_HOME` and every trusted project's `.airlock`: kept read-only
    /// under every writable root (see `airlock_permissions::ResolveContext::protected_homes`).
    pub protected_homes: Vec<PathBuf>,
    /// `$HOME`: its startup entries stay read-only when it lies inside a writable root (see
    /// `airlock_permissions::ResolveContext::user_homes`).
    pub user_homes: Vec<PathBuf>,
    /// The per-user cache directory (`confstr(_CS_DARWIN_USER_CACHE_DIR)`), writable whenever
    /// network rules are emitted (trust and DNS caches live there). `None`: the rule and its
    /// `-DDARWIN_USER_CACHE_DIR` parameter are left out.
    pub darwin_user_cache_dir: Option<PathBuf>,
    /// Managed network requirements are enforced: the network may only go through the proxy,
    /// and without a usable loopback proxy it is closed (reference §5).
    pub enforce_managed_network: bool,
    /// The managed network proxy of this session, when one runs.
    pub managed_proxy: Option<ManagedProxy>,
}

impl SeatbeltOptions {
    /// Options from this process: `$TMPDIR` (ignored unless absolute, existing and not the
    /// filesystem root, see `airlock_permissions::tmpdir_problem`), the protected homes, `$HOME` and,
    /// on macOS, the user cache directory; no managed network.
    #[must_use]
    pub fn from_host() -> Self {
        let (tmpdir, _) = airlock_permissions::tmpdir_from_env();
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        Self {
            tmpdir,
            protected_homes: airlock_permissions::protected_homes_from_env(&cwd),
            user_homes: airlock_permissions::user_homes_from_env(&cwd),
            darwin_user_cache_dir: host_darwin_user_cache_dir(),
            ..Self::default()
        }
    }
}

/// A managed network proxy the sandboxed command must use (reference §5).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManagedProxy {
    /// The proxy variables the command will see (`HTTP_PROXY`, `https_proxy`, `ALL_PROXY`, …;
    /// other names are ignored). Loopback endpoints among them become the only allowed
    /// outbound ports.
    pub env: BTreeMap<String, String>,
    /// Local servers may bind any port and talk to `localhost`.
    pub allow_local_binding: bool,
    /// Which unix sockets the command may bind and connect to.
    pub unix_sockets: UnixSocketAccess,
    /// Sockets refused even inside a granted path (`unix_sockets` `deny` entries; absolute
    /// paths, each a `UNIX_SOCKET_DENY_PATH_<n>` parameter). Written only when some socket
    /// access is granted: otherwise nothing is reachable anyway.
    pub denied_unix_sockets: Vec<PathBuf>,
}

/// Unix-domain socket access granted by the network configuration (reference §5).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum UnixSocketAccess {
    /// None beyond what the rest of the policy allows.
    #[default]
    None,
    /// Any unix socket.
    AllowAll,
    /// Sockets under these absolute paths (relative paths are ignored: they cannot be
    /// confined); each becomes a `UNIX_SOCKET_PATH_<n>` parameter.
    Paths(Vec<PathBuf>),
}

impl UnixSocketAccess {
    /// Whether any socket access is granted.
    #[must_use]
    pub fn is_granted(&self) -> bool {
        match self {
            Self::None => false,
            Self::AllowAll => true,
            Self::Paths(paths) => paths.iter().any(|path| path.is_absolute()),
        }
    }
}
