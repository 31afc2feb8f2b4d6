//! Which range filter a set of byte keys gets: a [`GrafiteRange`] over the
//! codes of a [`KeyMap`] fitted to them, or an [`InfixRange`] over the keys
//! themselves.
//!
//! Where the map holds every key exactly (their differences fit 64 bits),
//! the mapped filter keeps Grafite's bound for every range of up to `L`
//! codes, ranges right beside a key included, and it is kept. Where the
//! map is truncated, keys that differ past its 64 bits share a code, and
//! ranges between them, or a time window over keys with a random tail,
//! span more codes than a filter can be asked about; the infix filter
//! reads as far into each key as its neighbours need. When a sample of the
//! scans asked is at hand, the infix filter is taken only if it lets
//! through no more of the sample's empty ranges than the mapped filter,
//! fitted to the same sample ([`fit_to_scans`](super::fit_to_scans)), is
//! expected to: decimal timestamps of 20 digits need 66 bits, but scans a
//! few nanoseconds past a key share an infix cell with it.
//!
//! [`GrafiteRange`]: super::GrafiteRange

use core::ops::Bound;

use super::{InfixRange, KeyMap, RangeSizing, ScanFit, ScanRange};

/// The infix filter for keys `sorted` (strictly increasing), if they
/// should have one rather than the mapped filter (see the module docs):
/// `map` is the map fitted to them (not coarsened), `fit` its fit to
/// `scans`, and `sizing` the memory both get. `None` also where the infix
/// filter cannot be built at `sizing` (too few bits for its heads).
///
/// ```
/// use std::ops::Bound::Included;
/// use amq::range::{fit_to_scans, infix_for_scans, KeyMap, RangeSizing};
/// // Tenants and e-mail addresses: more than 64 bits of differences.
/// let mut keys: Vec<String> = (0..5_000u64)
///     .map(|i| format!("{:03}/{:x}@example.com", i % 20, i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
///     .collect();
/// keys.sort();
/// let sorted: Vec<&[u8]> = keys.iter().map(String::as_bytes).collect();
/// let map = KeyMap::from_keys(sorted.iter().copied());
/// assert!(!map.is_exact());
/// let codes: Vec<u64> = sorted.iter().map(|k| map.map(k)).collect();
/// let fit = fit_to_scans(&map, &codes, &[], RangeSizing::BitsPerKey(16.0));
/// assert!(infix_for_scans(&map, &fit, &sorted, &[], RangeSizing::BitsPerKey(16.0)).is_some());
/// // Keys whose differences fit 64 bits keep the mapped filter.
/// let short: Vec<&[u8]> = vec![b"a1", b"a2", b"b1"];
/// let map = KeyMap::from_keys(short.iter().copied());
/// assert!(infix_for_scans(&map, &fit, &short, &[], RangeSizing::BitsPerKey(16.0)).is_none());
/// ```
pub fn infix_for_scans(
    map: &KeyMap,
    fit: &ScanFit,
    sorted: &[&[u8]],
    scans: &[ScanRange<'_>],
    sizing: RangeSizing,
) -> Option<InfixRange> {
    if map.is_exact() {
        return None;
    }
    let infix = InfixRange::build(sorted, sizing).ok()?;
    let passed = scans
        .iter()
        .filter(|&&(lo, hi)| holds_none(sorted, lo, hi) && infix.may_contain_range(lo, hi))
        .count();
    (passed as f64 <= fit.expected_false_positives).then_some(infix)
}

/// Whether no key of `sorted` lies in `lo..hi`.
fn holds_none(sorted: &[&[u8]], lo: Bound<&[u8]>, hi: Bound<&[u8]>) -> bool {
    let at = match lo {
        Bound::Included(k) => sorted.partition_point(|s| *s < k),
        Bound::Excluded(k) => sorted.partition_point(|s| *s <= k),
        Bound::Unbounded => 0,
    };
    sorted.get(at).is_none_or(|k| match hi {
        Bound::Included(h) => *k > h,
        Bound::Excluded(h) => *k >= h,
        Bound::Unbounded => false,
    })
}
