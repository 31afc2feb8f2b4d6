//! A table's range filter: how the reader checks it, and how a bounded
//! scan asks it whether the table may hold a key in its range. The writer's
//! side is `range_keys.rs`.
//!
//! # Keys as `u64`s
//!
//! A range filter ([`amq::range::GrafiteRange`]) takes ordered `u64`s. This
//! build writes every table's keys through a [`KeyMap`] fitted to them (key
//! map 2): the byte positions where the table's keys differ, each in as
//! many bits as the bytes seen there need, so neighbouring keys are
//! neighbouring integers whatever their shape (composite, decimal, under a
//! long shared head). The map is stored in the range filter block, and it
//! maps a scan's bounds conservatively ([`KeyMap::range`]): a key of the
//! table inside the scan's range always has its `u64` inside the interval
//! the filter is asked about, and a range the map alone rules out (a bound
//! no key's bytes reach) skips the table without a probe. Where the keys'
//! differences need more than 64 bits, keys that differ only past them
//! share a `u64`: false positives, counted in `Stats`, never a wrong answer.
//!
//! Key map 1 is [`amq::range::key_to_u64`] past the table's common prefix
//! (the bytes its smallest and largest keys share), shifted right where
//! every key ends within `w < 8` bytes past it (`w` in the metadata block).
//! The writer keeps it where it holds every key exactly and the fitted map
//! would save almost nothing (random binary keys): it maps a bound without
//! walking the bytes. Earlier builds wrote it for every table.
//!
//! # Never a false negative
//!
//! A table is skipped only when its range filter passed every check at open
//! (block checksum, a kind, key map and format this build knows, a decode,
//! the distinct key count the metadata records, and that it admits the
//! table's own smallest and largest keys), and the filter (or the key map)
//! says no, and only for ranges with both bounds set.
//! Tables without a range filter, or with one that failed, are read; with
//! `Options::strict_filters` a failed one fails `open`.

use std::ops::Bound;

use amq::range::{key_to_u64, GrafiteRange, KeyMap, RangeFilter};
use amq::FilterKind;

use super::props::RangeFilterExt;
use super::range_keys::decode_block;
use super::reader::{RangeFilterState, Table};
use super::BlockType;
use crate::error::{Error, Result};

/// Key map 1: the eight bytes past the table's common prefix
/// ([`key_to_u64`]), shifted by [`width_shift`]; written where it is as
/// good as the fitted map (`range_keys::TOP8_WITHIN_BITS`).
pub(crate) const KEY_MAP_TOP8: u8 = 1;

/// Key map 2: a [`KeyMap`] fitted to the table's keys, stored in the range
/// filter block.
pub(crate) const KEY_MAP_FITTED: u8 = 2;

/// How a table's keys became its range filter's `u64`s.
#[derive(Debug)]
pub(crate) enum TableKeyMap {
    /// Key map 1: the length of the common prefix and the right shift.
    Top8 { skip: usize, shift: u32 },
    /// Key map 2, and how many of the table's distinct keys share a `u64`
    /// with another.
    Fitted { map: Box<KeyMap>, collapsed: u64 },
}

/// A range is asked about only while its bound, `ℓ · n / r` before it is
/// capped at 1, is below this: past it an empty range passes the filter
/// with probability `1 − e^(−ℓn/r)` > 98%, so a probe (about 50 ns) would
/// almost never save a table read and would only add to every scan that
/// reads the table anyway.
pub(crate) const ASK_BELOW: f64 = 4.0;

