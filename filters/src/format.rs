//! The versioned, little-endian byte format shared by every filter.
//!
//! Layout (all integers little-endian; see `docs/format.md`):
//!
//! | offset    | size | field                                             |
//! |-----------|------|---------------------------------------------------|
//! | 0         | 4    | magic `b"AMQF"`                                   |
//! | 4         | 2    | format version ([`FORMAT_VERSION`])               |
//! | 6         | 1    | filter kind ([`FilterKind::id`])                  |
//! | 7         | 1    | hash scheme ([`HashScheme::id`])                  |
//! | 8         | 4    | parameter length `P`                              |
//! | 12        | 8    | payload length `L`                                |
//! | 20        | P    | kind-specific parameters                          |
//! | 20 + P    | Z    | zero padding (version 2; `Z = 0` in version 1)    |
//! | O = 20+P+Z| L    | payload (the filter's words, little-endian)       |
//! | O + L     | 8    | xxh3-64 (seed 0) of every byte before it          |
//!
//! Version 2 pads so that the payload offset `O` is a multiple of
//! [`PAYLOAD_ALIGN`] (64): a frame placed at a 64-byte-aligned address then
//! has its payload on a cache-line boundary, so a blocked Bloom block read in
//! place ([`crate::FilterView`]) costs one cache line, not two (in version 1 the
//! payload of a `BlockedBloom` starts at byte 36, so every block straddles a
//! line). The padding must be zero: a non-zero byte there is
//! [`FormatError::NonZeroPadding`]. Version 1 frames still decode.
//!
//! Schema-critical: any change to this layout, to a kind's parameters or
//! payload, or to the key hash must bump [`FORMAT_VERSION`] (or the hash
//! scheme id) and keep a decoder for the old one. Golden-byte tests pin each
//! kind: `tests/bloom_format.rs` (Bloom family), `tests/cuckoo.rs`,
//! `tests/xor.rs`, `tests/binary_fuse.rs`, `tests/ribbon.rs`.
//!
//! The decoder checks the total length against the declared lengths *before*
//! allocating anything, so it never allocates more than the input implies,
//! and reads only through a bounds-checked reader.

use alloc::vec::Vec;

use xxhash_rust::xxh3::xxh3_64;

use crate::zeroed::zeroed_vec;
use crate::{Error, FilterKind, FormatError, HashScheme};

/// The four magic bytes every serialized filter starts with.
pub const MAGIC: [u8; 4] = *b"AMQF";
/// The format version this build writes. Version 1 (no payload padding)
/// still decodes.
pub const FORMAT_VERSION: u16 = 2;
/// Version 2 starts the payload at a multiple of this many bytes from the
/// start of the frame (a cache line).
pub const PAYLOAD_ALIGN: usize = 64;

/// Zero bytes between the parameters and the payload of a frame whose
/// parameters are `params_len` bytes, in `version`.
pub fn payload_padding(version: u16, params_len: usize) -> usize {
    if version < 2 {
        0
    } else {
        (PAYLOAD_ALIGN - (HEADER_LEN + params_len) % PAYLOAD_ALIGN) % PAYLOAD_ALIGN
    }
}
/// Fixed header length in bytes.
pub const HEADER_LEN: usize = 20;
/// Checksum trailer length in bytes.
pub const CHECKSUM_LEN: usize = 8;

/// Little-endian byte sink for parameters and payload.
#[derive(Debug, Default)]
pub(crate) struct ByteWriter {
    buf: Vec<u8>,
}

impl ByteWriter {
    pub(crate) fn with_capacity(n: usize) -> Self {
        ByteWriter {
            buf: Vec::with_capacity(n),
        }
    }
    pub(crate) fn u8(&mut self, v: u8) -> &mut Self {
        self.buf.push(v);
        self
    }
    pub(crate) fn u16(&mut self, v: u16) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(crate) fn u32(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(crate) fn u64(&mut self, v: u64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub(crate) fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(v);
        self
    }
    pub(crate) fn u64s(&mut self, v: &[u64]) -> &mut Self {
        for x in v {
            self.u64(*x);
        }
        self
    }
    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }
    pub(crate) fn into_vec(self) -> Vec<u8> {
        self.buf
    }
}

