//! The bucket table: `num_buckets` buckets of [`SLOTS`] fingerprints of `f`
//! bits each, packed back to back.
//!
//! Bucket `i` occupies bits `4f·i .. 4f·(i+1)` of the table, counting from
//! bit 0 of byte 0 (little-endian bit order): that is bytes `f/2·i ..
//! f/2·(i+1)`, since `4f` is a whole number of bytes (4, 6 or 8) for every
//! width. Nothing is padded between buckets: a 12-bit table costs 12 bits per
//! slot, not 16. The table is stored as bytes, a whole number of `u64` words
//! long (the serialized form, whose bits after the last bucket are zero),
//! plus [`READ_PAD`] zero bytes that no bucket uses.
//!
//! **Why bytes.** Every bucket then starts on a byte, so reading one is a
//! single unaligned 8-byte load at byte `f/2·i` and a mask, whatever the
//! width; writing one is a load, a merge and a store of the same 8 bytes (the
//! bytes past the bucket are written back unchanged). The padding makes that
//! load in bounds for the last bucket. Stored as `u64` words instead, a 12-bit
//! bucket (48 bits) starts mid-word three times in four and straddles two
//! words once in four, which cost two loads and a 128-bit shift per read.
//!
//! A bucket is read as one `u64` value holding its four lanes (lane `j` at bits
//! `f·j .. f·(j+1)`), and the lane operations below work on that value with
//! SWAR (SIMD within a register) arithmetic: comparing a fingerprint with all
//! four lanes costs an XOR and three bit operations, with no per-lane branch.
//! An empty lane holds 0, which is why fingerprints are never 0.

use alloc::vec::Vec;

use crate::zeroed::zeroed_vec;
use crate::Error;

/// Fingerprints per bucket (`b` in the paper).
pub const SLOTS: u32 = 4;

/// The lane geometry of one fingerprint width: masks for SWAR lane tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lanes {
    /// Fingerprint width `f` in bits (8, 12 or 16).
    bits: u32,
    /// `2^f - 1`: one lane's bits.
    lane_mask: u64,
    /// The low bit of every lane (`0x0001_0001_0001_0001` for `f = 16`).
    ones: u64,
    /// The low `f - 1` bits of every lane.
    low: u64,
    /// The high bit of every lane.
    high: u64,
    /// All `4f` bits of a bucket.
    bucket_mask: u64,
}

impl Lanes {
    /// Lanes of `bits` bits; `bits` must be one of 8, 12, 16 (checked by the
    /// caller, so an invalid width is a bug, not bad input).
    pub(crate) const fn new(bits: u32) -> Self {
        let lane_mask = (1u64 << bits) - 1;
        let mut ones = 0;
        let mut lane = 0;
        while lane < SLOTS {
            ones |= 1 << (lane * bits);
            lane += 1;
        }
        let high = ones << (bits - 1);
        let bucket_mask = if bits * SLOTS == 64 {
            u64::MAX
        } else {
            (1 << (bits * SLOTS)) - 1
        };
        Lanes {
            bits,
            lane_mask,
            ones,
            low: bucket_mask & !high,
            high,
            bucket_mask,
        }
    }

    /// Fingerprint width in bits.
    #[inline(always)]
    pub(crate) const fn bits(&self) -> u32 {
        self.bits
    }

    /// Largest fingerprint value, `2^f - 1`.
    #[inline(always)]
    pub(crate) const fn max_fingerprint(&self) -> u64 {
        self.lane_mask
    }

    /// Bits per bucket, `4f`.
    #[inline(always)]
    pub(crate) const fn bucket_bits(&self) -> u32 {
        self.bits * SLOTS
    }

    /// The high bit of each lane of `bucket` that is zero, and no other bit.
    ///
    /// Exact per lane (unlike the shorter `(x - ones) & !x & high` test, which
    /// can flag a lane above a zero lane through the borrow): adding `low` to
    /// a lane's low `f - 1` bits carries into its high bit unless they are all
    /// zero, and the sum never leaves the lane.
    #[inline(always)]
    pub(crate) const fn zero_lanes(&self, bucket: u64) -> u64 {
        !(((bucket & self.low) + self.low) | bucket) & self.high
    }

