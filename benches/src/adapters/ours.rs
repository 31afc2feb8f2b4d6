//! amq's Bloom filters as [`Subject`](crate::Subject)s: the standard,
//! blocked and split-block filters at the Bloom comparison's 10 bits/key, and the counting
//! filter (a [`Deletable`]) sized for 1% in the deletable
//! comparison.

use amq::{
    BlockedBloom, CountingBloom, FilterSizing, Insert, KeyHash, Remove, SplitBlockBloom, StandardBloom,
};

use crate::Deletable;

/// Bits per key of the Bloom comparison.
pub const BLOOM_BITS_PER_KEY: f64 = 10.0;

amq_subject!(StandardBloom, "amq-StandardBloom", |keys| {
    StandardBloom::new(keys.len(), FilterSizing::BitsPerKey(BLOOM_BITS_PER_KEY)).and_then(|mut f| {
        keys.iter().try_for_each(|&k| f.insert_hash(k))?;
        Ok(f)
    })
});

// Built with the batched `insert_hashes`, the way to build from a batch of
// hashes (`AnyFilter::build` uses it too); `examples/blocked_insert.rs` times
// it against the one-at-a-time `insert_hash` and `sbbf-rs`.
amq_subject!(BlockedBloom, "amq-BlockedBloom", |keys| {
    BlockedBloom::new(keys.len(), FilterSizing::BitsPerKey(BLOOM_BITS_PER_KEY)).and_then(|mut f| {
        f.insert_hashes(keys)?;
        Ok(f)
    })
});

amq_subject!(SplitBlockBloom, "amq-SplitBlockBloom", |keys| {
    SplitBlockBloom::new(keys.len(), FilterSizing::BitsPerKey(BLOOM_BITS_PER_KEY)).and_then(|mut f| {
        f.insert_hashes(keys)?;
        Ok(f)
    })
});

/// FPR the counting Bloom filter of the deletable comparison is sized for.
pub const COUNTING_FPR: f64 = 0.01;

/// amq's [`CountingBloom`] sized for [`COUNTING_FPR`] at the key count.
pub struct CountingBloomOnePercent(CountingBloom);

amq_subject!(newtype CountingBloomOnePercent, "amq-CountingBloom", |keys| {
    CountingBloom::new(keys.len().max(1), FilterSizing::Fpr(COUNTING_FPR)).and_then(|mut f| {
        f.insert_hashes(keys)?;
        Ok(CountingBloomOnePercent(f))
    })
});

impl Deletable for CountingBloomOnePercent {
    fn with_capacity(keys: usize) -> Result<Self, String> {
        CountingBloom::new(keys.max(1), FilterSizing::Fpr(COUNTING_FPR))
            .map(CountingBloomOnePercent)
            .map_err(|e| format!("amq-CountingBloom: {e:?}"))
    }

    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.0.insert_hash(KeyHash::from_well_mixed(key)).is_ok()
    }

    #[inline]
    fn remove(&mut self, key: u64) -> bool {
        self.0.remove_hash(KeyHash::from_well_mixed(key)).is_ok()
    }
}

/// amq's [`QuotientFilter`](amq::quotient::QuotientFilter) with the
/// parameters `qfilter` takes for a 1% target: the slots
/// `QuotientFilter::new` takes for the key count, and 7-bit remainders, so
/// both hold the same entries in the same number of slots.
pub struct QuotientSameAsQfilter(amq::quotient::QuotientFilter);

/// Remainder bits `qfilter` 0.3 uses for a 1% target.
pub const QFILTER_REMAINDER_BITS: u32 = 7;

fn quotient_like_qfilter(keys: usize) -> Result<amq::quotient::QuotientFilter, amq::Error> {
    let q = amq::quotient::QuotientFilter::new(keys.max(1), FilterSizing::Fpr(COUNTING_FPR))?.quotient_bits();
    amq::quotient::QuotientFilter::with_bits(q, QFILTER_REMAINDER_BITS)
}

amq_subject!(newtype QuotientSameAsQfilter, "amq-Quotient", |keys| {
    quotient_like_qfilter(keys.len()).and_then(|mut f| {
        f.insert_hashes(keys)?;
        Ok(QuotientSameAsQfilter(f))
    })
});

impl Deletable for QuotientSameAsQfilter {
    fn with_capacity(keys: usize) -> Result<Self, String> {
        quotient_like_qfilter(keys)
            .map(QuotientSameAsQfilter)
            .map_err(|e| format!("amq-Quotient: {e:?}"))
    }

    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.0.insert_hash(KeyHash::from_well_mixed(key)).is_ok()
    }

    #[inline]
    fn remove(&mut self, key: u64) -> bool {
        self.0.remove_hash(KeyHash::from_well_mixed(key)).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeySet;
    use crate::Subject;

    #[test]
    fn the_counting_filter_is_sized_for_one_percent_and_removes() {
        let keys = KeySet::new(20_000, 0);
        let mut f = CountingBloomOnePercent::build(&keys.present).unwrap();
        assert!(keys.present.iter().all(|&k| f.contains(k)));
        assert!((f.expected_fpr().unwrap() - COUNTING_FPR).abs() < 1e-3);
        assert!(f.remove(keys.present[0]));
        assert!(f.insert(keys.present[0]));
        assert!(f.contains(keys.present[0]));
    }
}
