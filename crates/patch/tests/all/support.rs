//! An in-memory file tree for the verifier.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::path::PathBuf;

use airlock_patch::ReadFile;
use airlock_patch::VerifiedPatch;
use airlock_patch::VerifyError;
use airlock_patch::verify_patch;

pub const CWD: &str = "/ws";

/// Files by absolute path.
#[derive(Default)]
pub struct Files(pub BTreeMap<PathBuf, Vec<u8>>);

impl ReadFile for Files {
    fn read_file(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.0
            .get(path)
            .cloned()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
}

impl Files {
    pub fn with(entries: &[(&str, &str)]) -> Self {
        Self(
            entries
                .iter()
                .map(|(path, text)| (Path::new(CWD).join(path), text.as_bytes().to_vec()))
                .collect(),
        )
    }

    /// Applies the verified patch's final writes, as the child does.
    pub fn apply(&mut self, verified: &VerifiedPatch) {
        for write in &verified.final_writes {
            match &write.content {
                Some(text) => {
                    self.0.insert(write.path.clone(), text.as_bytes().to_vec());
                }
                None => {
                    self.0.remove(&write.path);
                }
            }
        }
    }

    pub fn text(&self, path: &str) -> Option<String> {
        self.0
            .get(&Path::new(CWD).join(path))
            .map(|bytes| String::from_utf8(bytes.clone()).unwrap())
    }
}

/// `*** Begin Patch` + `body` + `*** End Patch`.
pub fn patch(body: &str) -> String {
    format!("*** Begin Patch\n{body}*** End Patch\n")
}

pub fn verify(files: &Files, text: &str) -> Result<VerifiedPatch, VerifyError> {
    verify_patch(text, Path::new(CWD), files)
}

/// Verifies and applies; the new text of `path`.
pub fn apply_to(file: &str, original: &str, body: &str) -> Result<String, String> {
    let mut files = Files::with(&[(file, original)]);
    let verified = verify(&files, &patch(body)).map_err(|error| error.to_string())?;
    files.apply(&verified);
    Ok(files.text(file).unwrap_or_default())
}
