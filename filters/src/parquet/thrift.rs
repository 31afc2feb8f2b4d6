//! The Thrift compact encoding of Parquet's `BloomFilterHeader`, which
//! precedes every Bloom filter bitset in a Parquet file.
//!
//! ```text
//! struct BloomFilterHeader {
//!   1: required i32 numBytes;                          // bitset length
//!   2: required BloomFilterAlgorithm algorithm;        // union { 1: SplitBlockAlgorithm BLOCK }
//!   3: required BloomFilterHash hash;                  // union { 1: XxHash XXHASH }
//!   4: required BloomFilterCompression compression;   // union { 1: Uncompressed UNCOMPRESSED }
//! }
//! ```
//! (`parquet.thrift` of the Parquet format; the three members are empty
//! structs.) A writer emits, for a bitset of `n` bytes:
//!
//! ```text
//! 15 <varint zigzag(n)>   field 1, type i32
//! 1c 1c 00 00             field 2, struct { field 1, struct { stop } stop }
//! 1c 1c 00 00             field 3, the same
//! 1c 1c 00 00             field 4, the same
//! 00                      stop
//! ```
//!
//! The reader accepts any valid compact encoding of the struct: fields in
//! any order, long-form field ids, fields it does not know (skipped, as
//! Thrift requires, so a header from a newer writer still reads). It refuses,
//! with [`FormatError::InvalidParquetHeader`], anything malformed: an unknown
//! type code, a varint longer than its type allows, a missing required
//! field, a union with no member or two, nesting deeper than
//! [`MAX_DEPTH`], and a bitset length that is not a positive multiple of 32.
//! A union member it does not know (a future algorithm, hash or
//! compression) is [`FormatError::UnsupportedParquetFilter`]. Input ending
//! early is [`FormatError::Truncated`]. Every read is bounds-checked, nothing
//! is allocated, and each step consumes at least one byte, so the work is
//! linear in the input.

use alloc::vec::Vec;

use crate::FormatError;

/// Deepest nesting of structs, lists and maps the reader follows inside the
/// header. The header itself needs 3 (header, union, empty struct).
pub const MAX_DEPTH: u32 = 16;

/// The compact protocol's type codes (field headers and collections).
mod ty {
    pub const BOOL_TRUE: u8 = 1;
    pub const BOOL_FALSE: u8 = 2;
    pub const I8: u8 = 3;
    pub const I16: u8 = 4;
    pub const I32: u8 = 5;
    pub const I64: u8 = 6;
    pub const DOUBLE: u8 = 7;
    pub const BINARY: u8 = 8;
    pub const LIST: u8 = 9;
    pub const SET: u8 = 10;
    pub const MAP: u8 = 11;
    pub const STRUCT: u8 = 12;
    pub const UUID: u8 = 13;
}

const fn bad(why: &'static str) -> FormatError {
    FormatError::InvalidParquetHeader(why)
}

/// Appends the header for a bitset of `num_bytes` bytes (a positive multiple
/// of 32 that fits an `i32`; the caller guarantees it).
pub(crate) fn write_header(out: &mut Vec<u8>, num_bytes: u32) {
    debug_assert!(num_bytes > 0 && num_bytes.is_multiple_of(32) && num_bytes <= i32::MAX as u32);
    out.push(0x10 | ty::I32);
    // zigzag(n) = 2n for n ≥ 0, as a varint.
    let mut v = u64::from(num_bytes) << 1;
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    for _ in 0..3 {
        out.extend_from_slice(&[0x10 | ty::STRUCT, 0x10 | ty::STRUCT, 0, 0]);
    }
    out.push(0);
}

/// A parsed Parquet Bloom filter header: how long it is and how long the
/// bitset after it is.
///
/// Reading a filter from a Parquet file without the column chunk's
/// `bloom_filter_length` takes two reads: a few bytes at
/// `bloom_filter_offset` to parse this, then the bitset.
///
/// ```
/// use amq::parquet::ParquetHeader;
/// use amq::ParquetBloom;
/// let f = ParquetBloom::with_num_bytes(1024).unwrap();
/// let bytes = f.to_parquet_bytes();
/// let h = ParquetHeader::parse(&bytes).unwrap();
/// assert_eq!(h.bitset_len(), 1024);
/// assert_eq!(h.header_len() + h.bitset_len(), bytes.len());
/// // Only the header's bytes are needed.
/// assert_eq!(ParquetHeader::parse(&bytes[..h.header_len()]).unwrap(), h);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParquetHeader {
    header_len: usize,
    bitset_len: u32,
}

