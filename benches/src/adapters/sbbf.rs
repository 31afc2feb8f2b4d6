//! A safe owner for an `sbbf-rs` filter.
//!
//! `sbbf-rs` exposes only raw-pointer functions (Parquet's split-block Bloom
//! filter, with runtime-selected AVX2 / NEON code). This type owns a buffer
//! that meets their contract, so the rest of the crate stays safe.
#![allow(unsafe_code)]

use sbbf_rs::{FilterFn, ALIGNMENT, BUCKET_SIZE};

/// One 64-byte line: two 32-byte buckets, aligned as `sbbf-rs` requires.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; ALIGNMENT]);

const BUCKETS_PER_LINE: usize = ALIGNMENT / BUCKET_SIZE;

/// A split-block Bloom filter sized in bits per key.
pub struct SplitBlockBloom {
    lines: Vec<Line>,
    num_buckets: usize,
    imp: FilterFn,
}

impl SplitBlockBloom {
    /// Room for `keys` keys at `bits_per_key` bits each (at least one line).
    pub fn with_bits_per_key(keys: usize, bits_per_key: f64) -> Self {
        let bits = (keys as f64 * bits_per_key).ceil() as usize;
        let lines = bits.div_ceil(ALIGNMENT * 8).max(1);
        let num_buckets = lines * BUCKETS_PER_LINE;
        assert!(
            u32::try_from(num_buckets).is_ok(),
            "sbbf-rs indexes buckets with u32"
        );
        SplitBlockBloom {
            lines: vec![Line([0; ALIGNMENT]); lines],
            num_buckets,
            imp: FilterFn::new(),
        }
    }

    /// Adds a pre-hashed key.
    #[inline]
    pub fn insert(&mut self, hash: u64) {
        // SAFETY: `lines` is 64-byte aligned (`Line`'s repr), holds
        // `num_buckets * BUCKET_SIZE` bytes, and `num_buckets >= 2`.
        unsafe {
            self.imp
                .insert(self.lines.as_mut_ptr().cast::<u8>(), self.num_buckets, hash)
        };
    }

    /// Whether a pre-hashed key may be present.
    #[inline]
    pub fn contains(&self, hash: u64) -> bool {
        // SAFETY: as in `insert`; the buffer is only read.
        unsafe {
            self.imp
                .contains(self.lines.as_ptr().cast::<u8>(), self.num_buckets, hash)
        }
    }

    /// Bytes of filter data.
    pub fn size_in_bytes(&self) -> usize {
        self.lines.len() * ALIGNMENT
    }

    /// The bitset: the buckets in order, each eight little-endian `u32`s
    /// (Parquet's layout).
    pub fn bitset(&self) -> Vec<u8> {
        self.lines.iter().flat_map(|l| l.0).collect()
    }

    /// Which implementation `sbbf-rs` picked for this CPU (e.g. "avx2").
    pub fn implementation(&self) -> &'static str {
        self.imp.which()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeySet;

    #[test]
    fn no_false_negatives_and_about_ten_bits_per_key() {
        let keys = KeySet::new(10_000, 0);
        let mut f = SplitBlockBloom::with_bits_per_key(keys.present.len(), 10.0);
        for &k in &keys.present {
            f.insert(k);
        }
        assert!(keys.present.iter().all(|&k| f.contains(k)));
        let bpk = f.size_in_bytes() as f64 * 8.0 / 10_000.0;
        assert!((10.0..10.1).contains(&bpk), "{bpk}");
    }
}
