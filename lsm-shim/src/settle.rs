//! [`FilterSettles`]: what the read path's inner loop reads per run to
//! settle a miss by the run's filter alone.
//!
//! A miss against N overlapping runs spends nearly all its time in the
//! inner loop (`settle_by_filters` in the point-read module): per run, a
//! range test and a filter probe. Each entry here is that run's range test
//! (two words) and its filter, which the entry owns through an `Arc`. For a
//! [`BlockedBloom`](amq::BlockedBloom) filter the entry also keeps the
//! filter's probe count, so the loop over runs of blocked filters
//! ([`settle_blocked`]) tells whether the key's prepared mask fits a filter
//! without reading the filter; the filter's blocks are borrowed from it at
//! probe time ([`amq::BlockedBloom::blocks`]), for no longer than the probe.

use std::sync::Arc;

use amq::{AnyFilter, BlockedBlocks, BlockedProbe};

/// The part of a run's `RunProbe` that settles most lookups against it,
/// apart so that the read path's hot loop reads one small entry per run
/// (`Version::filter_settles`).
///
/// A run of one table with a trusted filter, whose range holds a key
/// strictly inside on the first eight bytes past the common prefix, is
/// settled by its filter alone when the filter says no. The range test is
/// one subtract and one unsigned compare: `lo < k < hi` on those eight
/// bytes is `k - (lo + 1) < hi - (lo + 1)` with wrapping arithmetic, the
/// span zero (the test never passes) for every other run.
#[derive(Debug, Clone)]
pub(crate) struct FilterSettles {
    /// `lo + 1`, `lo` the top eight bytes of the run's smallest key's
    /// `key_prefix`.
    from: u64,
    /// `hi - (lo + 1)`, or 0 where the test must never pass: runs of several
    /// tables, tables without a trusted filter, ranges with nothing strictly
    /// inside on eight bytes.
    span: u64,
    /// For a blocked Bloom `filter`, its probe count; 0 for any other kind
    /// (a blocked Bloom filter has at least one probe).
    blocked_probes: u32,
    filter: Option<Arc<AnyFilter>>,
}

/// A filter as the inner loop asks it: a blocked Bloom filter through its
/// blocks, or any kind through the filter itself. Both forms give the
/// filter's own answer.
#[derive(Clone, Copy)]
pub(crate) enum SettleFilter<'a> {
    /// A blocked Bloom filter: its blocks, and the filter they belong to.
    Blocked(BlockedBlocks<'a>, &'a AnyFilter),
    /// Any other kind.
    Any(&'a AnyFilter),
}

impl<'a> SettleFilter<'a> {
    /// The filter, whatever its form.
    #[inline(always)]
    pub(crate) fn filter(self) -> &'a AnyFilter {
        match self {
            SettleFilter::Blocked(_, f) | SettleFilter::Any(f) => f,
        }
    }
}

impl FilterSettles {
    /// The entry of a run whose keys lie in `lo..=hi` (as `key_prefix`
    /// integers) and whose one table has `filter` (`None` for a run of
    /// several tables or a table without a trusted filter).
    pub(crate) fn new(lo: u128, hi: u128, filter: Option<Arc<AnyFilter>>) -> FilterSettles {
        let (lo, hi) = ((lo >> 64) as u64, (hi >> 64) as u64);
        match (filter, lo.checked_add(1)) {
            (Some(f), Some(from)) if hi > from => FilterSettles {
                from,
                span: hi - from,
                blocked_probes: match &*f {
                    AnyFilter::BlockedBloom(b) => b.num_probes(),
                    _ => 0,
                },
                filter: Some(f),
            },
            _ => FilterSettles {
                from: 0,
                span: 0,
                blocked_probes: 0,
                filter: None,
            },
        }
    }

    /// The run's filter, if the run is one table whose range holds a key
    /// whose first eight bytes past the common prefix are `top` strictly
    /// inside (so the filter's "no" settles the run).
    #[inline(always)]
    pub(crate) fn filter_for(&self, top: u64) -> Option<SettleFilter<'_>> {
        if top.wrapping_sub(self.from) >= self.span {
            return None;
        }
        let f = self.filter.as_deref()?;
        Some(match f {
            AnyFilter::BlockedBloom(b) => SettleFilter::Blocked(b.blocks(), f),
            _ => SettleFilter::Any(f),
        })
    }
}

