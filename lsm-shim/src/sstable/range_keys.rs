//! The writer's side of a table's range filter: its keys, kept until the
//! last one is known, then the [`KeyMap`] fitted to them, their `u64`s,
//! and the block that holds both map and filter (`ranges.rs` reads it).
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

use amq::range::{KeyMap, KeyMapBuilder};

/// A table's keys as its range filter takes them (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct RangeKeys {
    /// Every key's bytes, one after another.
    bytes: Vec<u8>,
    /// Where each key ends in `bytes`.
    ends: Vec<usize>,
    map: KeyMapBuilder,
}

/// What a table's range filter is built from.
pub(crate) struct MappedKeys {
    pub(crate) map: KeyMap,
    /// The keys' distinct `u64`s, in order.
    pub(crate) codes: Vec<u64>,
    /// The table's distinct keys (more than `codes` where the map is not
    /// exact).
    pub(crate) distinct_keys: u64,
}

impl RangeKeys {
    /// Records the next key; keys come in increasing order (a key may
    /// repeat, once per version).
    pub(crate) fn add(&mut self, key: &[u8]) {
        let start = self.ends.last().copied().unwrap_or(0);
        if self.ends.last().is_some() && &self.bytes[start - self.last_len()..start] == key {
            return;
        }
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
        self.map.add(key);
    }

    fn last_len(&self) -> usize {
        match self.ends.len() {
            0 => 0,
            1 => self.ends[0],
            n => self.ends[n - 1] - self.ends[n - 2],
        }
    }

    /// The map fitted to the keys, and their distinct `u64`s in order.
    pub(crate) fn finish(self) -> MappedKeys {
        let map = self.map.finish();
        let mut codes = Vec::with_capacity(self.ends.len());
        let mut start = 0;
        for &end in &self.ends {
            codes.push(map.map(&self.bytes[start..end]));
            start = end;
        }
        // In order already: the map never decreases.
        codes.dedup();
        MappedKeys {
            map,
            codes,
            distinct_keys: self.ends.len() as u64,
        }
    }
}

/// The range filter block of `keys`' map and the filter built from their
/// codes.
pub(crate) fn encode_block(keys: &MappedKeys, filter: &[u8]) -> Vec<u8> {
    let map = keys.map.to_bytes();
    let mut out = Vec::with_capacity(12 + map.len() + filter.len());
    out.extend_from_slice(&keys.distinct_keys.to_le_bytes());
    out.extend_from_slice(&(map.len() as u32).to_le_bytes());
    out.extend_from_slice(&map);
    out.extend_from_slice(filter);
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_get_their_codes_in_order_and_versions_count_once() {
        let mut r = RangeKeys::default();
        for k in ["k000998", "k000999", "k000999", "k001000", "k001001"] {
            r.add(k.as_bytes());
        }
        let m = r.finish();
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
}
