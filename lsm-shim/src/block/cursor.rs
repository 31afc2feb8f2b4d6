//! [`BlockCursor`]: one entry at a time through a data block, forward or
//! backward, for scans.
//!
//! A scan positions a cursor on the first entry inside its range (a binary
//! search over the restarts, then at most one restart interval decoded) and
//! steps from there, decoding each key into one reused buffer and handing
//! out values as ranges of the block's bytes: a scan that stops after a few
//! entries decodes a few entries, not the block. Backward, the cursor decodes
//! one restart interval (at most `RESTART_INTERVAL` entries) into a small
//! stack and pops it, then the interval before; that is how LevelDB's block
//! iterator goes back, since prefix-compressed keys can only be decoded
//! forward.
//!
//! Keys must strictly increase through the block, across intervals too; a
//! block that breaks that (or any bound) is an error, never a panic.

use std::ops::{Bound, Range};

use super::{next_entry, Block, BlockError};
use crate::cache::CachedBlock;
use crate::coding::Cursor;
use crate::keys::{after_start, before_end};
use crate::memtable::Entry;

/// Which way a cursor moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Ascending keys.
    Forward,
    /// Descending keys.
    Backward,
}

/// The entry a cursor is on: its key's bytes and its value's (`None` for a
/// tombstone), as ranges.
#[derive(Debug, Clone)]
struct Held {
    key: Range<usize>,
    value: Option<Range<usize>>,
}

/// A cursor over one data block (see the module docs).
pub(crate) struct BlockCursor {
    data: CachedBlock,
    /// Bytes of entries before the restart array.
    entries_len: usize,
    restarts: usize,
    direction: Direction,
    /// Forward: the offset of the next entry to decode.
    next: usize,
    /// Forward: the current key; backward: the keys of the decoded
    /// interval, one after another.
    keys: Vec<u8>,
    /// Backward: the decoded interval's entries not yet popped, the current
    /// one last.
    stack: Vec<Held>,
    /// Backward: the interval decoded into `stack`.
    interval: usize,
    /// Backward: the length of that interval's first key (the first in
    /// `keys`), which the keys of the interval before it must be below.
    first_key_len: usize,
    /// The entry the cursor is on, if any.
    current: Option<Held>,
}

impl BlockCursor {
    /// A cursor over `data`, not yet on an entry: call
    /// [`seek`](Self::seek). Checks the block's restart array.
    pub(crate) fn new(data: CachedBlock, direction: Direction) -> Result<Self, BlockError> {
        let (entries_len, restarts) = {
            let b = Block::new(&data)?;
            (b.entries.len(), b.num_restarts())
        };
        Ok(BlockCursor {
            data,
            entries_len,
            restarts,
            direction,
            next: 0,
            keys: Vec::new(),
            stack: Vec::new(),
            interval: 0,
            first_key_len: 0,
            current: None,
        })
    }

