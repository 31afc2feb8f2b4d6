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
//! **Finding a run** ([`Table::last_end`]): the runs of block `b`'s quotients
//! start at slot `64b + offset[b]` at the earliest, in quotient order; the
//! run of quotient `x` ends at the `d`-th run end from there, `d` the number
//! of occupied quotients of block `b` up to `x` (a rank in one word, then a
//! select over the run-end words).
//!
//! Slot `s` is empty exactly when the runs of quotients up to `s` end before
//! it (`last_end(s) < s`): a run never starts before its quotient, so a slot
//! after the last run end of the quotients up to it holds nothing.

use alloc::vec::Vec;

use crate::error::invalid;
use crate::succinct::bits::{low_mask, read_field, select_in_word};
use crate::zeroed::zeroed_vec;
use crate::Error;

/// Slots per metadata block.
const BLOCK: usize = 64;

/// Slots past the `2^q` canonical ones, so that the runs of the last
/// quotients have room: about `10·√(2^q)` (the counting quotient filter's
/// allowance; a run spills past slot `2^q` by about the length of the
/// cluster it ends, `O(log n)` at any load below 1 with high probability),
/// at least one block, rounded up to whole blocks.
pub(crate) fn pad_slots(quotient_bits: u32) -> usize {
    let canonical = 1usize << quotient_bits;
    let root = 1usize << quotient_bits.div_ceil(2);
    (10 * root)
        .max(BLOCK)
        .min(canonical.max(BLOCK))
        .next_multiple_of(BLOCK)
}

/// A quotient table: `2^q` quotients, values of `width` bits (see the module
/// docs for the layout and its invariants).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table {
    quotient_bits: u32,
    width: u32,
    /// Slots in all, canonical and padding: a multiple of 64.
    slots: usize,
    occupied: Vec<u64>,
    runend: Vec<u64>,
    offset: Vec<u32>,
    /// `slots` fields of `width` bits, then a zero word (so that a field is
    /// always read as two words in bounds).
    values: Vec<u64>,
    len: usize,
}

/// Largest `q`: slot indices and offsets stay far inside `u32`/`usize`.
pub(crate) const MAX_QUOTIENT_BITS: u32 = 40;

impl Table {
    /// An empty table of `2^quotient_bits` quotients and `width`-bit values
    /// (`1..=64`).
    pub(crate) fn new(quotient_bits: u32, width: u32) -> Result<Self, Error> {
        let (slots, value_words) = Table::shape(quotient_bits, width)?;
        Ok(Table {
            quotient_bits,
            width,
            slots,
            occupied: zeroed_vec(slots / BLOCK)?,
            runend: zeroed_vec(slots / BLOCK)?,
            offset: zeroed_vec(slots / BLOCK)?,
            values: zeroed_vec(value_words)?,
            len: 0,
        })
    }

