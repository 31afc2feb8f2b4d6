//! An [`InfixRange`]'s bytes (`docs/format.md`, "Infix range filters"),
//! all integers little-endian:
//!
//! | bytes | field |
//! |-------|-------|
//! | 4     | magic `AMQI` |
//! | 1     | version, 1 |
//! | 1     | flags: bit 0, the digits reach the last varying position |
//! | 1     | `log2` of the keys per group (1 to 16) |
//! | 8     | distinct keys `n` |
//! | 8     | `C`, cells of a group's infixes (1 to `2^48`) |
//! | 4     | `s`, bytes every key shares |
//! | 4 + f | the smallest key's length `f` (at least `s`) and bytes |
//! | 4     | digit count `d` |
//! | …     | each digit: position (u32, increasing, at least `s`), then its alphabet: a tag byte, its first and last symbols (two u16s, `first < last ≤ 256`), and for tag 1 (not every symbol between them) a bit per symbol between them, LSB first, zero past the last |
//! | 4 + 4 | group count `g` (at most `n`), heads' length `h` |
//! | 8·g   | each group: where its head ends (u32, not decreasing, the last `h`), its first digit (u16; `0xFFFF` only for one key without digits), its span less one (u16, within that digit's alphabet) |
//! | h     | the heads, strictly increasing byte strings |
//! | 18    | the Elias–Fano parameters: universe (`g·C`, 1 for no groups), values (at most `n`, none exactly when `n = 0`), low bits, sample interval |
//! | 8·…   | the code's words |
//! | 8     | xxh3-64 (seed 0) of every byte before |
//!
//! The decoder checks every field a query relies on, so a query on a
//! decoded filter never panics, and every word of the code.

use alloc::vec::Vec;
use xxhash_rust::xxh3::xxh3_64;

use super::build::NO_DIGIT;
use super::{Group, InfixRange, MAX_CELLS, MAX_KEY_BYTES};
use crate::format::{ByteWriter, Reader};
use crate::range::keymap::{finish_digits, Alphabet, Digit};
use crate::succinct::{EfCore, Layout};
use crate::{Error, FormatError};

const MAGIC: &[u8; 4] = b"AMQI";
const VERSION: u8 = 1;
const COMPLETE: u8 = 1;

/// Bytes besides the smallest key, the digits, the groups, the heads and
/// the code's words.
pub(super) const FIXED_BYTES: usize = 4 + 3 + 8 + 8 + 4 + 4 + 4 + 8 + 18 + 8;
/// An alphabet of every symbol from one to another: its first and last.
const TAG_SPAN: u8 = 0;
/// Any other alphabet: its first and last symbols and the bits of those
/// between them.
const TAG_SET: u8 = 1;
/// Bytes a digit takes at the least.
const DIGIT_BYTES: usize = 9;

/// Bytes digit `d` takes.
pub(super) fn digit_len(d: &Digit) -> usize {
    match d.contiguous {
        true => DIGIT_BYTES,
        false => DIGIT_BYTES + (last_symbol(&d.alphabet) - usize::from(d.first_symbol) - 1).div_ceil(8),
    }
}

/// Whether symbol `s` is in the alphabet.
fn a_has(a: &Alphabet, s: usize) -> bool {
    a.0[s / 64] >> (s % 64) & 1 != 0
}

/// The alphabet's largest symbol (it has two or more).
fn last_symbol(a: &Alphabet) -> usize {
    (0..5)
        .rev()
        .find(|&w| a.0[w] != 0)
        .map_or(0, |w| w * 64 + 63 - a.0[w].leading_zeros() as usize)
}
/// Bytes per group, besides its head.
pub(super) const GROUP_BYTES: usize = 8;

/// [`InfixRange::to_bytes`]'s length.
pub(super) fn encoded_len(f: &InfixRange) -> usize {
    FIXED_BYTES
        + f.first.len()
        + f.digits.iter().map(digit_len).sum::<usize>()
        + GROUP_BYTES * f.groups.len()
        + f.heads.len()
        + f.ef.layout.size_in_bytes()
}

