//! [`PreparedHash`]: one key hash, prepared once and probed against many
//! filters of any kinds.
//!
//! An LSM read hashes the key once and probes the filter of every table
//! whose key range holds it: tens or hundreds of filters per lookup. Sharing
//! the hash saves the hashing; for a blocked Bloom filter the hash also
//! fixes the key's whole in-block probe mask, whatever the filter's size, so
//! sharing the *prepared* hash saves the probe computation too and leaves
//! each further filter one block load and a compare. Other kinds answer from
//! the plain hash.

use crate::bloom::blocked::WORDS;
use crate::bloom::{BlockedBlocks, BlockedProbe};
use crate::ribbon::{LocatedRow, Window};
use crate::Ribbon;
use crate::{AnyFilter, Filter};

/// A key hash with what probing a filter needs from it, prepared on first
/// use and kept for the next filter.
///
/// An LSM read probes the filter of every table whose key range holds the
/// key with one hash. For a blocked Bloom filter that hash also fixes the
/// key's whole in-block probe mask, whatever the filter's size, so the mask
/// is built once ([`BlockedProbe`](crate::BlockedProbe)) and each further
/// filter costs one block load and a compare. Other kinds answer from the
/// plain hash.
///
/// ```
/// use amq::{AnyFilter, BlockedBloom, Filter, PreparedHash};
/// let tables: Vec<AnyFilter> = (0..4)
///     .map(|t| {
///         let mut f = BlockedBloom::with_fpr(1_000 * (t + 1), 0.01).unwrap();
///         f.insert(format!("key-{t}").as_bytes());
///         AnyFilter::BlockedBloom(f)
///     })
///     .collect();
/// let mut key = PreparedHash::new(amq::hash_key(b"key-2"));
/// // The mask is built at the first blocked filter and reused by the others.
/// let maybe: Vec<bool> = tables.iter().map(|f| f.contains_prepared(&mut key)).collect();
/// assert!(maybe[2]);
/// for f in &tables {
///     assert_eq!(f.contains_prepared(&mut key), f.contains_hash(key.hash()));
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreparedHash {
    hash: u64,
    /// The blocked Bloom probe for the probe count last asked for (a count
    /// of 0, which no filter has, until then).
    blocked: BlockedProbe,
}

impl PreparedHash {
    /// `hash` (a [`hash_key`](crate::hash_key) value), nothing prepared yet.
    #[inline]
    pub fn new(hash: u64) -> PreparedHash {
        PreparedHash {
            hash,
            blocked: BlockedProbe::new(hash, 0),
        }
    }

    /// The key hash.
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
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
    /// use amq::{BlockedBloom, PreparedHash};
    /// let f = BlockedBloom::with_fpr(1_000, 0.01).unwrap();
    /// let mut key = PreparedHash::new(amq::hash_key(b"k"));
    /// assert!(key.prepared_blocked().is_none());
    /// f.blocks().contains_prepared(&mut key);
    /// assert_eq!(key.prepared_blocked().unwrap().num_probes(), f.num_probes());
    /// ```
    #[inline(always)]
    pub fn prepared_blocked(&self) -> Option<&BlockedProbe> {
        (self.blocked.num_probes() != 0).then_some(&self.blocked)
    }

    /// The blocked Bloom probe for `num_probes`, prepared now unless it was
    /// already.
    #[inline(always)]
    pub(crate) fn blocked(&mut self, num_probes: u32) -> &BlockedProbe {
        if self.blocked.num_probes() != num_probes {
            self.blocked = BlockedProbe::new(self.hash, num_probes);
        }
        &self.blocked
    }
}

impl BlockedBlocks<'_> {
    /// Whether the filter these blocks belong to may hold `key`'s key: the
    /// answer of [`BlockedBloom::contains_hash`](crate::BlockedBloom::contains_hash),
    /// from the mask `key` has prepared (preparing it for this probe count
    /// unless it was already).
    #[inline(always)]
    pub fn contains_prepared(&self, key: &mut PreparedHash) -> bool {
        self.matches(key.blocked(self.num_probes()))
    }
}

impl AnyFilter {
    /// `self.contains_hash(key.hash())`, from what `key` has prepared (and
    /// preparing what this filter needs, for the next one).
    ///
    /// ```
    /// use amq::{AnyFilter, BlockedBloom, PreparedHash};
    /// let mut f = BlockedBloom::with_fpr(100, 0.01).unwrap();
    /// f.insert(b"k");
    /// let f = AnyFilter::BlockedBloom(f);
    /// assert!(f.contains_prepared(&mut PreparedHash::new(amq::hash_key(b"k"))));
    /// ```
    #[inline(always)]
    pub fn contains_prepared(&self, key: &mut PreparedHash) -> bool {
        match self {
            AnyFilter::BlockedBloom(f) => f.blocks().contains_prepared(key),
            // A two-line filter's row, located and read in place (the
            // other layouts answer through their query): 13.6-14.4 against
            // 15.8-17.0 ns per table through `contains_hash` in `amq-lsm`'s
            // walk at 256 tables (`KIND=Ribbon FPR=0.0078125
            // lsm_profile_miss 256`).
            AnyFilter::Ribbon(f) => match f.locate_row(key.hash) {
                Some(row) => row.is_some_and(|row| f.row_matches(&row)),
                None => f.contains_hash(key.hash),
            },
            other => other.contains_hash(key.hash),
        }
    }
}

