//! A [`KeyMap`]'s bytes (`docs/format.md`, "Key maps"):
//!
//! | bytes | field |
//! |-------|-------|
//! | 4     | magic `AMQK` |
//! | 1     | version: 1; 2 for a map with a run; 3 for a coarsened map |
//! | 1     | flags: bit 0 truncated |
//! | 0 / 1 | version 3 only: the shift, 1 to 63 |
//! | 4     | `f`, the smallest key's length (LE) |
//! | f     | the smallest key |
//! | 1     | digit count `m` (at most 64) |
//! | …     | `m` digits |
//! | 8     | xxh3-64 (seed 0) of every byte before it |
//!
//! A version-1 digit is 48 bytes: its position (u32 LE), the alphabet's 257
//! bits in five u64 LE words, the output radix (u32 LE). A version-2 digit
//! is its position (u32 LE) and a tag byte, then, for tag 0, the alphabet
//! and output radix as in version 1, and for tag 1 (a run): its span (u8,
//! at least 1), its number of values `v` (u32 LE), the output radix (u32
//! LE) and `v` values, each a length byte (at most the span) and that many
//! bytes. A version-3 map has version 2's tagged digits and drops its
//! codes' `shift` low bits ([`KeyMap::coarsened`]). A map is written in the
//! lowest version that holds it, so maps without a run or a shift keep
//! version 1's bytes.
//!
//! The decoder checks everything a query relies on: digits in order, none
//! overlapping the one before; every alphabet of at least two symbols with
//! no bit past the 257th; a run's values strictly increasing, at least two,
//! only the first empty; output radices equal to the digit's size but for a
//! truncated map's last digit (2 or more, below it), their product within
//! `2^64`; and the smallest key's symbol (or segment) in every digit.

use alloc::vec::Vec;
use xxhash_rust::xxh3::xxh3_64;

use super::build::finish_digits;
use super::run::Run;
use super::{Alphabet, Digit, KeyMap};
use crate::format::Reader;
use crate::{Error, FormatError};