impl InfixRange {
    /// The filter's bytes (the layout in `docs/format.md`), checksummed.
    ///
    /// ```
    /// use amq::range::{InfixRange, RangeSizing};
    /// let f = InfixRange::build(&[b"a1", b"b2"], RangeSizing::Fpr { fpr: 0.01, max_range_len: 1 })?;
    /// assert_eq!(InfixRange::from_bytes(&f.to_bytes())?, f);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = ByteWriter::with_capacity(encoded_len(self));
        w.bytes(MAGIC)
            .u8(VERSION)
            .u8(if self.complete { COMPLETE } else { 0 })
            .u8(self.group_log2 as u8)
            .u64(self.num_keys)
            .u64(self.cells)
            .u32(self.shared as u32)
            .u32(self.first.len() as u32)
            .bytes(&self.first)
            .u32(self.digits.len() as u32);
        for d in &self.digits {
            w.u32(d.pos as u32);
            let (first, last) = (usize::from(d.first_symbol), last_symbol(&d.alphabet));
            w.u8(if d.contiguous { TAG_SPAN } else { TAG_SET });
            w.u16(first as u16).u16(last as u16);
            if !d.contiguous {
                // The symbols strictly between the first and the last.
                let inner: Vec<u8> = (first + 1..last)
                    .collect::<Vec<_>>()
                    .chunks(8)
                    .map(|c| {
                        c.iter()
                            .enumerate()
                            .fold(0, |b, (i, &s)| b | (u8::from(a_has(&d.alphabet, s)) << i))
                    })
                    .collect();
                w.bytes(&inner);
            }
        }
        w.u32(self.groups.len() as u32).u32(self.heads.len() as u32);
        for g in &self.groups {
            w.u32(g.head_end).u16(g.digit).u16(g.span);
        }
        w.bytes(&self.heads);
        self.ef.layout.write_params(&mut w);
        w.u64s(&self.ef.words);
        let mut out = w.into_vec();
        let sum = xxh3_64(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// Reads back [`to_bytes`](Self::to_bytes): a typed error, never a
    /// panic, for any input, and no allocation beyond the input's size.
    ///
    /// ```
    /// use amq::range::{InfixRange, RangeSizing};
    /// let bytes = InfixRange::build(&[b"a1", b"b2"], RangeSizing::Fpr { fpr: 0.01, max_range_len: 1 })?.to_bytes();
    /// assert!(InfixRange::from_bytes(&bytes[..bytes.len() - 1]).is_err());
    /// let mut flipped = bytes.clone();
    /// flipped[9] ^= 1;
    /// assert!(InfixRange::from_bytes(&flipped).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let bad = |why| Error::Format(FormatError::InvalidParameters(why));
        let (_, mut r) = crate::format::open_sealed(bytes, MAGIC, VERSION..=VERSION)?;
        let flags = r.u8()?;
        if flags & !COMPLETE != 0 {
            return Err(bad("infix filter flags"));
        }
        let group_log2 = u32::from(r.u8()?);
        let num_keys = r.u64()?;
        let cells = r.u64()?;
        if !(1..=16).contains(&group_log2) || !(1..=MAX_CELLS).contains(&cells) {
            return Err(bad("infix filter group size or cells"));
        }
        let shared = r.u32()? as usize;
        let first_len = r.u32()? as usize;
        if first_len < shared || first_len > MAX_KEY_BYTES {
            return Err(bad("infix filter smallest key"));
        }
        let first = r.take(first_len)?.to_vec();
        let digits = read_digits(&mut r, shared, &first)?;
        let count = r.u32()? as usize;
        let heads_len = r.u32()? as usize;
        if (num_keys == 0) != (count == 0)
            || (count as u64) > num_keys
            || r.remaining() < count.saturating_mul(GROUP_BYTES).saturating_add(heads_len)
        {
            return Err(bad("infix filter group count"));
        }
        let mut groups = Vec::with_capacity(count);
        for _ in 0..count {
            let (head_end, digit, span) = (r.u32()?, r.u16()?, r.u16()?);
            groups.push(Group {
                head_end,
                digit,
                span,
            });
        }
        let heads = r.take(heads_len)?.to_vec();
        let layout = Layout::read_params(&mut r)?;
        // No groups: an empty code over a universe of one value.
        let universe = match count {
            0 => Some(1),
            _ => (count as u64)
                .checked_mul(cells)
                .filter(|&u| u <= crate::succinct::MAX_UNIVERSE),
        };
        if universe != Some(layout.universe) {
            return Err(bad("infix filter universe"));
        }
        if layout.len > num_keys || (layout.len == 0) != (num_keys == 0) {
            return Err(bad("infix filter values"));
        }
        let ef = EfCore::decode(layout, r)?;
        let mut f = InfixRange {
            num_keys,
            first,
            shared,
            digits,
            complete: flags & COMPLETE != 0,
            group_log2,
            cells,
            heads,
            groups,
            ef,
            tops: Vec::new(),
        };
        check_groups(&f)?;
        f.index_heads();
        Ok(f)
    }
}

