//! The raw table of a rank-and-select quotient filter (Pandey, Bender,
//! Johnson, Patro, "A General-Purpose Counting Filter: Making Every Bit
//! Count", SIGMOD 2017): entries `(quotient, value)` kept in quotient order
//! in a linear-probing table, each run of one quotient's values sorted, and
//! two bits of metadata per slot that find a quotient's run in O(1) expected
//! time. It knows nothing of keys, fingerprints or hashes: the filters above
//! it decide what a value means and which values match a query.
//!
//! # Invariants
//!
//! `2^q` canonical slots (the quotients), then [`pad_slots`] more so that a
//! run near the end has room to spill; no wrap-around. Every entry of
//! quotient `x` sits at or after slot `x`; the entries of each quotient are
//! contiguous (its *run*), runs appear in quotient order, and a run's values
//! are non-decreasing. Per slot:
//!
//! * `occupied[x]`: quotient `x` has at least one entry (indexed by
//!   quotient, not by where its run is);
//! * `runend[s]`: slot `s` holds the last entry of a run;
//!
//! and per block of 64 slots, `offset[b]`: how many slots from `64b` on are
//! taken by the runs of quotients below `64b` (0 when those end before it).
//!
//! **Finding a run** ([`Table::run`]): the runs of block `b`'s quotients
//! start at slot `64b + offset[b]` at the earliest, in quotient order; the
//! run of quotient `x` ends at the `d`-th run end from there, `d` the number
//! of occupied quotients of block `b` up to `x` (a rank in one word, then a
//! select over the run-end words). Slot `s` is empty exactly when the runs
//! of quotients up to `s` end before it: a run never starts before its
//! quotient.
//!
//! # Layout
//!
//! Blocks of 64 slots, back to back in one byte vector, `17 + 8w` bytes
//! each for `w`-bit values: the offset (one byte), the occupied word and the
//! run-end word (little-endian `u64`s), then the 64 values packed `w` bits
//! each (value `i` at bit `i·w` of the area, little-endian). A query reads
//! its block's header and the values after it: one or two cache lines. The
//! offset byte holds offsets up to 254; 255 means "254 or more", and the
//! exact offset is then recomputed from the block before (only runs of
//! hundreds of slots, a key repeated that often, reach it). Metadata cost:
//! 2.125 bits per slot, as in the counting quotient filter.

mod edit;
mod parts;
mod shift;
#[cfg(test)]
mod tests;

use crate::error::invalid;
use crate::succinct::bits::{low_mask, select_in_word};
use crate::zeroed::zeroed_vec;
use crate::Error;
use alloc::vec::Vec;

/// Slots per block.
const BLOCK: usize = 64;

/// The bits of a block's word up to and including slot or quotient `i`'s.
#[inline(always)]
fn upto(i: usize) -> u64 {
    u64::MAX >> (63 - i % BLOCK)
}

/// How a query finds the `rank`-th set bit (from 0) of a word, or 64 and
/// more if there is none: a value of a type that implements it is the
/// proof that this CPU runs its instructions (the kernels in `kernel.rs`
/// make them).
pub(crate) trait Select: Copy {
    /// The position of the `rank`-th set bit of `x` (`rank < 64`).
    fn select(self, x: u64, rank: u32) -> u32;
}

/// Select in portable code: Vigna's broadword algorithm.
#[derive(Clone, Copy)]
pub(crate) struct Broadword;

impl Select for Broadword {
    #[inline(always)]
    fn select(self, x: u64, rank: u32) -> u32 {
        select_in_word(x, rank)
    }
}
/// Bytes before a block's values: the offset byte and two metadata words.
const HEADER: usize = 17;
/// The offset byte that means "254 or more: recompute".
const SATURATED: u8 = 255;
/// Zero bytes after the last block, counted in the table's heap bytes but
/// not in its format. No read reaches them: a value is read through the
/// words of its own block's value area, which it never runs past.
pub(crate) const TAIL: usize = 16;

/// Slots past the `N` canonical ones, so that the runs of the last
/// quotients have room: about `10·√N` (the counting quotient filter's
/// allowance; a run spills past slot `N` by about the length of the
/// cluster it ends, `O(log n)` at any load below 1 with high probability;
/// `√N` rounded up to a power of two), at least one block, rounded up to
/// whole blocks.
pub(crate) fn pad_slots(quotients: usize) -> usize {
    let bits = usize::BITS - quotients.saturating_sub(1).leading_zeros();
    let root = 1usize << bits.div_ceil(2);
    (10 * root)
        .max(BLOCK)
        .min(quotients.max(BLOCK))
        .next_multiple_of(BLOCK)
}

