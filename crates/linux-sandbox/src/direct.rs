//! Launching bubblewrap from a long-running, multi-threaded launcher (`airlock serve`)
//! without the `airlock linux-sandbox` helper process (issue 13 item 3).
//!
//! The helper `exec`s bubblewrap whenever it has nothing to do afterwards; then it only
//! costs one more `exec` of a large binary, a re-parse of the profile, a new choice of
//! bubblewrap and new seccomp programs. [`LaunchCache::prepare`] does the helper's work in
//! the launcher instead, for the launches where the design allows it:
//! - a restricted filesystem that needs bubblewrap (not the seccomp-only shapes: their
//!   filter is installed in the process that execs the command);
//! - no legacy Landlock (it restricts the launching process itself);
//! - no managed network (its proxy and bridge live in the helper).
//!
//! Everything else returns `None`: the caller runs the helper as before.
//!
//! What is cached, per launcher (a thread's session) and profile, is a [`BwrapBase`]:
//! pure functions of the profile, the configuration and root-owned files (see
//! [`crate::launch_base`] for why a confined command cannot make it stale). The mount plan
//! — nested `.git` scan, pointer files, protected metadata, `$HOME` placeholders, symlink
//! checks — is computed for every launch by [`crate::launch::prepare_bwrap_with`], exactly
//! as the helper computes it.
//!
//! The launcher must give the descriptors of [`BwrapLaunch::fds`] (and its status pipe)
//! to bubblewrap only — from a `pre_exec` hook ([`crate::keep_only_in_child`]), or, as
//! `airlock serve` does, by `posix_spawn` file actions that renumber them and close every
//! other descriptor — and hold a
//! [`PlaceholderGuard`] from [`DirectLaunch::acquire_placeholders`] until bubblewrap has
//! exited.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use airlock_permissions::{
    FileSystemPolicyQueries, ResolveContext, file_system_sandbox_policy, network_sandbox_policy,
};
use airlock_protocol::{FileSystemSandboxKind, FileSystemSandboxPolicy, NetworkSandboxPolicy};

use crate::args::HelperArgs;
use crate::launch::{BwrapLaunch, LaunchError, prepare_bwrap_with, sandbox_env};
use crate::launch_base::BwrapBase;
use crate::placeholders::{PlaceholderGuard, PlaceholderKind};

/// At most this many profiles are remembered per cache (a thread uses one or two); when
/// full, the cache starts over.
const MAX_PROFILES: usize = 16;

/// What a [`BwrapBase`] is a function of.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    /// The effective profile.
    profile: airlock_protocol::PermissionProfile,
    policy_cwd: PathBuf,
    configured_bwrap: Option<PathBuf>,
}

/// Per-launcher cache of [`BwrapBase`]s, by profile (module docs). Cheap to share.
#[derive(Debug, Default)]
pub struct LaunchCache {
    bases: Mutex<HashMap<Key, Arc<BwrapBase>>>,
}

/// A bubblewrap launch prepared in the launcher.
#[derive(Debug)]
pub struct DirectLaunch {
    /// The program, arguments and descriptors (close-on-exec; see the module docs).
    pub launch: BwrapLaunch,
    /// Variables to add to the command's environment (as the helper adds them).
    pub env: Vec<(&'static str, &'static str)>,
    /// Warnings of the mount plan, one line each without the `airlock: warning: ` prefix
    /// (the helper prints them on the command's stderr).
    pub warnings: Vec<String>,
}

impl DirectLaunch {
    /// Creates and locks the placeholder mount points of the launch (see
    /// [`crate::placeholders`]); `None` when it has none. Release the guard once
    /// bubblewrap has exited.
    ///
    /// # Errors
    /// [`LaunchError::MountPoint`] naming the path; nothing may run then.
    pub fn acquire_placeholders(&self) -> Result<Option<PlaceholderGuard>, LaunchError> {
        let placeholders: Vec<(&Path, PlaceholderKind)> = self
            .launch
            .created_mount_points
            .iter()
            .map(|p| (p.as_path(), PlaceholderKind::Directory))
            .chain(
                self.launch
                    .created_file_mount_points
                    .iter()
                    .map(|p| (p.as_path(), PlaceholderKind::File)),
            )
            .collect();
        if placeholders.is_empty() {
            return Ok(None);
        }
        PlaceholderGuard::acquire_kinds(placeholders)
            .map(Some)
            .map_err(LaunchError::MountPoint)
    }
}

