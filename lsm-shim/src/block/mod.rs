//! The sorted block: how data blocks and the index block store their entries.
//!
//! ```text
//! entry*  restart: u32 LE * R  R: u32 LE
//! entry = shared: varint  unshared: varint  tag: varint  key[shared..]  value
//! tag   = 0 for a tombstone, value length + 1 for a value
//! ```
//!
//! Keys are prefix-compressed against the previous key (`shared` bytes reused),
//! except at a *restart* every [`RESTART_INTERVAL`] entries, which stores its
//! key whole and is listed in the restart array. A lookup binary-searches the
//! restarts, then scans at most one interval. This is LevelDB's block layout.
//! Every decode is bounds-checked: a damaged block gives an error, not a panic.
//! Scans move through a block with a [`BlockCursor`] (`cursor.rs`).

mod cursor;

use std::cmp::Ordering;

use crate::coding::{put_u32, put_varint, Cursor};
use crate::memtable::Entry;

pub(crate) use cursor::{BlockCursor, Direction};

/// Entries between two restart points.
pub(crate) const RESTART_INTERVAL: usize = 16;

/// Why a block could not be decoded (the caller names the file).
pub(crate) type BlockError = &'static str;

#[derive(Debug, Default)]
pub(crate) struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    last_key: Vec<u8>,
    entries: usize,
}

impl BlockBuilder {
    /// Appends an entry; keys must come in strictly increasing order.
    pub(crate) fn add(&mut self, key: &[u8], value: Option<&[u8]>) {
        debug_assert!(
            self.entries == 0 || key > self.last_key.as_slice(),
            "keys out of order"
        );
        let shared = if self.entries.is_multiple_of(RESTART_INTERVAL) {
            self.restarts.push(self.buf.len() as u32);
            0
        } else {
            key.iter().zip(&self.last_key).take_while(|(a, b)| a == b).count()
        };
        put_varint(&mut self.buf, shared as u64);
        put_varint(&mut self.buf, (key.len() - shared) as u64);
        put_varint(&mut self.buf, value.map_or(0, |v| v.len() as u64 + 1));
        self.buf.extend_from_slice(&key[shared..]);
        if let Some(v) = value {
            self.buf.extend_from_slice(v);
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.entries += 1;
    }

    /// Bytes the block would have if finished now.
    pub(crate) fn estimated_len(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries == 0
    }

    pub(crate) fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// The finished block; the builder is left empty for the next one.
    pub(crate) fn finish(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.buf);
        for &r in &self.restarts {
            put_u32(&mut out, r);
        }
        put_u32(&mut out, self.restarts.len() as u32);
        self.restarts.clear();
        self.last_key.clear();
        self.entries = 0;
        out
    }
}

/// A decoded-on-demand view of a finished block.
#[derive(Debug)]
pub(crate) struct Block<'a> {
    entries: &'a [u8],
    restarts: &'a [u8],
}

/// One decoded entry: the full key and the raw value (`None` = tombstone).
pub(crate) struct RawEntry<'a> {
    pub key: Vec<u8>,
    pub value: Option<&'a [u8]>,
}

impl RawEntry<'_> {
    pub(crate) fn to_entry(&self) -> Entry {
        match self.value {
            Some(v) => Entry::Value(v.to_vec()),
            None => Entry::Tombstone,
        }
    }
}

