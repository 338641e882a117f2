//! The submodule paths (gitlinks) of a git index, which `git status`, `git diff` and
//! others recurse into: git runs a child git in each populated one, and that child reads
//! the submodule's own configuration (issue 11 item 4, red-team review: a sandbox that
//! creates `lib/.git` where the index holds an uninitialised submodule `lib` gets its
//! `core.fsmonitor` run by the superproject's `git status`).
//!
//! Format: gitformat-index(5), versions 2, 3 and 4. Fail closed: anything this reader
//! does not understand, a split index (`link` extension) included, is an error.

use std::path::Path;

use airlock_permissions::{Follow, Limit, read_untrusted};

/// Largest index read (bytes); a larger one is unsafe (fail closed).
pub(super) const MAX_INDEX_BYTES: u64 = 512 << 20;

/// A gitlink's mode (`S_IFGITLINK`).
const GITLINK_MODE: u32 = 0o160_000;
/// The mode bits that give an entry's type.
const TYPE_MASK: u32 = 0o170_000;

/// The paths of the gitlink entries of the index file at `path`; none when it does not
/// exist. `hash_len` is 20 (SHA-1) or 32 (SHA-256).
///
/// # Errors
/// Why the file cannot be read or understood.
pub(super) fn gitlinks(path: &Path, hash_len: usize) -> Result<Vec<String>, String> {
    // Never blocks, regular files only, bounded (red-team F11).
    let data = match read_untrusted(path, Follow::Yes, Limit::Whole(MAX_INDEX_BYTES)) {
        Ok(Some(data)) => data,
        Ok(None) => return Ok(Vec::new()),
        Err(error) => return Err(error.to_string()),
    };
    parse(&data, hash_len).map_err(|why| format!("{} cannot be read: {why}", path.display()))
}

fn be32(data: &[u8], at: usize) -> Result<u32, String> {
    data.get(at..at + 4)
        .and_then(|bytes| <[u8; 4]>::try_from(bytes).ok())
        .map(u32::from_be_bytes)
        .ok_or_else(|| "truncated".to_owned())
}

fn parse(data: &[u8], hash_len: usize) -> Result<Vec<String>, String> {
    if data.get(..4) != Some(b"DIRC") {
        return Err("not an index file".into());
    }
    let version = be32(data, 4)?;
    if !(2..=4).contains(&version) {
        return Err(format!("index version {version} is not known"));
    }
    let count = be32(data, 8)?;
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    let mut found = Vec::new();
    for _ in 0..count {
        let start = at;
        let mode = be32(data, start + 24)?;
        let flags_at = start + 40 + hash_len;
        let flags = data
            .get(flags_at..flags_at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or("truncated")?;
        at = flags_at + 2;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return Err("extended flags in a version 2 index".into());
            }
            at += 2;
        }
        let path = if version == 4 {
            // Prefix compression: drop N bytes of the previous path, append the suffix.
            let mut strip: usize = 0;
            for _ in 0..8 {
                let byte = *data.get(at).ok_or("truncated")?;
                at += 1;
                strip = (strip << 7) | usize::from(byte & 0x7f);
                if byte & 0x80 == 0 {
                    break;
                }
                strip += 1;
            }
            let keep = previous.len().checked_sub(strip).ok_or("bad path prefix")?;
            let end = find_nul(data, at)?;
            let mut path = previous[..keep].to_vec();
            path.extend_from_slice(&data[at..end]);
            at = end + 1;
            path
        } else {
            let end = find_nul(data, at)?;
            let path = data[at..end].to_vec();
            // Entries are padded with NULs to a multiple of 8 bytes.
            at = start + ((end - start + 8) & !7);
            path
        };
        if mode & TYPE_MASK == GITLINK_MODE {
            found.push(String::from_utf8(path.clone()).map_err(|_| "a non-UTF-8 path")?);
        }
        previous = path;
    }
    // Extensions: a four-byte signature and length each, then the trailing hash.
    while at + 8 + hash_len <= data.len() {
        let signature = &data[at..at + 4];
        if signature == b"link" {
            return Err("a split index, whose shared part is not read".into());
        }
        let len = usize::try_from(be32(data, at + 4)?).map_err(|_| "bad extension")?;
        at += 8 + len;
    }
    Ok(found)
}

fn find_nul(data: &[u8], from: usize) -> Result<usize, String> {
    data.get(from..)
        .and_then(|rest| rest.iter().position(|b| *b == 0))
        .map(|offset| from + offset)
        .ok_or_else(|| "truncated path".to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.email=t@e", "-c", "user.name=t"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .unwrap();
        assert!(ok.success(), "{args:?}");
    }

    #[test]
    fn gitlinks_of_every_index_version() {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path();
        git(repo, &["init", "-q"]);
        std::fs::create_dir_all(repo.join("a/deep")).unwrap();
        std::fs::write(repo.join("a/deep/file"), "x").unwrap();
        std::fs::write(repo.join("top"), "x").unwrap();
        let head = "0123456789012345678901234567890123456789";
        git(repo, &["add", "."]);
        for path in ["a/deep/lib", "a/lib2", "zz/lib3"] {
            git(
                repo,
                &[
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    &format!("160000,{head},{path}"),
                ],
            );
        }
        for version in ["2", "3", "4"] {
            git(repo, &["update-index", "--index-version", version]);
            let mut found = gitlinks(&repo.join(".git/index"), 20).unwrap();
            found.sort();
            assert_eq!(
                found,
                ["a/deep/lib", "a/lib2", "zz/lib3"],
                "version {version}"
            );
        }
        assert!(gitlinks(&repo.join(".git/missing"), 20).unwrap().is_empty());
        std::fs::write(repo.join(".git/index"), b"DIRC\0\0\0\x09").unwrap();
        assert!(gitlinks(&repo.join(".git/index"), 20).is_err());
    }
}
