//! [`PreparedHash`]: one key hash, prepared once and probed against many
//! filters.
//!
//! An LSM read hashes the key once and probes the filter of every table
//! whose key range holds it: tens or hundreds of filters per lookup. Sharing
//! the hash saves the hashing; for a blocked Bloom filter the hash also
//! fixes the key's whole in-block probe mask, whatever the filter's size, so
//! sharing the *prepared* hash saves the probe computation too and leaves
//! each further filter one block load and a compare. The blocked Bloom
//! filter is the one kind with a preparation, so the type lives with it;
//! every other kind answers a prepared hash from the plain hash.

use super::probe::BlockedProbe;
use super::BlockedBlocks;
use crate::KeyHash;

/// A key hash with what probing a filter needs from it, prepared on first
/// use and kept for the next filter.
///
/// For a blocked Bloom filter the hash fixes the key's whole in-block probe
/// mask, whatever the filter's size, so the mask is built once
/// ([`BlockedProbe`]) and each further filter of the same probe count costs
/// one block load and a compare. Every `contains_prepared` in the crate
/// (on [`BlockedBloom`](crate::BlockedBloom),
/// [`AnyFilter`](crate::AnyFilter), [`FilterView`](crate::FilterView))
/// takes it, and answers exactly as `contains_hash(key.hash())`.
///
/// ```
/// use amq::{AnyFilter, BlockedBloom, Filter, FilterSizing, Insert, PreparedHash};
/// let mut tables = Vec::new();
/// for t in 0..4usize {
///     let mut f = BlockedBloom::new(1_000 * (t + 1), FilterSizing::Fpr(0.01))?;
///     f.insert(format!("key-{t}").as_bytes())?;
///     tables.push(AnyFilter::from(f));
/// }
/// let mut key = PreparedHash::new(amq::hash_key(b"key-2"));
/// // The mask is built at the first blocked filter and reused by the others.
/// let maybe: Vec<bool> = tables.iter().map(|f| f.contains_prepared(&mut key)).collect();
/// assert!(maybe[2]);
/// for f in &tables {
///     assert_eq!(f.contains_prepared(&mut key), f.contains_hash(key.hash()));
/// }
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreparedHash {
    /// The blocked Bloom probe for the probe count last asked for (a count
    /// of 0, which no filter has, until then); it holds the hash too.
    blocked: BlockedProbe,
}

impl PreparedHash {
    /// `hash`, nothing prepared yet.
    ///
    /// ```
    /// let h = amq::hash_key(b"k");
    /// assert_eq!(amq::PreparedHash::new(h).hash(), h);
    /// ```
    #[inline]
    pub fn new(hash: KeyHash) -> PreparedHash {
        PreparedHash {
            blocked: BlockedProbe {
                hash: hash.get(),
                num_probes: 0,
                mask: [0; super::WORDS],
            },
        }
    }

    /// The key hash.
    #[inline(always)]
    pub fn hash(&self) -> KeyHash {
        KeyHash::from_well_mixed(self.blocked.hash)
    }

    /// The blocked Bloom probe prepared last (for the probe count of the
    /// last blocked Bloom filter asked), if one was.
    ///
    /// A caller walking many blocked filters of one probe count can hold
    /// it by shared reference in a loop of its own and ask each filter's
    /// [`BlockedBlocks::contains_probe`], so that nothing in that loop can
    /// change it.
    ///
    /// ```
    /// use amq::{BlockedBloom, FilterSizing, PreparedHash};
    /// let f = BlockedBloom::new(1_000, FilterSizing::Fpr(0.01))?;
    /// let mut key = PreparedHash::new(amq::hash_key(b"k"));
    /// assert!(key.prepared_blocked().is_none());
    /// f.contains_prepared(&mut key);
    /// assert_eq!(key.prepared_blocked().unwrap().num_probes(), f.num_probes());
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline(always)]
    pub fn prepared_blocked(&self) -> Option<&BlockedProbe> {
        (self.blocked.num_probes != 0).then_some(&self.blocked)
    }

    /// The blocked Bloom probe for `num_probes`, prepared now unless it was
    /// already.
    #[inline(always)]
    pub(crate) fn blocked(&mut self, num_probes: u32) -> &BlockedProbe {
        if self.blocked.num_probes != num_probes {
            self.blocked = BlockedProbe::of(self.blocked.hash, num_probes);
        }
        &self.blocked
    }
}

impl BlockedBlocks<'_> {
    /// Whether the filter these blocks belong to may hold `key`'s key: the
    /// answer of `contains_hash`, from the mask `key` has prepared
    /// (preparing it for this probe count unless it was already).
    ///
    /// ```
    /// use amq::{BlockedBloom, FilterSizing, Insert, PreparedHash};
    /// let mut f = BlockedBloom::new(100, FilterSizing::Fpr(0.01))?;
    /// f.insert(b"k")?;
    /// assert!(f.blocks().contains_prepared(&mut PreparedHash::new(amq::hash_key(b"k"))));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[inline(always)]
    pub fn contains_prepared(&self, key: &mut PreparedHash) -> bool {
        self.matches(key.blocked(self.num_probes))
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::*;
    use crate::hash::remix;
    use crate::{BlockedBloom, Filter, FilterSizing, Insert};

    fn h(i: u64, seed: u64) -> KeyHash {
        KeyHash::from_well_mixed(remix(i, seed))
    }

    /// One prepared hash walks filters of other probe counts in turn (its
    /// mask rebuilt and reused), and answers as `contains_hash` for present
    /// and absent keys alike: absent keys must come out `false` where the
    /// query says so, or the mask tests the wrong bits.
    #[test]
    fn a_prepared_hash_answers_as_the_query_across_probe_counts() {
        let keys: Vec<KeyHash> = (0..2_000u64).map(|i| h(i, 7)).collect();
        let mut filters = Vec::new();
        for bits in [4.0, 10.0, 20.0] {
            let mut f = BlockedBloom::new(keys.len(), FilterSizing::BitsPerKey(bits)).unwrap();
            f.insert_hashes(&keys).unwrap();
            filters.push(f);
        }
        assert_ne!(filters[0].num_probes(), filters[2].num_probes());
        let mut negatives = 0;
        for i in 0..20_000u64 {
            let q = if i < 2_000 { keys[i as usize] } else { h(i, 8) };
            let mut key = PreparedHash::new(q);
            for f in &filters {
                let answer = f.contains_prepared(&mut key);
                assert_eq!(answer, f.contains_hash(q));
                assert_eq!(f.contains_probe(&f.prepare(q)), answer);
                negatives += usize::from(!answer);
            }
        }
        // The absent keys are mostly answered `false` (else the test would
        // not tell a mask that matches everything from a right one).
        assert!(negatives > 40_000, "{negatives}");
    }
}
