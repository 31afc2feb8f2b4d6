//! Byte encoding shared by every file of the store: little-endian fixed-width
//! integers, LEB128 varints, length-prefixed byte strings, and the checksum.
//!
//! Decoding goes through [`Cursor`], whose every read is bounds-checked and
//! returns `None` past the end, so a damaged length can never read out of
//! bounds or allocate more than the input holds.

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Seed of the block and record checksum: `"amq-lsm\0"` as a little-endian
/// `u64`, distinct from the key hash seed so a checksum is never mistaken for
/// a key hash.
const CHECKSUM_SEED: u64 = u64::from_le_bytes(*b"amq-lsm\0");

/// The 32-bit checksum of every block, record and footer: the low half of
/// xxh3-64 (seeded) over the bytes. xxh3 is the workspace's one hash crate;
/// 32 bits miss a random corruption with probability 2^-32.
pub fn checksum(parts: &[&[u8]]) -> u32 {
    if let [one] = parts {
        return xxh3_64_with_seed(one, CHECKSUM_SEED) as u32;
    }
    let mut h = xxhash_rust::xxh3::Xxh3::with_seed(CHECKSUM_SEED);
    for p in parts {
        h.update(p);
    }
    h.digest() as u32
}

pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A bounds-checked reader over a byte slice.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    buf: &'a [u8],
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf }
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn remaining(&self) -> &'a [u8] {
        self.buf
    }

    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.buf.len() {
            return None;
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Some(head)
    }

    pub fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    pub fn f64(&mut self) -> Option<f64> {
        Some(f64::from_bits(self.u64()?))
    }

    /// A LEB128 varint of at most 10 bytes that fits in 64 bits.
    pub fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.u8()?;
            let bits = u64::from(b & 0x7f);
            if i == 9 && bits > 1 {
                return None;
            }
            v |= bits << (7 * i);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// A varint that must fit in `usize`.
    pub fn len(&mut self) -> Option<usize> {
        usize::try_from(self.varint()?).ok()
    }

    /// A varint-length-prefixed byte string.
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.len()?;
        self.take(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn varints_round_trip(v: u64) {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut c = Cursor::new(&out);
            prop_assert_eq!(c.varint(), Some(v));
            prop_assert!(c.is_empty());
        }

        #[test]
        fn decoding_garbage_never_panics(bytes: Vec<u8>) {
            let mut c = Cursor::new(&bytes);
            while c.bytes().is_some() {}
        }
    }

    #[test]
    fn overlong_varints_are_rejected() {
        assert_eq!(Cursor::new(&[0xff; 11]).varint(), None);
        assert_eq!(
            Cursor::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]).varint(),
            None
        );
        assert_eq!(Cursor::new(&[0x80]).varint(), None);
    }

    #[test]
    fn checksum_of_parts_equals_checksum_of_whole() {
        assert_eq!(checksum(&[b"ab", b"cd"]), checksum(&[b"abcd"]));
        assert_ne!(checksum(&[b"abcd"]), checksum(&[b"abce"]));
    }
}
