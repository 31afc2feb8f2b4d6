//! The writer's side of a table's range filter: its keys, kept until the
//! last one is known, then the [`KeyMap`] fitted to them (and coarsened
//! where the store's latest scans gain by it: [`amq::range::fit_to_scans`]),
//! their `u64`s, and the block that holds both map and filter; or, where
//! the keys' differences pass 64 bits and the scans do not favour the map
//! ([`amq::range::infix_for_scans`]), an infix filter of the keys
//! themselves (`range_filter.rs` has the formats and reads them).

use amq::range::{
    fit_to_scans, infix_for_scans, key_to_u64, InfixRange, KeyMap, KeyMapBuilder, RangeSizing, SampledScans,
};

use super::range_filter::width_shift;

/// A table's keys as its range filter takes them (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct RangeKeys {
    /// Every key's bytes, one after another.
    bytes: Vec<u8>,
    /// Where each key ends in `bytes`.
    ends: Vec<usize>,
    map: KeyMapBuilder,
    /// The store's latest scans, which the map is fitted to.
    scans: SampledScans,
}

/// What a table's range filter is built from.
pub(crate) struct MappedKeys {
    /// The map the codes are in: the fitted one, or (`Some(width)`) key
    /// map 1 where that loses nothing and the fitted map would save less
    /// than [`TOP8_WITHIN_BITS`]: it is cheaper to apply to a scan's
    /// bounds.
    pub(crate) top8: Option<u8>,
    pub(crate) map: KeyMap,
    /// The keys' distinct `u64`s, in order.
    pub(crate) codes: Vec<u64>,
    /// The table's distinct keys (more than `codes` where the map is not
    /// exact).
    pub(crate) distinct_keys: u64,
    /// The filter's sizing: the level's, or for a coarsened map the one
    /// that keeps its memory.
    pub(crate) sizing: RangeSizing,
    /// The infix filter of the keys, where it takes the place of the map
    /// and its codes (key map 4).
    pub(crate) infix: Option<InfixRange>,
}

impl RangeKeys {
    /// No keys yet; the map will be fitted to `scans`.
    pub(crate) fn new(scans: SampledScans) -> Self {
        RangeKeys {
            scans,
            ..RangeKeys::default()
        }
    }

    /// Records the next key; keys come in increasing order (a key may
    /// repeat, once per version).
    pub(crate) fn add(&mut self, key: &[u8]) {
        if self.last() == Some(key) {
            return;
        }
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
        self.map.add(key);
    }

    /// The last key recorded.
    fn last(&self) -> Option<&[u8]> {
        let n = self.ends.len();
        let start = if n >= 2 { self.ends[n - 2] } else { 0 };
        self.ends.last().map(|&end| &self.bytes[start..end])
    }

    /// The map fitted to the keys (and to the scans), and their distinct
    /// `u64`s in order, for a filter sized by `sizing`.
    pub(crate) fn finish(self, sizing: RangeSizing) -> MappedKeys {
        let map = self.map.finish();
        let bytes = &self.bytes;
        let keys = || {
            let starts = std::iter::once(0).chain(self.ends.iter().copied());
            starts.zip(self.ends.iter().copied()).map(|(a, b)| &bytes[a..b])
        };
        // Key map 1 is exact when every key ends within 8 bytes past the
        // prefix the smallest and largest share.
        let (first, last) = (keys().next().unwrap_or(&[]), keys().last().unwrap_or(&[]));
        let prefix = first.iter().zip(last).take_while(|(a, b)| a == b).count();
        let longest = keys().map(<[u8]>::len).max().unwrap_or(0);
        let width = longest.saturating_sub(prefix);
        let top8 = (width <= 8 && map.bits() > 8.0 * width as f64 - TOP8_WITHIN_BITS).then_some(width as u8);
        let mut codes = Vec::with_capacity(self.ends.len());
        for k in keys() {
            codes.push(match top8 {
                Some(w) => key_to_u64(k, &first[..prefix])
                    .checked_shr(width_shift(w))
                    .unwrap_or(0),
                None => map.map(k),
            });
        }
        // In order already: the map never decreases.
        codes.dedup();
        let mut mapped = MappedKeys {
            top8,
            map,
            codes,
            distinct_keys: self.ends.len() as u64,
            sizing,
            infix: None,
        };
        if top8.is_none() {
            let sorted: Vec<&[u8]> = keys().collect();
            mapped.fit(&sorted, &self.scans.ranges());
        }
        mapped
    }
}

