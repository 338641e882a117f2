//! `InstructionsHash`: the fingerprint a snapshot keeps instead of the text (spec 08 §Snapshot and
//! diff).
//!
//! The fingerprint is `sha1:<40 lowercase hex digits>` of the instructions body with CRLF turned
//! into LF — the form Codex writes in its `instructions_fingerprint`, so a value persisted by either
//! can be read by the other. SHA-1 here only detects "the text changed"; nothing trusts it against
//! an adversary, which is why a small local implementation is enough and no dependency is added.

use serde::Deserialize;
use serde::Serialize;

/// Prefix naming the algorithm inside the fingerprint string.
const SHA1_PREFIX: &str = "sha1:";

/// A fingerprint of rendered instructions, compared for equality only.
///
/// JSON: a plain string, e.g. `"sha1:2fd4e1c67a2d28fced849ee1bb76e7391b93eb12"`. Any string is
/// accepted when reading (an unknown algorithm simply never equals a fresh fingerprint, which makes
/// the diff re-send the full text — the safe outcome).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct InstructionsHash(String);

impl InstructionsHash {
    /// The fingerprint of `text` (CRLF normalised to LF first, so a transport that rewrites line
    /// ends does not force a re-send).
    #[must_use]
    pub fn of_text(text: &str) -> Self {
        let normalized = text.replace("\r\n", "\n");
        Self(format!("{SHA1_PREFIX}{}", sha1_hex(normalized.as_bytes())))
    }

    /// Wraps an already computed fingerprint string (e.g. read from a rollout).
    #[must_use]
    pub fn from_string(value: String) -> Self {
        Self(value)
    }

    /// The fingerprint string.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// SHA-1 (FIPS 180-4) of `data` as 40 lowercase hex digits.
fn sha1_hex(data: &[u8]) -> String {
    let digest = sha1(data);
    let mut out = String::with_capacity(40);
    for byte in digest {
        out.push(hex_digit(byte >> 4));
        out.push(hex_digit(byte & 0x0f));
    }
    out
}

fn hex_digit(nibble: u8) -> char {
    char::from(b"0123456789abcdef"[usize::from(nibble & 0x0f)])
}

/// The SHA-1 digest: 512-bit blocks, message padded with `1`, zeros and the 64-bit bit length.
fn sha1(data: &[u8]) -> [u8; 20] {
    let mut state: [u32; 5] = [
        0x6745_2301,
        0xEFCD_AB89,
        0x98BA_DCFE,
        0x1032_5476,
        0xC3D2_E1F0,
    ];
    let bit_len = (data.len() as u64).wrapping_mul(8);
    let mut padded = data.to_vec();
    padded.push(0x80);
    while padded.len() % 64 != 56 {
        padded.push(0);
    }
    padded.extend_from_slice(&bit_len.to_be_bytes());
    for block in padded.chunks_exact(64) {
        compress(&mut state, block);
    }
    let mut digest = [0u8; 20];
    for (chunk, word) in digest.chunks_exact_mut(4).zip(state) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    digest
}

fn compress(state: &mut [u32; 5], block: &[u8]) {
    let mut schedule = [0u32; 80];
    for (word, bytes) in schedule.iter_mut().zip(block.chunks_exact(4)) {
        *word = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    }
    for t in 16..80 {
        schedule[t] = (schedule[t - 3] ^ schedule[t - 8] ^ schedule[t - 14] ^ schedule[t - 16])
            .rotate_left(1);
    }
    let [mut a, mut b, mut c, mut d, mut e] = *state;
    for (t, word) in schedule.iter().enumerate() {
        let (f, k) = match t {
            0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
            20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
            40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
            _ => (b ^ c ^ d, 0xCA62_C1D6),
        };
        let next = a
            .rotate_left(5)
            .wrapping_add(f)
            .wrapping_add(e)
            .wrapping_add(k)
            .wrapping_add(*word);
        e = d;
        d = c;
        c = b.rotate_left(30);
        b = a;
        a = next;
    }
    for (slot, value) in state.iter_mut().zip([a, b, c, d, e]) {
        *slot = slot.wrapping_add(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test vectors from FIPS 180 examples and RFC 3174.
    #[test]
    fn sha1_matches_the_standard_vectors() {
        assert_eq!(sha1_hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            sha1_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        assert_eq!(
            sha1_hex(b"The quick brown fox jumps over the lazy dog"),
            "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12"
        );
        assert_eq!(
            sha1_hex(&vec![b'a'; 1_000_000]),
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f"
        );
    }

    #[test]
    fn padding_boundaries_produce_distinct_digests() {
        // 55, 56 and 64 bytes straddle the one-block / two-block padding boundary.
        let digests: Vec<String> = [55usize, 56, 63, 64, 65]
            .iter()
            .map(|len| sha1_hex(&vec![b'x'; *len]))
            .collect();
        let mut unique = digests.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), digests.len());
        assert_eq!(
            sha1_hex(&[b'a'; 64]),
            "0098ba824b5c16427bd7a1122a5a442a25ec644d"
        );
    }

    #[test]
    fn fingerprint_is_prefixed_and_ignores_crlf() {
        let lf = InstructionsHash::of_text("a\nb\n");
        assert_eq!(lf, InstructionsHash::of_text("a\r\nb\r\n"));
        assert!(lf.as_str().starts_with("sha1:"));
        assert_eq!(lf.as_str().len(), 45);
        assert_ne!(lf, InstructionsHash::of_text("a\nb"));
        let json = serde_json::to_string(&lf).unwrap_or_default();
        assert_eq!(json, format!("\"{}\"", lf.as_str()));
    }
}