    /// The high bit of each lane of `bucket` equal to `fp`.
    #[inline(always)]
    pub(crate) const fn matching_lanes(&self, bucket: u64, fp: u64) -> u64 {
        self.zero_lanes(bucket ^ fp.wrapping_mul(self.ones))
    }

    /// The bit position where lane `lane` starts, `f · lane`.
    #[inline(always)]
    pub(crate) const fn lane_shift(&self, lane: u32) -> u32 {
        lane * self.bits
    }

    /// Where the lane starts whose high bit is the lowest set bit of `flags`
    /// (as returned by [`zero_lanes`](Self::zero_lanes)); `flags` is non-zero.
    /// A lane's high bit is `f - 1` above its start, so no division is needed.
    #[inline(always)]
    pub(crate) const fn first_shift(&self, flags: u64) -> u32 {
        flags.trailing_zeros() + 1 - self.bits
    }

    /// The fingerprint in the lane starting at bit `shift` of `bucket`.
    #[inline(always)]
    pub(crate) const fn get(&self, bucket: u64, shift: u32) -> u64 {
        (bucket >> shift) & self.lane_mask
    }

    /// `bucket` with the lane starting at bit `shift` replaced by `fp`.
    #[inline(always)]
    pub(crate) const fn set(&self, bucket: u64, shift: u32, fp: u64) -> u64 {
        (bucket & !(self.lane_mask << shift)) | (fp << shift)
    }

    /// Number of non-empty lanes of `bucket`.
    #[inline(always)]
    pub(crate) const fn occupied(&self, bucket: u64) -> u32 {
        SLOTS - self.zero_lanes(bucket).count_ones()
    }
}

/// Zero bytes after the table so the 8-byte load of the last bucket stays in
/// bounds (a bucket is at least 4 bytes, so 4 would do; 8 keeps it simple).
pub(crate) const READ_PAD: usize = 8;

/// The packed table of buckets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BucketTable {
    lanes: Lanes,
    num_buckets: u32,
    /// `8 · words_for(lanes, num_buckets)` table bytes, then `READ_PAD` zeros.
    bytes: Vec<u8>,
}

impl BucketTable {
    /// Number of `u64` words holding `num_buckets` buckets of `lanes` (a
    /// `u64`: on 32-bit targets it may not fit `usize`).
    pub(crate) fn words_for(lanes: Lanes, num_buckets: u32) -> u64 {
        let bits = num_buckets as u64 * lanes.bucket_bits() as u64;
        bits.div_ceil(64)
    }

    /// Table bytes for `num_buckets` buckets of `lanes`, padding included,
    /// or [`Error::TooLarge`] if they are not addressable.
    pub(crate) fn bytes_for(lanes: Lanes, num_buckets: u32) -> Result<usize, Error> {
        usize::try_from(Self::words_for(lanes, num_buckets))
            .ok()
            .and_then(|w| w.checked_mul(8))
            .and_then(|b| b.checked_add(READ_PAD))
            .ok_or(Error::TooLarge)
    }

    /// An empty table, or [`Error::TooLarge`] if it cannot be allocated.
    pub(crate) fn new(lanes: Lanes, num_buckets: u32) -> Result<Self, Error> {
        Ok(BucketTable {
            lanes,
            num_buckets,
            bytes: zeroed_vec(Self::bytes_for(lanes, num_buckets)?)?,
        })
    }

