//! Which descriptors a child started with tokio's `Command` inherits, for a launcher with
//! many threads (`airlock serve`, the exec-server): std's spawn passes on every descriptor
//! that is not close-on-exec at the moment of the `fork`, including those another thread
//! has just made inheritable for a launch of its own.

/// Makes `command`'s child inherit stdin, stdout, stderr and `keep` (descriptors that are
/// close-on-exec in this process, such as a helper's status channel) and nothing else,
/// from a `pre_exec` hook (`airlock_sandbox::inherit_only_in_child`; before Linux 5.11
/// the child keeps what else it would inherit).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn inherit_only(command: &mut tokio::process::Command, keep: Vec<i32>) {
    // SAFETY: the closure runs in the forked child before exec and only makes the
    // async-signal-safe close_range(2) and fcntl(2) calls; `keep` was allocated before
    // the fork.
    unsafe {
        command.pre_exec(move || airlock_sandbox::inherit_only_in_child(&keep));
    }
}
