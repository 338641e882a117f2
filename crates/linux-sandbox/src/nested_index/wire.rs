//! The index daemon's protocol: queries on a connection answered in turn (a launch sends
//! one per writable root), length-prefixed binary (paths are bytes, not UTF-8), every
//! size bounded, every read under a deadline.
//!
//! Frame: `u32` body length (little endian), then the body.
//! - Query body: `b"ANIQ"`, version `1u8`, the root (`u32` length + bytes), the skip
//!   list (`u32` count, each `u32` length + bytes).
//! - Answer body: `b"ANIR"`, status `u8` (0: an outcome follows; 1: the daemon could not
//!   answer — the client scans itself), then `found`, `pseudo`, `pruned` (each a `u32`
//!   count, each path `u32` length + bytes) and `listed`, `cached` (`u64`).
//!
//! Anything else is refused: wrong magic or version, a relative path or one holding NUL,
//! a path longer than [`MAX_PATH`], more than [`MAX_SKIP`] skip entries or
//! [`MAX_PATHS`] answer paths, a body longer than [`MAX_QUERY`] / [`MAX_ANSWER`] bytes,
//! trailing bytes.

use std::io::{Read, Write};
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::path::PathBuf;

use crate::nested_scan::ScanOutcome;

/// Longest path accepted (Linux `PATH_MAX`).
pub const MAX_PATH: usize = 4096;
/// Most skip entries in a query.
pub const MAX_SKIP: usize = 4096;
/// Most paths in each list of an answer.
pub const MAX_PATHS: usize = 1 << 20;
/// Largest query body, bytes.
pub const MAX_QUERY: usize = 1 << 20;
/// Largest answer body, bytes.
pub const MAX_ANSWER: usize = 256 << 20;

/// A query: which root, which deeper roots not to enter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The writable root (absolute, canonical).
    pub root: PathBuf,
    /// Deeper writable roots.
    pub skip: Vec<PathBuf>,
}

fn put_path(out: &mut Vec<u8>, path: &std::path::Path) -> Option<()> {
    let bytes = path.as_os_str().as_bytes();
    if bytes.len() > MAX_PATH {
        return None;
    }
    out.extend_from_slice(&u32::try_from(bytes.len()).ok()?.to_le_bytes());
    out.extend_from_slice(bytes);
    Some(())
}

fn put_paths(out: &mut Vec<u8>, paths: &[PathBuf]) -> Option<()> {
    out.extend_from_slice(&u32::try_from(paths.len()).ok()?.to_le_bytes());
    paths.iter().try_for_each(|p| put_path(out, p))
}

fn framed(body: Vec<u8>) -> Option<Vec<u8>> {
    let mut out = u32::try_from(body.len()).ok()?.to_le_bytes().to_vec();
    out.extend_from_slice(&body);
    Some(out)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }
    fn u32(&mut self) -> Option<usize> {
        let raw = u32::from_le_bytes(self.take(4)?.try_into().ok()?);
        usize::try_from(raw).ok()
    }
    fn u64(&mut self) -> Option<usize> {
        let raw = u64::from_le_bytes(self.take(8)?.try_into().ok()?);
        usize::try_from(raw).ok()
    }
    fn path(&mut self) -> Option<PathBuf> {
        let len = self.u32()?;
        if len == 0 || len > MAX_PATH {
            return None;
        }
        let bytes = self.take(len)?;
        if bytes[0] != b'/' || bytes.contains(&0) {
            return None;
        }
        Some(PathBuf::from(std::ffi::OsString::from_vec(bytes.to_vec())))
    }
    fn paths(&mut self, max: usize) -> Option<Vec<PathBuf>> {
        let count = self.u32()?;
        if count > max {
            return None;
        }
        (0..count).map(|_| self.path()).collect()
    }
    fn done(&self) -> bool {
        self.at == self.bytes.len()
    }
}

/// The frame of `query`; `None` when a path is too long.
#[must_use]
pub fn encode_query(query: &Query) -> Option<Vec<u8>> {
    let mut body = b"ANIQ\x01".to_vec();
    put_path(&mut body, &query.root)?;
    if query.skip.len() > MAX_SKIP {
        return None;
    }
    put_paths(&mut body, &query.skip)?;
    (body.len() <= MAX_QUERY).then_some(())?;
    framed(body)
}

