//! Facts about directories the nested-repository scan needs from the kernel, beyond
//! `stat`: whether a directory is the root of a pseudo filesystem (issue 11 item 7: the
//! scan must never walk `/proc`, `/sys`, `/dev/pts`, cgroup trees ...), whether this user
//! can reach anything below a directory at all, and the effective uid.

use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;

/// `statfs` `f_type` magic numbers of filesystems that hold kernel state, not files a
/// user keeps repositories in (values from Linux `include/uapi/linux/magic.h`). `tmpfs`
/// (and `devtmpfs`, which reports the same magic) is not among them: `/tmp` and
/// `/dev/shm` are often tmpfs and hold ordinary files.
pub const PSEUDO_FS_MAGIC: [(i64, &str); 19] = [
    (0x9fa0, "proc"),
    (0x6265_6572, "sysfs"),
    (0x1cd1, "devpts"),
    (0x0027_e0eb, "cgroup"),
    (0x6367_7270, "cgroup2"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x7363_6673, "securityfs"),
    (0xcafe_4a11, "bpf"),
    (0x6265_6570, "configfs"),
    (0x6573_5546, "fusectl"),
    (0x6165_676c, "pstore"),
    (0x1980_0202, "mqueue"),
    (0x9584_58f6, "hugetlbfs"),
    (0x0187, "autofs"),
    (0x4249_4e4d, "binfmt_misc"),
    (0xde5e_81e4, "efivarfs"),
    (0xf97c_ff8c, "selinuxfs"),
    (0x6e73_6673, "nsfs"),
];

/// The name of the pseudo filesystem `dir` is on, if it is on one (`statfs` `f_type`
/// compared with [`PSEUDO_FS_MAGIC`]). A directory whose filesystem cannot be queried
/// counts as an ordinary one: the scan then reads it and fails closed if it must.
#[allow(unsafe_code)]
pub fn pseudo_fs_name(dir: &Path) -> Option<&'static str> {
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `statfs` is plain data; all-zero is a valid value for it.
    let mut info: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated and outlives the call; `info` is a valid out pointer.
    if unsafe { libc::statfs(path.as_ptr(), &raw mut info) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast, clippy::cast_lossless)] // f_type's width differs by arch
    let magic = info.f_type as i64 & 0xffff_ffff;
    PSEUDO_FS_MAGIC
        .iter()
        .find(|(m, _)| *m == magic)
        .map(|(_, name)| *name)
}

/// Whether this process may search (`x`) `dir`. The sandboxed command runs as the same user
/// with fewer rights, and the user's own `git` needs search permission too.
#[allow(unsafe_code)]
pub fn can_search(dir: &Path) -> bool {
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `path` is a valid NUL-terminated string that outlives the call.
    unsafe { libc::access(path.as_ptr(), libc::X_OK) == 0 }
}

/// The effective user id of this process.
#[allow(unsafe_code)]
pub fn effective_uid() -> u32 {
    // SAFETY: `geteuid` has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn proc_and_sys_are_pseudo_and_tmp_is_not() {
        assert_eq!(pseudo_fs_name(Path::new("/proc")), Some("proc"));
        if Path::new("/sys/kernel").is_dir() {
            assert_eq!(pseudo_fs_name(Path::new("/sys")), Some("sysfs"));
        }
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(pseudo_fs_name(dir.path()), None);
        assert_eq!(pseudo_fs_name(Path::new("/nonexistent/x")), None);
    }
}