    /// `q`: the table has `2^q` quotients.
    #[inline(always)]
    pub(crate) fn quotient_bits(&self) -> u32 {
        self.quotient_bits
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

    /// Slots in all (canonical and padding).
    #[cfg(test)]
    pub(crate) fn slots(&self) -> usize {
        self.slots
    }

    /// Heap bytes of the table.
    pub(crate) fn size_in_bytes(&self) -> usize {
        (self.occupied.len() + self.runend.len() + self.values.len()) * 8 + self.offset.len() * 4
    }

    #[inline(always)]
    fn bit(words: &[u64], i: usize) -> bool {
        words[i / 64] >> (i % 64) & 1 != 0
    }

    #[inline(always)]
    fn set_bit(words: &mut [u64], i: usize, on: bool) {
        let mask = 1u64 << (i % 64);
        if on {
            words[i / 64] |= mask;
        } else {
            words[i / 64] &= !mask;
        }
    }

    /// Whether quotient `x` has an entry.
    #[inline(always)]
    pub(crate) fn is_occupied(&self, x: usize) -> bool {
        Self::bit(&self.occupied, x)
    }

    /// The value in slot `s`.
    #[inline(always)]
    pub(crate) fn value(&self, s: usize) -> u64 {
        let w = self.width;
        read_field(self.values.as_slice(), 0, s as u64 * u64::from(w), w)
    }

    fn set_value(&mut self, s: usize, v: u64) {
        let w = self.width;
        let pos = s as u64 * u64::from(w);
        let (i, shift) = ((pos / 64) as usize, (pos % 64) as u32);
        let mask = low_mask(w);
        let v = v & mask;
        self.values[i] = (self.values[i] & !(mask << shift)) | (v << shift);
        if shift + w > 64 {
            let hi = 64 - shift;
            self.values[i + 1] = (self.values[i + 1] & !(mask >> hi)) | (v >> hi);
        }
    }

    /// The last slot of the runs of quotients `0..=x`, if it is at or after
    /// `64·⌊x/64⌋ − 1`; else some slot before `64·⌊x/64⌋` (callers compare it
    /// with slots of `x`'s block or later, where both say the same). `-1`
    /// for "before slot 0".
    #[inline]
    pub(crate) fn last_end(&self, x: usize) -> isize {
        let b = x / BLOCK;
        let base = b * BLOCK + self.offset[b] as usize;
        let d = (self.occupied[b] & low_mask((x % BLOCK) as u32 + 1)).count_ones();
        if d == 0 {
            return base as isize - 1;
        }
        self.nth_runend_from(base, d - 1) as isize
    }

    /// The slot of the `rank`-th (from 0) run end at or after slot `from`.
    /// The invariants guarantee it exists for the callers' ranks.
    #[inline]
    fn nth_runend_from(&self, from: usize, mut rank: u32) -> usize {
        let mut w = from / 64;
        let mut bits = self.runend[w] & (u64::MAX << (from % 64));
        loop {
            let c = bits.count_ones();
            if rank < c {
                return w * 64 + select_in_word(bits, rank) as usize;
            }
            rank -= c;
            w += 1;
            bits = self.runend[w];
        }
    }

    /// The slots of quotient `x`'s run, if it has one.
    #[inline]
    pub(crate) fn run(&self, x: usize) -> Option<core::ops::RangeInclusive<usize>> {
        if !self.is_occupied(x) {
            return None;
        }
        let end = self.last_end(x) as usize;
        Some(self.run_start(x)..=end)
    }

    /// Where quotient `x`'s run starts (or would start).
    #[inline]
    fn run_start(&self, x: usize) -> usize {
        match x {
            0 => 0,
            x => x.max((self.last_end(x - 1) + 1) as usize),
        }
    }

    /// `2^q`.
    #[inline(always)]
    fn canonical(&self) -> usize {
        1 << self.quotient_bits
    }

    /// The first empty slot at or after `s`, jumping over whole runs.
    fn first_empty_from(&self, mut s: usize) -> Option<usize> {
        while s < self.slots {
            let end = self.last_end(s);
            if end < s as isize {
                return Some(s);
            }
            s = end as usize + 1;
        }
        None
    }

    /// Recomputes the offsets of blocks `from..=to` (in order: each uses the
    /// one before it), after entries at or after block `from`'s quotients
    /// moved.
    fn fix_offsets(&mut self, from: usize, to: usize) {
        for b in from.max(1)..=to.min(self.offset.len() - 1) {
            let end = self.last_end(b * BLOCK - 1);
            self.offset[b] = (end + 1 - (b * BLOCK) as isize).max(0) as u32;
        }
    }

    /// Inserts `(x, v)`: after the values of `x`'s run that are at most
    /// `v`. [`Error::Full`] (nothing changed) when no slot is free after
    /// the run.
    pub(crate) fn insert(&mut self, x: usize, v: u64) -> Result<(), Error> {
        debug_assert!(x < self.canonical() && v <= low_mask(self.width));
        let start = self.run_start(x);
        let (pos, appends_to) = match self.run(x) {
            Some(run) => {
                let end = *run.end();
                let pos = (start..=end).find(|&s| self.value(s) > v).unwrap_or(end + 1);
                (pos, (pos == end + 1).then_some(end))
            }
            None => (start, None),
        };
        let empty = self.first_empty_from(pos).ok_or(Error::Full)?;
        for s in (pos..empty).rev() {
            let (value, end) = (self.value(s), Self::bit(&self.runend, s));
            self.set_value(s + 1, value);
            Self::set_bit(&mut self.runend, s + 1, end);
        }
        self.set_value(pos, v);
        let new_run = !self.is_occupied(x);
        Self::set_bit(&mut self.runend, pos, new_run || appends_to.is_some());
        if let Some(old_end) = appends_to {
            Self::set_bit(&mut self.runend, old_end, false);
        }
        Self::set_bit(&mut self.occupied, x, true);
        self.len += 1;
        self.fix_offsets(x / BLOCK + 1, empty / BLOCK);
        Ok(())
    }

    /// Removes the entry in slot `s` of quotient `x`'s run, shifting the
    /// entries after it that are not in their own quotient's slot back by
    /// one.
    pub(crate) fn remove_at(&mut self, x: usize, s: usize) {
        let run = self.run(x).expect("remove_at: quotient has a run");
        debug_assert!(run.contains(&s));
        let (start, end) = (*run.start(), *run.end());
        // The last slot that moves back: the rest of `x`'s run, then every
        // following run of the cluster that sits after its own quotient.
        let mut last = end;
        let mut y = x;
        loop {
            let next = last + 1;
            if next >= self.slots || self.is_empty_at(next) {
                break;
            }
            y = self.next_occupied(y + 1);
            if y >= next {
                break;
            }
            last = self.nth_runend_from(next, 0);
        }
        let removed_end = Self::bit(&self.runend, s);
        for t in s..last {
            let (value, end) = (self.value(t + 1), Self::bit(&self.runend, t + 1));
            self.set_value(t, value);
            Self::set_bit(&mut self.runend, t, end);
        }
        self.set_value(last, 0);
        Self::set_bit(&mut self.runend, last, false);
        if start == end {
            Self::set_bit(&mut self.occupied, x, false);
        } else if removed_end {
            // The run's last entry went: the one before it ends the run now.
            Self::set_bit(&mut self.runend, s - 1, true);
        }
        self.len -= 1;
        self.fix_offsets(x / BLOCK + 1, last / BLOCK);
    }

    /// Whether slot `s` holds nothing. Past the canonical slots no quotient
    /// is occupied, and `last_end` gives the end of every run there.
    #[inline]
    fn is_empty_at(&self, s: usize) -> bool {
        self.last_end(s) < s as isize
    }

    /// The first occupied quotient at or after `x` (`2^q` if none).
    fn next_occupied(&self, x: usize) -> usize {
        let mut w = x / 64;
        if w >= self.occupied.len() {
            return self.canonical();
        }
        let mut bits = self.occupied[w] & (u64::MAX << (x % 64));
        while bits == 0 {
            w += 1;
            if w >= self.occupied.len() {
                return self.canonical();
            }
            bits = self.occupied[w];
        }
        (w * 64 + bits.trailing_zeros() as usize).min(self.canonical())
    }

    /// Starts loading what a query of quotient `x` reads first: its
    /// metadata words, its block's offset, and the values at slot `x`.
    #[inline]
    pub(crate) fn prefetch(&self, x: usize) {
        let b = x / BLOCK;
        if let (Some(o), Some(r), Some(f)) = (self.occupied.get(b), self.runend.get(b), self.offset.get(b)) {
            crate::prefetch::prefetch(o);
            crate::prefetch::prefetch(r);
            crate::prefetch::prefetch(f);
        }
        if let Some(v) = self.values.get(x * self.width as usize / 64) {
            crate::prefetch::prefetch(v);
        }
    }

    /// The words the byte format stores: occupied bits, run-end bits, and
    /// the packed values (without the trailing zero word).
    pub(crate) fn parts(&self) -> (&[u64], &[u64], &[u64]) {
        (
            &self.occupied,
            &self.runend,
            &self.values[..self.values.len() - 1],
        )
    }

    /// Words per part for `2^q` quotients of `width`-bit values: occupied,
    /// run ends, values (as [`parts`](Self::parts) gives them).
    pub(crate) fn part_words(quotient_bits: u32, width: u32) -> Result<(usize, usize, usize), Error> {
        let t = Table::shape(quotient_bits, width)?;
        Ok((t.0 / BLOCK, t.0 / BLOCK, t.1 - 1))
    }

    /// Slots and value words (with the trailing zero word) of a table.
    fn shape(quotient_bits: u32, width: u32) -> Result<(usize, usize), Error> {
        if quotient_bits > MAX_QUOTIENT_BITS {
            return Err(Error::TooLarge);
        }
        if !(1..=64).contains(&width) {
            return Err(invalid("width", "must be 1 to 64 bits"));
        }
        let canonical = usize::try_from(1u64 << quotient_bits).map_err(|_| Error::TooLarge)?;
        let slots = canonical
            .checked_next_multiple_of(BLOCK)
            .and_then(|c| c.checked_add(pad_slots(quotient_bits)))
            .ok_or(Error::TooLarge)?;
        let value_words = slots
            .checked_mul(width as usize)
            .map(|bits| bits.div_ceil(64) + 1)
            .ok_or(Error::TooLarge)?;
        Ok((slots, value_words))
    }

    /// The table whose parts are `occupied`, `runend` and `values` (as
    /// [`parts`](Self::parts) gives them, of the lengths
    /// [`part_words`](Self::part_words) gives, then one zero word), if they are one that
    /// inserts could have made: no quotient past `2^q` occupied, a run end
    /// for every occupied quotient and no other, every run inside the
    /// table with its values in order, every slot outside the runs zero,
    /// no bit past the last value. Checked without panicking, for bytes
    /// from anywhere; allocates only the offsets beside the parts.
    pub(crate) fn from_parts(
        quotient_bits: u32,
        width: u32,
        occupied: Vec<u64>,
        runend: Vec<u64>,
        values: Vec<u64>,
    ) -> Result<Self, &'static str> {
        let (slots, value_words) = Table::shape(quotient_bits, width).map_err(|_| "table shape")?;
        if occupied.len() != slots / BLOCK || runend.len() != slots / BLOCK || values.len() != value_words {
            return Err("part lengths do not match the table's shape");
        }
        if values[value_words - 1] != 0 {
            return Err("bits after the last value");
        }
        let offset = zeroed_vec(slots / BLOCK).map_err(|_| "table too large")?;
        let mut t = Table {
            quotient_bits,
            width,
            slots,
            occupied,
            runend,
            offset,
            values,
            len: 0,
        };
        let canonical = t.canonical();
        if (canonical..slots).any(|x| Self::bit(&t.occupied, x)) {
            return Err("a quotient past the table is occupied");
        }
        let used_bits = slots as u64 * u64::from(width);
        let last = t.values.len() - 2;
        let tail = !low_mask((used_bits - last as u64 * 64).min(64) as u32);
        if t.values[last] & tail != 0 {
            return Err("bits after the last value");
        }
        // Walk the runs in quotient order, as `check` does, but refusing
        // instead of panicking; slots between runs must be zero.
        let mut next = 0usize;
        let mut ends = 0u64;
        let mut x = t.next_occupied(0);
        while x < canonical {
            let start = next.max(x);
            if (next..start).any(|s| t.value(s) != 0) {
                return Err("a value outside every run");
            }
            let end = t.next_runend(start).ok_or("a run with no end")?;
            if (start..end).any(|s| t.value(s) > t.value(s + 1)) {
                return Err("a run's values out of order");
            }
            t.len += end - start + 1;
            ends += 1;
            next = end + 1;
            x = t.next_occupied(x + 1);
        }
        if (next..slots).any(|s| t.value(s) != 0) {
            return Err("a value outside every run");
        }
        if t.runend.iter().map(|w| u64::from(w.count_ones())).sum::<u64>() != ends {
            return Err("run ends that end no run");
        }
        let blocks = t.offset.len();
        t.fix_offsets(1, blocks - 1);
        Ok(t)
    }