    /// A table over the serialized words (`words`: their little-endian
    /// bytes, which are the table's bytes). `Ok(None)` if their count is
    /// wrong or a bit after the last bucket is set.
    pub(crate) fn from_le_words(lanes: Lanes, num_buckets: u32, words: &[u8]) -> Result<Option<Self>, Error> {
        if words.len() as u64 != Self::words_for(lanes, num_buckets).saturating_mul(8) {
            return Ok(None);
        }
        let used = (num_buckets as u64 * lanes.bucket_bits() as u64) % 64;
        let last = words.len().checked_sub(8).map(|at| &words[at..]);
        let last = last.map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])));
        if used != 0 && last.is_some_and(|w| w >> used != 0) {
            return Ok(None);
        }
        let mut bytes = zeroed_vec(Self::bytes_for(lanes, num_buckets)?)?;
        bytes[..words.len()].copy_from_slice(words);
        Ok(Some(BucketTable {
            lanes,
            num_buckets,
            bytes,
        }))
    }

    #[inline(always)]
    pub(crate) fn lanes(&self) -> Lanes {
        self.lanes
    }

    #[inline(always)]
    pub(crate) fn num_buckets(&self) -> u32 {
        self.num_buckets
    }

    /// The table as little-endian `u64` words (the serialized payload).
    pub(crate) fn words(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        self.bytes[..self.bytes.len() - READ_PAD]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8")))
    }

    /// Bytes of table data (the padding excluded): the serialized payload.
    pub(crate) fn payload_bytes(&self) -> usize {
        self.bytes.len() - READ_PAD
    }

    /// Heap bytes held: the table and its [`READ_PAD`] bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
    }

    // The accessors below take the lanes as an argument rather than reading
    // `self.lanes`: the filter passes a compile-time constant per width, so
    // the bucket size and mask become immediates. Callers pass
    // `self.lanes()` or a constant equal to it.

    /// The byte where bucket `i` starts (`4f/8 · i`).
    #[inline(always)]
    fn offset(l: Lanes, i: u32) -> usize {
        i as usize * (l.bucket_bits() / 8) as usize
    }

    /// The 8 bytes at `offset` as a little-endian value. In bounds for every
    /// bucket's offset thanks to the padding.
    #[inline(always)]
    fn load8(&self, offset: usize) -> u64 {
        u64::from_le_bytes(self.bytes[offset..offset + 8].try_into().expect("8 bytes"))
    }

    /// Bucket `i`'s four lanes as one value.
    #[inline(always)]
    pub(crate) fn bucket(&self, l: Lanes, i: u32) -> u64 {
        debug_assert_eq!(l, self.lanes);
        self.load8(Self::offset(l, i)) & l.bucket_mask
    }

    /// Replaces bucket `i` with `value` (which has no bits above `4f`).
    #[inline(always)]
    pub(crate) fn set_bucket(&mut self, l: Lanes, i: u32, value: u64) {
        debug_assert_eq!(l, self.lanes);
        debug_assert_eq!(value & !l.bucket_mask, 0);
        let offset = Self::offset(l, i);
        let merged = (self.load8(offset) & !l.bucket_mask) | value;
        self.bytes[offset..offset + 8].copy_from_slice(&merged.to_le_bytes());
    }

    /// Starts loading the cache lines [`bucket`](Self::bucket) reads for
    /// bucket `i`: the line of its first byte and, for 12-bit lanes, the
    /// line of the last byte of its 8-byte load. A 6-byte bucket starts at
    /// an even offset, so its load crosses into the next line when it starts
    /// at byte 58, 60 or 62 of a line: 3 buckets in 32, so about one key in
    /// six would otherwise wait for a line it never prefetched. 8- and
    /// 16-bit buckets (4 and 8 bytes, aligned) never cross a line.
    #[inline(always)]
    pub(crate) fn prefetch_bucket(&self, l: Lanes, i: u32) {
        let offset = Self::offset(l, i);
        crate::prefetch::prefetch(&self.bytes[offset]);
        if l.bits() == 12 {
            // In bounds: the padding after the last bucket covers its load.
            crate::prefetch::prefetch(&self.bytes[offset + 7]);
        }
    }

    /// Number of occupied slots in the whole table.
    pub(crate) fn count_occupied(&self) -> u64 {
        (0..self.num_buckets)
            .map(|i| self.lanes.occupied(self.bucket(self.lanes, i)) as u64)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WIDTHS: [u32; 3] = [8, 12, 16];

    /// The naive oracle: lane-by-lane comparison.
    fn naive_matches(lanes: &Lanes, bucket: u64, fp: u64) -> u32 {
        (0..SLOTS)
            .filter(|&j| lanes.get(bucket, lanes.lane_shift(j)) == fp)
            .count() as u32
    }

    #[test]
    fn swar_lane_tests_match_the_naive_oracle() {
        for bits in WIDTHS {
            let l = Lanes::new(bits);
            let max = l.max_fingerprint();
            // Values chosen to hit the carry edge cases: 0, 1, top bit only,
            // all ones, and neighbours of each.
            let probes = [0, 1, 2, max >> 1, (max >> 1) + 1, max - 1, max];
            for &a in &probes {
                for &b in &probes {
                    for &c in &probes {
                        for &d in &probes {
                            let bucket = a | b << bits | c << (2 * bits) | d << (3 * bits);
                            for &fp in &probes {
                                let m = l.matching_lanes(bucket, fp);
                                assert_eq!(m.count_ones(), naive_matches(&l, bucket, fp));
                                assert_eq!(m & !l.high, 0);
                            }
                            assert_eq!(l.zero_lanes(bucket).count_ones(), naive_matches(&l, bucket, 0));
                            assert_eq!(l.occupied(bucket), SLOTS - naive_matches(&l, bucket, 0));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn first_free_lane_and_set_get() {
        for bits in WIDTHS {
            let l = Lanes::new(bits);
            let mut bucket = 0;
            for lane in 0..SLOTS {
                assert_eq!(l.first_shift(l.zero_lanes(bucket)), l.lane_shift(lane));
                bucket = l.set(bucket, l.lane_shift(lane), l.max_fingerprint() - lane as u64);
            }
            assert_eq!(l.zero_lanes(bucket), 0);
            assert_eq!(bucket & !l.bucket_mask, 0);
            for lane in 0..SLOTS {
                assert_eq!(
                    l.get(bucket, l.lane_shift(lane)),
                    l.max_fingerprint() - lane as u64
                );
            }
            bucket = l.set(bucket, l.lane_shift(2), 0);
            assert_eq!(l.first_shift(l.zero_lanes(bucket)), l.lane_shift(2));
        }
    }

    #[test]
    fn packing_is_dense_and_buckets_do_not_overlap() {
        assert_eq!(BucketTable::words_for(Lanes::new(8), 5), 3);
        assert_eq!(BucketTable::words_for(Lanes::new(12), 4), 3); // 192 bits, no padding
        assert_eq!(BucketTable::words_for(Lanes::new(12), 5), 4);
        assert_eq!(BucketTable::words_for(Lanes::new(16), 5), 5);
        for bits in WIDTHS {
            let l = Lanes::new(bits);
            for n in [1u32, 2, 3, 4, 5, 7, 9] {
                let mut t = BucketTable::new(l, n).unwrap();
                // Fill every bucket with a distinct all-lanes pattern, then
                // read everything back: a write that spilled into a neighbour
                // would show here.
                let pattern = |i: u32| {
                    (0..SLOTS).fold(0, |b, j| {
                        l.set(
                            b,
                            l.lane_shift(j),
                            (i as u64 * 7 + j as u64 * 3 + 1) & l.max_fingerprint(),
                        )
                    })
                };
                for i in 0..n {
                    t.set_bucket(l, i, pattern(i));
                }
                for i in 0..n {
                    assert_eq!(t.bucket(l, i), pattern(i), "bits {bits} n {n} bucket {i}");
                }
                let le: Vec<u8> = t.words().flat_map(u64::to_le_bytes).collect();
                let back = BucketTable::from_le_words(l, n, &le)
                    .unwrap()
                    .expect("valid words");
                assert_eq!(back, t, "bits {bits} n {n}: words round trip");
                // Clearing restores zero bytes, padding included: nothing
                // leaked past the end.
                for i in 0..n {
                    t.set_bucket(l, i, 0);
                }
                assert!(t.bytes.iter().all(|&b| b == 0));
                assert_eq!(t.bytes.len(), t.payload_bytes() + READ_PAD);
                assert_eq!(t.heap_bytes(), t.bytes.len());
            }
        }
    }

    #[test]
    fn from_words_rejects_stray_tail_bits_and_wrong_lengths() {
        let l = Lanes::new(12);
        let mut bytes = alloc::vec![0u8; BucketTable::words_for(l, 5) as usize * 8]; // 240 of 256 bits used
        assert!(BucketTable::from_le_words(l, 5, &bytes).unwrap().is_some());
        assert!(BucketTable::from_le_words(l, 5, &bytes[..24]).unwrap().is_none());
        bytes[30] = 1; // bit 48 of the last word
        assert!(BucketTable::from_le_words(l, 5, &bytes).unwrap().is_none());
    }
}
