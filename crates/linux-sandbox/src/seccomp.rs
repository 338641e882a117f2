//! The seccomp filter installed by the inner stage, right before `exec`
//! (spec 05 §Linux step 2, issue 4 "go beyond the peers").
//!
//! Default action: allow. Every rule below returns `EPERM`, so programs see an
//! ordinary permission error (which denial detection recognises) instead of dying.
//! Two exceptions are stricter by construction: syscalls of a foreign ABI (i386 via
//! `int 0x80`) kill the process, and x32 syscall numbers on x86_64 get `EPERM`.
//!
//! What is denied under every sandboxed profile: `ptrace`, `process_vm_readv`,
//! `process_vm_writev`, `io_uring_*`, `ioctl(TIOCSTI)` / `ioctl(TIOCLINUX)`, `bpf`,
//! `perf_event_open`, `userfaultfd`, `add_key` / `request_key` / `keyctl`, kernel
//! module and kexec calls, and `AF_VSOCK` sockets.
//!
//! With network restricted, also: `connect`, `bind`, `listen`, `accept`, `accept4`;
//! `sendto` that names a destination (a null address — plain `send()` — stays
//! allowed); `socket` / `socketpair` for any family but `AF_UNIX`; and `AF_UNIX`
//! datagram sockets, because a datagram socket can address any socket path it can
//! see through `sendmsg` (whose address seccomp cannot inspect) — stream and
//! seqpacket sockets need `connect` to reach anything, so they stay allowed, and
//! `send`/`sendmsg`/`recv` on already-connected sockets (socketpairs) keep working.
//! Codex denies `getsockopt`/`setsockopt`/`shutdown`/`getpeername` too; Airlock does
//! not, because they cannot reach anything new and breaking them over-restricts.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

/// Which network rules the filter carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkSeccompMode {
    /// Network allowed: only the always-denied set (including `AF_VSOCK`).
    Enabled,
    /// Network off: the always-denied set plus the network rules above.
    Restricted,
    /// Network only through the managed proxy (spec 12 §Enforcement), for the command
    /// itself (the in-sandbox bridge runs under [`Self::Enabled`] inside the same network
    /// namespace, which holds only loopback): `socket` only for `AF_INET`/`AF_INET6`, and
    /// neither raw nor packet types; `socketpair` only for `AF_UNIX` stream/seqpacket. So
    /// no `AF_UNIX` socket can reach a path (the proxy socket or any host socket), and no
    /// netlink or packet socket exists.
    ProxyRouted,
    /// [`Self::ProxyRouted`] for a profile whose `unix_sockets` allow some sockets: `socket`
    /// also for `AF_UNIX` stream/seqpacket (never datagram: `sendmsg` could address any
    /// socket path). Reaching a path still needs `connect`, which the supervisor of
    /// [`crate::unix_sockets`] performs on the command's behalf, for allowed sockets only;
    /// without that supervisor's filter this mode must not be used.
    ProxyRoutedUnixSockets,
}