/// Largest `q`: slot indices stay far inside `usize`.
pub(crate) const MAX_QUOTIENT_BITS: u32 = 40;

/// Most quotients a table may have: `2^40`.
pub(crate) const MAX_QUOTIENTS: u64 = 1 << MAX_QUOTIENT_BITS;

/// A quotient table: `N` quotients (`2^q` for the quotient filters, any
/// count for the Memento filter), values of `width` bits (see the module
/// docs for the layout and its invariants).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table {
    quotients: usize,
    width: u32,
    /// `low_mask(width)`, kept: every value read and write masks with it.
    mask: u64,
    /// Slots in all, canonical and padding: a multiple of 64.
    slots: usize,
    /// The blocks, then [`TAIL`] zero bytes.
    bytes: Vec<u8>,
    len: usize,
}

impl Table {
    /// Slots and bytes (with the tail) of a table, or why there is none.
    pub(crate) fn shape(quotient_bits: u32, width: u32) -> Result<(usize, usize), Error> {
        if quotient_bits > MAX_QUOTIENT_BITS {
            return Err(Error::TooLarge);
        }
        Table::shape_of(1 << quotient_bits, width)
    }

    /// [`shape`](Self::shape) of a table of `quotients` quotients (1 to
    /// [`MAX_QUOTIENTS`]).
    pub(crate) fn shape_of(quotients: u64, width: u32) -> Result<(usize, usize), Error> {
        if !(1..=MAX_QUOTIENTS).contains(&quotients) {
            return Err(Error::TooLarge);
        }
        if !(1..=64).contains(&width) {
            return Err(invalid("width", "must be 1 to 64 bits"));
        }
        let canonical = usize::try_from(quotients).map_err(|_| Error::TooLarge)?;
        let slots = canonical
            .checked_next_multiple_of(BLOCK)
            .and_then(|c| c.checked_add(pad_slots(canonical)))
            .ok_or(Error::TooLarge)?;
        let bytes = (slots / BLOCK)
            .checked_mul(HEADER + 8 * width as usize)
            .and_then(|b| b.checked_add(TAIL))
            .ok_or(Error::TooLarge)?;
        Ok((slots, bytes))
    }

    /// An empty table of `2^quotient_bits` quotients and `width`-bit values
    /// (`1..=64`).
    pub(crate) fn new(quotient_bits: u32, width: u32) -> Result<Self, Error> {
        if quotient_bits > MAX_QUOTIENT_BITS {
            return Err(Error::TooLarge);
        }
        Table::with_quotients(1 << quotient_bits, width)
    }

    /// An empty table of `quotients` quotients (1 to [`MAX_QUOTIENTS`]) and
    /// `width`-bit values.
    pub(crate) fn with_quotients(quotients: u64, width: u32) -> Result<Self, Error> {
        let (slots, bytes) = Table::shape_of(quotients, width)?;
        Ok(Table {
            quotients: quotients as usize,
            width,
            mask: low_mask(width),
            slots,
            bytes: zeroed_vec(bytes)?,
            len: 0,
        })
    }

    /// `q`: the table has `2^q` quotients (for a table made with
    /// [`new`](Self::new); `⌊log2 N⌋` for any other).
    #[inline(always)]
    pub(crate) fn quotient_bits(&self) -> u32 {
        self.quotients.ilog2()
    }

    /// `N`: the table's quotients.
    #[inline(always)]
    pub(crate) fn quotients(&self) -> usize {
        self.quotients
    }

    /// Bits per value.
    #[inline(always)]
    pub(crate) fn width(&self) -> u32 {
        self.width
    }

    /// Entries held.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Removes every entry, keeping the shape.
    pub(crate) fn clear(&mut self) {
        self.bytes.fill(0);
        self.len = 0;
    }

    /// Slots in all (canonical and padding).
    #[cfg(test)]
    pub(crate) fn slots(&self) -> usize {
        self.slots
    }

    /// Heap bytes of the table.
    pub(crate) fn size_in_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// `N`, the canonical slots.
    #[inline(always)]
    fn canonical(&self) -> usize {
        self.quotients
    }

    /// Bytes per block.
    #[inline(always)]
    fn stride(&self) -> usize {
        HEADER + 8 * self.width as usize
    }