/// How many of `entries`, from the first, are runs that a blocked Bloom
/// filter of `probe`'s probe count settles (the key strictly inside, the
/// filter says no), and whether it stopped at such a filter's "maybe"
/// (rather than at another kind, another probe count, a failed range test
/// or the end).
///
/// The read path's innermost loop, for the common case of runs that all
/// carry blocked Bloom filters of one probe count. Kept out of line and
/// given the probe by shared reference, so that the mask, the hash and the
/// key's eight bytes stay in registers: per run it reads the entry's range
/// and probe count, the filter's block list, one block, and compares.
#[inline(never)]
pub(crate) fn settle_blocked(entries: &[FilterSettles], top: u64, probe: &BlockedProbe) -> (usize, bool) {
    for (runs, s) in entries.iter().enumerate() {
        if top.wrapping_sub(s.from) >= s.span || s.blocked_probes != probe.num_probes() {
            return (runs, false);
        }
        match s.filter.as_deref() {
            Some(AnyFilter::BlockedBloom(f)) => {
                if f.blocks().contains_probe(probe) {
                    return (runs, true);
                }
            }
            _ => return (runs, false),
        }
    }
    (entries.len(), false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use amq::{Filter, FilterKind, FilterSizing, HashScheme, PreparedHash};
    use proptest::prelude::*;

    fn filter(kind: FilterKind) -> Arc<AnyFilter> {
        let hashes: Vec<u64> = (0..2_000u64).map(|i| amq::hash_key(&i.to_le_bytes())).collect();
        Arc::new(AnyFilter::build(kind, FilterSizing::Fpr(0.01), &hashes).unwrap())
    }

    /// Every kind a store can hold (all driven by amq's key hash: not
    /// `ParquetBloom`) answers through the entry as the filter does, and
    /// only a blocked Bloom filter takes the blocks' form.
    #[test]
    fn entry_answers_as_its_filter() {
        let kinds = FilterKind::ALL
            .iter()
            .filter(|k| k.hash_scheme() == HashScheme::Xxh3Seeded);
        assert_eq!(kinds.clone().count(), FilterKind::ALL.len() - 1);
        for &kind in kinds {
            let f = filter(kind);
            let s = FilterSettles::new(0, u128::MAX, Some(f.clone()));
            let settle = s.filter_for(1).expect("strictly inside");
            assert_eq!(
                matches!(settle, SettleFilter::Blocked(..)),
                kind == FilterKind::BlockedBloom,
                "{kind:?}"
            );
            assert!(std::ptr::eq(settle.filter(), &*f));
            for i in 0..10_000u64 {
                let h = amq::hash_key(&i.to_le_bytes());
                let mut key = PreparedHash::new(h);
                let through = match settle {
                    SettleFilter::Blocked(b, _) => b.contains_prepared(&mut key),
                    SettleFilter::Any(f) => f.contains_prepared(&mut key),
                };
                assert_eq!(through, f.contains_hash(h), "{kind:?} {i}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(3), ..ProptestConfig::default() })]

        // The read path's inner loop settles a run by its filter only
        // where the key lies strictly inside the run's range; the one
        // subtract and compare must never pass outside it, and must pass
        // wherever the eight-byte compare does.
        #[test]
        fn filter_settles_only_strictly_inside(
            lo in prop_oneof![any::<u128>(), Just(u128::MAX), Just(0u128)],
            width in prop_oneof![0u128..4, (0u128..4).prop_map(|w| w << 64), any::<u128>()],
            key in prop_oneof![any::<u128>(), (0u128..6).prop_map(|d| d << 64)],
            near in any::<bool>(),
            filtered in any::<bool>(),
        ) {
            let hi = lo.saturating_add(width);
            // Keys near the bounds as well as anywhere.
            let k = if near { lo.wrapping_add(key) } else { key };
            let filter = filtered.then(|| {
                Arc::new(AnyFilter::build(FilterKind::BlockedBloom, FilterSizing::Fpr(0.01), &[1, 2, 3]).unwrap())
            });
            let s = FilterSettles::new(lo, hi, filter);
            let top = |x: u128| (x >> 64) as u64;
            let settles = s.filter_for(top(k)).is_some();
            prop_assert_eq!(settles, filtered && top(lo) < top(k) && top(k) < top(hi));
            if settles {
                prop_assert!(lo < k && k < hi);
            }
        }
    }
}