/// Parses a query body; `None` for anything malformed.
#[must_use]
pub fn decode_query(body: &[u8]) -> Option<Query> {
    let mut r = Reader { bytes: body, at: 0 };
    if r.take(5)? != b"ANIQ\x01" {
        return None;
    }
    let root = r.path()?;
    let skip = r.paths(MAX_SKIP)?;
    r.done().then_some(Query { root, skip })
}

/// The frame of an answer (`None`: "could not answer").
#[must_use]
pub fn encode_answer(outcome: Option<&ScanOutcome>) -> Vec<u8> {
    let fallback = || framed(b"ANIR\x01".to_vec()).unwrap_or_default();
    let Some(out) = outcome else {
        return fallback();
    };
    let mut body = b"ANIR\x00".to_vec();
    let ok = [&out.found, &out.pseudo, &out.pruned]
        .iter()
        .all(|list| list.len() <= MAX_PATHS && put_paths(&mut body, list).is_some());
    if !ok || body.len() > MAX_ANSWER {
        return fallback();
    }
    for counter in [out.listed, out.cached] {
        body.extend_from_slice(&(counter as u64).to_le_bytes());
    }
    framed(body).unwrap_or_else(fallback)
}

/// Parses an answer body: `Some(Some(outcome))`, `Some(None)` when the daemon could not
/// answer, `None` when malformed.
#[must_use]
pub fn decode_answer(body: &[u8]) -> Option<Option<ScanOutcome>> {
    let mut r = Reader { bytes: body, at: 0 };
    if r.take(4)? != b"ANIR" {
        return None;
    }
    match r.take(1)? {
        [1] => return r.done().then_some(None),
        [0] => {}
        _ => return None,
    }
    let found = r.paths(MAX_PATHS)?;
    let pseudo = r.paths(MAX_PATHS)?;
    let pruned = r.paths(MAX_PATHS)?;
    let listed = r.u64()?;
    let cached = r.u64()?;
    r.done().then_some(Some(ScanOutcome {
        found,
        pseudo,
        pruned,
        listed,
        cached,
    }))
}

/// Reads one frame of at most `max` body bytes (the stream's timeouts bound the wait).
///
/// # Errors
/// I/O errors, and `InvalidData` for a frame longer than `max`.
pub fn read_frame(stream: &mut impl Read, max: usize) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = usize::try_from(u32::from_le_bytes(len)).unwrap_or(usize::MAX);
    if len > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "frame too long",
        ));
    }
    let mut body = vec![0u8; len];
    stream.read_exact(&mut body)?;
    Ok(body)
}

/// Writes a whole frame.
///
/// # Errors
/// I/O errors.
pub fn write_frame(stream: &mut impl Write, frame: &[u8]) -> std::io::Result<()> {
    stream.write_all(frame)?;
    stream.flush()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_garbage_is_refused() {
        let query = Query {
            root: PathBuf::from(std::ffi::OsString::from_vec(b"/srv/\xffws".to_vec())),
            skip: vec![PathBuf::from("/srv/\u{e9}/deep")],
        };
        let frame = encode_query(&query).unwrap();
        assert_eq!(decode_query(&frame[4..]), Some(query));
        for bad in [&b""[..], b"ANIQ", b"ANIQ\x02", &frame[4..frame.len() - 1]] {
            assert_eq!(decode_query(bad), None);
        }
        let relative = encode_query(&Query {
            root: PathBuf::from("rel"),
            skip: Vec::new(),
        })
        .unwrap();
        assert_eq!(decode_query(&relative[4..]), None);
        let out = ScanOutcome {
            found: vec![PathBuf::from("/a/.git")],
            pseudo: Vec::new(),
            pruned: vec![PathBuf::from("/a/target")],
            listed: 3,
            cached: 4,
        };
        let answer = encode_answer(Some(&out));
        assert_eq!(decode_answer(&answer[4..]), Some(Some(out)));
        let none = encode_answer(None);
        assert_eq!(decode_answer(&none[4..]), Some(None));
        assert_eq!(decode_answer(&answer[4..answer.len() - 2]), None);
        let mut huge = std::io::Cursor::new(u32::MAX.to_le_bytes().to_vec());
        assert!(read_frame(&mut huge, MAX_QUERY).is_err());
    }
}
