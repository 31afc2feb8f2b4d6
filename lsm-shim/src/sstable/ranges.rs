//! How a bounded scan asks a table's range filter whether the table may
//! hold a key in its range (the filter, its key maps and checks are in
//! `range_filter.rs`).

use std::ops::Bound;

use amq::range::RangeFilter;

use super::range_filter::{top8_range, RangeFilterState, TableKeyMap};
use super::reader::Table;

/// A scan's question to a table's range filter: the interval of `u64`s
/// to ask it (a Grafite filter's codes or an infix filter's values), its
/// first words already being loaded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RangeQuestion(u64, u64);

impl Table {
    /// The scan range `lo..hi` as this table's range filter takes it (ask
    /// it with [`range_answer`]): `None` when the filter cannot say (no
    /// trusted range filter, an open bound, a range too long to be worth
    /// asking about). A range the key map alone rules out comes back
    /// empty (`a > b`), which the filter answers `false`.
    ///
    /// [`range_answer`]: Table::range_answer
    #[inline]
    pub(crate) fn range_query(&self, lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> Option<RangeQuestion> {
        // A half-open range is never worth a probe: a table it meets holds
        // a key past its one bound (the table's own smallest or largest).
        if matches!(lo, Bound::Unbounded) || matches!(hi, Bound::Unbounded) {
            return None;
        }
        if let RangeFilterState::Infix(f) = &self.range_filter {
            let (a, b) = f.prepare_range(lo, hi).unwrap_or((1, 0));
            return Some(RangeQuestion(a, b));
        }
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
        let (a, b) = match map {
            TableKeyMap::Fitted { map, .. } => match map.range(lo, hi) {
                Some(ab) => ab,
                None => return Some(RangeQuestion(1, 0)),
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
        Some(RangeQuestion(a, b))
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
            RangeFilterState::Trusted { .. } | RangeFilterState::Infix(_) => Some(0),
            _ => None,
        }
    }

    /// How many low bits of its keys' codes the range filter's key map
    /// drops (0 without a trusted fitted map).
    pub(crate) fn range_map_shift(&self) -> u32 {
        match &self.range_filter {
            RangeFilterState::Trusted {
                map: TableKeyMap::Fitted { map, .. },
                ..
            } => map.shift(),
            _ => 0,
        }
    }

    /// The range filter's answer to a [`range_query`](Table::range_query):
    /// whether the table may hold a key in the scan's range.
    #[inline]
    pub(crate) fn range_answer(&self, RangeQuestion(a, b): RangeQuestion) -> bool {
        match &self.range_filter {
            RangeFilterState::Trusted { filter, .. } => filter.may_contain_range(a, b),
            RangeFilterState::Infix(f) => a <= b && f.may_contain_values((a, b)),
            _ => true,
        }
    }

    /// The bytes of the range filter, if trusted.
    pub(crate) fn range_filter_bytes(&self) -> Option<usize> {
        match &self.range_filter {
            RangeFilterState::Trusted { filter, .. } => Some(filter.size_in_bytes()),
            RangeFilterState::Infix(f) => Some(f.size_in_bytes()),
            _ => None,
        }
    }

    /// Whether the range filter is a trusted infix filter (key map 4).
    pub(crate) fn range_filter_is_infix(&self) -> bool {
        matches!(self.range_filter, RangeFilterState::Infix(_))
    }

    /// Why the range filter is not used, if it failed a check.
    pub(crate) fn range_filter_untrusted(&self) -> Option<&str> {
        match &self.range_filter {
            RangeFilterState::Untrusted(why) => Some(why),
            _ => None,
        }
    }
}
