//! A folder the patch writer works in, opened without following symlinks (issue 11, finding
//! F6: "writes must not follow a swapped link between check and write").
//!
//! On Unix the folder is a descriptor: [`Dir::open`] walks the real path from `/` one
//! component at a time with `openat(O_DIRECTORY | O_NOFOLLOW)`, so a component that is (or
//! became) a symlink fails the walk (`ELOOP` / `ENOTDIR`) instead of being followed, and every
//! later operation (`openat(O_CREAT | O_EXCL | O_NOFOLLOW)`, `renameat`, `unlinkat`,
//! `fstatat(AT_SYMLINK_NOFOLLOW)`) is relative to that descriptor. Elsewhere the folder is a
//! path and the operations are the ordinary ones (not race-free).

use std::ffi::OsStr;
use std::path::Path;
use std::path::PathBuf;

/// Permission bits of a file (Unix: `rustix`'s mode, set-id and sticky bits included).
#[cfg(unix)]
pub(crate) type FileMode = rustix::fs::Mode;
/// Permission bits of a file (not kept on this platform).
#[cfg(not(unix))]
pub(crate) type FileMode = ();

/// An opened folder.
#[derive(Debug)]
pub(crate) struct Dir {
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
    #[cfg(not(unix))]
    path: PathBuf,
}

/// "`current` changed after the patch was checked".
fn swapped(current: &Path) -> std::io::Error {
    std::io::Error::other(format!(
        "{} is a symlink or a file, not the folder the patch was checked against (it changed after the check); nothing was written through it",
        current.display()
    ))
}

#[cfg(unix)]
impl Dir {
    /// Opens the real folder `dir` (absolute, no symlink expected on the way). A missing
    /// component is created (mode 0777 before the umask, each recorded in `created`) when
    /// `create`, else the result is `None`.
    ///
    /// # Errors
    /// A component that is a symlink or not a folder (see [`swapped`]), or the OS error.
    pub(crate) fn open(
        dir: &Path,
        create: bool,
        created: &mut Vec<PathBuf>,
    ) -> std::io::Result<Option<Self>> {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC;
        let mut fd = rustix::fs::openat(rustix::fs::CWD, "/", flags, Mode::empty())?;
        let mut current = PathBuf::from("/");
        for component in dir.components() {
            let name = match component {
                std::path::Component::RootDir => continue,
                std::path::Component::Normal(name) => name,
                _ => return Err(swapped(dir)),
            };
            current.push(name);
            let next = match rustix::fs::openat(&fd, name, flags, Mode::empty()) {
                Ok(next) => next,
                Err(rustix::io::Errno::NOENT) if create => {
                    rustix::fs::mkdirat(&fd, name, Mode::from_bits_truncate(0o777))?;
                    created.push(current.clone());
                    rustix::fs::openat(&fd, name, flags, Mode::empty())?
                }
                Err(rustix::io::Errno::NOENT) => return Ok(None),
                Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
                    return Err(swapped(&current));
                }
                Err(errno) => return Err(errno.into()),
            };
            fd = next;
        }
        Ok(Some(Self { fd }))
    }

    /// Creates the new file `name` for writing (fails if anything exists there, a symlink
    /// included).
    pub(crate) fn create_new(&self, name: &OsStr) -> std::io::Result<std::fs::File> {
        use rustix::fs::{Mode, OFlags};
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_bits_truncate(0o666),
        )?;
        Ok(std::fs::File::from(fd))
    }

    /// Renames `from` to `to` within the folder (replacing `to`, never following it).
    pub(crate) fn rename(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
        Ok(rustix::fs::renameat(&self.fd, from, &self.fd, to)?)
    }

    /// Removes the entry `name` (a symlink itself, never its target).
    pub(crate) fn unlink(&self, name: &OsStr) -> std::io::Result<()> {
        Ok(rustix::fs::unlinkat(
            &self.fd,
            name,
            rustix::fs::AtFlags::empty(),
        )?)
    }

    fn stat(&self, name: &OsStr) -> std::io::Result<Option<rustix::fs::Stat>> {
        match rustix::fs::statat(&self.fd, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(stat)),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(errno) => Err(errno.into()),
        }
    }

    /// Whether `name` is a folder (not following a symlink).
    pub(crate) fn is_dir(&self, name: &OsStr) -> std::io::Result<bool> {
        Ok(self.stat(name)?.is_some_and(|stat| {
            rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::Directory
        }))
    }

    /// The permission bits of `name` when it is a regular file (not following a symlink).
    pub(crate) fn file_mode(&self, name: &OsStr) -> std::io::Result<Option<FileMode>> {
        Ok(self.stat(name)?.and_then(|stat| {
            (rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::RegularFile)
                .then(|| rustix::fs::Mode::from_raw_mode(stat.st_mode))
        }))
    }

    /// Sets `file`'s permission bits.
    pub(crate) fn set_mode(&self, file: &std::fs::File, mode: FileMode) -> std::io::Result<()> {
        Ok(rustix::fs::fchmod(file, mode)?)
    }
}

