//! amq's cuckoo filter as a [`Deletable`] [`Subject`], one type per
//! fingerprint width, sized for the key count at its 95% design load.

use amq::{CuckooFilter, Filter, Insert, KeyHash, Remove};

use crate::{build_by_inserting, Deletable, Subject};

/// amq's [`CuckooFilter`] with `BITS`-bit fingerprints (8, 12 or 16).
pub struct AmqCuckoo<const BITS: u32>(CuckooFilter);

/// 8-bit fingerprints.
pub type AmqCuckoo8 = AmqCuckoo<8>;
/// 12-bit fingerprints.
pub type AmqCuckoo12 = AmqCuckoo<12>;
/// 16-bit fingerprints.
pub type AmqCuckoo16 = AmqCuckoo<16>;

impl<const BITS: u32> Subject for AmqCuckoo<BITS> {
    const NAME: &'static str = match BITS {
        8 => "amq-Cuckoo8",
        12 => "amq-Cuckoo12",
        16 => "amq-Cuckoo16",
        _ => "amq-Cuckoo",
    };
    const HAS_BATCH: bool = true;

    fn build(keys: &[u64]) -> Result<Self, String> {
        build_by_inserting(keys)
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains_hash(KeyHash::from_well_mixed(key))
    }

    #[inline]
    fn contains_many(&self, keys: &[u64], out: &mut [bool]) {
        Filter::contains_hashes(&self.0, crate::adapters::hashes(keys), out)
    }

    fn size_in_bytes(&self) -> usize {
        Filter::size_in_bytes(&self.0)
    }

    fn expected_fpr(&self) -> Option<f64> {
        Some(Filter::expected_fpr(&self.0))
    }
}

impl<const BITS: u32> Deletable for AmqCuckoo<BITS> {
    fn with_capacity(keys: usize) -> Result<Self, String> {
        CuckooFilter::with_fingerprint_bits(keys.max(1), BITS)
            .map(AmqCuckoo)
            .map_err(|e| format!("amq-Cuckoo{BITS}: {e:?}"))
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

    fn check<const BITS: u32>() {
        let keys = KeySet::new(20_000, 0);
        let mut f = AmqCuckoo::<BITS>::build(&keys.present).unwrap();
        assert!(keys.present.iter().all(|&k| f.contains(k)));
        let bpk = f.size_in_bytes() as f64 * 8.0 / 20_000.0;
        assert!((bpk - BITS as f64 / 0.95).abs() < 0.1, "{bpk}");
        assert!(f.remove(keys.present[0]));
        assert!(f.insert(keys.present[0]));
    }

    #[test]
    fn builds_at_design_load_without_false_negatives() {
        check::<8>();
        check::<12>();
        check::<16>();
        assert_eq!(AmqCuckoo12::NAME, "amq-Cuckoo12");
    }
}