/// Writes a complete serialized filter: header, `params`, the payload that
/// `write_payload` produces (exactly `payload_len` bytes), and the checksum.
///
/// # Panics
/// If `write_payload` writes other than `payload_len` bytes (a bug in the
/// filter's encoder, never a property of input data).
pub(crate) fn encode(
    kind: FilterKind,
    params: &[u8],
    payload_len: usize,
    write_payload: impl FnOnce(&mut ByteWriter),
) -> Vec<u8> {
    encode_version(FORMAT_VERSION, kind, params, payload_len, write_payload)
}

/// [`encode`] in an older `version`: only for a filter read from a frame of
/// that version whose content the current version cannot express (a
/// version-1 Ribbon filter with per-shard extra columns).
pub(crate) fn encode_version(
    version: u16,
    kind: FilterKind,
    params: &[u8],
    payload_len: usize,
    write_payload: impl FnOnce(&mut ByteWriter),
) -> Vec<u8> {
    let pad = payload_padding(version, params.len());
    let total = HEADER_LEN + params.len() + pad + payload_len + CHECKSUM_LEN;
    let mut w = ByteWriter::with_capacity(total);
    w.bytes(&MAGIC)
        .u16(version)
        .u8(kind.id())
        .u8(kind.hash_scheme().id())
        .u32(params.len() as u32)
        .u64(payload_len as u64)
        .bytes(params)
        .bytes(&[0; PAYLOAD_ALIGN][..pad]);
    let start = w.len();
    write_payload(&mut w);
    assert_eq!(
        w.len() - start,
        payload_len,
        "encoder wrote a wrong payload length"
    );
    let sum = xxh3_64(&w.buf);
    w.u64(sum);
    w.into_vec()
}

/// A validated frame: its kind, and readers over its parameters and payload.
#[derive(Debug)]
pub(crate) struct Frame<'a> {
    /// The format version the frame was written in (1 ..= [`FORMAT_VERSION`]).
    pub(crate) version: u16,
    pub(crate) kind: FilterKind,
    /// Known to this build, and the one `kind` uses.
    pub(crate) scheme: HashScheme,
    pub(crate) params: Reader<'a>,
    pub(crate) payload: Reader<'a>,
}

/// Reads the kind byte of a serialized filter after checking the whole frame
/// (magic, version, lengths, checksum, hash scheme, and that the scheme is
/// the one the kind uses).
pub(crate) fn decode(bytes: &[u8]) -> Result<Frame<'_>, Error> {
    let frame = decode_frame(bytes)?;
    check_scheme(&frame)?;
    Ok(frame)
}

/// The hash scheme must be the kind's: a `ParquetBloom` frame claiming amq
/// key hashes (or the reverse) would answer for the wrong keys.
fn check_scheme(frame: &Frame<'_>) -> Result<(), Error> {
    if frame.scheme == frame.kind.hash_scheme() {
        Ok(())
    } else {
        Err(Error::WrongHashScheme {
            expected: frame.kind.hash_scheme(),
            found: frame.scheme,
        })
    }
}

/// Whether decoding hashes the frame to check its checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checksum {
    /// Bytes from outside (a file, the network): check it.
    Verify,
    /// Bytes already verified once (a block cache entry): every other check
    /// is still made, so an unverified frame can give wrong answers but
    /// never a panic or an out-of-bounds read.
    Trusted,
}

/// [`decode`] with the checksum verified or trusted.
pub(crate) fn decode_with(bytes: &[u8], checksum: Checksum) -> Result<Frame<'_>, Error> {
    let frame = parse_frame(bytes, checksum)?;
    check_scheme(&frame)?;
    Ok(frame)
}

/// Everything of [`decode`] but the check that the scheme fits the kind.
fn decode_frame(bytes: &[u8]) -> Result<Frame<'_>, FormatError> {
    parse_frame(bytes, Checksum::Verify)
}