/// The digits: positions increasing from `shared`, alphabets of two
/// symbols or more with none past the 257th, the smallest key's symbol in
/// each.
fn read_digits(r: &mut Reader<'_>, shared: usize, first: &[u8]) -> Result<Vec<Digit>, Error> {
    let bad = |why| Error::Format(FormatError::InvalidParameters(why));
    let count = r.u32()? as usize;
    if count >= usize::from(NO_DIGIT) || count.saturating_mul(DIGIT_BYTES) > r.remaining() {
        return Err(bad("infix filter digit count"));
    }
    let mut digits: Vec<Digit> = Vec::with_capacity(count);
    let mut tags = Vec::with_capacity(count);
    for _ in 0..count {
        let pos = r.u32()? as usize;
        let mut alphabet = Alphabet::default();
        let tag = r.u8()?;
        let (first, last) = (usize::from(r.u16()?), usize::from(r.u16()?));
        if first >= last || last > 256 {
            return Err(bad("infix filter alphabet bounds"));
        }
        alphabet.insert(first);
        alphabet.insert(last);
        match tag {
            TAG_SPAN => (first + 1..last).for_each(|s| alphabet.insert(s)),
            TAG_SET => {
                let inner = r.take((last - first - 1).div_ceil(8))?;
                for s in first + 1..last {
                    let i = s - first - 1;
                    if inner[i / 8] >> (i % 8) & 1 != 0 {
                        alphabet.insert(s);
                    }
                }
                // Nothing past the last symbol's bit.
                let used = last - first - 1;
                if used % 8 != 0 && inner[used / 8] >> (used % 8) != 0 {
                    return Err(bad("infix filter alphabet bits past its last symbol"));
                }
            }
            _ => return Err(bad("infix filter alphabet tag")),
        }
        let radix = alphabet.len();
        if pos < shared || pos >= MAX_KEY_BYTES || digits.last().is_some_and(|d| d.pos >= pos) {
            return Err(bad("infix filter digit positions"));
        }
        digits.push(Digit::new(pos, alphabet, radix, radix));
        tags.push(tag);
    }
    finish_digits(&mut digits);
    if digits.iter().any(|d| !d.rank_of(first).0) {
        return Err(bad("infix filter smallest key outside an alphabet"));
    }
    // One encoding for each alphabet, so a filter's bytes are one string.
    if digits
        .iter()
        .zip(&tags)
        .any(|(d, &t)| d.contiguous != (t == TAG_SPAN))
    {
        return Err(bad("infix filter alphabet of a span written as a set"));
    }
    Ok(digits)
}

/// The groups: heads strictly increasing and ending where the next starts,
/// each first digit at a position its head reaches, each span within that
/// digit's alphabet from the head's symbol.
fn check_groups(f: &InfixRange) -> Result<(), Error> {
    let bad = |why| Err(Error::Format(FormatError::InvalidParameters(why)));
    let mut start = 0usize;
    for (i, g) in f.groups.iter().enumerate() {
        let end = g.head_end as usize;
        if end < start || end > f.heads.len() || (i + 1 == f.groups.len() && end != f.heads.len()) {
            return bad("infix filter head ends");
        }
        if i > 0 && f.head(i - 1) >= f.head(i) {
            return bad("infix filter heads out of order");
        }
        start = end;
        if g.digit == NO_DIGIT {
            if f.num_keys != 1 || !f.digits.is_empty() || g.span != 0 {
                return bad("infix filter group without a digit");
            }
            continue;
        }
        let Some(d) = f.digits.get(usize::from(g.digit)) else {
            return bad("infix filter group digit");
        };
        let head = f.head(i);
        if d.pos - f.shared > head.len() {
            return bad("infix filter head short of its digit");
        }
        let (present, lowest) = d.rank(crate::range::keymap::symbol(head, d.pos - f.shared));
        if !present || lowest + u64::from(g.span) >= d.radix {
            return bad("infix filter group span");
        }
    }
    Ok(())
}
