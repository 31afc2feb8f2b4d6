//! [`FilterSettles`]: what the read path's inner loop reads per run to
//! settle a miss by the run's filter alone, and the crate's one `unsafe`
//! block, which lets it reach a blocked Bloom filter's block in one load.
//!
//! A miss against N overlapping runs spends nearly all its time in the
//! inner loop (`settle_by_filters` in `db/read.rs`): per run, a range test and a
//! filter probe. Each entry here is that run's range test (two words) and
//! its filter. For a [`BlockedBloom`](amq::BlockedBloom) filter, the entry
//! also keeps the filter's [`BlockedBlocks`] (the block pointer, the block
//! count and the probe count) by value, so the probe computes the block's
//! address from the entry it has just read instead of first loading the
//! filter's header through its `Arc`: one dependent load fewer per table.
//! An owning entry that borrows the blocks from its `Arc` at probe time
//! instead (no `unsafe`) cost a miss at 256 tables 20-30% more per blocked
//! Bloom table (`KIND=BlockedBloom lsm_profile_miss 256` and `lsm_report
//! hash-sharing` in `amq-bench`, each run twice), so the borrow is kept.
//!
//! Those blocks borrow from the filter the same entry owns. Rust cannot
//! name that lifetime in a struct, so the borrow is stored as `'static`
//! and this module upholds what the compiler cannot check:
//!
//! * the entry's `Arc<AnyFilter>` keeps the filter, and so its block
//!   storage, alive and at one address for as long as the entry exists;
//! * nothing mutates a filter behind an `Arc` (`AnyFilter` has no interior
//!   mutability, and the entry never asks for `Arc::get_mut`);
//! * the `'static` borrow never leaves the entry: the fields are private,
//!   and [`FilterSettles::filter_for`] hands the blocks out for no longer
//!   than its borrow of the entry. A clone clones the `Arc` with the
//!   borrow, so it keeps the same filter alive.
#![allow(unsafe_code)]

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
    /// For a blocked Bloom `filter`, its blocks. Borrowed from `filter`,
    /// which this entry owns (see the module's comment); never handed out
    /// as `'static`.
    blocks: Option<BlockedBlocks<'static>>,
    filter: Option<Arc<AnyFilter>>,
}

/// A filter as the inner loop asks it: a blocked Bloom filter through its
/// blocks, held in the entry, or any kind through the filter itself. Both
/// forms give the filter's own answer.
#[derive(Clone, Copy)]
pub(crate) enum SettleFilter<'a> {
    /// A blocked Bloom filter, through its blocks.
    Blocked(BlockedBlocks<'a>),
    /// Any other kind.
    Any(&'a AnyFilter),
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
                blocks: blocks_of(&f),
                filter: Some(f),
            },
            _ => FilterSettles {
                from: 0,
                span: 0,
                blocks: None,
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
        match self.blocks {
            // Shortened to the borrow of `self`, which owns the filter.
            Some(blocks) => Some(SettleFilter::Blocked(blocks)),
            None => self.filter.as_deref().map(SettleFilter::Any),
        }
    }
}