fn parse_frame(bytes: &[u8], checksum: Checksum) -> Result<Frame<'_>, FormatError> {
    let mut r = Reader::new(bytes);
    if r.take(4)? != MAGIC {
        return Err(FormatError::BadMagic);
    }
    let version = r.u16()?;
    if !(1..=FORMAT_VERSION).contains(&version) {
        return Err(FormatError::UnsupportedVersion(version));
    }
    let kind_id = r.u8()?;
    let scheme = r.u8()?;
    let params_len = r.u32()? as usize;
    let payload_len = r.u64()?;
    let pad = payload_padding(version, params_len);
    // Check the declared lengths against the input before touching anything
    // they describe.
    let body = (params_len as u64)
        .checked_add(pad as u64)
        .and_then(|b| b.checked_add(payload_len))
        .and_then(|b| b.checked_add(CHECKSUM_LEN as u64))
        .ok_or(FormatError::Truncated)?;
    let available = (bytes.len() - HEADER_LEN) as u64;
    if body > available {
        return Err(FormatError::Truncated);
    }
    if body < available {
        return Err(FormatError::TrailingBytes);
    }
    let payload_len = payload_len as usize; // fits: it is at most bytes.len()
    let params = r.take(params_len)?;
    let padding = r.take(pad)?;
    let payload = r.take(payload_len)?;
    let stored = r.u64()?;
    let covered = &bytes[..bytes.len() - CHECKSUM_LEN];
    if checksum == Checksum::Verify && xxh3_64(covered) != stored {
        return Err(FormatError::ChecksumMismatch);
    }
    if padding.iter().any(|&b| b != 0) {
        return Err(FormatError::NonZeroPadding);
    }
    let kind = FilterKind::from_id(kind_id).ok_or(FormatError::UnknownKind(kind_id))?;
    if version < kind.first_version() {
        return Err(FormatError::UnsupportedVersion(version));
    }
    let scheme = HashScheme::from_id(scheme).ok_or(FormatError::UnknownHashScheme(scheme))?;
    Ok(Frame {
        version,
        kind,
        scheme,
        params: Reader::new(params),
        payload: Reader::new(payload),
    })
}

/// Like [`decode`], but also requires the frame to hold `expected`.
/// (A frame of another kind is `WrongKind` whatever its scheme.)
pub(crate) fn decode_kind(bytes: &[u8], expected: FilterKind) -> Result<Frame<'_>, Error> {
    decode_kind_with(bytes, expected, Checksum::Verify)
}

/// [`decode_kind`] with the checksum verified or trusted.
pub(crate) fn decode_kind_with(
    bytes: &[u8],
    expected: FilterKind,
    checksum: Checksum,
) -> Result<Frame<'_>, Error> {
    let frame = parse_frame(bytes, checksum)?;
    if frame.kind != expected {
        return Err(FormatError::WrongKind {
            expected,
            found: frame.kind,
        }
        .into());
    }
    check_scheme(&frame)?;
    Ok(frame)
}

/// Opens bytes of a format of their own (a key map, an infix range filter):
/// `magic`, a version byte in `versions`, a body, then an xxh3-64 (seed 0)
/// of everything before it. The version and a reader of the body past it,
/// or the first of [`FormatError::Truncated`], `BadMagic`,
/// `UnsupportedVersion` and `ChecksumMismatch` that applies.
pub(crate) fn open_sealed<'a>(
    bytes: &'a [u8],
    magic: &[u8; 4],
    versions: core::ops::RangeInclusive<u8>,
) -> Result<(u8, Reader<'a>), Error> {
    if bytes.len() < 8 {
        return Err(FormatError::Truncated.into());
    }
    let (body, sum) = bytes.split_at(bytes.len() - 8);
    let mut r = Reader::new(body);
    if r.take(4)? != magic {
        return Err(FormatError::BadMagic.into());
    }
    let version = r.u8()?;
    if !versions.contains(&version) {
        return Err(FormatError::UnsupportedVersion(u16::from(version)).into());
    }
    if u64::from_le_bytes(sum.try_into().unwrap_or([0; 8])) != xxhash_rust::xxh3::xxh3_64(body) {
        return Err(FormatError::ChecksumMismatch.into());
    }
    Ok((version, r))
}