    fn block(&self) -> Block<'_> {
        Block {
            entries: &self.data[..self.entries_len],
            restarts: &self.data[self.entries_len..self.entries_len + 4 * self.restarts],
        }
    }

    /// The key of restart point `i`.
    fn restart_key(&self, i: usize) -> Result<Vec<u8>, BlockError> {
        let b = self.block();
        let mut pos = b.restart(i)?;
        Ok(b.decode_at(&mut pos, &[])?.key)
    }

    /// The number of restarts whose key satisfies `keep` from the first on,
    /// where `keep` holds for a prefix of the restarts (binary search).
    fn restarts_where(&self, keep: impl Fn(&[u8]) -> bool) -> Result<usize, BlockError> {
        let (mut lo, mut hi) = (0, self.restarts);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if keep(&self.restart_key(mid)?) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// Moves to the first entry inside `bound`: forward, the least key at or
    /// past a lower bound; backward, the greatest key at or before an upper
    /// bound. `false` if the block has none.
    pub(crate) fn seek(&mut self, bound: Bound<&[u8]>) -> Result<bool, BlockError> {
        self.current = None;
        match self.direction {
            Direction::Forward => {
                // Start at the last restart below the bound: every entry
                // before it is below the bound too.
                let below = self.restarts_where(|k| !after_start(k, bound))?;
                self.next = match below {
                    0 => 0,
                    n => self.block().restart(n - 1)?,
                };
                self.keys.clear();
                while self.step()? {
                    if self.key().is_some_and(|k| after_start(k, bound)) {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Direction::Backward => {
                // The last restart inside the bound starts the interval that
                // holds the greatest key inside it.
                let inside = self.restarts_where(|k| before_end(k, bound))?;
                if inside == 0 {
                    return Ok(false);
                }
                self.decode_interval(inside - 1, None)?;
                while let Some(top) = self.stack.pop() {
                    if before_end(&self.keys[top.key.clone()], bound) {
                        self.current = Some(top);
                        return Ok(true);
                    }
                }
                // The restart key itself was inside: unreachable for a
                // well-formed interval, an error for a damaged one.
                Err("block restart key out of order")
            }
        }
    }

    /// Moves one entry on in the cursor's direction; `false` at the end of
    /// the block.
    pub(crate) fn step(&mut self) -> Result<bool, BlockError> {
        match self.direction {
            Direction::Forward => self.step_forward(),
            Direction::Backward => self.step_backward(),
        }
    }

    fn step_forward(&mut self) -> Result<bool, BlockError> {
        if self.next >= self.entries_len {
            self.current = None;
            return Ok(false);
        }
        let entries = &self.data[..self.entries_len];
        let mut c = Cursor::new(&entries[self.next..]);
        let (shared, suffix, value) = next_entry(&mut c, self.keys.len())?;
        let end = self.entries_len - c.remaining().len();
        // The new key is the old one's first `shared` bytes and `suffix`:
        // above the old key exactly when `suffix` is above the rest of it.
        if self.current.is_some() && suffix <= &self.keys[shared..] {
            return Err("block keys out of order");
        }
        let value = value.map(|v| end - v.len()..end);
        self.keys.truncate(shared);
        self.keys.extend_from_slice(suffix);
        self.next = end;
        self.current = Some(Held {
            key: 0..self.keys.len(),
            value,
        });
        Ok(true)
    }

    fn step_backward(&mut self) -> Result<bool, BlockError> {
        if let Some(top) = self.stack.pop() {
            self.current = Some(top);
            return Ok(true);
        }
        self.current = None;
        if self.interval == 0 {
            return Ok(false);
        }
        let boundary = self.keys[..self.first_key_len].to_vec();
        self.decode_interval(self.interval - 1, Some(&boundary))?;
        self.current = self.stack.pop();
        Ok(self.current.is_some())
    }

    /// Decodes restart interval `i` into the stack, checking its keys
    /// increase and stay below `boundary` (the first key of the interval
    /// after it, when that one was decoded first).
    fn decode_interval(&mut self, i: usize, boundary: Option<&[u8]>) -> Result<(), BlockError> {
        let b = self.block();
        let start = b.restart(i)?;
        let end = match i + 1 < self.restarts {
            true => b.restart(i + 1)?,
            false => self.entries_len,
        };
        if end < start {
            return Err("block restarts out of order");
        }
        self.keys.clear();
        self.stack.clear();
        let entries = &self.data[..end];
        let mut c = Cursor::new(&entries[start..]);
        let mut prev: Range<usize> = 0..0;
        while !c.is_empty() {
            let (shared, suffix, value) = next_entry(&mut c, prev.len())?;
            let at = end - c.remaining().len();
            if !self.stack.is_empty() && suffix <= &self.keys[prev.start + shared..prev.end] {
                return Err("block keys out of order");
            }
            let key_start = self.keys.len();
            self.keys.extend_from_within(prev.start..prev.start + shared);
            self.keys.extend_from_slice(suffix);
            prev = key_start..self.keys.len();
            self.stack.push(Held {
                key: prev.clone(),
                value: value.map(|v| at - v.len()..at),
            });
        }
        if let (Some(last), Some(boundary)) = (self.stack.last(), boundary) {
            if self.keys[last.key.clone()] >= *boundary {
                return Err("block keys out of order");
            }
        }
        self.first_key_len = self.stack.first().map_or(0, |h| h.key.len());
        self.interval = i;
        Ok(())
    }

    /// The key of the entry the cursor is on.
    pub(crate) fn key(&self) -> Option<&[u8]> {
        Some(&self.keys[self.current.as_ref()?.key.clone()])
    }

    /// The entry the cursor is on, copied out.
    pub(crate) fn entry(&self) -> Option<Entry> {
        let held = self.current.as_ref()?;
        Some(match &held.value {
            Some(v) => Entry::Value(self.data[v.clone()].to_vec()),
            None => Entry::Tombstone,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::BlockBuilder;
    use proptest::prelude::*;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    type Model = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

    fn build(map: &Model) -> CachedBlock {
        let mut b = BlockBuilder::default();
        for (k, v) in map {
            b.add(k, v.as_deref());
        }
        Arc::new(b.finish())
    }

    fn entry(v: &Option<Vec<u8>>) -> Entry {
        v.clone().map_or(Entry::Tombstone, Entry::Value)
    }

    /// Everything a cursor yields from `bound` on.
    fn walk(data: &CachedBlock, d: Direction, bound: Bound<&[u8]>) -> Vec<(Vec<u8>, Entry)> {
        let mut c = BlockCursor::new(data.clone(), d).unwrap();
        let mut out = Vec::new();
        let mut on = c.seek(bound).unwrap();
        while on {
            out.push((c.key().unwrap().to_vec(), c.entry().unwrap()));
            on = c.step().unwrap();
        }
        out
    }

    fn bound(kind: u8, k: &[u8]) -> Bound<&[u8]> {
        match kind {
            0 => Bound::Unbounded,
            1 => Bound::Included(k),
            _ => Bound::Excluded(k),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, rng_seed: proptest::test_runner::RngSeed::Fixed(5), ..ProptestConfig::default() })]

        // Either way, from any bound, the cursor yields what the model holds
        // past that bound, in order: across restart intervals (more than 16
        // entries) and with keys that share long prefixes.
        #[test]
        fn a_cursor_yields_the_model_from_any_bound(
            map in proptest::collection::btree_map(
                proptest::collection::vec(0u8..3, 0..7),
                proptest::option::of(proptest::collection::vec(any::<u8>(), 0..4)),
                0..70),
            at in proptest::collection::vec(0u8..3, 0..7),
            kind in 0u8..3,
        ) {
            let data = build(&map);
            let b = bound(kind, &at);
            let forward: Vec<_> = map
                .iter()
                .filter(|(k, _)| after_start(k, b))
                .map(|(k, v)| (k.clone(), entry(v)))
                .collect();
            prop_assert_eq!(walk(&data, Direction::Forward, b), forward);
            let backward: Vec<_> = map
                .iter()
                .rev()
                .filter(|(k, _)| before_end(k, b))
                .map(|(k, v)| (k.clone(), entry(v)))
                .collect();
            prop_assert_eq!(walk(&data, Direction::Backward, b), backward);
        }

        #[test]
        fn damaged_blocks_never_panic(data: Vec<u8>, at: Vec<u8>, kind in 0u8..3) {
            let data = Arc::new(data);
            for d in [Direction::Forward, Direction::Backward] {
                if let Ok(mut c) = BlockCursor::new(data.clone(), d) {
                    let mut on = c.seek(bound(kind, &at));
                    for _ in 0..100 {
                        match on {
                            Ok(true) => {
                                let _ = c.entry();
                                on = c.step();
                            }
                            _ => break,
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn keys_out_of_order_are_an_error_both_ways() {
        // Two restart intervals whose keys go down across the boundary: each
        // interval is in order on its own.
        let mut b = BlockBuilder::default();
        for i in 0..16u8 {
            b.add(&[b'm', i], None);
        }
        let mut first = b.finish();
        let mut second = BlockBuilder::default();
        second.add(b"a", Some(b"x"));
        let second = second.finish();
        // Splice: the entries of both, then both restart arrays.
        let (e1, r1) = first.split_at(first.len() - 8);
        let (e2, _) = second.split_at(second.len() - 8);
        let mut spliced = e1.to_vec();
        let second_at = spliced.len() as u32;
        spliced.extend_from_slice(e2);
        spliced.extend_from_slice(&r1[..4]);
        spliced.extend_from_slice(&second_at.to_le_bytes());
        spliced.extend_from_slice(&2u32.to_le_bytes());
        first = spliced;
        let data = Arc::new(first);
        for d in [Direction::Forward, Direction::Backward] {
            let mut c = BlockCursor::new(data.clone(), d).unwrap();
            let mut r = c.seek(Bound::Unbounded);
            while let Ok(true) = r {
                r = c.step();
            }
            assert!(r.is_err(), "{d:?}");
        }
    }
}