impl ParquetHeader {
    /// Parses the header at the start of `bytes` (what follows it is not
    /// read). Any valid compact encoding is read: fields in any order,
    /// long-form field ids, and unknown fields (skipped, nesting at most
    /// [`MAX_DEPTH`] deep). Input ending early is
    /// [`FormatError::Truncated`]; a malformed header (bad type code or
    /// varint, a required field missing or of the wrong type, a union with
    /// no member or two, `numBytes` not a positive multiple of 32) is
    /// [`FormatError::InvalidParquetHeader`]; an algorithm, hash or
    /// compression other than split-block / XXH64 / uncompressed is
    /// [`FormatError::UnsupportedParquetFilter`].
    pub fn parse(bytes: &[u8]) -> Result<ParquetHeader, FormatError> {
        let mut r = Reader { bytes, pos: 0 };
        let bitset_len = r.header()?;
        Ok(ParquetHeader {
            header_len: r.pos,
            bitset_len,
        })
    }

    /// Bytes of the header.
    pub fn header_len(&self) -> usize {
        self.header_len
    }

    /// Bytes of the bitset that follows it (`numBytes`): a positive multiple
    /// of 32.
    pub fn bitset_len(&self) -> usize {
        self.bitset_len as usize
    }
}

/// A union's member: the field id that is set (1 is the only one Parquet
/// defines for each of the three).
type Member = i16;

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, FormatError> {
        let b = *self.bytes.get(self.pos).ok_or(FormatError::Truncated)?;
        self.pos += 1;
        Ok(b)
    }

    fn skip(&mut self, n: u64) -> Result<(), FormatError> {
        let left = (self.bytes.len() - self.pos) as u64;
        if n > left {
            return Err(FormatError::Truncated);
        }
        self.pos += n as usize;
        Ok(())
    }

    /// Bytes not yet read.
    fn left(&self) -> u64 {
        (self.bytes.len() - self.pos) as u64
    }

    /// An unsigned LEB128 varint of at most `max_bytes` bytes (3 for i16, 5
    /// for i32, 10 for i64) whose value fits `bits` bits.
    fn varint(&mut self, max_bytes: u32, bits: u32) -> Result<u64, FormatError> {
        let mut v = 0u64;
        for i in 0..max_bytes {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                if bits < 64 && v >> bits != 0 {
                    return Err(bad("varint out of range for its type"));
                }
                return Ok(v);
            }
        }
        Err(bad("varint longer than its type allows"))
    }

    fn zigzag_i32(&mut self) -> Result<i32, FormatError> {
        let v = self.varint(5, 32)? as u32;
        Ok((v >> 1) as i32 ^ -((v & 1) as i32))
    }

    fn zigzag_i16(&mut self) -> Result<i16, FormatError> {
        let v = self.varint(3, 16)? as u16;
        Ok((v >> 1) as i16 ^ -((v & 1) as i16))
    }

    /// The next field header of a struct: `None` at its stop byte, else the
    /// field id (a delta from `last`, or a long-form id) and type code.
    fn field(&mut self, last: &mut i16) -> Result<Option<(i16, u8)>, FormatError> {
        let b = self.byte()?;
        if b == 0 {
            return Ok(None);
        }
        let (delta, t) = (b >> 4, b & 0x0f);
        let id = if delta == 0 {
            self.zigzag_i16()?
        } else {
            last.checked_add(i16::from(delta))
                .ok_or(bad("field id out of range"))?
        };
        *last = id;
        Ok(Some((id, t)))
    }

    /// Skips one value of type `t`. In a struct field a bool lives in the
    /// type code; in a list, set or map it is a byte (`in_collection`).
    fn skip_value(&mut self, t: u8, in_collection: bool, depth: u32) -> Result<(), FormatError> {
        match t {
            ty::BOOL_TRUE | ty::BOOL_FALSE => {
                if in_collection {
                    self.skip(1)?;
                }
            }
            ty::I8 => self.skip(1)?,
            ty::I16 => {
                self.varint(3, 16)?;
            }
            ty::I32 => {
                self.varint(5, 32)?;
            }
            ty::I64 => {
                self.varint(10, 64)?;
            }
            ty::DOUBLE => self.skip(8)?,
            ty::UUID => self.skip(16)?,
            ty::BINARY => {
                let len = self.varint(5, 32)?;
                self.skip(len)?;
            }
            ty::LIST | ty::SET => {
                let depth = deeper(depth)?;
                let b = self.byte()?;
                let (short, elem) = (b >> 4, b & 0x0f);
                let len = if short == 15 {
                    self.varint(5, 32)?
                } else {
                    u64::from(short)
                };
                // Every element takes at least one byte: a longer list
                // cannot be in the input (and the loop stays linear).
                if len > self.left() {
                    return Err(FormatError::Truncated);
                }
                for _ in 0..len {
                    self.skip_value(elem, true, depth)?;
                }
            }
            ty::MAP => {
                let depth = deeper(depth)?;
                let len = self.varint(5, 32)?;
                if len > 0 {
                    let kv = self.byte()?;
                    if len > self.left() {
                        return Err(FormatError::Truncated);
                    }
                    for _ in 0..len {
                        self.skip_value(kv >> 4, true, depth)?;
                        self.skip_value(kv & 0x0f, true, depth)?;
                    }
                }
            }
            ty::STRUCT => {
                let depth = deeper(depth)?;
                let mut last = 0;
                while let Some((_, t)) = self.field(&mut last)? {
                    self.skip_value(t, false, depth)?;
                }
            }
            _ => return Err(bad("unknown type code")),
        }
        Ok(())
    }

    /// A union of empty structs (the algorithm, hash and compression
    /// fields): which member is set. Exactly one must be.
    fn union(&mut self, depth: u32) -> Result<Member, FormatError> {
        let depth = deeper(depth)?;
        let mut last = 0;
        let (id, t) = self.field(&mut last)?.ok_or(bad("a union with no member set"))?;
        self.skip_value(t, false, depth)?;
        if id == 1 && t != ty::STRUCT {
            return Err(bad("a union member that is not a struct"));
        }
        if self.field(&mut last)?.is_some() {
            return Err(bad("a union with more than one member set"));
        }
        Ok(id)
    }

    /// The whole `BloomFilterHeader`; returns `numBytes`, validated.
    fn header(&mut self) -> Result<u32, FormatError> {
        let depth = deeper(0)?;
        let mut num_bytes = None;
        let (mut algorithm, mut hash, mut compression) = (None, None, None);
        let mut last = 0;
        while let Some((id, t)) = self.field(&mut last)? {
            match (id, t) {
                (1, ty::I32) => num_bytes = Some(self.zigzag_i32()?),
                (2, ty::STRUCT) => algorithm = Some(self.union(depth)?),
                (3, ty::STRUCT) => hash = Some(self.union(depth)?),
                (4, ty::STRUCT) => compression = Some(self.union(depth)?),
                (1..=4, _) => return Err(bad("a header field of the wrong type")),
                _ => self.skip_value(t, false, depth)?,
            }
        }
        let num_bytes = num_bytes.ok_or(bad("missing numBytes"))?;
        let algorithm = algorithm.ok_or(bad("missing algorithm"))?;
        let hash = hash.ok_or(bad("missing hash"))?;
        let compression = compression.ok_or(bad("missing compression"))?;
        if num_bytes <= 0 || num_bytes % 32 != 0 {
            return Err(bad("numBytes is not a positive multiple of 32"));
        }
        for (member, field) in [
            (algorithm, "algorithm"),
            (hash, "hash"),
            (compression, "compression"),
        ] {
            if member != 1 {
                return Err(FormatError::UnsupportedParquetFilter(field));
            }
        }
        Ok(num_bytes as u32)
    }
}