    #[inline(always)]
    fn word_at(&self, at: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&self.bytes[at..at + 8]);
        u64::from_le_bytes(w)
    }

    #[inline(always)]
    fn set_word_at(&mut self, at: usize, v: u64) {
        self.bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }

    /// Block `b`'s occupied word.
    #[inline(always)]
    fn occupied(&self, b: usize) -> u64 {
        self.word_at(b * self.stride() + 1)
    }

    /// Block `b`'s run-end word.
    #[inline(always)]
    fn runends(&self, b: usize) -> u64 {
        self.word_at(b * self.stride() + 9)
    }

    /// Sets or clears bit `i % 64` of the header word at byte `word` (1:
    /// occupied, 9: run ends) of block `i / 64`.
    fn set_header_bit(&mut self, word: usize, i: usize, on: bool) {
        let at = i / BLOCK * self.stride() + word;
        let w = self.word_at(at);
        let mask = 1u64 << (i % BLOCK);
        self.set_word_at(at, if on { w | mask } else { w & !mask });
    }

    fn set_occupied_bit(&mut self, x: usize, on: bool) {
        self.set_header_bit(1, x, on);
    }

    #[inline(always)]
    fn runend(&self, s: usize) -> bool {
        self.runends(s / BLOCK) >> (s % BLOCK) & 1 != 0
    }

    fn set_runend(&mut self, s: usize, on: bool) {
        self.set_header_bit(9, s, on);
    }

    /// Whether quotient `x` has an entry.
    #[inline(always)]
    pub(crate) fn is_occupied(&self, x: usize) -> bool {
        self.occupied(x / BLOCK) >> (x % BLOCK) & 1 != 0
    }

    /// Where slot `s`'s value starts: the byte of the 64-bit word of its
    /// block's value area that holds its first bit, and that bit's place in
    /// the word. Every read and write of the area goes through whole words
    /// at these bytes (a multiple of 8 from the area's start), so a read
    /// that follows a write of the same word is served from the store, as
    /// it would not be if the two started at different bytes.
    #[inline(always)]
    fn value_at(&self, s: usize) -> (usize, u32) {
        let bit = (s % BLOCK) * self.width as usize;
        (
            s / BLOCK * self.stride() + HEADER + bit / 64 * 8,
            (bit % 64) as u32,
        )
    }

    /// The bytes of the words that hold slot `s`'s value: the word of its
    /// first bit, and the next word if the value runs into it, else the
    /// same word again (never a word the value does not touch, which may
    /// lie on a cache line the query would otherwise not load); and the
    /// value's place in the first.
    #[inline(always)]
    fn value_words(&self, s: usize) -> (usize, usize, u32) {
        let (at, shift) = self.value_at(s);
        let spills = shift + self.width > 64;
        (at, at + 8 * usize::from(spills), shift)
    }

    /// The value in slot `s`.
    #[inline(always)]
    pub(crate) fn value(&self, s: usize) -> u64 {
        let (at, next, shift) = self.value_words(s);
        let pair = u128::from(self.word_at(at)) | u128::from(self.word_at(next)) << 64;
        (pair >> shift) as u64 & self.mask
    }

    #[inline(always)]
    fn set_value(&mut self, s: usize, v: u64) {
        let (at, next, shift) = self.value_words(s);
        let pair = u128::from(self.word_at(at)) | u128::from(self.word_at(next)) << 64;
        let mask = u128::from(self.mask) << shift;
        let pair = (pair & !mask) | (u128::from(v) << shift & mask);
        // The high word first: when it is the same word as the low one, it
        // holds the old bits, and the low word's write must come last.
        self.set_word_at(next, (pair >> 64) as u64);
        self.set_word_at(at, pair as u64);
    }

    /// Block `b`'s exact offset (see the module docs; a saturated byte is
    /// recomputed from the block before).
    #[inline(always)]
    fn offset(&self, b: usize) -> usize {
        let raw = self.bytes[b * self.stride()];
        if raw != SATURATED {
            return usize::from(raw);
        }
        self.saturated_offset(b)
    }

    /// The exact offset of block `b`, whose byte is saturated: from the
    /// last block before it with an exact byte (block 0's is always 0),
    /// each block's offset from the one before, in a loop (a long cluster
    /// saturates many blocks in a row).
    #[cold]
    #[inline(never)]
    fn saturated_offset(&self, b: usize) -> usize {
        let mut known = b - 1;
        while self.bytes[known * self.stride()] == SATURATED {
            known -= 1;
        }
        let mut offset = usize::from(self.bytes[known * self.stride()]);
        for c in known + 1..=b {
            let end = self.last_end_in(Broadword, c * BLOCK - 1, offset);
            offset = (end + 1 - (c * BLOCK) as isize).max(0) as usize;
        }
        offset
    }

    fn set_offset(&mut self, b: usize, offset: usize) {
        let at = b * self.stride();
        self.bytes[at] = offset.min(usize::from(SATURATED)) as u8;
    }

    /// The last slot of the runs of quotients `0..=x`, if it is at or after
    /// `64·⌊x/64⌋ − 1`; else some slot before `64·⌊x/64⌋` (callers compare it
    /// with slots of `x`'s block or later, where both say the same). `-1`
    /// for "before slot 0".
    #[inline(always)]
    pub(crate) fn last_end(&self, x: usize) -> isize {
        self.last_end_by(Broadword, x)
    }

    /// [`last_end`](Self::last_end) with `sel`'s select.
    #[inline(always)]
    pub(super) fn last_end_by<S: Select>(&self, sel: S, x: usize) -> isize {
        self.last_end_in(sel, x, self.offset(x / BLOCK))
    }

    /// [`last_end_by`](Self::last_end_by) given the offset of `x`'s block.
    #[inline(always)]
    fn last_end_in<S: Select>(&self, sel: S, x: usize, offset: usize) -> isize {
        let b = x / BLOCK;
        let base = b * BLOCK + offset;
        let d = (self.occupied(b) & upto(x)).count_ones();
        if d == 0 {
            return base as isize - 1;
        }
        self.nth_runend_by(sel, base, d - 1) as isize
    }

    /// The slot of the `rank`-th (from 0) run end at or after slot `from`,
    /// with `sel`'s select. The invariants guarantee it exists for the
    /// callers' ranks.
    #[inline(always)]
    pub(super) fn nth_runend_by<S: Select>(&self, sel: S, from: usize, mut rank: u32) -> usize {
        let mut b = from / BLOCK;
        let mut bits = self.runends(b) & (u64::MAX << (from % BLOCK));
        loop {
            let c = bits.count_ones();
            if rank < c {
                return b * BLOCK + sel.select(bits, rank) as usize;
            }
            rank -= c;
            b += 1;
            bits = self.runends(b);
        }
    }

    /// The first run end at or after slot `s`, if any.
    fn next_runend(&self, s: usize) -> Option<usize> {
        let mut b = s / BLOCK;
        if b >= self.slots / BLOCK {
            return None;
        }
        let mut bits = self.runends(b) & (u64::MAX << (s % BLOCK));
        while bits == 0 {
            b += 1;
            if b >= self.slots / BLOCK {
                return None;
            }
            bits = self.runends(b);
        }
        Some(b * BLOCK + bits.trailing_zeros() as usize)
    }

    /// The slots of quotient `x`'s run, if it has one: its end by rank and
    /// select, then its start just after the run end before that (found
    /// backwards, a word or two), or `x` itself if that is earlier.
    #[inline(always)]
    pub(crate) fn run(&self, x: usize) -> Option<core::ops::RangeInclusive<usize>> {
        self.run_by(Broadword, x)
    }

    /// [`run`](Self::run) with `sel`'s select.
    #[inline(always)]
    pub(super) fn run_by<S: Select>(&self, sel: S, x: usize) -> Option<core::ops::RangeInclusive<usize>> {
        let b = x / BLOCK;
        let occupied = self.occupied(b);
        if occupied >> (x % BLOCK) & 1 == 0 {
            return None;
        }
        let base = b * BLOCK + self.offset(b);
        let d = (occupied & upto(x)).count_ones();
        let end = self.nth_runend_by(sel, base, d - 1);
        Some(self.start_before(x, end)..=end)
    }

    /// The start of the run that ends at `end` and belongs to quotient `x`:
    /// after the last run end before `end`, but not before `x`.
    #[inline(always)]
    pub(super) fn start_before(&self, x: usize, end: usize) -> usize {
        let mut w = end / BLOCK;
        let mut bits = self.runends(w) & ((1u64 << (end % BLOCK)) - 1);
        loop {
            if bits != 0 {
                let prev = w * BLOCK + 63 - bits.leading_zeros() as usize;
                return x.max(prev + 1);
            }
            if w * BLOCK <= x {
                return x;
            }
            w -= 1;
            bits = self.runends(w);
        }
    }

    /// Whether quotient `x`'s run holds value `v`.
    #[cfg(test)]
    pub(crate) fn contains(&self, x: usize, v: u64) -> bool {
        self.contains_by(Broadword, x, v)
    }

    /// [`contains`](Self::contains) with `sel`'s select.
    ///
    /// The run is read from its end back (its start is never computed): a
    /// run of one entry, the commonest, costs one value read; the scan
    /// stops at the first value not above `v` (the run is sorted), at slot
    /// `x`, or after the run end of the run before.
    #[inline(always)]
    pub(crate) fn contains_by<S: Select>(&self, sel: S, x: usize, v: u64) -> bool {
        let b = x / BLOCK;
        let occupied = self.occupied(b);
        if occupied >> (x % BLOCK) & 1 == 0 {
            return false;
        }
        let base = b * BLOCK + self.offset(b);
        let d = (occupied & upto(x)).count_ones();
        let mut s = self.nth_runend_by(sel, base, d - 1);
        loop {
            let w = self.value(s);
            if w <= v {
                return w == v;
            }
            if s == x || self.runend(s - 1) {
                return false;
            }
            s -= 1;
        }
    }

    /// Whether some value `v` of quotient `x`'s run has `hit(v)`, with
    /// `sel`'s select (for values whose matches are not one value, so the
    /// whole run is read).
    #[inline(always)]
    pub(crate) fn any_in_run_by<S: Select>(&self, sel: S, x: usize, hit: impl Fn(u64) -> bool) -> bool {
        match self.run_by(sel, x) {
            Some(run) => run.into_iter().any(|s| hit(self.value(s))),
            None => false,
        }
    }

    /// The first occupied quotient at or after `x` (`2^q` if none).
    fn next_occupied(&self, x: usize) -> usize {
        let blocks = self.slots / BLOCK;
        let mut b = x / BLOCK;
        if b >= blocks {
            return self.canonical();
        }
        let mut bits = self.occupied(b) & (u64::MAX << (x % BLOCK));
        while bits == 0 {
            b += 1;
            if b >= blocks {
                return self.canonical();
            }
            bits = self.occupied(b);
        }
        (b * BLOCK + bits.trailing_zeros() as usize).min(self.canonical())
    }

    /// Starts loading what a query of quotient `x` reads first: its block's
    /// header and the values at slot `x`.
    #[inline]
    pub(crate) fn prefetch(&self, x: usize) {
        let (at, _) = self.value_at(x);
        if let (Some(h), Some(v)) = (self.bytes.get(x / BLOCK * self.stride()), self.bytes.get(at)) {
            crate::prefetch::prefetch(h);
            crate::prefetch::prefetch(v);
        }
    }

    /// A batch query: `out[i] = answer(split(keys[i]))`, where `split` gives
    /// a key's quotient and value, in groups of 32 whose blocks (header and
    /// the values at the quotient's slot) are all prefetched before any is
    /// answered, so the misses of a group overlap instead of queueing.
    #[inline]
    pub(crate) fn contains_grouped<K: Copy>(
        &self,
        keys: &[K],
        out: &mut [bool],
        split: impl Fn(K) -> (usize, u64),
        answer: impl Fn(usize, u64) -> bool,
    ) {
        const GROUP: usize = 32;
        assert_eq!(keys.len(), out.len(), "contains_hashes: length mismatch");
        let mut split_keys = [(0usize, 0u64); GROUP];
        for (ks, os) in keys.chunks(GROUP).zip(out.chunks_mut(GROUP)) {
            for (s, &k) in split_keys.iter_mut().zip(ks) {
                *s = split(k);
                self.prefetch(s.0);
            }
            for (&(x, v), o) in split_keys.iter().zip(os.iter_mut()) {
                *o = answer(x, v);
            }
        }
    }

    /// Every entry `(quotient, value)` in order.
    pub(crate) fn entries(&self) -> Entries<'_> {
        Entries {
            table: self,
            quotient: self.next_occupied(0),
            slot: 0,
        }
    }
}

/// The entries of a [`Table`] in order ([`Table::entries`]).
pub(crate) struct Entries<'a> {
    table: &'a Table,
    /// The quotient whose run comes next (`2^q` when done).
    quotient: usize,
    /// The slot the next entry is in, once inside a run.
    slot: usize,
}

impl Iterator for Entries<'_> {
    type Item = (usize, u64);

    fn next(&mut self) -> Option<(usize, u64)> {
        let t = self.table;
        if self.quotient >= t.canonical() {
            return None;
        }
        self.slot = self.slot.max(self.quotient);
        let item = (self.quotient, t.value(self.slot));
        if t.runend(self.slot) {
            self.quotient = t.next_occupied(self.quotient + 1);
        }
        self.slot += 1;
        Some(item)
    }
}
