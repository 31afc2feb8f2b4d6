//! [`TableCursor`]: a table's entries inside a key range, forward or
//! backward, read one data block at a time as the cursor reaches it.
//!
//! Nothing is read when the cursor is made. The first call finds the first
//! block that can hold a key inside the range from the index (in memory),
//! reads it and seeks inside it ([`BlockCursor`]); later calls step through
//! it and move to the next block only while the index says that block can
//! still hold keys inside the range, so a scan that ends inside a block
//! reads no block after it. Scans and compactions read blocks around the
//! block cache, as `cache.rs` explains.

use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use super::Table;
use crate::block::{BlockCursor, Direction};
use crate::error::{Error, Result};
use crate::keys::{after_start, before_end};
use crate::memtable::Entry;
use crate::stats::{inc, Counters};

/// What a scan's cursor counts.
#[derive(Debug, Clone)]
pub(crate) struct CursorCounts {
    pub counters: Arc<Counters>,
    /// For a table a prefix or range filter let through: the scan's flags
    /// and this table's place among them.
    pub maybe: Option<(Arc<[FilterMaybe]>, u32)>,
}

/// Which filters let a scan into a table. The first cursor over the table
/// (either way) that finds nothing inside the range counts a false positive
/// for each of them and settles the flag; a cursor that finds an entry
/// settles it too, so two cursors count at most once.
#[derive(Debug)]
pub(crate) struct FilterMaybe {
    settled: AtomicBool,
    /// A prefix filter said "maybe".
    prefix: bool,
    /// A range filter said "maybe".
    range: bool,
}

impl FilterMaybe {
    /// The filters that said "maybe", or `None` if none did.
    pub(crate) fn new(prefix: bool, range: bool) -> Option<FilterMaybe> {
        (prefix || range).then_some(FilterMaybe {
            settled: AtomicBool::new(false),
            prefix,
            range,
        })
    }
}

enum State {
    /// No block read yet.
    Unstarted,
    /// On an entry of block `block`.
    On {
        block: usize,
        cursor: BlockCursor,
    },
    Done,
}

/// A table's entries inside `lo..hi` (see the module docs).
pub(crate) struct TableCursor {
    table: Arc<Table>,
    direction: Direction,
    lo: Bound<Vec<u8>>,
    hi: Bound<Vec<u8>>,
    state: State,
    counts: Option<CursorCounts>,
    /// Whether an entry inside the range was found yet.
    found: bool,
}

impl Table {
    /// A cursor over this table's entries with keys inside `lo..hi`, in
    /// `direction` order. Reads nothing until it is first advanced.
    pub(crate) fn cursor(
        self: &Arc<Self>,
        direction: Direction,
        lo: Bound<Vec<u8>>,
        hi: Bound<Vec<u8>>,
    ) -> TableCursor {
        TableCursor {
            table: Arc::clone(self),
            direction,
            lo,
            hi,
            state: State::Unstarted,
            counts: None,
            found: false,
        }
    }
}

impl TableCursor {
    /// Counts the blocks this cursor reads (and a prefix false positive)
    /// into a scan's counters.
    pub(crate) fn counted(mut self, counts: CursorCounts) -> Self {
        self.counts = Some(counts);
        self
    }

    fn lo(&self) -> Bound<&[u8]> {
        self.lo.as_ref().map(Vec::as_slice)
    }

    fn hi(&self) -> Bound<&[u8]> {
        self.hi.as_ref().map(Vec::as_slice)
    }

    /// Reads block `b` and moves to its first entry inside `bound` (in the
    /// cursor's direction); `None` if it has none.
    fn open_block(&self, b: usize, bound: Bound<&[u8]>) -> Result<Option<BlockCursor>> {
        let t = &self.table;
        let data = t.scan_block(b)?;
        if let Some(c) = &self.counts {
            inc(&c.counters.scan_blocks_read);
        }
        let corrupt = |what| Error::corruption(t.name(), what);
        let mut cursor = BlockCursor::new(data, self.direction).map_err(corrupt)?;
        Ok(cursor.seek(bound).map_err(corrupt)?.then_some(cursor))
    }