/// Bounds-checked little-endian reader. Every method returns
/// [`FormatError::Truncated`] instead of reading past the end.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes }
    }
    /// Bytes not yet read.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len()
    }
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], FormatError> {
        if n > self.bytes.len() {
            return Err(FormatError::Truncated);
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], FormatError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    pub(crate) fn u8(&mut self) -> Result<u8, FormatError> {
        Ok(self.array::<1>()?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, FormatError> {
        self.array().map(u16::from_le_bytes)
    }
    pub(crate) fn u32(&mut self) -> Result<u32, FormatError> {
        self.array().map(u32::from_le_bytes)
    }
    pub(crate) fn u64(&mut self) -> Result<u64, FormatError> {
        self.array().map(u64::from_le_bytes)
    }
    /// Reads exactly `count` little-endian `u64`s into a vector of
    /// `count + pad` words whose last `pad` are zero. Checks the length
    /// first, so the allocation is bounded by the input (plus `pad`), and
    /// allocates exactly once ([`Error::TooLarge`] if that fails).
    pub(crate) fn u64s(&mut self, count: usize, pad: usize) -> Result<Vec<u64>, Error> {
        let bytes = self.take(count.checked_mul(8).ok_or(FormatError::Truncated)?)?;
        let mut words = zeroed_vec(count.checked_add(pad).ok_or(Error::TooLarge)?)?;
        for (w, c) in words.iter_mut().zip(bytes.chunks_exact(8)) {
            *w = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
        }
        Ok(words)
    }
    /// Requires that everything was read: parameters and payloads have exact
    /// lengths, so leftover bytes mean the header lied.
    pub(crate) fn finish(self) -> Result<(), FormatError> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(FormatError::InvalidParameters(
                "length does not match the parameters",
            ))
        }
    }
}

