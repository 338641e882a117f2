//! Airlock's Linux sandbox helper (spec `05-sandbox.md` §Linux).
//!
//! Owns the mechanism: resolving an effective permission profile against the host,
//! building the bubblewrap command line, the seccomp filter, legacy Landlock, and the
//! helper entry point [`run_helper`] behind `airlock linux-sandbox`.
//!
//! Must not: choose profiles, ask for approval, or run anything unconfined when the
//! profile asks for confinement — every failure is an error before the command runs.
//!
//! Git metadata: besides the protected names, every `.git` found (each root's, nested
//! ones, the repository above a root) has the places git reads it from kept read-only
//! wherever they are (see `gitdir`), and every parent of a mount target inside a writable
//! root is pinned by a mount so the command cannot rename it
//! ([`mounts::pinned_ancestors`]).
//!
//! Current limitations:
//! - a deny entry on a dangling symlink whose target lies outside every writable root
//!   is skipped with a warning (bubblewrap cannot mount on a path that does not exist
//!   in a read-only area; the command cannot create it there either);
//! - files created after launch that match a deny glob are not masked (bubblewrap can
//!   only mask what exists); symlinked directories are not followed when expanding
//!   deny globs;
//! - a deny mask or read-only bind on a single *file* is a mount on that inode: if the
//!   host replaces the file by rename while the command runs (editors, `git config`
//!   writing `config.lock`), Linux detaches the mount in the sandbox and the new file
//!   is visible there. Directories are bound whole where possible (`.git`, nested
//!   `.git`, placeholders) for this reason; denied single files keep the limitation;
//! - hooks directories and scripts inside the working tree (`core.hooksPath = .husky`)
//!   are workspace files, not protected; included config files are followed up to
//!   [`airlock_permissions::MAX_INCLUDE_DEPTH`] levels and 64 files of at most 1 MiB read;
//! - nested repositories are searched at any depth under every writable root but `/`
//!   (see [`nested_scan`]); one created inside a `CACHEDIR.TAG`-tagged directory after
//!   the tag was first seen is not found. The inotify-driven [`nested_index`] (in process
//!   for `serve`, a per-user daemon for one-shot launches) gives the same outcome without
//!   walking; it covers local file systems only (ext2/3/4, XFS, Btrfs, tmpfs), and a
//!   directory it cannot watch (another user's, beyond its share of
//!   `fs.inotify.max_user_watches`) is listed on every query;
//! - with network restricted, `AF_UNIX` datagram sockets cannot be created (even as a
//!   socketpair), because `sendmsg` could address any socket path the command can see;
//! - set-user/group-id mode bits cannot be set (`chmod g+s` on a directory included);
//! - with a managed network, the `unix_sockets` allow entries are the only Unix socket
//!   paths the command can connect to (see [`unix_sockets`] for how and for its own
//!   limitations); an entry must name an existing socket at launch (not a symbolic link
//!   to one), and a socket the host re-creates after launch is not reachable until the
//!   next command; `unix_sockets` without `domains` has no effect (network off: no socket
//!   is reachable; full network: every one is);
//! - legacy Landlock refuses profiles it cannot express and root launchers (see
//!   [`landlock_mode`]).

pub mod args;
#[cfg(target_os = "linux")]
pub mod bridge;
pub mod bwrap_path;
mod dangling;
#[cfg(target_os = "linux")]
pub mod direct;
mod empty_dir;
#[cfg(target_os = "linux")]
pub mod fs_kind;
mod gitdir;
pub mod globs;
pub mod mounts;
#[cfg(target_os = "linux")]
pub mod nested_index;
#[cfg(target_os = "linux")]
pub mod nested_scan;
#[cfg(target_os = "linux")]
mod nested_walk;
#[cfg(target_os = "linux")]
pub mod probe;
pub mod proxy_env;
pub mod resolve;
#[cfg(target_os = "linux")]
pub mod scan_cache;

#[cfg(target_os = "linux")]
pub mod args_pipe;
#[cfg(target_os = "linux")]
pub mod early_bwrap;
#[cfg(target_os = "linux")]
mod fds;
#[cfg(target_os = "linux")]
pub mod landlock_mode;
#[cfg(target_os = "linux")]
pub mod launch;
#[cfg(target_os = "linux")]
pub mod launch_base;
mod launch_run;
#[cfg(target_os = "linux")]
pub mod placeholders;
#[cfg(target_os = "linux")]
pub mod process_kill;
#[cfg(target_os = "linux")]
pub mod seccomp;
#[cfg(target_os = "linux")]
mod signals;
#[cfg(target_os = "linux")]
pub mod status;
#[cfg(target_os = "linux")]
pub mod unix_sockets;

pub use args::{HELPER_SUBCOMMAND, HelperArgs};
#[cfg(target_os = "linux")]
pub use direct::{DirectBase, DirectLaunch, LaunchCache};
#[cfg(target_os = "linux")]
pub use fds::{inherit_only_in_child, keep_only_in_child};
#[cfg(target_os = "linux")]
pub use launch::{
    DescriptorContent, LaunchDescription, LaunchError, ProxyMount, describe_launch, run_helper,
    run_helper_reporting_setup, run_helper_with_env, run_helper_with_proxy, sandbox_env,
};
