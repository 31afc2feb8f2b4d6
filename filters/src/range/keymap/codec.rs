//! A [`KeyMap`]'s bytes (`docs/format.md`, "Key maps"):
//!
//! | bytes | field |
//! |-------|-------|
//! | 4     | magic `AMQK` |
//! | 1     | version (1) |
//! | 1     | flags: bit 0 truncated |
//! | 4     | `f`, the smallest key's length (LE) |
//! | f     | the smallest key |
//! | 1     | digit count `m` (at most 64) |
//! | m × 48 | per digit: position (u32 LE), the alphabet's 257 bits in five u64 LE words, the output radix (u32 LE) |
//! | 8     | xxh3-64 (seed 0) of every byte before it |
//!
//! The decoder checks everything a query relies on: positions strictly
//! increasing, every alphabet of at least two symbols with no bit past the
//! 257th, output radices equal to the alphabet's size but for a truncated
//! map's last digit (2 or more, below it), their product within `2^64`, and
//! the smallest key's symbol in every alphabet.

use alloc::vec::Vec;
use xxhash_rust::xxh3::xxh3_64;

use super::build::finish_digits;
use super::{symbol, Alphabet, Digit, KeyMap};
use crate::format::Reader;
use crate::{Error, FormatError};

const MAGIC: &[u8; 4] = b"AMQK";
const VERSION: u8 = 1;
const TRUNCATED: u8 = 1;
/// Digits never exceed 64: each has a radix of at least 2.
const MAX_DIGITS: usize = 64;

impl KeyMap {
    /// The map's bytes (the layout in `docs/format.md`), checksummed.
    ///
    /// ```
    /// use amq::range::KeyMap;
    /// let map = KeyMap::from_keys([&b"user:1"[..], b"user:2"]);
    /// assert_eq!(KeyMap::from_bytes(&map.to_bytes())?, map);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(19 + self.first.len() + 48 * self.digits.len());
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        out.push(if self.truncated { TRUNCATED } else { 0 });
        out.extend_from_slice(&(self.first.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.first);
        out.push(self.digits.len() as u8);
        for d in &self.digits {
            out.extend_from_slice(&(d.pos as u32).to_le_bytes());
            for w in d.alphabet.0 {
                out.extend_from_slice(&w.to_le_bytes());
            }
            out.extend_from_slice(&(d.out as u32).to_le_bytes());
        }
        let sum = xxh3_64(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// Reads back [`to_bytes`](Self::to_bytes): a typed error, never a
    /// panic, for any input, and no allocation beyond the input's size.
    ///
    /// ```
    /// use amq::range::KeyMap;
    /// let bytes = KeyMap::from_keys([&b"a"[..], b"b"]).to_bytes();
    /// assert!(KeyMap::from_bytes(&bytes[..bytes.len() - 1]).is_err());
    /// let mut flipped = bytes.clone();
    /// flipped[8] ^= 1;
    /// assert!(KeyMap::from_bytes(&flipped).is_err());
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<KeyMap, Error> {
        let bad = |why| Error::Format(FormatError::InvalidParameters(why));
        if bytes.len() < 8 {
            return Err(FormatError::Truncated.into());
        }
        let (body, sum) = bytes.split_at(bytes.len() - 8);
        let mut r = Reader::new(body);
        if r.take(4)? != MAGIC {
            return Err(FormatError::BadMagic.into());
        }
        let version = r.u8()?;
        if version != VERSION {
            return Err(FormatError::UnsupportedVersion(u16::from(version)).into());
        }
        if u64::from_le_bytes(sum.try_into().unwrap_or([0; 8])) != xxh3_64(body) {
            return Err(FormatError::ChecksumMismatch.into());
        }
        let flags = r.u8()?;
        if flags & !TRUNCATED != 0 {
            return Err(bad("key map flags"));
        }
        let first_len = r.u32()? as usize;
        let first = r.take(first_len)?.to_vec();
        let count = usize::from(r.u8()?);
        if count > MAX_DIGITS || r.remaining() != count * 48 {
            return Err(bad("key map digit count"));
        }
        let mut digits = Vec::with_capacity(count);
        let mut room: u128 = 1 << 64;
        for i in 0..count {
            let pos = r.u32()? as usize;
            let mut words = [0u64; 5];
            for w in &mut words {
                *w = r.u64()?;
            }
            let out = u64::from(r.u32()?);
            if words[4] >> 1 != 0 {
                return Err(bad("key map alphabet past 257 symbols"));
            }
            let alphabet = Alphabet(words);
            let radix = alphabet.len();
            let last = i + 1 == count;
            let coarse = flags & TRUNCATED != 0 && last;
            if radix < 2 || out < 2 || out > radix || (out < radix && !coarse) {
                return Err(bad("key map radix"));
            }
            if digits.last().is_some_and(|d: &Digit| d.pos >= pos) {
                return Err(bad("key map positions out of order"));
            }
            if !alphabet.contains(symbol(&first, pos)) {
                return Err(bad("key map smallest key outside an alphabet"));
            }
            if u128::from(out) > room {
                return Err(bad("key map past 64 bits"));
            }
            room /= u128::from(out);
            digits.push(Digit::new(pos, alphabet, radix, out));
        }
        r.finish()?;
        finish_digits(&mut digits);
        Ok(KeyMap {
            first,
            digits,
            truncated: flags & TRUNCATED != 0,
        })
    }
}