    /// The block to start in: forward, the first whose last key is at or
    /// past `lo`; backward, the first whose last key is past `hi` (the last
    /// block if none is), since it may hold keys at or before `hi`.
    fn first_block(&self) -> Option<usize> {
        let index = &self.table.index;
        match self.direction {
            Direction::Forward => {
                let b = index.partition_point(|(last, _)| !after_start(last, self.lo()));
                (b < index.len()).then_some(b)
            }
            Direction::Backward => {
                let b = index.partition_point(|(last, _)| before_end(last, self.hi()));
                (!index.is_empty()).then(|| b.min(index.len() - 1))
            }
        }
    }

    /// The block after `b` in the cursor's direction, if it can hold keys
    /// inside the range.
    fn next_block(&self, b: usize) -> Option<usize> {
        let index = &self.table.index;
        match self.direction {
            // Every key of the next block is above this block's last key.
            Direction::Forward => {
                (before_end(&index[b].0, self.hi()) && b + 1 < index.len()).then_some(b + 1)
            }
            // Every key of the block before is at or below its last key.
            Direction::Backward => (b > 0 && after_start(&index[b - 1].0, self.lo())).then(|| b - 1),
        }
    }

    /// Moves to the next entry inside the table; `false` past its end (or
    /// past the range, as far as the index can tell).
    fn advance(&mut self) -> Result<bool> {
        let mut block = match &mut self.state {
            State::Done => return Ok(false),
            State::On { block, cursor } => {
                let b = *block;
                if cursor
                    .step()
                    .map_err(|what| Error::corruption(self.table.name(), what))?
                {
                    return Ok(true);
                }
                self.next_block(b)
            }
            State::Unstarted => {
                let start = self.first_block();
                if let Some(b) = start {
                    let bound = match self.direction {
                        Direction::Forward => self.lo(),
                        Direction::Backward => self.hi(),
                    };
                    if let Some(cursor) = self.open_block(b, bound)? {
                        self.state = State::On { block: b, cursor };
                        return Ok(true);
                    }
                }
                start.and_then(|b| self.next_block(b))
            }
        };
        while let Some(b) = block {
            if let Some(cursor) = self.open_block(b, Bound::Unbounded)? {
                self.state = State::On { block: b, cursor };
                return Ok(true);
            }
            block = self.next_block(b);
        }
        self.state = State::Done;
        Ok(false)
    }

    /// The cursor is done; counts a false positive of each filter that let
    /// the scan into a table where it found nothing.
    fn finish(&mut self) {
        self.state = State::Done;
        if self.found {
            return;
        }
        if let Some(CursorCounts {
            counters,
            maybe: Some((all, i)),
        }) = &self.counts
        {
            let m = &all[*i as usize];
            if !m.settled.swap(true, Relaxed) {
                if m.prefix {
                    inc(&counters.prefix_false_positives);
                }
                if m.range {
                    inc(&counters.range_false_positives);
                }
            }
        }
    }
}

impl Iterator for TableCursor {
    type Item = Result<(Vec<u8>, Entry)>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.advance() {
            Ok(true) => {}
            Ok(false) => {
                self.finish();
                return None;
            }
            Err(e) => {
                self.state = State::Done;
                return Some(Err(e));
            }
        }
        let State::On { cursor, .. } = &self.state else {
            return None;
        };
        let (Some(key), Some(entry)) = (cursor.key(), cursor.entry()) else {
            return None;
        };
        let inside = match self.direction {
            Direction::Forward => before_end(key, self.hi()),
            Direction::Backward => after_start(key, self.lo()),
        };
        if !inside {
            self.finish();
            return None;
        }
        let key = key.to_vec();
        if !self.found {
            self.found = true;
            if let Some(CursorCounts {
                maybe: Some((all, i)),
                ..
            }) = &self.counts
            {
                // Found: whatever the other direction finds, the filters
                // were right about this table.
                all[*i as usize].settled.store(true, Relaxed);
            }
        }
        Some(Ok((key, entry)))
    }
}