/// Where one filter's answer for a prepared key lives, found and its line
/// prefetched by [`AnyFilter::probe_site`]; [`matches`](Self::matches)
/// answers from it.
///
/// The two halves of [`AnyFilter::contains_prepared`], apart, so that a
/// caller probing one key against many filters (an LSM read against every
/// table whose range holds the key) can locate a whole batch of filters'
/// lines before reading any: their cache misses overlap, as the lines of
/// many keys overlap in [`Filter::contains_many`]. For a blocked Bloom
/// filter the site is the key's block and the answer one compare with the
/// prepared mask; for a Ribbon filter, the key's window (or, in the
/// two-line layout, its row), so the answer reads its lines without
/// locating them again; other kinds prefetch in the first half and run
/// their query in the second.
///
/// Whether the batch pays depends on the core. An out-of-order core
/// already overlaps the misses of a plain loop of
/// [`contains_prepared`](AnyFilter::contains_prepared) calls when nothing
/// in the loop depends on an earlier answer, and the batch's array of
/// sites costs instructions: on the AMD EPYC host `amq-lsm` is measured on,
/// 256 blocked Bloom filters took 3.9 ns each in batches of sixteen sites
/// against 2.9 in the plain loop, and 256 Ribbon filters at 1% 15.9–16.6
/// against 14.6–16.0 (a ring of sites, each answered 2 to 16 tables after
/// it was located: 5.6 and 20.8–21.5), so `amq-lsm`'s read walks its tables with
/// `contains_prepared` (`lsm_profile_miss` in `amq-bench` measures all
/// three).
///
/// ```
/// use amq::{AnyFilter, FilterKind, FilterSizing, PreparedHash};
/// let hashes: Vec<u64> = (0..1_000u64).map(|i| amq::hash_key(&i.to_le_bytes())).collect();
/// let filters: Vec<AnyFilter> = [FilterKind::BlockedBloom, FilterKind::Ribbon, FilterKind::BlockedBloom]
///     .iter()
///     .map(|&kind| AnyFilter::build(kind, FilterSizing::Fpr(0.01), &hashes).unwrap())
///     .collect();
/// let mut key = PreparedHash::new(hashes[7]);
/// // Locate (and prefetch) every filter's line first, then answer.
/// let sites: Vec<_> = filters.iter().map(|f| f.probe_site(&mut key)).collect();
/// assert!(sites.iter().all(|s| s.matches(&key)));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ProbeSite<'f> {
    site: Site<'f>,
}