/// What a borrowed view's `to_bytes` returns: the frame itself when it is
/// in the current format version (the encoders are deterministic, so
/// that is what the owned filter would write), else the owned filter's
/// bytes (`reencode`). Should a trusted frame no longer decode, the frame
/// is returned as it is: `to_bytes` has no error to give, and the bytes
/// will fail their checksum wherever they are read next.
pub(crate) fn current_bytes(frame: &[u8], reencode: impl FnOnce() -> Result<Vec<u8>, Error>) -> Vec<u8> {
    if frame.get(4..6) == Some(&FORMAT_VERSION.to_le_bytes()[..]) {
        return frame.to_vec();
    }
    reencode().unwrap_or_else(|_| frame.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut p = ByteWriter::default();
        p.u32(7).u8(3);
        encode(FilterKind::StandardBloom, &p.into_vec(), 16, |w| {
            w.u64s(&[1, 2]);
        })
    }

    #[test]
    fn round_trip_frame() {
        let bytes = sample();
        // 20 header + 5 params + 39 zeros: the payload starts at byte 64.
        assert_eq!(bytes.len(), 64 + 16 + CHECKSUM_LEN);
        assert!(bytes[25..64].iter().all(|&b| b == 0));
        let mut f = decode_kind(&bytes, FilterKind::StandardBloom).unwrap();
        assert_eq!(f.params.u32().unwrap(), 7);
        assert_eq!(f.params.u8().unwrap(), 3);
        f.params.finish().unwrap();
        assert_eq!(f.payload.u64s(2, 1).unwrap(), [1, 2, 0]);
        f.payload.finish().unwrap();
    }

    #[test]
    fn rejects_every_truncation_and_every_byte_flip() {
        let bytes = sample();
        for n in 0..bytes.len() {
            assert!(decode(&bytes[..n]).is_err(), "prefix {n}");
        }
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[i] ^= 1 << bit;
                assert!(decode(&b).is_err(), "byte {i} bit {bit}");
            }
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(
            decode(&longer).unwrap_err(),
            Error::Format(FormatError::TrailingBytes)
        );
    }

    /// The same frame in version 1: no padding, version bytes `01 00`.
    fn sample_v1() -> Vec<u8> {
        let v2 = sample();
        let mut b = v2[..25].to_vec();
        b[4] = 1;
        b.extend_from_slice(&v2[64..64 + 16]);
        let sum = xxh3_64(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    }

    #[test]
    fn version_1_frames_still_decode() {
        let b = sample_v1();
        assert_eq!(b.len(), HEADER_LEN + 5 + 16 + CHECKSUM_LEN);
        let mut f = decode(&b).unwrap();
        assert_eq!(f.params.u32().unwrap(), 7);
        assert_eq!(f.payload.u64s(2, 0).unwrap(), [1, 2]);
        for n in 0..b.len() {
            assert!(decode(&b[..n]).is_err(), "prefix {n}");
        }
    }

    #[test]
    fn padding_rules() {
        assert_eq!(payload_padding(1, 5), 0);
        assert_eq!(payload_padding(2, 5), 39);
        assert_eq!(payload_padding(2, 44), 0);
        assert_eq!(payload_padding(2, 45), 63);
        // A non-zero padding byte under a valid checksum is still refused.
        let mut b = sample();
        b[40] = 1;
        let end = b.len() - CHECKSUM_LEN;
        let sum = xxh3_64(&b[..end]);
        b[end..].copy_from_slice(&sum.to_le_bytes());
        assert_eq!(
            decode(&b).unwrap_err(),
            Error::Format(FormatError::NonZeroPadding)
        );
        // Versions 0 and 3 are not this build's.
        for v in [0u16, 3] {
            let mut b = sample();
            b[4..6].copy_from_slice(&v.to_le_bytes());
            assert_eq!(
                decode(&b).unwrap_err(),
                Error::Format(FormatError::UnsupportedVersion(v))
            );
        }
    }

    #[test]
    fn trusted_decoding_skips_only_the_checksum() {
        let mut b = sample();
        let end = b.len() - 1;
        b[end] ^= 1;
        assert_eq!(
            decode(&b).unwrap_err(),
            Error::Format(FormatError::ChecksumMismatch)
        );
        assert!(decode_with(&b, Checksum::Trusted).is_ok());
        b[40] = 1;
        assert_eq!(
            decode_with(&b, Checksum::Trusted).unwrap_err(),
            Error::Format(FormatError::NonZeroPadding)
        );
        for n in 0..b.len() {
            assert!(decode_with(&b[..n], Checksum::Trusted).is_err(), "prefix {n}");
        }
    }

    #[test]
    fn wrong_kind_is_reported() {
        let bytes = sample();
        assert_eq!(
            decode_kind(&bytes, FilterKind::Ribbon).unwrap_err(),
            Error::Format(FormatError::WrongKind {
                expected: FilterKind::Ribbon,
                found: FilterKind::StandardBloom
            })
        );
    }

    #[test]
    fn the_hash_scheme_must_be_the_kinds() {
        let mut b = sample();
        b[7] = HashScheme::ParquetXxh64.id();
        let sum = xxh3_64(&b[..b.len() - CHECKSUM_LEN]);
        let end = b.len() - CHECKSUM_LEN;
        b[end..].copy_from_slice(&sum.to_le_bytes());
        let want = Error::WrongHashScheme {
            expected: HashScheme::Xxh3Seeded,
            found: HashScheme::ParquetXxh64,
        };
        assert_eq!(decode(&b).unwrap_err(), want);
        assert_eq!(decode_kind(&b, FilterKind::StandardBloom).unwrap_err(), want);
        // Another kind asked for: the kind mismatch is what is reported.
        assert!(matches!(
            decode_kind(&b, FilterKind::ParquetBloom).unwrap_err(),
            Error::Format(FormatError::WrongKind { .. })
        ));
        let p = encode(FilterKind::ParquetBloom, &[], 0, |_| {});
        assert_eq!(p[7], HashScheme::ParquetXxh64.id());
        assert_eq!(decode(&p).unwrap().scheme, HashScheme::ParquetXxh64);
    }

    #[test]
    fn huge_declared_lengths_do_not_allocate() {
        let mut b = sample();
        b[12..20].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(decode(&b).unwrap_err(), Error::Format(FormatError::Truncated));
        let mut r = Reader::new(&[0u8; 8]);
        assert_eq!(
            r.u64s(usize::MAX, 0).unwrap_err(),
            Error::Format(FormatError::Truncated)
        );
    }
}