#[cfg(not(unix))]
impl Dir {
    /// Opens the folder `dir` by path (see the module docs), creating it when `create`.
    pub(crate) fn open(
        dir: &Path,
        create: bool,
        created: &mut Vec<PathBuf>,
    ) -> std::io::Result<Option<Self>> {
        let mut missing = Vec::new();
        let mut cursor = Some(dir);
        while let Some(path) = cursor {
            if std::fs::symlink_metadata(path).is_ok() {
                break;
            }
            missing.push(path.to_path_buf());
            cursor = path.parent();
        }
        if !missing.is_empty() && !create {
            return Ok(None);
        }
        for path in missing.into_iter().rev() {
            std::fs::create_dir(&path)?;
            created.push(path);
        }
        if std::fs::symlink_metadata(dir).is_ok_and(|m| !m.is_dir()) {
            return Err(swapped(dir));
        }
        Ok(Some(Self {
            path: dir.to_path_buf(),
        }))
    }

    pub(crate) fn create_new(&self, name: &OsStr) -> std::io::Result<std::fs::File> {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.path.join(name))
    }

    pub(crate) fn rename(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
        std::fs::rename(self.path.join(from), self.path.join(to))
    }

    pub(crate) fn unlink(&self, name: &OsStr) -> std::io::Result<()> {
        std::fs::remove_file(self.path.join(name))
    }

    pub(crate) fn is_dir(&self, name: &OsStr) -> std::io::Result<bool> {
        Ok(std::fs::symlink_metadata(self.path.join(name)).is_ok_and(|m| m.is_dir()))
    }

    pub(crate) fn file_mode(&self, _name: &OsStr) -> std::io::Result<Option<FileMode>> {
        Ok(None)
    }

    pub(crate) fn set_mode(&self, _file: &std::fs::File, _mode: FileMode) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The race the descriptor walk closes: the real folder was checked, then a component
    /// became a symlink; opening it fails naming that component, and nothing is created
    /// where the link points.
    #[test]
    fn a_component_swapped_for_a_symlink_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("ws/sub")).unwrap();
        std::fs::create_dir(base.join("outside")).unwrap();
        let mut created = Vec::new();
        let opened = Dir::open(&base.join("ws/sub/new"), true, &mut created).unwrap();
        assert!(opened.is_some());
        assert_eq!(created, [base.join("ws/sub/new")]);
        std::fs::remove_dir(base.join("ws/sub/new")).unwrap();
        std::fs::rename(base.join("ws/sub"), base.join("ws/sub.old")).unwrap();
        std::os::unix::fs::symlink(base.join("outside"), base.join("ws/sub")).unwrap();
        let mut created = Vec::new();
        let error = Dir::open(&base.join("ws/sub/new"), true, &mut created).unwrap_err();
        assert!(
            error.to_string().starts_with(&format!(
                "{} is a symlink or a file",
                base.join("ws/sub").display()
            )),
            "{error}"
        );
        assert!(created.is_empty());
        assert_eq!(std::fs::read_dir(base.join("outside")).unwrap().count(), 0);
        // A missing folder is reported as such without `create`.
        let mut created = Vec::new();
        assert!(
            Dir::open(&base.join("ws/gone/x"), false, &mut created)
                .unwrap()
                .is_none()
        );
    }
}
