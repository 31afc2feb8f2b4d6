//! A table's range filter: what the writer puts in, how the reader checks
//! it, and how a bounded scan asks it whether the table may hold a key in
//! its range.
//!
//! # Keys as `u64`s
//!
//! A range filter ([`amq::range::GrafiteRange`]) takes ordered `u64`s. A key
//! becomes one by [`amq::range::key_to_u64`] past the table's common prefix
//! (the bytes its smallest and largest keys share, which every key between
//! them starts with): the next eight bytes, big-endian, zero-padded. The map
//! never decreases in key order, for every byte string, so a key `k` inside
//! a scan's `lo..=hi` has its `u64` inside `u64(lo)..=u64(hi)`: the filter
//! asked about that interval says "maybe" for every table that holds a key
//! in the range. Keys that share those eight bytes become one `u64`, and a
//! range that differs from a key only past them is a false positive: the
//! map is conservative, never wrong.
//!
//! Where every key of the table ends within `w < 8` bytes past the prefix
//! (short or fixed-width keys: `k000123` past `k0`), the `u64`s are shifted
//! right by `8 − w` bytes, so that the last byte any key has is the lowest:
//! a shift of every value by one amount keeps their order and loses nothing
//! (those bytes are zero in every key), and a range of a few keys then
//! spans a few integers instead of a few multiples of `2^(8(8−w))`, which a
//! range filter's false-positive rate, growing with the range's length,
//! would pay for. (Key map id 1 and `w` in the metadata block; a table
//! recording another map is read without its range filter.)
//!
//! The writer does not know the common prefix until the last key: it keeps
//! each key's eight bytes past the prefix shared so far, and the shared
//! prefix can only shrink as sorted keys arrive, so at the end each run of
//! keys added under one prefix length is shifted once to the final one
//! ([`RangeKeys`]).
//!
//! # Never a false negative
//!
//! A table is skipped only when both scan bounds are set, its range filter
//! passed every check at open (block checksum, a kind, key map and format
//! this build knows, a decode, the distinct key count the metadata records,
//! and that it admits the table's own smallest and largest keys), and the
//! filter says no. Tables without a range filter, or with one that failed,
//! are read; with `Options::strict_filters` a failed one fails `open`.

use std::ops::Bound;

use amq::range::{key_to_u64, GrafiteRange, RangeFilter};
use amq::FilterKind;

use super::props::RangeFilterExt;
use super::reader::{RangeFilterState, Table};
use super::BlockType;
use crate::error::{Error, Result};

/// The key map of every range filter this build writes: the eight bytes
/// past the table's common prefix ([`key_to_u64`]).
pub(crate) const KEY_MAP_TOP8: u8 = 1;

/// The eight bytes of `tail`'s start, big-endian, zero-padded.
fn top8(tail: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = tail.len().min(8);
    b[..n].copy_from_slice(&tail[..n]);
    u64::from_be_bytes(b)
}

/// The writer's record of a table's keys as `u64`s (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct RangeKeys {
    /// The first key.
    first: Vec<u8>,
    /// The length of the prefix every key so far shares.
    common: usize,
    /// Each key's eight bytes past the prefix shared when it was added.
    values: Vec<u64>,
    /// Where each run of keys added under one shared length starts, and
    /// that length.
    runs: Vec<(usize, usize)>,
    /// The longest key's length.
    longest: usize,
}

impl RangeKeys {
    /// Records the next key; keys come in increasing order.
    pub(crate) fn add(&mut self, key: &[u8]) {
        if self.values.is_empty() {
            self.first = key.to_vec();
            self.common = key.len();
            self.runs.push((0, key.len()));
        } else {
            // In sorted keys the prefix shared with the first key only
            // shrinks, so it is the prefix shared by all.
            let shared = self.first[..self.common]
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count();
            if shared < self.common {
                self.common = shared;
                self.runs.push((self.values.len(), shared));
            }
        }
        self.values.push(top8(&key[self.common..]));
        self.longest = self.longest.max(key.len());
    }

    /// Every key's `key_to_u64` past the prefix all of them share, in key
    /// order, each shifted right by [`width_shift`] of the returned width:
    /// the bytes past the prefix that the longest key has, at most 8.
    pub(crate) fn finish(self) -> (Vec<u64>, u8) {
        let width = (self.longest - self.common).min(8) as u8;
        let shift = width_shift(width);
        let mut values = self.unshifted();
        for v in &mut values {
            *v = v.checked_shr(shift).unwrap_or(0);
        }
        (values, width)
    }