#[derive(Debug, Clone, Copy)]
enum Site<'f> {
    /// A blocked Bloom filter's block for the key, and the filter's probe
    /// count (the prepared mask answers only for that count).
    Blocked(&'f [u64; WORDS], u32),
    /// A two-line Ribbon filter and the key's row in it (`None`: its
    /// shard holds no keys), the row's lines prefetched.
    RibbonRow(&'f Ribbon, Option<LocatedRow>),
    /// A Ribbon filter of a blocked layout, the key's window in it and its
    /// result bits (`None`: its shard holds no keys), the window's lines
    /// prefetched.
    RibbonWindow(&'f Ribbon, Option<(Window, u32)>),
    /// Any other filter, its line prefetched.
    Other(&'f AnyFilter),
}

impl AnyFilter {
    /// Locates the line `key`'s answer lives in and starts loading it: the
    /// first half of [`contains_prepared`](Self::contains_prepared), whose
    /// second half is [`ProbeSite::matches`].
    #[inline(always)]
    pub fn probe_site(&self, key: &mut PreparedHash) -> ProbeSite<'_> {
        let site = match self {
            AnyFilter::BlockedBloom(f) => {
                let probes = f.num_probes();
                key.blocked(probes);
                Site::Blocked(f.locate_block(key.hash), probes)
            }
            AnyFilter::Ribbon(f) => match f.locate_row(key.hash) {
                Some(row) => Site::RibbonRow(f, row),
                None => Site::RibbonWindow(f, f.locate_window(key.hash).flatten()),
            },
            other => {
                other.prefetch_hash(key.hash);
                Site::Other(other)
            }
        };
        ProbeSite { site }
    }
}

impl ProbeSite<'_> {
    /// `contains_prepared` of the filter this site is of: whether the key
    /// may be in it. `key` must be the key the site was located for.
    #[inline(always)]
    pub fn matches(&self, key: &PreparedHash) -> bool {
        match self.site {
            // The mask was prepared at `probe_site`, but a later blocked
            // filter with another probe count may have replaced it since.
            Site::Blocked(block, probes) if key.blocked.num_probes() == probes => key.blocked.matches(block),
            Site::Blocked(block, probes) => BlockedProbe::new(key.hash, probes).matches(block),
            Site::RibbonRow(f, row) => row.is_some_and(|row| f.row_matches(&row)),
            Site::RibbonWindow(f, window) => window.is_some_and(|(w, result)| f.window_matches(&w, result)),
            Site::Other(f) => f.contains_hash(key.hash),
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::PreparedHash;
    use crate::{AnyFilter, BlockedBloom, Filter, FilterKind, FilterSizing, HashScheme, ParquetBloom};

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 64,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_0001),
            ..ProptestConfig::default()
        })]

        /// One prepared hash walks filters of every kind, sizes and probe
        /// counts (so its blocked mask is rebuilt and reused in turn) and
        /// answers exactly as `contains_hash` does: no false negative, and
        /// no answer of its own.
        #[test]
        fn prepared_answers_as_contains_hash(
            keys in proptest::collection::hash_set(any::<u64>(), 1..300),
            probes in proptest::collection::vec(any::<u64>(), 1..200),
            fprs in proptest::collection::vec(prop::sample::select(vec![0.2, 0.05, 0.01, 1.0 / 128.0, 0.001]), 1..6),
        ) {
            let hashes: Vec<u64> = keys.into_iter().collect();
            let mut filters = Vec::new();
            for (i, &fpr) in fprs.iter().enumerate() {
                // A prefix of the keys per filter: filters of different sizes.
                let part = &hashes[..(hashes.len() * (i + 1) / fprs.len()).max(1)];
                for &kind in FilterKind::ALL {
                    let f = match kind.hash_scheme() {
                        HashScheme::Xxh3Seeded => AnyFilter::build(kind, FilterSizing::Fpr(fpr), part).unwrap(),
                        // Built from value hashes, which these numbers stand for as well.
                        HashScheme::ParquetXxh64 => {
                            let mut p = ParquetBloom::with_fpr(part.len(), fpr).unwrap();
                            p.insert_hashes(part);
                            AnyFilter::ParquetBloom(p)
                        }
                    };
                    filters.push((f, part));
                }
            }
            for &h in probes.iter().chain(&hashes) {
                let mut key = PreparedHash::new(h);
                for (f, part) in &filters {
                    f.prefetch_hash(h); // a hint: never panics, changes nothing
                    let answer = f.contains_prepared(&mut key);
                    prop_assert_eq!(answer, f.contains_hash(h));
                    prop_assert_eq!(f.probe_site(&mut key).matches(&key), answer);
                    if let AnyFilter::BlockedBloom(b) = f {
                        // The borrowed blocks, as a caller keeps them.
                        prop_assert_eq!(b.blocks().contains_prepared(&mut key), answer);
                    }
                    if part.contains(&h) {
                        prop_assert!(answer, "false negative through a prepared hash");
                    }
                }
                // Every site located before any is answered, as an LSM read
                // does: blocked filters of other probe counts in between
                // replace the prepared mask, and each site still answers
                // for its own filter.
                let sites: Vec<_> = filters.iter().map(|(f, _)| f.probe_site(&mut key)).collect();
                for ((f, _), site) in filters.iter().zip(&sites) {
                    prop_assert_eq!(site.matches(&key), f.contains_hash(h));
                }
            }
        }
    }

    /// Prefetching and prepared probes on filters built from no keys (the
    /// empty table slices every kind guards) neither panic nor find keys.
    #[test]
    fn empty_filters_prefetch_and_answer_absent() {
        let mut built = 0;
        for &kind in FilterKind::ALL {
            let Ok(f) = AnyFilter::build(kind, FilterSizing::Fpr(0.01), &[]) else {
                continue;
            };
            built += 1;
            for i in 0..1_000u64 {
                let h = crate::hash::remix(i, 9);
                f.prefetch_hash(h);
                assert_eq!(
                    f.contains_prepared(&mut PreparedHash::new(h)),
                    f.contains_hash(h),
                    "{kind:?}"
                );
            }
        }
        assert!(
            built >= FilterKind::ALL.len() / 2,
            "only {built} kinds build from no keys"
        );
    }

    /// A blocked probe prepared for another probe count still answers (by
    /// falling back to the plain query), instead of testing the wrong bits.
    #[test]
    fn a_probe_for_another_probe_count_falls_back() {
        let keys: Vec<u64> = (0..2_000u64).map(|i| crate::hash::remix(i, 7)).collect();
        let mut few = BlockedBloom::with_bits_per_key(keys.len(), 4.0).unwrap();
        let mut many = BlockedBloom::with_bits_per_key(keys.len(), 20.0).unwrap();
        for &k in &keys {
            few.insert_hash(k);
            many.insert_hash(k);
        }
        assert_ne!(few.num_probes(), many.num_probes());
        for &k in &keys {
            let p = few.prepare(k);
            assert!(many.contains_prepared(&p) && few.contains_prepared(&p));
        }
        for i in 0..20_000u64 {
            let h = crate::hash::remix(i, 8);
            let p = few.prepare(h);
            assert_eq!(many.contains_prepared(&p), many.contains_hash(h));
        }
    }
}