    /// The first run end at or after slot `s`, if any.
    fn next_runend(&self, s: usize) -> Option<usize> {
        let mut w = s / 64;
        let mut bits = *self.runend.get(w)? & (u64::MAX << (s % 64));
        while bits == 0 {
            w += 1;
            bits = *self.runend.get(w)?;
        }
        Some(w * 64 + bits.trailing_zeros() as usize)
    }

    /// Every entry `(quotient, value)` in order.
    pub(crate) fn entries(&self) -> Entries<'_> {
        Entries {
            table: self,
            quotient: self.next_occupied(0),
            slot: 0,
        }
    }

    /// A table of `2^quotient_bits` quotients and `width`-bit values holding
    /// `entries`, which must come in order (quotient, then value).
    /// [`Error::Full`] if they do not fit.
    pub(crate) fn from_sorted(
        quotient_bits: u32,
        width: u32,
        entries: impl IntoIterator<Item = (usize, u64)>,
    ) -> Result<Self, Error> {
        let mut t = Table::new(quotient_bits, width)?;
        let mut next = 0usize; // the first free slot
        let mut current: Option<usize> = None;
        for (x, v) in entries {
            if x >= t.canonical() || v > low_mask(width) {
                return Err(invalid("entries", "quotient or value out of range"));
            }
            match current {
                Some(c) if c == x => {
                    if v < t.value(next - 1) {
                        return Err(invalid("entries", "must be in order"));
                    }
                }
                Some(c) if c > x => return Err(invalid("entries", "must be in order")),
                _ => {
                    if current.is_some() {
                        Self::set_bit(&mut t.runend, next - 1, true);
                    }
                    next = next.max(x);
                    Self::set_bit(&mut t.occupied, x, true);
                    current = Some(x);
                }
            }
            if next >= t.slots {
                return Err(Error::Full);
            }
            t.set_value(next, v);
            next += 1;
            t.len += 1;
        }
        if current.is_some() {
            Self::set_bit(&mut t.runend, next - 1, true);
        }
        let blocks = t.offset.len();
        t.fix_offsets(1, blocks - 1);
        Ok(t)
    }

    /// Checks every invariant from scratch (runs in quotient order, each at
    /// or after its quotient, values sorted within a run, the runs found
    /// through the offsets where they are, no stray run end), panicking on
    /// the first that fails.
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut next = 0usize;
        let mut count = 0;
        let mut ends = 0;
        for x in 0..self.canonical() {
            if !self.is_occupied(x) {
                continue;
            }
            let start = next.max(x);
            let mut s = start;
            while !Self::bit(&self.runend, s) {
                assert!(self.value(s) <= self.value(s + 1), "run of {x} unsorted");
                s += 1;
            }
            assert_eq!(self.run(x), Some(start..=s), "run of {x}");
            count += s - start + 1;
            ends += 1;
            next = s + 1;
        }
        assert_eq!(count, self.len);
        let all_ends: u32 = self.runend.iter().map(|w| w.count_ones()).sum();
        assert_eq!(all_ends, ends);
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
        if Table::bit(&t.runend, self.slot) {
            self.quotient = t.next_occupied(self.quotient + 1);
        }
        self.slot += 1;
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use alloc::collections::BTreeMap;
    use alloc::vec::Vec;

    use super::*;
    use crate::hash::remix;

    /// The model: a multiset of `(quotient, value)`.
    fn model_entries(m: &BTreeMap<(usize, u64), usize>) -> Vec<(usize, u64)> {
        m.iter().flat_map(|(&e, &c)| core::iter::repeat_n(e, c)).collect()
    }

    /// Random inserts and removes against a multiset, with quotients drawn
    /// from a narrow window (long clusters that cross blocks and spill into
    /// the padding) or from everywhere; the table's entries, runs and
    /// invariants checked after every step.
    #[test]
    fn inserts_and_removes_agree_with_a_multiset() {
        for (q, width, window, steps) in [
            (6u32, 5u32, 4usize, 400usize),
            (8, 3, 256, 600),
            (10, 9, 40, 1500),
            (12, 12, 4096, 3000),
        ] {
            let mut t = Table::new(q, width).unwrap();
            let mut model: BTreeMap<(usize, u64), usize> = BTreeMap::new();
            let base = (remix(q as u64, 1) as usize) % (1usize << q);
            for i in 0..steps as u64 {
                let r = remix(i, u64::from(q) * 100 + u64::from(width));
                let x = (base + (r as usize % window)) % (1usize << q);
                let v = (r >> 32) & low_mask(width);
                let remove = r % 5 < 2 && t.len() > 0;
                if remove {
                    // Remove an entry that is there: one of the model's.
                    let entries = model_entries(&model);
                    let (x, v) = entries[(r >> 8) as usize % entries.len()];
                    let run = t.run(x).expect("a quotient with entries has a run");
                    let s = run.clone().find(|&s| t.value(s) == v).expect("value in its run");
                    t.remove_at(x, s);
                    let c = model.get_mut(&(x, v)).unwrap();
                    *c -= 1;
                    if *c == 0 {
                        model.remove(&(x, v));
                    }
                } else {
                    match t.insert(x, v) {
                        Ok(()) => *model.entry((x, v)).or_default() += 1,
                        Err(Error::Full) => {}
                        Err(e) => panic!("{e:?}"),
                    }
                }
                t.check();
                assert_eq!(
                    t.entries().collect::<Vec<_>>(),
                    model_entries(&model),
                    "q {q}, step {i}"
                );
            }
            // Rebuilt in one pass from the entries: the same table.
            let rebuilt = Table::from_sorted(q, width, t.entries()).unwrap();
            rebuilt.check();
            assert_eq!(rebuilt, t);
        }
    }

    /// A table fills to its last slot: every canonical and padding slot
    /// taken, then `Full` with nothing changed; removing everything empties
    /// it back to a new table.
    #[test]
    fn fills_every_slot_then_refuses() {
        let mut t = Table::new(4, 7).unwrap();
        let mut inserted = Vec::new();
        let mut i = 0u64;
        loop {
            let r = remix(i, 9);
            i += 1;
            let (x, v) = ((r % 16) as usize, (r >> 40) & 0x7f);
            let before = t.clone();
            match t.insert(x, v) {
                Ok(()) => inserted.push((x, v)),
                Err(Error::Full) => {
                    assert_eq!(t, before, "a refused insert changes nothing");
                    break;
                }
                Err(e) => panic!("{e:?}"),
            }
            t.check();
        }
        // Quotients 0..16 can reach every slot after them: the table is full.
        assert_eq!(t.len(), t.slots());
        for (x, v) in inserted {
            let s = t.run(x).unwrap().find(|&s| t.value(s) == v).unwrap();
            t.remove_at(x, s);
            t.check();
        }
        assert_eq!(t, Table::new(4, 7).unwrap());
    }

    #[test]
    fn from_sorted_refuses_disorder_and_overflow() {
        assert!(Table::from_sorted(4, 8, [(3, 5), (2, 1)]).is_err());
        assert!(Table::from_sorted(4, 8, [(3, 5), (3, 4)]).is_err());
        assert!(Table::from_sorted(4, 8, [(16, 0)]).is_err());
        assert!(Table::from_sorted(4, 8, [(1, 256)]).is_err());
        let slots = Table::new(4, 8).unwrap().slots();
        // Quotient 15's run can take slots 15 on, to the last.
        assert_eq!(
            Table::from_sorted(4, 8, (0..=slots - 15).map(|_| (15, 0))).unwrap_err(),
            Error::Full
        );
        let full = Table::from_sorted(4, 8, (0..slots - 15).map(|_| (15, 0))).unwrap();
        full.check();
        assert_eq!(full.run(15), Some(15..=slots - 1));
        assert!(Table::new(MAX_QUOTIENT_BITS + 1, 8).is_err());
        assert!(Table::new(4, 0).is_err() && Table::new(4, 65).is_err());
    }
}