impl<'a> Block<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Result<Self, BlockError> {
        let n = data
            .len()
            .checked_sub(4)
            .ok_or("block shorter than its restart count")?;
        let count = u32::from_le_bytes(data[n..].try_into().map_err(|_| "block restart count")?) as usize;
        let restarts_at = count
            .checked_mul(4)
            .and_then(|b| n.checked_sub(b))
            .ok_or("block restart array longer than the block")?;
        if count == 0 && restarts_at != 0 {
            return Err("block has entries but no restart point");
        }
        let block = Block {
            entries: &data[..restarts_at],
            restarts: &data[restarts_at..n],
        };
        if count > 0 && block.restart(0)? != 0 {
            return Err("block's first restart is not at its start");
        }
        Ok(block)
    }

    fn num_restarts(&self) -> usize {
        self.restarts.len() / 4
    }

    fn restart(&self, i: usize) -> Result<usize, BlockError> {
        let b = self.restarts.get(4 * i..4 * i + 4).ok_or("restart index")?;
        let off = u32::from_le_bytes(b.try_into().map_err(|_| "restart")?) as usize;
        if off > self.entries.len() {
            return Err("restart offset outside the block");
        }
        Ok(off)
    }

    /// Decodes the entry at `*pos` given the previous key, advancing `*pos`.
    fn decode_at(&self, pos: &mut usize, prev_key: &[u8]) -> Result<RawEntry<'a>, BlockError> {
        let entries: &'a [u8] = self.entries;
        let mut c = Cursor::new(&entries[*pos..]);
        let (shared, suffix, value) = next_entry(&mut c, prev_key.len())?;
        *pos = entries.len() - c.remaining().len();
        let mut key = Vec::with_capacity(shared + suffix.len());
        key.extend_from_slice(&prev_key[..shared]);
        key.extend_from_slice(suffix);
        Ok(RawEntry { key, value })
    }

    /// The entry whose key equals `target`, if any.
    pub(crate) fn get(&self, target: &[u8]) -> Result<Option<RawEntry<'a>>, BlockError> {
        // Binary search for the last restart whose key is <= target.
        let (mut lo, mut hi) = (0usize, self.num_restarts());
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            let mut pos = self.restart(mid)?;
            let e = self.decode_at(&mut pos, &[])?;
            match e.key.as_slice().cmp(target) {
                Ordering::Greater => hi = mid,
                _ => lo = mid,
            }
        }
        if self.num_restarts() == 0 {
            return Ok(None);
        }
        let mut pos = self.restart(lo)?;
        let end = if lo + 1 < self.num_restarts() {
            self.restart(lo + 1)?
        } else {
            self.entries.len()
        };
        let mut prev = Vec::new();
        while pos < end {
            let e = self.decode_at(&mut pos, &prev)?;
            match e.key.as_slice().cmp(target) {
                Ordering::Equal => return Ok(Some(e)),
                Ordering::Greater => return Ok(None),
                Ordering::Less => prev = e.key,
            }
        }
        Ok(None)
    }

    /// Calls `f(key, value)` for every entry in order (`None` = tombstone),
    /// decoding each key into one reused buffer: no allocation per entry,
    /// unlike [`entries`](Self::entries). Key order is not checked.
    pub(crate) fn visit(&self, f: &mut impl FnMut(&[u8], Option<&'a [u8]>)) -> Result<(), BlockError> {
        let entries: &'a [u8] = self.entries;
        let mut key: Vec<u8> = Vec::new();
        let mut c = Cursor::new(entries);
        while !c.is_empty() {
            let (shared, suffix, value) = next_entry(&mut c, key.len())?;
            key.truncate(shared);
            key.extend_from_slice(suffix);
            f(&key, value);
        }
        Ok(())
    }

    /// Every entry, in order; checks that keys strictly increase.
    pub(crate) fn entries(&self) -> Result<Vec<RawEntry<'a>>, BlockError> {
        let mut out: Vec<RawEntry<'a>> = Vec::new();
        let mut pos = 0;
        while pos < self.entries.len() {
            let prev = out.last().map_or(&[][..], |e| e.key.as_slice());
            let e = self.decode_at(&mut pos, prev)?;
            if out.last().is_some_and(|p| p.key >= e.key) {
                return Err("block keys out of order");
            }
            out.push(e);
        }
        Ok(out)
    }
}

/// An entry as stored: bytes shared with the previous key, the key's own
/// suffix, and the value (`None` for a tombstone).
type StoredEntry<'a> = (usize, &'a [u8], Option<&'a [u8]>);

/// Decodes the entry at the cursor, whose previous key is `prev_len` bytes
/// long.
fn next_entry<'a>(c: &mut Cursor<'a>, prev_len: usize) -> Result<StoredEntry<'a>, BlockError> {
    let shared = c.len().ok_or("entry header")?;
    let unshared = c.len().ok_or("entry header")?;
    let tag = c.varint().ok_or("entry header")?;
    if shared > prev_len {
        return Err("entry shares more bytes than the previous key has");
    }
    let suffix = c.take(unshared).ok_or("entry key past the block end")?;
    let value = match tag {
        0 => None,
        t => {
            let len = usize::try_from(t - 1).map_err(|_| "entry value length")?;
            Some(c.take(len).ok_or("entry value past the block end")?)
        }
    };
    Ok((shared, suffix, value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn build(map: &BTreeMap<Vec<u8>, Option<Vec<u8>>>) -> Vec<u8> {
        let mut b = BlockBuilder::default();
        for (k, v) in map {
            b.add(k, v.as_deref());
        }
        b.finish()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, rng_seed: proptest::test_runner::RngSeed::Fixed(1), ..ProptestConfig::default() })]
        #[test]
        fn every_key_is_found_and_others_are_not(
            map in proptest::collection::btree_map(
                proptest::collection::vec(0u8..4, 0..8),
                proptest::option::of(proptest::collection::vec(any::<u8>(), 0..5)),
                0..60),
            probe in proptest::collection::vec(0u8..4, 0..8),
        ) {
            let data = build(&map);
            let block = Block::new(&data).unwrap();
            for (k, v) in &map {
                let e = block.get(k).unwrap().unwrap();
                prop_assert_eq!(&e.key, k);
                prop_assert_eq!(e.value.map(|v| v.to_vec()), v.clone());
            }
            prop_assert_eq!(block.get(&probe).unwrap().is_some(), map.contains_key(&probe));
            let all = block.entries().unwrap();
            prop_assert_eq!(all.len(), map.len());
            let mut visited = Vec::new();
            block.visit(&mut |k, v| visited.push((k.to_vec(), v.map(<[u8]>::to_vec)))).unwrap();
            let expected: Vec<_> = map.clone().into_iter().collect();
            prop_assert_eq!(visited, expected);
        }

        #[test]
        fn damaged_blocks_never_panic(data: Vec<u8>, probe: Vec<u8>) {
            if let Ok(block) = Block::new(&data) {
                let _ = block.get(&probe);
                let _ = block.entries();
                let _ = block.visit(&mut |_, _| {});
            }
        }
    }

    #[test]
    fn empty_block_finds_nothing() {
        let data = BlockBuilder::default().finish();
        let b = Block::new(&data).unwrap();
        assert!(b.get(b"x").unwrap().is_none());
        assert!(b.entries().unwrap().is_empty());
    }
}