impl MappedKeys {
    /// The infix filter of the keys (`sorted`, distinct) where their
    /// differences pass the map's 64 bits and `scans` do not favour the
    /// map; else the map coarsened where `scans` gain by it (key map 1
    /// tables are random binary keys, whose scans would not).
    fn fit(&mut self, sorted: &[&[u8]], scans: &[amq::range::ScanRange<'_>]) {
        let fit = fit_to_scans(&self.map, &self.codes, scans, self.sizing);
        if let Some(infix) = infix_for_scans(&self.map, &fit, sorted, scans, self.sizing) {
            self.infix = Some(infix);
            return;
        }
        if fit.shift == 0 {
            return;
        }
        let Ok(map) = self.map.clone().coarsened(fit.shift) else {
            return;
        };
        self.map = map;
        for c in &mut self.codes {
            *c >>= fit.shift;
        }
        self.codes.dedup();
        self.sizing = fit.sizing;
    }
}

/// How close to key map 1's `8 × width` bits the fitted map may come and
/// still lose to it: within this, key map 1's false positives are at most
/// `2^0.05 ≈ 1.035` times the fitted map's, and it maps a bound in a few
/// nanoseconds instead of a few per varying byte.
pub(crate) const TOP8_WITHIN_BITS: f64 = 0.05;

/// The range filter block of `keys`' map and the filter built from their
/// codes (key map 2; key map 1's block is the filter alone).
pub(crate) fn encode_block(keys: &MappedKeys, filter: &[u8]) -> Vec<u8> {
    let map = keys.map.to_bytes();
    let mut out = Vec::with_capacity(12 + map.len() + filter.len());
    out.extend_from_slice(&keys.distinct_keys.to_le_bytes());
    out.extend_from_slice(&(map.len() as u32).to_le_bytes());
    out.extend_from_slice(&map);
    out.extend_from_slice(filter);
    out
}

#[cfg(test)]
mod tests {
    use super::super::range_filter::decode_block;
    use super::*;

    #[test]
    fn keys_get_their_codes_in_order_and_versions_count_once() {
        let mut r = RangeKeys::default();
        for k in ["k000998", "k000999", "k000999", "k001000", "k001001"] {
            r.add(k.as_bytes());
        }
        let m = r.finish(RangeSizing::BitsPerKey(16.0));
        assert_eq!(m.distinct_keys, 4);
        assert!(m.map.is_exact());
        assert_eq!(m.codes.len(), 4);
        assert!(m.codes.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(m.codes[1] - m.codes[0], 1);
        let block = encode_block(&m, b"filter");
        let (distinct, map, filter) = decode_block(&block).unwrap();
        assert_eq!((distinct, filter), (4, &b"filter"[..]));
        assert_eq!(KeyMap::from_bytes(map).unwrap(), m.map);
        for n in 0..12 {
            assert!(decode_block(&block[..n]).is_err());
        }
    }

    #[test]
    fn random_binary_keys_keep_key_map_one() {
        let mut values: Vec<u64> = (0..5_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        values.sort_unstable();
        let mut r = RangeKeys::default();
        for v in &values {
            r.add(&[b"u".as_slice(), &v.to_be_bytes()].concat());
        }
        let m = r.finish(RangeSizing::BitsPerKey(16.0));
        assert_eq!(m.top8, Some(8));
        // The eight bytes past `u`, as the reader maps them.
        assert_eq!(m.codes, values);
        // Decimal keys: the fitted map saves bits, so it is kept.
        let mut r = RangeKeys::default();
        for i in 0..1_000u32 {
            r.add(format!("id{i:08}").as_bytes());
        }
        let m = r.finish(RangeSizing::BitsPerKey(16.0));
        assert_eq!(m.top8, None);
        assert_eq!(m.codes, (0..1_000u64).collect::<Vec<_>>());
    }
}
