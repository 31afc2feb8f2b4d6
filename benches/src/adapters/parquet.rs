//! The Parquet comparison: three split-block Bloom filters with the same
//! layout and hash, fed the same values.
//!
//! Keys are the values of an `INT64` column, so every operation hashes its
//! value as Parquet does (XXH64, seed 0, of the 8 little-endian bytes)
//! before touching the filter: `parquet`'s `Sbbf` has no pre-hashed API, so
//! this is the only like-for-like comparison with it. Ours and the
//! `sbbf-rs` adapter hash with `xxhash-rust` (the same function), `parquet`
//! with `twox-hash`.
//!
//! Sizing: ours by [`amq::ParquetBloom::new`] for 1% (the
//! specification's curve, any block count); `sbbf-rs` at the same bits per
//! value (rounded up to its 64-byte lines); `parquet` by its own
//! `Sbbf::new_with_ndv_fpp(n, 0.01)`, which rounds up to a power of two.

use amq::parquet::ParquetValue;
use amq::{FilterSizing, ParquetBloom};

use crate::adapters::sbbf::SplitBlockBloom;
use crate::Subject;

/// The target FPR of the comparison.
pub const PARQUET_FPR: f64 = 0.01;

/// Ours: sized for 1%, built with the batched insert, queried value by value
/// and in batches ([`ParquetBloom::contains_values`]).
pub struct AmqParquet(pub ParquetBloom);

impl Subject for AmqParquet {
    const NAME: &'static str = "amq-ParquetBloom";
    const HAS_BATCH: bool = true;

    fn build(keys: &[u64]) -> Result<Self, String> {
        let mut f = ParquetBloom::new(keys.len().max(1), FilterSizing::Fpr(PARQUET_FPR))
            .map_err(|e| format!("{e:?}"))?;
        f.insert_values(keys).map_err(|e| format!("{e:?}"))?;
        Ok(AmqParquet(f))
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }

    #[inline]
    fn contains_many(&self, keys: &[u64], out: &mut [bool]) {
        self.0.contains_values(keys, out);
    }

    fn size_in_bytes(&self) -> usize {
        self.0.size_in_bytes()
    }

    fn expected_fpr(&self) -> Option<f64> {
        Some(self.0.expected_fpr())
    }
}

/// `sbbf-rs` 0.2 fed values: the adapter hashes each with XXH64 (the
/// `xxhash-rust` function amq uses) and hands the hash to `sbbf-rs`, at the
/// bits per value amq chose for 1%.
pub struct SbbfRsValues(pub SplitBlockBloom);

impl Subject for SbbfRsValues {
    const NAME: &'static str = "sbbf-rs-xxh64";
    const NOTE: &'static str = "hash by xxhash-rust in the adapter; same bits/value as ours";

    fn build(keys: &[u64]) -> Result<Self, String> {
        let n = keys.len().max(1);
        let bits_per_value = ParquetBloom::new(n, FilterSizing::Fpr(PARQUET_FPR))
            .map_err(|e| format!("{e:?}"))?
            .num_bytes() as f64
            * 8.0
            / n as f64;
        let mut f = SplitBlockBloom::with_bits_per_key(n, bits_per_value);
        for k in keys {
            f.insert(k.parquet_hash().get());
        }
        Ok(SbbfRsValues(f))
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(key.parquet_hash().get())
    }

    fn size_in_bytes(&self) -> usize {
        self.0.size_in_bytes()
    }
}

/// `parquet` 60's `Sbbf` (arrow-rs), sized by its own rule for 1% and fed
/// values through `insert` / `check` (it hashes with `twox-hash`).
pub struct ParquetSbbf(pub parquet::bloom_filter::Sbbf);

impl Subject for ParquetSbbf {
    const NAME: &'static str = "parquet-Sbbf";
    const NOTE: &'static str = "sized by its power-of-two rule; hash by twox-hash";

    fn build(keys: &[u64]) -> Result<Self, String> {
        let mut f = parquet::bloom_filter::Sbbf::new_with_ndv_fpp(keys.len() as u64, PARQUET_FPR)
            .map_err(|e| e.to_string())?;
        for k in keys {
            f.insert(k);
        }
        Ok(ParquetSbbf(f))
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.check(&key)
    }

    fn size_in_bytes(&self) -> usize {
        self.0.num_blocks() * 32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeySet;

    /// The three hold the same values the same way: where ours and `sbbf-rs`
    /// have the same size their bits are identical, and every value is found
    /// by each.
    #[test]
    fn the_three_agree() {
        let keys = KeySet::new(20_000, 0);
        let ours = AmqParquet::build(&keys.present).unwrap();
        let rs = SbbfRsValues::build(&keys.present).unwrap();
        let pq = ParquetSbbf::build(&keys.present).unwrap();
        for &k in &keys.present {
            assert!(ours.contains(k) && rs.contains(k) && pq.contains(k));
        }
        let mut same = ParquetBloom::with_num_bytes(rs.size_in_bytes()).unwrap();
        same.insert_values(&keys.present).unwrap();
        assert_eq!(same.parquet_bitset(), rs.0.bitset());
        assert!(ours.0.bits_per_key() <= 10.6);
        assert!(pq.size_in_bytes() >= ours.size_in_bytes());
    }
}