    /// Every key's `key_to_u64` past the prefix all of them share.
    fn unshifted(mut self) -> Vec<u64> {
        let end = self.common;
        let mut runs = self.runs.iter().peekable();
        while let Some(&(start, len)) = runs.next() {
            let stop = runs.peek().map_or(self.values.len(), |r| r.0);
            // The bytes `first[end..len]`, shared by the run's keys, go in
            // front of each key's own eight.
            let shift = len - end;
            if shift == 0 {
                continue;
            }
            let head = top8(&self.first[end..len]);
            for v in &mut self.values[start..stop] {
                *v = match shift {
                    8.. => head,
                    s => head | (*v >> (8 * s)),
                };
            }
        }
        self.values
    }
}

/// A range is asked about only while its bound, `ℓ · n / r` before it is
/// capped at 1, is below this: past it an empty range passes the filter
/// with probability `1 − e^(−ℓn/r)` > 98%, so a probe (about 50 ns) would
/// almost never save a table read and would only add to every scan that
/// reads the table anyway.
pub(crate) const ASK_BELOW: f64 = 4.0;

/// The right shift of a table's `u64`s whose keys end within `width` bytes
/// past the common prefix: `8 − width` bytes (64 bits when no key has a
/// byte past it).
pub(crate) fn width_shift(width: u8) -> u32 {
    8 * (8 - u32::from(width.min(8)))
}