const MAGIC: &[u8; 4] = b"AMQK";
/// A map without runs.
const VERSION_1: u8 = 1;
/// A map with a run: tagged digits.
const VERSION_2: u8 = 2;
/// A coarsened map: a shift, then tagged digits.
const VERSION_3: u8 = 3;
const TRUNCATED: u8 = 1;
const TAG_POSITION: u8 = 0;
const TAG_RUN: u8 = 1;
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
        let runs = self.digits.iter().any(|d| d.run.is_some());
        let tagged = runs || self.shift > 0;
        let mut out = Vec::with_capacity(20 + self.first.len() + 49 * self.digits.len());
        out.extend_from_slice(MAGIC);
        out.push(match (self.shift > 0, runs) {
            (true, _) => VERSION_3,
            (false, true) => VERSION_2,
            (false, false) => VERSION_1,
        });
        out.push(if self.truncated { TRUNCATED } else { 0 });
        if self.shift > 0 {
            out.push(self.shift as u8);
        }
        out.extend_from_slice(&(self.first.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.first);
        out.push(self.digits.len() as u8);
        for d in &self.digits {
            out.extend_from_slice(&(d.pos as u32).to_le_bytes());
            match &d.run {
                Some(run) => {
                    out.push(TAG_RUN);
                    out.push(run.span as u8);
                    out.extend_from_slice(&(run.len() as u32).to_le_bytes());
                    out.extend_from_slice(&(d.out as u32).to_le_bytes());
                    run.for_each_value(|v| {
                        out.push(v.len() as u8);
                        out.extend_from_slice(v);
                    });
                }
                None => {
                    if tagged {
                        out.push(TAG_POSITION);
                    }
                    for w in d.alphabet.0 {
                        out.extend_from_slice(&w.to_le_bytes());
                    }
                    out.extend_from_slice(&(d.out as u32).to_le_bytes());
                }
            }
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
        let (version, mut r) = crate::format::open_sealed(bytes, MAGIC, VERSION_1..=VERSION_3)?;
        let flags = r.u8()?;
        if flags & !TRUNCATED != 0 {
            return Err(bad("key map flags"));
        }
        let truncated = flags & TRUNCATED != 0;
        let shift = match version {
            VERSION_3 => u32::from(r.u8()?),
            _ => 0,
        };
        if version == VERSION_3 && !(1..64).contains(&shift) {
            return Err(bad("key map shift"));
        }
        let first_len = r.u32()? as usize;
        let first = r.take(first_len)?.to_vec();
        let count = usize::from(r.u8()?);
        if count > MAX_DIGITS || (version == VERSION_1 && r.remaining() != count * 48) {
            return Err(bad("key map digit count"));
        }
        // No room is reserved for digits the bytes left cannot hold (a
        // tagged digit takes at least 17 bytes: a run of an empty and a
        // one-byte value).
        let mut digits = Vec::with_capacity(count.min(r.remaining() / 17));
        let mut room: u128 = 1 << 64;
        for i in 0..count {
            let pos = r.u32()? as usize;
            let tag = match version {
                VERSION_1 => TAG_POSITION,
                _ => r.u8()?,
            };
            let d = match tag {
                TAG_POSITION => position_digit(&mut r, pos)?,
                TAG_RUN => run_digit(&mut r, pos)?,
                _ => return Err(bad("key map digit tag")),
            };
            let coarse = truncated && i + 1 == count;
            if d.out < 2 || d.out > d.radix || (d.out < d.radix && !coarse) {
                return Err(bad("key map radix"));
            }
            if digits.last().is_some_and(|prev: &Digit| prev.end() > pos) {
                return Err(bad("key map positions out of order"));
            }
            if !d.rank_of(&first).0 {
                return Err(bad("key map smallest key outside a digit"));
            }
            if u128::from(d.out) > room {
                return Err(bad("key map past 64 bits"));
            }
            room /= u128::from(d.out);
            digits.push(d);
        }
        if version == VERSION_2 && !digits.iter().any(|d| d.run.is_some()) {
            return Err(bad("key map of version 2 without a run"));
        }
        r.finish()?;
        finish_digits(&mut digits);
        Ok(KeyMap {
            first,
            digits,
            truncated,
            shift,
        })
    }
}

/// A position's digit: its alphabet (at least two symbols, none past the
/// 257th) and output radix.
fn position_digit(r: &mut Reader<'_>, pos: usize) -> Result<Digit, Error> {
    let bad = |why| Error::Format(FormatError::InvalidParameters(why));
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
    if radix < 2 {
        return Err(bad("key map radix"));
    }
    Ok(Digit::new(pos, alphabet, radix, out))
}

/// A run's digit: span, values (read once to size them, then kept) and
/// output radix.
fn run_digit(r: &mut Reader<'_>, pos: usize) -> Result<Digit, Error> {
    let bad = |why| Error::Format(FormatError::InvalidParameters(why));
    let span = usize::from(r.u8()?);
    let values = r.u32()? as usize;
    let out = u64::from(r.u32()?);
    // Every value takes at least its length byte: a count past the bytes
    // left is refused before anything is allocated for it.
    if span == 0 || values < 2 || values > r.remaining() {
        return Err(bad("key map run size"));
    }
    let mut scan = r.clone();
    let mut total = 0;
    for _ in 0..values {
        let len = usize::from(scan.u8()?);
        scan.take(len)?;
        total += len;
    }
    let mut run = Run::with_capacity(span, values, total);
    for i in 0..values {
        let len = usize::from(r.u8()?);
        let value = r.take(len)?;
        if (i > 0 && value.is_empty()) || !run.push(value) {
            return Err(bad("key map run values out of order"));
        }
    }
    Ok(Digit::of_run(pos, run, out))
}