/// Building the filter failed (a bug in the rule table, or an unsupported CPU).
#[derive(Debug, thiserror::Error)]
pub enum SeccompError {
    /// The CPU architecture has no filter definition.
    #[error("seccomp filtering is not supported on this CPU architecture ({0})")]
    UnsupportedArch(&'static str),
    /// seccompiler rejected the rule table.
    #[error("could not build the seccomp filter: {0}")]
    Build(#[from] seccompiler::BackendError),
    /// Installing the filter failed.
    #[error("could not install the seccomp filter: {0}")]
    Install(#[from] seccompiler::Error),
}

const EPERM: u32 = libc::EPERM as u32;
/// `#define __X32_SYSCALL_BIT 0x40000000` (arch/x86/include/uapi/asm/unistd.h).
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
/// `TIOCSTI` / `TIOCLINUX` from `asm-generic/ioctls.h`: terminal input injection.
const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;
/// `SOCK_PACKET` (obsolete packet-socket type; libc marks the constant deprecated).
const SOCK_PACKET: u64 = 10;
/// Mask of the socket type without `SOCK_NONBLOCK` / `SOCK_CLOEXEC`.
const SOCK_TYPE_MASK: u64 = 0xf;

fn target_arch() -> Result<TargetArch, SeccompError> {
    match std::env::consts::ARCH {
        "x86_64" => Ok(TargetArch::x86_64),
        "aarch64" => Ok(TargetArch::aarch64),
        other => Err(SeccompError::UnsupportedArch(other)),
    }
}

fn cond(
    arg: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, SeccompError> {
    Ok(SeccompCondition::new(arg, len, op, value)?)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, SeccompError> {
    Ok(SeccompRule::new(conditions)?)
}

/// Syscalls denied whatever their arguments, under every sandboxed profile.
fn always_denied() -> Vec<libc::c_long> {
    let mut calls = vec![
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_keyctl,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.push(libc::SYS_kexec_file_load);
    calls
}

/// `S_ISUID` / `S_ISGID`: mode bits that make an executable run with its owner's
/// (or group's) identity.
const SETID_BITS: [u64; 2] = [libc::S_ISUID as u64, libc::S_ISGID as u64];

/// No set-user/group-id files: a root-launched command runs as the host's uid 0, so
/// `chmod u+s` on a copy of a shell in a writable root would plant a root shell for
/// every local user. Denies, on every call that can set a mode:
/// - `chmod`, `fchmod`, `fchmodat`, `fchmodat2` with a set-id bit;
/// - file creation with a set-id mode: `open`/`openat` with `O_CREAT` **or `O_TMPFILE`**
///   (an unnamed file created with `06755` and then linked in with `linkat` — the mode
///   applies at creation, so no later `chmod` is seen), `creat`, `mknod`, `mknodat`;
/// - `mkdir`/`mkdirat` with `S_ISGID` (the kernel ignores it today; refused anyway so a
///   directory mode never carries a set-id bit through this filter).
///
/// `openat2` (mode inside `struct open_how`, out of seccomp's reach) is refused with
/// `ENOSYS` by the second filter, so libc falls back to `openat`.
fn add_setid_mode_rules(map: &mut BTreeMap<i64, Vec<SeccompRule>>) -> Result<(), SeccompError> {
    use SeccompCmpArgLen::Dword;
    use SeccompCmpOp::MaskedEq;
    let mode_rules = |arg: u8| -> Result<Vec<SeccompRule>, SeccompError> {
        SETID_BITS
            .iter()
            .map(|bit| rule(vec![cond(arg, Dword, MaskedEq(*bit), *bit)?]))
            .collect()
    };
    let create_rules = |flags_arg: u8, mode_arg: u8| -> Result<Vec<SeccompRule>, SeccompError> {
        let mut rules = Vec::new();
        for flag in CREATING_OPEN_FLAGS {
            for bit in SETID_BITS {
                rules.push(rule(vec![
                    cond(flags_arg, Dword, MaskedEq(flag), flag)?,
                    cond(mode_arg, Dword, MaskedEq(bit), bit)?,
                ])?);
            }
        }
        Ok(rules)
    };
    let setgid = libc::S_ISGID as u64;
    let mkdir_rules = |mode_arg: u8| -> Result<Vec<SeccompRule>, SeccompError> {
        Ok(vec![rule(vec![cond(
            mode_arg,
            Dword,
            MaskedEq(setgid),
            setgid,
        )?])?])
    };
    map.insert(libc::SYS_fchmod, mode_rules(1)?);
    map.insert(libc::SYS_fchmodat, mode_rules(2)?);
    map.insert(libc::SYS_fchmodat2, mode_rules(2)?);
    map.insert(libc::SYS_mknodat, mode_rules(2)?);
    map.insert(libc::SYS_openat, create_rules(2, 3)?);
    map.insert(libc::SYS_mkdirat, mkdir_rules(2)?);
    #[cfg(target_arch = "x86_64")]
    {
        map.insert(libc::SYS_chmod, mode_rules(1)?);
        map.insert(libc::SYS_creat, mode_rules(1)?);
        map.insert(libc::SYS_mknod, mode_rules(1)?);
        map.insert(libc::SYS_open, create_rules(1, 2)?);
        map.insert(libc::SYS_mkdir, mkdir_rules(1)?);
    }
    Ok(())
}

/// `open` flags that create a file and so apply the mode argument: `O_CREAT`, and the
/// `__O_TMPFILE` bit of `O_TMPFILE` (`O_TMPFILE` is `__O_TMPFILE | O_DIRECTORY`; the
/// kernel rejects `__O_TMPFILE` without `O_DIRECTORY`, so matching the bit alone is the
/// stricter test).
const CREATING_OPEN_FLAGS: [u64; 2] = [
    libc::O_CREAT as u64,
    (libc::O_TMPFILE & !libc::O_DIRECTORY) as u64,
];

/// Builds the rule table for `mode` (exposed for tests).
fn rules(mode: NetworkSeccompMode) -> Result<BTreeMap<i64, Vec<SeccompRule>>, SeccompError> {
    use SeccompCmpArgLen::{Dword, Qword};
    use SeccompCmpOp::{Eq, MaskedEq, Ne};

    let mut map: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in always_denied() {
        map.insert(nr, Vec::new()); // an empty rule list matches unconditionally
    }
    map.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, Dword, Eq, TIOCSTI)?])?,
            rule(vec![cond(1, Dword, Eq, TIOCLINUX)?])?,
        ],
    );
    add_setid_mode_rules(&mut map)?;
    let vsock = libc::AF_VSOCK as u64;
    let unix = libc::AF_UNIX as u64;
    let dgram = libc::SOCK_DGRAM as u64;
    for nr in [libc::SYS_socket, libc::SYS_socketpair] {
        let per_call = match mode {
            NetworkSeccompMode::Enabled => vec![rule(vec![cond(0, Dword, Eq, vsock)?])?],
            NetworkSeccompMode::Restricted => vec![
                rule(vec![cond(0, Dword, Ne, unix)?])?,
                rule(vec![
                    cond(0, Dword, Eq, unix)?,
                    cond(1, Dword, MaskedEq(SOCK_TYPE_MASK), dgram)?,
                ])?,
            ],
            NetworkSeccompMode::ProxyRouted if nr == libc::SYS_socket => {
                let inet = libc::AF_INET as u64;
                let inet6 = libc::AF_INET6 as u64;
                vec![
                    rule(vec![cond(0, Dword, Ne, inet)?, cond(0, Dword, Ne, inet6)?])?,
                    rule(vec![cond(
                        1,
                        Dword,
                        MaskedEq(SOCK_TYPE_MASK),
                        libc::SOCK_RAW as u64,
                    )?])?,
                    rule(vec![cond(1, Dword, MaskedEq(SOCK_TYPE_MASK), SOCK_PACKET)?])?,
                ]
            }
            NetworkSeccompMode::ProxyRoutedUnixSockets if nr == libc::SYS_socket => {
                let inet = libc::AF_INET as u64;
                let inet6 = libc::AF_INET6 as u64;
                vec![
                    rule(vec![
                        cond(0, Dword, Ne, inet)?,
                        cond(0, Dword, Ne, inet6)?,
                        cond(0, Dword, Ne, unix)?,
                    ])?,
                    rule(vec![cond(
                        1,
                        Dword,
                        MaskedEq(SOCK_TYPE_MASK),
                        libc::SOCK_RAW as u64,
                    )?])?,
                    rule(vec![cond(1, Dword, MaskedEq(SOCK_TYPE_MASK), SOCK_PACKET)?])?,
                    rule(vec![
                        cond(0, Dword, Eq, unix)?,
                        cond(1, Dword, MaskedEq(SOCK_TYPE_MASK), dgram)?,
                    ])?,
                ]
            }
            NetworkSeccompMode::ProxyRouted | NetworkSeccompMode::ProxyRoutedUnixSockets => vec![
                rule(vec![cond(0, Dword, Ne, unix)?])?,
                rule(vec![cond(1, Dword, MaskedEq(SOCK_TYPE_MASK), dgram)?])?,
            ],
        };
        map.insert(nr, per_call);
    }
    if mode == NetworkSeccompMode::Restricted {
        for nr in [
            libc::SYS_connect,
            libc::SYS_bind,
            libc::SYS_listen,
            libc::SYS_accept,
            libc::SYS_accept4,
        ] {
            map.insert(nr, Vec::new());
        }
        // sendto(fd, buf, len, flags, dest_addr, addrlen): only a named destination.
        map.insert(libc::SYS_sendto, vec![rule(vec![cond(4, Qword, Ne, 0)?])?]);
    }
    Ok(map)
}

/// Compiles the filter for `mode` into a BPF program for this CPU.
///
/// # Errors
/// [`SeccompError::UnsupportedArch`] off x86_64/aarch64; [`SeccompError::Build`] if
/// the table is invalid.
pub fn build_filter(mode: NetworkSeccompMode) -> Result<BpfProgram, SeccompError> {
    let arch = target_arch()?;
    let filter = SeccompFilter::new(
        rules(mode)?,
        SeccompAction::Allow,
        SeccompAction::Errno(EPERM),
        arch,
    )?;
    let program: BpfProgram = filter.try_into()?;
    Ok(with_abi_guard(arch, program))
}

/// Prepends the ABI guard: seccompiler checks the architecture (foreign ABI → kill)
/// but rules match exact numbers, so x32 numbers (`nr | 0x40000000`, same
/// architecture value as x86_64) would fall through to "allow" without this.
fn with_abi_guard(arch: TargetArch, program: BpfProgram) -> BpfProgram {
    if arch != TargetArch::x86_64 {
        return program;
    }
    const BPF_LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    const BPF_JGE_K: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
    const BPF_RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    let guard = [
        // A = seccomp_data.nr (offset 0)
        sock_filter {
            code: BPF_LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
        // if A >= X32_SYSCALL_BIT fall through to the return, else skip it
        sock_filter {
            code: BPF_JGE_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | EPERM,
        },
    ];
    guard.into_iter().chain(program).collect()
}

/// The program as the raw bytes of a `struct sock_filter` array (native endian), the
/// form bubblewrap's `--seccomp FD` reads.
pub fn program_bytes(program: &BpfProgram) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(program.len() * 8);
    for ins in program {
        bytes.extend_from_slice(&ins.code.to_ne_bytes());
        bytes.push(ins.jt);
        bytes.push(ins.jf);
        bytes.extend_from_slice(&ins.k.to_ne_bytes());
    }
    bytes
}

/// Two more programs that keep the command out of new user namespaces, whatever the
/// bubblewrap version: the first gives `EPERM` to `unshare`/`clone` with
/// `CLONE_NEWUSER`; the second gives `ENOSYS` to `clone3` (its flags live in memory,
/// out of seccomp's reach), which makes libc fall back to `clone` — and to `openat2`
/// for the same reason (see [`add_setid_mode_rules`]). Two programs
/// because seccompiler gives one filter a single match action. A nested user
/// namespace would hand the command a full capability set over mount and network
/// namespaces of its own.
///
/// # Errors
/// As [`build_filter`].
pub fn build_userns_filters() -> Result<[BpfProgram; 2], SeccompError> {
    use SeccompCmpArgLen::Qword;
    let arch = target_arch()?;
    let newuser = libc::CLONE_NEWUSER as u64;
    let mut eperm: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in [libc::SYS_unshare, libc::SYS_clone] {
        eperm.insert(
            nr,
            vec![rule(vec![cond(
                0,
                Qword,
                SeccompCmpOp::MaskedEq(newuser),
                newuser,
            )?])?],
        );
    }
    let namespaces: BpfProgram = SeccompFilter::new(
        eperm,
        SeccompAction::Allow,
        SeccompAction::Errno(EPERM),
        arch,
    )?
    .try_into()?;
    let mut enosys: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    enosys.insert(libc::SYS_clone3, Vec::new());
    // Its mode lives in `struct open_how`, out of seccomp's reach (see setid rules);
    // libc and runtimes fall back to `openat` on ENOSYS.
    enosys.insert(libc::SYS_openat2, Vec::new());
    let clone3: BpfProgram = SeccompFilter::new(
        enosys,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )?
    .try_into()?;
    Ok([namespaces, clone3])
}

/// Installs the filter on the calling thread after setting `PR_SET_NO_NEW_PRIVS`
/// (seccompiler does both). Irreversible: call it just before `exec`.
///
/// # Errors
/// Any build or install failure; the caller must not run the command then.
pub fn install(mode: NetworkSeccompMode) -> Result<(), SeccompError> {
    let [userns, clone3] = build_userns_filters()?;
    for program in [build_filter(mode)?, userns, clone3] {
        seccompiler::apply_filter(&program)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restricted_mode_has_network_rules_and_enabled_mode_does_not() {
        let restricted = rules(NetworkSeccompMode::Restricted).unwrap();
        let enabled = rules(NetworkSeccompMode::Enabled).unwrap();
        for nr in [
            libc::SYS_connect,
            libc::SYS_bind,
            libc::SYS_listen,
            libc::SYS_sendto,
        ] {
            assert!(restricted.contains_key(&nr));
            assert!(!enabled.contains_key(&nr));
        }
        for nr in always_denied() {
            assert!(restricted.contains_key(&nr) && enabled.contains_key(&nr));
        }
    }

    #[test]
    fn programs_compile_with_the_abi_guard_first() {
        for mode in [
            NetworkSeccompMode::Enabled,
            NetworkSeccompMode::Restricted,
            NetworkSeccompMode::ProxyRouted,
            NetworkSeccompMode::ProxyRoutedUnixSockets,
        ] {
            let program = build_filter(mode).unwrap();
            assert!(program.len() > 10);
            if cfg!(target_arch = "x86_64") {
                assert_eq!(program[1].k, X32_SYSCALL_BIT);
            }
        }
    }
}