/// The seed of table `number`'s range filter: distinct per table, so two
/// tables' false positives on one range are independent events.
pub(crate) fn seed_for(number: u64) -> u64 {
    amq::range::grafite::DEFAULT_SEED ^ number.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

impl Table {
    /// Reads and checks the range filter the metadata block names.
    pub(super) fn load_range_filter(&self) -> Result<RangeFilterState> {
        let Some(ext) = self.props.range_filter else {
            return Ok(RangeFilterState::Absent);
        };
        let bytes = match self.read_block(ext.handle, BlockType::RangeFilter) {
            Ok(b) => b,
            Err(Error::Corruption { what, .. }) => return Ok(RangeFilterState::Untrusted(what.into())),
            Err(e) => return Err(e),
        };
        Ok(match self.check_range_filter(ext, &bytes) {
            Ok(state) => state,
            Err(why) => RangeFilterState::Untrusted(why),
        })
    }

    fn check_range_filter(
        &self,
        ext: RangeFilterExt,
        bytes: &[u8],
    ) -> std::result::Result<RangeFilterState, String> {
        if FilterKind::from_id(ext.kind) != Some(FilterKind::GrafiteRange) {
            return Err(format!("range filter kind {} unknown to this build", ext.kind));
        }
        if ext.key_map != KEY_MAP_TOP8 {
            return Err(format!(
                "range filter key map {} unknown to this build",
                ext.key_map
            ));
        }
        let filter = GrafiteRange::from_bytes(bytes)
            .map_err(|e| format!("amq could not decode the range filter: {e:?}"))?;
        // A filter of another number of keys was built from other keys
        // (or forged): it could rule out ranges the table holds keys in.
        if filter.num_keys() as u64 != ext.keys
            || ext.keys > self.props.entries
            || (ext.keys == 0) != (self.props.entries == 0)
        {
            return Err(format!(
                "range filter holds {} keys, the metadata block says {} of {} entries",
                filter.num_keys(),
                ext.keys,
                self.props.entries
            ));
        }
        if ext.width > 8 {
            return Err(format!("range filter key width {} past 8 bytes", ext.width));
        }
        let (smallest, largest) = (&self.props.smallest, &self.props.largest);
        let skip = smallest.iter().zip(largest).take_while(|(a, b)| a == b).count();
        let shift = width_shift(ext.width);
        let map = |k: &[u8]| key_to_u64(k, &smallest[..skip]).checked_shr(shift).unwrap_or(0);
        let (lo, hi) = (map(smallest), map(largest));
        if self.props.entries > 0 && !(filter.may_contain(lo) && filter.may_contain(hi)) {
            return Err("range filter rules out the table's own smallest or largest key".into());
        }
        // `expected_fpr(1)` is `n·(1/r + 2^-64)`, far below its cap of 1.
        let per_integer = filter.expected_fpr(1);
        let max_len = match per_integer > 0.0 {
            true => (ASK_BELOW / per_integer).min(u64::MAX as f64) as u64,
            false => u64::MAX,
        };
        Ok(RangeFilterState::Trusted {
            filter,
            skip,
            shift,
            lo,
            hi,
            max_len,
        })
    }

    /// The scan range `lo..hi` as this table's range filter takes it, its
    /// first words already being loaded (ask it with [`range_answer`]):
    /// `None` when the filter cannot say (no trusted range filter, an open
    /// bound, a range too long to be worth asking about).
    ///
    /// [`range_answer`]: Table::range_answer
    #[inline]
    pub(crate) fn range_query(&self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> Option<(u64, u64)> {
        let RangeFilterState::Trusted {
            filter,
            skip,
            shift,
            lo: first,
            hi: last,
            max_len,
        } = &self.range_filter
        else {
            return None;
        };
        let (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) = (lo, hi)
        else {
            return None;
        };
        // Every key here maps inside `first..=last`: clamp to it.
        let prefix = &self.props.smallest[..*skip];
        let map = |k: &[u8]| key_to_u64(k, prefix).checked_shr(*shift).unwrap_or(0);
        let a = map(a).max(*first);
        let mut b = map(b);
        // An excluded end that the map holds whole (it starts with the
        // prefix, ends within the width past it, and its last byte is not
        // zero, so no shorter key pads to it) is above every key below it:
        // those keys map strictly below it.
        if let Bound::Excluded(end) = hi {
            let width = ((64 - *shift) / 8) as usize;
            let whole = end.len() > prefix.len()
                && end.len() - prefix.len() <= width
                && end.starts_with(prefix)
                && end.last() != Some(&0);
            if whole {
                b -= 1;
            }
        }
        let b = b.min(*last);
        // Too long a range to be worth asking about ([`ASK_BELOW`]): read,
        // and not counted as a probe.
        if a <= b && b - a >= *max_len {
            return None;
        }
        filter.prefetch_range(a, b);
        Some((a, b))
    }

    /// The range filter's answer to a [`range_query`](Table::range_query):
    /// whether the table may hold a key in the scan's range.
    #[inline]
    pub(crate) fn range_answer(&self, (a, b): (u64, u64)) -> bool {
        match &self.range_filter {
            RangeFilterState::Trusted { filter, .. } => filter.may_contain_range(a, b),
            _ => true,
        }
    }

    /// The range filter, if trusted.
    pub(crate) fn range_filter(&self) -> Option<&GrafiteRange> {
        match &self.range_filter {
            RangeFilterState::Trusted { filter, .. } => Some(filter),
            _ => None,
        }
    }

    /// Why the range filter is not used, if it failed a check.
    pub(crate) fn range_filter_untrusted(&self) -> Option<&str> {
        match &self.range_filter {
            RangeFilterState::Untrusted(why) => Some(why),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use amq::range::common_prefix;
    use proptest::prelude::*;

    fn mapped(keys: &[Vec<u8>]) -> Vec<u64> {
        let mut r = RangeKeys::default();
        for k in keys {
            r.add(k);
        }
        let longest = keys.iter().map(Vec::len).max().unwrap_or(0);
        let (values, width) = r.finish();
        let prefix = common_prefix(keys.iter().map(Vec::as_slice)).len();
        assert_eq!(usize::from(width), (longest - prefix.min(longest)).min(8));
        // Undo the shift: the bytes it dropped are zero in every key.
        values
            .into_iter()
            .map(|v| v.checked_shl(width_shift(width)).unwrap_or(0))
            .collect()
    }

    #[test]
    fn keys_map_past_the_prefix_all_of_them_share() {
        let keys: Vec<Vec<u8>> = ["user:0001:aaaaaaaaaaaa", "user:0001:b", "user:0002", "user:1"]
            .iter()
            .map(|k| k.as_bytes().to_vec())
            .collect();
        let prefix = common_prefix(keys.iter().map(Vec::as_slice));
        assert_eq!(prefix, b"user:");
        let want: Vec<u64> = keys.iter().map(|k| key_to_u64(k, prefix)).collect();
        assert_eq!(mapped(&keys), want);
        // One key: its own prefix, nothing past it.
        assert_eq!(mapped(&[b"abc".to_vec()]), vec![0]);
        assert_eq!(mapped(&[]), Vec::<u64>::new());
        // Short keys end in the lowest byte: neighbours are neighbours.
        let mut r = RangeKeys::default();
        for k in ["k000998", "k000999", "k001000", "k001001"] {
            r.add(k.as_bytes());
        }
        let (v, width) = r.finish();
        assert_eq!(width, 4);
        assert_eq!(v[1] - v[0], 1);
        assert_eq!(v[3] - v[2], 1);
    }

    proptest! {
        #[test]
        fn the_collector_equals_the_map_over_the_final_prefix(
            mut keys in proptest::collection::btree_set(
                proptest::collection::vec(prop_oneof![Just(0u8), Just(b'a'), Just(b'b'), any::<u8>()], 0..24),
                1..60,
            ).prop_map(|s| s.into_iter().collect::<Vec<_>>()),
            head in proptest::collection::vec(any::<u8>(), 0..20),
        ) {
            // A long shared head makes the prefix shrink in many steps.
            for k in &mut keys {
                k.splice(0..0, head.iter().copied());
            }
            let prefix = common_prefix(keys.iter().map(Vec::as_slice));
            let want: Vec<u64> = keys.iter().map(|k| key_to_u64(k, prefix)).collect();
            prop_assert_eq!(mapped(&keys), want);
        }
    }
}