impl LaunchCache {
    /// An empty cache.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of profiles whose base is cached (for tests).
    #[must_use]
    pub fn len(&self) -> usize {
        self.bases
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether nothing is cached.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Prepares the launch the helper would run for `args` (`args.status_fd`, when set,
    /// becomes bubblewrap's `--json-status-fd`), or `None` when this launch needs the
    /// helper (module docs): [`LaunchCache::base`], then [`DirectBase::plan`].
    ///
    /// # Errors
    /// The [`LaunchError`] the helper would report; nothing has run.
    pub fn prepare(&self, args: &HelperArgs) -> Result<Option<DirectLaunch>, LaunchError> {
        match self.base(args)? {
            Some(base) => base.plan(args, None).map(Some),
            None => Ok(None),
        }
    }

    /// What a launch for `args` shares with every other launch of its profile (the
    /// cached [`BwrapBase`]), or `None` when this launch needs the helper (module docs).
    /// Knowing it, a launcher can start bubblewrap before the mount plan is worked out
    /// (see [`crate::args_pipe`]).
    ///
    /// # Errors
    /// The [`LaunchError`] of choosing bubblewrap or compiling the seccomp programs.
    pub fn base(&self, args: &HelperArgs) -> Result<Option<DirectBase>, LaunchError> {
        if args.managed_network.is_some() || args.use_legacy_landlock {
            return Ok(None);
        }
        let policy = file_system_sandbox_policy(&args.permission_profile);
        if policy.kind != FileSystemSandboxKind::Restricted {
            return Ok(None);
        }
        let ctx = ResolveContext::new(&args.sandbox_policy_cwd);
        let no_deny = policy.get_unreadable_roots(&ctx).is_empty()
            && policy
                .get_unreadable_globs_with_cwd(&args.sandbox_policy_cwd)
                .is_empty();
        if policy.has_full_disk_write_access() && no_deny {
            return Ok(None);
        }
        let network = network_sandbox_policy(&args.permission_profile);
        let key = Key {
            profile: args.permission_profile.clone(),
            policy_cwd: args.sandbox_policy_cwd.clone(),
            configured_bwrap: args.bwrap_path.clone(),
        };
        let cached = self
            .bases
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .filter(|base| base.is_current())
            .cloned();
        let base = if let Some(base) = cached {
            base
        } else {
            let base = Arc::new(BwrapBase::compute(
                args.bwrap_path.as_deref(),
                &policy,
                &args.sandbox_policy_cwd,
                network,
                false,
            )?);
            let mut bases = self.bases.lock().unwrap_or_else(PoisonError::into_inner);
            if bases.len() >= MAX_PROFILES {
                bases.clear();
            }
            bases.insert(key, Arc::clone(&base));
            base
        };
        Ok(Some(DirectBase {
            base,
            policy,
            network,
        }))
    }
}

/// A direct launch before its mount plan: the profile's [`BwrapBase`] and policies.
#[derive(Debug)]
pub struct DirectBase {
    base: Arc<BwrapBase>,
    policy: FileSystemSandboxPolicy,
    network: NetworkSandboxPolicy,
}

impl DirectBase {
    /// The trusted bubblewrap executable.
    #[must_use]
    pub fn bwrap(&self) -> &Path {
        self.base.bwrap()
    }

    /// The compiled seccomp programs (BPF bytes), in the order of `--add-seccomp-fd`.
    #[must_use]
    pub fn seccomp_programs(&self) -> &[Vec<u8>] {
        self.base.seccomp_programs()
    }

    /// Opens the seccomp programs, one filled pipe each (close-on-exec), in order, for
    /// [`DirectBase::plan`]'s `seccomp_fds`.
    ///
    /// # Errors
    /// The OS error of `pipe2` or of filling it.
    pub fn open_seccomp_programs(&self) -> std::io::Result<Vec<std::os::fd::OwnedFd>> {
        self.seccomp_programs()
            .iter()
            .map(|bytes| crate::fds::data_fd(bytes))
            .collect()
    }

    /// Variables to add to the command's environment (as the helper adds them).
    #[must_use]
    pub fn env(&self) -> Vec<(&'static str, &'static str)> {
        sandbox_env(self.network)
    }

    /// Works out the mount plan for `args` (the `args` the base was made for), exactly as
    /// the helper does. With `seccomp_fds` (one per program of
    /// [`DirectBase::seccomp_programs`], owned by the caller, see
    /// [`DirectBase::open_seccomp_programs`]) the launch names those and its `fds` hold
    /// only the plan's own.
    ///
    /// # Errors
    /// The [`LaunchError`] the helper would report; nothing has run.
    pub fn plan(
        &self,
        args: &HelperArgs,
        seccomp_fds: Option<&[i32]>,
    ) -> Result<DirectLaunch, LaunchError> {
        let mut warnings = Vec::new();
        let launch = prepare_bwrap_with(
            &self.base,
            args,
            &self.policy,
            self.network,
            None,
            &mut warnings,
            seccomp_fds,
        )?;
        Ok(DirectLaunch {
            launch,
            env: sandbox_env(self.network),
            warnings,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::ffi::OsString;
    use std::path::Path;

    use airlock_permissions::{
        built_in_profile, file_system_sandbox_policy,
        materialize_project_roots_with_workspace_roots, network_sandbox_policy,
    };

    use super::LaunchCache;
    use crate::args::HelperArgs;
    use crate::launch::{BwrapLaunch, DescriptorContent, prepare_bwrap};

    fn args(ws: &Path) -> HelperArgs {
        let profile = materialize_project_roots_with_workspace_roots(
            &built_in_profile(":workspace").unwrap(),
            &[ws.to_path_buf()],
        );
        HelperArgs {
            sandbox_policy_cwd: ws.to_path_buf(),
            command_cwd: ws.to_path_buf(),
            permission_profile: profile,
            use_legacy_landlock: false,
            no_proc: false,
            apply_seccomp_then_exec: false,
            bwrap_path: None,
            status_fd: None,
            protected_homes: Vec::new(),
            user_homes: Vec::new(),
            managed_network: None,
            network_proxy_dir: None,
            command: vec!["/bin/true".into()],
        }
    }

    /// The argv with every descriptor number replaced by `FD` (numbers differ between two
    /// launches), and what each descriptor carries.
    fn normalized(launch: &BwrapLaunch) -> (Vec<OsString>, Vec<DescriptorContent>) {
        let fds: Vec<String> = launch
            .fds
            .iter()
            .map(|fd| std::os::fd::AsRawFd::as_raw_fd(fd).to_string())
            .collect();
        let mut out = vec![launch.bwrap.clone().into_os_string()];
        let mut previous: Option<&OsString> = None;
        for arg in &launch.args {
            let names_fd =
                previous.is_some_and(|p| p == "--ro-bind-data" || p == "--add-seccomp-fd");
            if names_fd && fds.iter().any(|fd| arg == fd.as_str()) {
                out.push("FD".into());
            } else {
                out.push(arg.clone());
            }
            previous = Some(arg);
        }
        (out, launch.fd_contents.clone())
    }

    #[test]
    fn a_cached_launch_is_what_a_fresh_one_is_and_sees_a_new_repository() {
        if crate::bwrap_path::choose_bwrap(None, &[]).is_err() {
            return; // no bubblewrap on this host: the helper's own tests report it
        }
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join("src")).unwrap();
        let cache = LaunchCache::new();
        let args = args(&ws);
        let first = cache.prepare(&args).unwrap().expect("a bubblewrap launch");
        assert_eq!(cache.len(), 1);
        // Between two calls the command (or the host) creates repositories.
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(ws.join("src/nested/.git")).unwrap();
        std::fs::create_dir_all(ws.join("src/wt")).unwrap();
        std::fs::write(ws.join("src/wt/.git"), "gitdir: ../../.git\n").unwrap();
        // Other tests of this binary create and remove repositories under /tmp, a writable
        // root of this profile, meanwhile: the two plans are compared once both were made
        // from one state of /tmp (a real difference persists over every attempt).
        let mut attempts = 0;
        let (second, fresh) = loop {
            let second = cache.prepare(&args).unwrap().expect("a bubblewrap launch");
            let fresh = prepare_bwrap(
                &args,
                &file_system_sandbox_policy(&args.permission_profile),
                network_sandbox_policy(&args.permission_profile),
                None,
            )
            .unwrap();
            attempts += 1;
            if attempts == 10 || normalized(&second.launch) == normalized(&fresh) {
                break (second, fresh);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        assert_eq!(
            cache.len(),
            1,
            "the second launch reuses the first one's base"
        );
        assert_eq!(normalized(&second.launch), normalized(&fresh));
        assert_ne!(
            normalized(&first.launch).0,
            normalized(&second.launch).0,
            "the new repositories change the mount plan"
        );
        let nested = ws.join("src/nested/.git").into_os_string();
        assert!(
            second.launch.args.contains(&nested),
            "the nested repository is protected: {:?}",
            second.launch.args
        );
    }
}
