//! A table's range filter as it is stored and held: the key maps that make
//! its keys `u64`s, its block, and the checks a reader makes before it uses
//! one. The writer's side is `range_keys.rs`; how a scan asks the filter,
//! `ranges.rs`.
//!
//! # Keys as `u64`s
//!
//! A range filter ([`amq::range::GrafiteRange`]) takes ordered `u64`s. This
//! build writes every table's keys through a [`KeyMap`] fitted to them (key
//! map 2): the byte positions where the table's keys differ, each in as
//! many bits as the bytes seen there need, so neighbouring keys are
//! neighbouring integers whatever their shape (composite, decimal, under a
//! long shared head), and positions that vary together (a random id with
//! a few hundred values) as one digit of their distinct contents. The map
//! is stored in the range filter block, and it
//! maps a scan's bounds conservatively ([`KeyMap::range`]): a key of the
//! table inside the scan's range always has its `u64` inside the interval
//! the filter is asked about, and a range the map alone rules out (a bound
//! no key's bytes reach) skips the table without a probe. Where the keys'
//! differences need more than 64 bits, keys that differ only past them
//! share a `u64`: false positives, counted in `Stats`, never a wrong answer.
//! A table written after bounded scans may keep its map coarsened
//! ([`KeyMap::coarsened`], chosen by [`amq::range::fit_to_scans`] from the
//! store's latest scans): neighbouring keys may then share a `u64`, and a
//! wide scan is a short interval of them. The key map's own bytes say so.
//!
//! Key map 4 is no map: where the table's keys differ past 64 bits (an
//! e-mail address, a UUIDv7's random tail, a composite of random ids) and
//! the store's latest scans do not favour the map, the block is an
//! [`amq::range::InfixRange`] of the keys themselves, which reads each key
//! as far as its neighbours need and answers a range of any width inside
//! a gap in one successor query.
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
//!
//! # The range filter block (key map 2)
//!
//! | bytes | field |
//! |-------|-------|
//! | 8     | distinct keys of the table (u64 LE) |
//! | 4     | `m`, the key map's length (u32 LE) |
//! | m     | the key map (`amq::range::KeyMap::to_bytes`) |
//! | rest  | the range filter (amq's byte format) |
//!
//! The block's own checksum covers all of it, and the map carries one more.
//! A key map 4 block is the infix filter's bytes, its checksum inside.

use std::ops::Bound;

use amq::range::{key_to_u64, GrafiteRange, InfixRange, KeyMap, RangeFilter};
use amq::FilterKind;

use super::props::{Properties, RangeFilterExt};

/// Key map 1: the eight bytes past the table's common prefix
/// ([`key_to_u64`]), shifted by [`width_shift`]; written where it is as
/// good as the fitted map (`range_keys::TOP8_WITHIN_BITS`).
pub(crate) const KEY_MAP_TOP8: u8 = 1;

/// Key map 2: a [`KeyMap`] fitted to the table's keys, stored in the range
/// filter block.
pub(crate) const KEY_MAP_FITTED: u8 = 2;

/// Key map 4: no map; the block is an [`InfixRange`] of the table's keys.
pub(crate) const KEY_MAP_INFIX: u8 = 4;

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

/// The state of a table's range filter.
#[derive(Debug)]
pub(crate) enum RangeFilterState {
    /// The table was written without one.
    Absent,
    /// A range filter that passed every check, with what maps a key to its
    /// `u64`s ([`TableKeyMap`]), the `u64`s of its smallest and
    /// largest keys, and the longest range worth asking about
    /// ([`ASK_BELOW`]).
    Trusted {
        /// Held in the table, not behind a pointer of its own: a scan's
        /// probe reaches its words one load sooner.
        filter: GrafiteRange,
        map: TableKeyMap,
        lo: u64,
        hi: u64,
        max_len: u64,
    },
    /// An infix filter (key map 4) that passed every check.
    Infix(Box<InfixRange>),
    /// A range filter block that failed a check (the reason), not used.
    Untrusted(String),
}

/// Checks a table's range filter block (`bytes`, which the metadata block
/// `props` names as `ext`) and decodes it: the state a reader keeps, or
/// why the filter cannot be trusted.
pub(crate) fn check(
    props: &Properties,
    ext: RangeFilterExt,
    bytes: &[u8],
) -> Result<RangeFilterState, String> {
    if FilterKind::from_id(ext.kind) != Some(FilterKind::GrafiteRange) {
        return Err(format!("range filter kind {} unknown to this build", ext.kind));
    }
    let (smallest, largest) = (&props.smallest, &props.largest);
    if ext.key_map == KEY_MAP_INFIX {
        return check_infix(props, ext, bytes);
    }
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
    let entries = props.entries;
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

/// Checks a key map 4 block: an infix filter that decodes, of the table's
/// distinct keys as the metadata block counts them (at most its entries,
/// none exactly when it has none), admitting its smallest and largest
/// keys.
fn check_infix(props: &Properties, ext: RangeFilterExt, bytes: &[u8]) -> Result<RangeFilterState, String> {
    let filter = InfixRange::from_bytes(bytes)
        .map_err(|e| format!("amq could not decode the infix range filter: {e:?}"))?;
    let entries = props.entries;
    if filter.num_keys() != ext.keys || ext.keys > entries || (ext.keys == 0) != (entries == 0) {
        return Err(format!(
            "infix range filter holds {} keys, the metadata block says {} of {entries} entries",
            filter.num_keys(),
            ext.keys,
        ));
    }
    if entries > 0 && !(filter.may_contain(&props.smallest) && filter.may_contain(&props.largest)) {
        return Err("range filter rules out the table's own smallest or largest key".into());
    }
    Ok(RangeFilterState::Infix(Box::new(filter)))
}

/// The parts of a range filter block: distinct keys, the key map's bytes
/// and the filter's, or why it is not one.
pub(crate) fn decode_block(block: &[u8]) -> Result<(u64, &[u8], &[u8]), &'static str> {
    let bad = "range filter block shorter than its header";
    let (distinct, rest) = block.split_first_chunk::<8>().ok_or(bad)?;
    let (len, rest) = rest.split_first_chunk::<4>().ok_or(bad)?;
    let len = u32::from_le_bytes(*len) as usize;
    if rest.len() < len {
        return Err("range filter block shorter than its key map");
    }
    let (map, filter) = rest.split_at(len);
    Ok((u64::from_le_bytes(*distinct), map, filter))
}

impl TableKeyMap {
    /// The `u64` of one of the table's keys (`prefix_source` is its
    /// smallest key, whose bytes key map 1's common prefix is taken from).
    pub(crate) fn code(&self, prefix_source: &[u8], key: &[u8]) -> u64 {
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
pub(crate) fn top8_range(
    prefix: &[u8],
    shift: u32,
    lo: Bound<&[u8]>,
    hi: Bound<&[u8]>,
) -> Option<(u64, u64)> {
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