/// The right shift of a key map 1 table's `u64`s whose keys end within
/// `width` bytes past the common prefix: `8 − width` bytes (64 bits when no
/// key has a byte past it).
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
        let (smallest, largest) = (&self.props.smallest, &self.props.largest);
        let (map, filter_bytes, distinct) = match ext.key_map {
            KEY_MAP_TOP8 => {
                if ext.width > 8 {
                    return Err(format!("range filter key width {} past 8 bytes", ext.width));
                }
                let skip = smallest.iter().zip(largest).take_while(|(a, b)| a == b).count();
                let shift = width_shift(ext.width);
                (TableKeyMap::Top8 { skip, shift }, bytes, ext.keys)
            }
            KEY_MAP_FITTED => {
                let (distinct, map, filter) = decode_block(bytes)?;
                let map = KeyMap::from_bytes(map).map_err(|e| format!("range filter key map: {e}"))?;
                (
                    TableKeyMap::Fitted {
                        map: Box::new(map),
                        collapsed: 0,
                    },
                    filter,
                    distinct,
                )
            }
            other => return Err(format!("range filter key map {other} unknown to this build")),
        };
        let filter = GrafiteRange::from_bytes(filter_bytes)
            .map_err(|e| format!("amq could not decode the range filter: {e:?}"))?;
        // A filter of another number of keys was built from other keys
        // (or forged): it could rule out ranges the table holds keys in.
        let entries = self.props.entries;
        if filter.num_keys() as u64 != ext.keys
            || ext.keys > distinct
            || distinct > entries
            || (ext.keys == 0) != (entries == 0)
        {
            return Err(format!(
                "range filter holds {} keys, the metadata block says {} of {distinct} distinct keys and {entries} entries",
                filter.num_keys(),
                ext.keys,
            ));
        }
        let map = match map {
            TableKeyMap::Fitted { map, .. } => TableKeyMap::Fitted {
                map,
                collapsed: distinct - ext.keys,
            },
            top8 => top8,
        };
        let (lo, hi) = (map.code(smallest, smallest), map.code(smallest, largest));
        if entries > 0 && !(filter.may_contain(lo) && filter.may_contain(hi)) {
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
            map,
            lo,
            hi,
            max_len,
        })
    }

    /// The scan range `lo..hi` as this table's range filter takes it, its
    /// first words already being loaded (ask it with [`range_answer`]):
    /// `None` when the filter cannot say (no trusted range filter, an open
    /// bound, a range too long to be worth asking about).
    /// A range the key map alone rules out comes back empty (`a > b`),
    /// which the filter answers `false`.
    ///
    /// [`range_answer`]: Table::range_answer
    #[inline]
    pub(crate) fn range_query(&self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> Option<(u64, u64)> {
        let RangeFilterState::Trusted {
            filter,
            map,
            lo: first,
            hi: last,
            max_len,
        } = &self.range_filter
        else {
            return None;
        };
        // A half-open range is never worth a probe: a table it meets holds
        // a key past its one bound (the table's own smallest or largest).
        if matches!(lo, Bound::Unbounded) || matches!(hi, Bound::Unbounded) {
            return None;
        }
        let (a, b) = match map {
            TableKeyMap::Fitted { map, .. } => match map.range(lo, hi) {
                Some(ab) => ab,
                None => return Some((1, 0)),
            },
            TableKeyMap::Top8 { skip, shift } => top8_range(&self.props.smallest[..*skip], *shift, lo, hi)?,
        };
        // Every key here maps inside `first..=last`: clamp to it.
        let (a, b) = (a.max(*first), b.min(*last));
        // Too long a range to be worth asking about ([`ASK_BELOW`]): read,
        // and not counted as a probe.
        if a <= b && b - a >= *max_len {
            return None;
        }
        filter.prefetch_range(a, b);
        Some((a, b))
    }

    /// How many of the table's distinct keys share their range filter
    /// `u64` with another (their differences need more than 64 bits), if
    /// it has a trusted range filter.
    pub(crate) fn range_keys_collapsed(&self) -> Option<u64> {
        match &self.range_filter {
            RangeFilterState::Trusted {
                map: TableKeyMap::Fitted { collapsed, .. },
                ..
            } => Some(*collapsed),
            RangeFilterState::Trusted { .. } => Some(0),
            _ => None,
        }
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

impl TableKeyMap {
    /// The `u64` of one of the table's keys (`prefix_source` is its
    /// smallest key, whose bytes key map 1's common prefix is taken from).
    fn code(&self, prefix_source: &[u8], key: &[u8]) -> u64 {
        match self {
            TableKeyMap::Top8 { skip, shift } => top8(&prefix_source[..*skip], *shift, key),
            TableKeyMap::Fitted { map, .. } => map.map(key),
        }
    }
}

/// Key map 1's `u64` of `key`.
fn top8(prefix: &[u8], shift: u32, key: &[u8]) -> u64 {
    key_to_u64(key, prefix).checked_shr(shift).unwrap_or(0)
}

/// Key map 1's interval for a range with both bounds set (`None` for an
/// open bound).
fn top8_range(prefix: &[u8], shift: u32, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> Option<(u64, u64)> {
    let (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) = (lo, hi) else {
        return None;
    };
    let a = top8(prefix, shift, a);
    let mut b = top8(prefix, shift, b);
    // An excluded end that the map holds whole (it starts with the prefix,
    // ends within the width past it, and its last byte is not zero, so no
    // shorter key pads to it) is above every key below it: those keys map
    // strictly below it.
    if let Bound::Excluded(end) = hi {
        let width = ((64 - shift) / 8) as usize;
        let whole = end.len() > prefix.len()
            && end.len() - prefix.len() <= width
            && end.starts_with(prefix)
            && end.last() != Some(&0);
        if whole {
            b -= 1;
        }
    }
    Some((a, b))
}