/// One level deeper, or an error past [`MAX_DEPTH`].
fn deeper(depth: u32) -> Result<u32, FormatError> {
    if depth >= MAX_DEPTH {
        Err(bad("nesting deeper than 16"))
    } else {
        Ok(depth + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(n: u32) -> Vec<u8> {
        let mut v = Vec::new();
        write_header(&mut v, n);
        v
    }

    #[test]
    fn writes_the_canonical_header() {
        // numBytes 32: zigzag 64, one varint byte (the header arrow-rs's
        // tests pin).
        assert_eq!(
            header(32),
            [0x15, 0x40, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0]
        );
        // 1 MiB: zigzag 2^21, a four-byte varint.
        assert_eq!(&header(1 << 20)[..5], [0x15, 0x80, 0x80, 0x80, 0x01]);
        for n in [32, 64, 4096, 1 << 20, (i32::MAX as u32) / 32 * 32] {
            let h = header(n);
            let p = ParquetHeader::parse(&h).unwrap();
            assert_eq!((p.header_len(), p.bitset_len()), (h.len(), n as usize));
        }
    }

    #[test]
    fn every_truncation_is_truncated() {
        let h = header(1 << 20);
        for cut in 0..h.len() {
            assert_eq!(
                ParquetHeader::parse(&h[..cut]),
                Err(FormatError::Truncated),
                "{cut}"
            );
        }
    }

    #[test]
    fn nesting_is_bounded() {
        // An unknown field 5 holding structs nested 10,000 deep.
        let mut h = header(32);
        h.pop();
        h.push(0x10 | ty::STRUCT);
        h.extend(core::iter::repeat_n(0x10 | ty::STRUCT, 10_000));
        h.extend(core::iter::repeat_n(0, 10_002));
        assert_eq!(
            ParquetHeader::parse(&h),
            Err(FormatError::InvalidParquetHeader("nesting deeper than 16"))
        );
    }
}