#[cfg(any(test, feature = "bench-internals"))]
impl FilterSettles {
    /// The filter [`filter_for`](Self::filter_for) would hand out, as the
    /// filter itself.
    pub(crate) fn settling_filter(&self, top: u64) -> Option<&AnyFilter> {
        if top.wrapping_sub(self.from) >= self.span {
            return None;
        }
        self.filter.as_deref()
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
/// and blocks, loads one block and compares.
#[inline(never)]
pub(crate) fn settle_blocked(entries: &[FilterSettles], top: u64, probe: &BlockedProbe) -> (usize, bool) {
    for (runs, s) in entries.iter().enumerate() {
        if top.wrapping_sub(s.from) >= s.span {
            return (runs, false);
        }
        match s.blocks {
            Some(blocks) if blocks.num_probes() == probe.num_probes() => {
                if blocks.contains_probe(probe) {
                    return (runs, true);
                }
            }
            _ => return (runs, false),
        }
    }
    (entries.len(), false)
}

/// `filter`'s blocks if it is a blocked Bloom filter, borrowed for as long
/// as the caller keeps `filter`.
fn blocks_of(filter: &Arc<AnyFilter>) -> Option<BlockedBlocks<'static>> {
    let AnyFilter::BlockedBloom(f) = &**filter else {
        return None;
    };
    let blocks: BlockedBlocks<'_> = f.blocks();
    // SAFETY: `blocks` borrows the block storage of the filter inside
    // `filter`'s allocation. Its one caller, `FilterSettles::new`, stores
    // the result in the same entry as this `Arc` (moved, not dropped), so
    // the allocation outlives the borrow; the filter is never mutated
    // while shared behind an `Arc` (no interior mutability, no
    // `Arc::get_mut`), so the storage neither moves nor changes; and the
    // entry never hands the borrow out for longer than its own borrow
    // (`filter_for`). `BlockedBlocks` is a shared borrow and some plain
    // numbers, with no drop glue, so extending its lifetime changes
    // nothing but what the compiler checks.
    Some(unsafe { std::mem::transmute::<BlockedBlocks<'_>, BlockedBlocks<'static>>(blocks) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use amq::{Filter, FilterKind, FilterSizing, HashScheme, PreparedHash};
    use proptest::prelude::*;

    fn filter(kind: FilterKind) -> Arc<AnyFilter> {
        let hashes: Vec<amq::KeyHash> = (0..2_000u64).map(amq::hash_u64).collect();
        Arc::new(AnyFilter::build(kind, &hashes, FilterSizing::Fpr(0.01)).unwrap())
    }

    /// Every kind a store can hold (those driven by amq's key hash, which
    /// are exactly the kinds `AnyFilter::build` builds from key hashes)
    /// answers through the entry as the filter does, and only a blocked
    /// Bloom filter takes the blocks' form.
    #[test]
    fn entry_answers_as_its_filter() {
        let kinds = FilterKind::ALL
            .iter()
            .filter(|k| k.hash_scheme() == HashScheme::Xxh3Seeded);
        let hashes: Vec<amq::KeyHash> = (0..100u64).map(amq::hash_u64).collect();
        let buildable = FilterKind::ALL
            .iter()
            .filter(|&&k| AnyFilter::build(k, &hashes, FilterSizing::Fpr(0.01)).is_ok());
        assert!(
            kinds.clone().eq(buildable),
            "the store's kinds are those built from key hashes"
        );
        for &kind in kinds {
            let f = filter(kind);
            let s = FilterSettles::new(0, u128::MAX, Some(f.clone()));
            let settle = s.filter_for(1).expect("strictly inside");
            assert_eq!(
                matches!(settle, SettleFilter::Blocked(..)),
                kind == FilterKind::BlockedBloom,
                "{kind:?}"
            );
            assert!(std::ptr::eq(s.settling_filter(1).unwrap(), &*f));
            for i in 0..10_000u64 {
                let h = amq::hash_key(&i.to_le_bytes());
                let mut key = PreparedHash::new(h);
                let through = match settle {
                    SettleFilter::Blocked(b) => b.contains_prepared(&mut key),
                    SettleFilter::Any(f) => f.contains_prepared(&mut key),
                };
                assert_eq!(through, f.contains_hash(h), "{kind:?} {i}");
            }
        }
    }

    /// The blocks stay readable, and give the same answers, when every
    /// other handle to the filter is gone and the entry has moved or been
    /// cloned (run under Miri or a sanitizer, this is what would catch a
    /// dangling borrow).
    #[test]
    fn entry_outlives_every_other_handle() {
        // Sized without floating point, so that Miri runs it (`libm`'s
        // `sqrt` is inline assembly): `cargo +nightly miri test -p amq-lsm
        // --lib settle::tests::entry_outlives`.
        let mut bloom = amq::BlockedBloom::with_shape(4, 6).unwrap();
        for i in 0..200u64 {
            amq::Insert::insert_hash(&mut bloom, amq::hash_u64(i)).unwrap();
        }
        let f = Arc::new(AnyFilter::BlockedBloom(bloom));
        let expected: Vec<bool> = (0..400u64).map(|i| f.contains_hash(amq::hash_u64(i))).collect();
        let s = FilterSettles::new(0, u128::MAX, Some(f));
        let moved = vec![s.clone(), s];
        let first = moved[0].clone();
        drop(moved);
        let Some(SettleFilter::Blocked(b)) = first.filter_for(7) else {
            panic!("a blocked Bloom filter strictly inside its range");
        };
        for (i, &want) in expected.iter().enumerate() {
            let mut key = PreparedHash::new(amq::hash_u64(i as u64));
            assert_eq!(b.contains_prepared(&mut key), want);
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
                Arc::new(AnyFilter::build(FilterKind::BlockedBloom, &[1, 2, 3].map(amq::hash_u64), FilterSizing::Fpr(0.01)).unwrap())
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
