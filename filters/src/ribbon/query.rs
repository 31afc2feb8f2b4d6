//! The query: where a key's row is (its shard from the shard table, its
//! window in the shard's blocks or lines), and whether the row's result
//! matches, single and batched, with a kernel's `group` and `pair` plugged
//! in.

use super::bumped::Bumped;
use super::layout::Columns;
use super::line_filter::LineShards;
use super::lines;
use super::lines::{Line, LineWindow};
use super::row::{coeff_of, locate_in_shard, result_of, ROW_WIDTH};
use super::solution;
use super::solution::BLOCK_SLOTS;
use super::solution::{GroupWords, Window};
use super::{Layout, Ribbon};
use crate::KeyHash;

/// Keys per batch in `contains_many`: their windows wait on the stack while
/// the prefetches of the whole batch are in flight.
pub(super) const BATCH: usize = 16;

/// Keys ahead in the two-line layout's batch pipeline: with 1.86 lines per
/// key on average, about as many lines in flight as the core tracks.
pub(super) const LINE_DEPTH: usize = 16;

/// A key's row in a two-line filter, located ([`Ribbon::locate_row`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LocatedRow {
    window: LineWindow,
    result: u32,
}

impl Ribbon {
    /// The single query, with `group` computing a column group's parities
    /// and `pair` a line pair's (what a [`Kernel`] plugs in).
    #[inline(always)]
    pub(super) fn contains_by(
        &self,
        hash: u64,
        group: impl Fn(GroupWords<'_>, [u64; 3]) -> u32,
        pair: impl Fn(&Line, &Line, &LineWindow) -> u32,
    ) -> bool {
        let located = match &self.layout {
            Layout::Lines(_) => return self.contains_lines_by::<0>(hash, pair),
            Layout::Compact(s) => s.locate(hash),
            Layout::Legacy(l) => l.locate(hash),
            Layout::Bumped(b) => {
                return match b.locate(hash) {
                    Ok((window, result)) => window.matches(&self.words, result, group),
                    Err(Some((window, result))) => window.matches(&b.second_words, result, group),
                    Err(None) => false,
                };
            }
        };
        match located {
            Some((window, result)) => window.matches(&self.words, result, group),
            None => false,
        }
    }

    /// The batched query: locates a batch of keys first, prefetching their
    /// blocks, then reads them, so the cache misses of a batch overlap.
    #[inline(always)]
    pub(super) fn contains_many_by(
        &self,
        hashes: &[u64],
        out: &mut [bool],
        group: impl Fn(GroupWords<'_>, [u64; 3]) -> u32 + Copy,
        pair: impl Fn(&Line, &Line, &LineWindow) -> u32 + Copy,
    ) {
        if let Layout::Lines(_) = &self.layout {
            return self.contains_many_lines_by::<0>(hashes, out, pair);
        }
        if let Layout::Bumped(b) = &self.layout {
            return self.contains_many_bumped_by(b, hashes, out, group);
        }
        let mut located = [None; BATCH];
        for (hs, os) in hashes.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            for (l, &h) in located.iter_mut().zip(hs) {
                *l = self.locate(h);
                if let Some((window, _)) = l {
                    window.prefetch(&self.words);
                }
            }
            for (o, l) in os.iter_mut().zip(&located) {
                *o = match l {
                    Some((window, result)) => window.matches(&self.words, *result, group),
                    None => false,
                };
            }
        }
    }

    /// The batched query of a bumped filter: as the blocked layouts', each
    /// key's words in the layer or in the second filter.
    #[inline(always)]
    fn contains_many_bumped_by(
        &self,
        b: &Bumped,
        hashes: &[u64],
        out: &mut [bool],
        group: impl Fn(GroupWords<'_>, [u64; 3]) -> u32 + Copy,
    ) {
        let words = |layer: bool| if layer { &self.words } else { &b.second_words };
        let mut located = [(None, true); BATCH];
        for (hs, os) in hashes.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            for (l, &h) in located.iter_mut().zip(hs) {
                *l = match b.locate(h) {
                    Ok(found) => (Some(found), true),
                    Err(found) => (found, false),
                };
                if let (Some((window, _)), layer) = l {
                    window.prefetch(words(*layer));
                }
            }
            for (o, l) in os.iter_mut().zip(&located) {
                *o = match l {
                    (Some((window, result)), layer) => window.matches(words(*layer), *result, group),
                    (None, _) => false,
                };
            }
        }
    }

    /// The single query of a two-line filter, `pair` computing a line
    /// pair's parities: what a two-line filter's [`Kernel`] calls, so the
    /// query compiles without the other layouts' code around it (which
    /// cost it a dispatch and six saved registers per call). `R` is the
    /// shape of the filter's lines (`LineShards::shape`), its line kinds
    /// then constants, or 0 for any.
    #[inline(always)]
    pub(super) fn contains_lines_by<const R: u32>(
        &self,
        hash: u64,
        pair: impl Fn(&Line, &Line, &LineWindow) -> u32,
    ) -> bool {
        let Layout::Lines(l) = &self.layout else {
            return self.contains_portable(hash);
        };
        if R != 0 && l.shape() != R {
            return self.contains_portable(hash);
        }
        match l.locate::<R>(hash) {
            Some((window, result)) => window.matches(&l.lines, result, pair),
            None => false,
        }
    }

    /// The batched query of a two-line filter, as [`contains_lines_by`](Self::contains_lines_by).
    #[inline(always)]
    pub(super) fn contains_many_lines_by<const R: u32>(
        &self,
        hashes: &[u64],
        out: &mut [bool],
        pair: impl Fn(&Line, &Line, &LineWindow) -> u32 + Copy,
    ) {
        let l = match &self.layout {
            Layout::Lines(l) if R == 0 || l.shape() == R => l,
            _ => {
                for (o, &h) in out.iter_mut().zip(hashes) {
                    *o = self.contains_portable(h);
                }
                return;
            }
        };
        // A software pipeline: key `i + LINE_DEPTH` is located and its
        // lines prefetched just before key `i` is answered, so the
        // arithmetic of one key overlaps the misses of the next ones.
        //
        // Written out rather than through `prefetch::pipelined`: there
        // the locating closure, called from two places, was not inlined,
        // and its result went through memory (stored in pieces, loaded
        // whole: a store-forwarding stall on 15% of the samples at 1M).
        // The head, the steady state and the tail are separate loops, and
        // an empty shard's key gets a window that never matches instead of
        // a `None`, so the steady loop has no branch but its own (faster
        // than one loop testing both conditions on every key).
        if l.seeds.is_empty() && l.bump.is_none() {
            out.fill(false); // no keys
            return;
        }
        let n = hashes.len().min(out.len());
        let mut ring = [LineShards::NEVER; LINE_DEPTH];
        for (slot, &h) in ring.iter_mut().zip(hashes) {
            *slot = l.locate_prefetched::<R>(h);
        }
        for (i, (o, &h)) in out
            .iter_mut()
            .zip(hashes.get(LINE_DEPTH..n).unwrap_or(&[]))
            .enumerate()
        {
            let slot = &mut ring[i & (LINE_DEPTH - 1)];
            *o = slot.0.matches(&l.lines, slot.1, pair);
            *slot = l.locate_prefetched::<R>(h);
        }
        for i in n.saturating_sub(LINE_DEPTH)..n {
            let slot = &ring[i & (LINE_DEPTH - 1)];
            out[i] = slot.0.matches(&l.lines, slot.1, pair);
        }
    }

    /// The portable query of any layout: where a kernel made for one layout
    /// meets another (never, as filters are built; kept so that a mismatch
    /// could only cost speed, never an answer).
    #[cold]
    #[inline(never)]
    pub(super) fn contains_portable(&self, hash: u64) -> bool {
        self.contains_by(hash, solution::portable_group, lines::portable_pair)
    }

    /// The window of the key with this hash and its fingerprint bits; `None`
    /// when its shard holds no keys (or the filter has the two-line layout,
    /// whose queries never come here: `contains_many_by` answers them first).
    #[inline(always)]
    pub(super) fn locate(&self, hash: u64) -> Option<(Window, u32)> {
        match &self.layout {
            Layout::Compact(s) => s.locate(hash),
            Layout::Legacy(l) => l.locate(hash),
            Layout::Lines(_) | Layout::Bumped(_) => None,
        }
    }

    /// For a two-line filter, the row of the key with this hash (`None`
    /// inside when its shard holds no keys), its lines prefetched: the first
    /// half of [`contains_hash`](Self::contains_hash), for a caller that
    /// locates many filters' lines before answering any
    /// ([`ProbeSite`](crate::ProbeSite)). `None` for the other layouts.
    #[inline(always)]
    pub(crate) fn locate_row(&self, hash: u64) -> Option<Option<LocatedRow>> {
        let Layout::Lines(l) = &self.layout else {
            return None;
        };
        let row = l.locate::<0>(hash).map(|(window, result)| {
            window.prefetch(&l.lines);
            LocatedRow { window, result }
        });
        Some(row)
    }

    /// For a filter of a blocked layout, the window of the key with this
    /// hash and its result bits (`None` inside when its shard holds no
    /// keys), its lines prefetched: the first half of
    /// [`contains_hash`](Self::contains_hash) for those layouts, whose
    /// second half is [`window_matches`](Self::window_matches). `None` for
    /// the two-line layout ([`locate_row`](Self::locate_row)).
    #[inline(always)]
    pub(crate) fn locate_window(&self, hash: u64) -> Option<Option<(Window, u32)>> {
        if let Layout::Lines(_) = self.layout {
            return None;
        }
        if let Layout::Bumped(b) = &self.layout {
            return Some(match b.locate(hash) {
                Ok(found) => {
                    found.0.prefetch(&self.words);
                    Some(found)
                }
                Err(found) => {
                    if let Some((window, _)) = &found {
                        window.prefetch(&b.second_words);
                    }
                    // Not a window of the filter's words: for prefetching only.
                    None
                }
            });
        }
        let located = self.locate(hash);
        if let Some((window, _)) = &located {
            window.prefetch(&self.words);
        }
        Some(located)
    }

    /// The second half: whether the located row's fingerprint matches, as
    /// [`contains_hash`](Self::contains_hash) answers. (A row can only come
    /// from a two-line filter; any other layout answers "maybe".)
    #[inline(always)]
    pub(crate) fn row_matches(&self, row: &LocatedRow) -> bool {
        match &self.layout {
            Layout::Lines(l) => row
                .window
                .matches(&l.lines, row.result, |a, b, w| self.kernel.pair(a, b, w)),
            _ => true,
        }
    }

    /// `contains_hash(hash)` as a caller walking many filters with one hash
    /// asks it: a two-line filter's row is located and read in place (two
    /// lines, no kernel call), which costs less per filter in that walk than
    /// the kernel's whole query; the other layouts answer through their
    /// query.
    #[inline(always)]
    pub(crate) fn contains_in_walk(&self, hash: KeyHash) -> bool {
        match self.locate_row(hash.get()) {
            Some(row) => row.is_some_and(|row| self.row_matches(&row)),
            None => self.kernel.contains(self, hash.get()),
        }
    }
}

/// The window of the key with this hash and its fingerprint bits in a
/// compact layout of `num_shards` shards, reading shard `i`'s first block,
/// end block and seed through `shard_at` (the owned table, or a view's
/// bytes); `None` when its shard holds no keys.
///
/// Nothing here waits on memory but the shard table (5 bytes per shard, in
/// cache): the word offsets are arithmetic on the block index.
#[inline(always)]
pub(crate) fn locate_compact(
    columns: &Columns,
    num_shards: usize,
    shard_at: impl Fn(usize) -> (usize, usize, u8),
    hash: u64,
) -> Option<(Window, u32)> {
    let (first, _, start, q, a) =
        locate_in_shard(num_shards, shard_at, hash, |b| b * BLOCK_SLOTS, ROW_WIDTH)?;
    Some((Window::compact(columns, first, start, coeff_of(q)), result_of(a)))
}
