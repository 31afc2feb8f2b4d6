//! Changing a [`Table`]: inserting with a shift to the right, removing with
//! a shift back, and writing a whole table from ordered entries.

#[cfg(test)]
use super::Broadword;
use super::{Select, Table, BLOCK};
use crate::error::invalid;
use crate::succinct::bits::low_mask;
use crate::Error;

impl Table {
    /// The first empty slot at or after `s`, jumping over whole runs.
    #[inline(always)]
    fn first_empty_from<S: Select>(&self, sel: S, mut s: usize) -> Option<usize> {
        while s < self.slots {
            let end = self.last_end_by(sel, s);
            if end < s as isize {
                return Some(s);
            }
            s = end as usize + 1;
        }
        None
    }

    /// Recomputes the offsets of blocks `from..=to` (in order: each uses the
    /// one before it), after entries of quotients of block `from − 1` or
    /// later moved. The blocks before `from` keep theirs: their offsets
    /// count the slots of runs of quotients before them, which end before
    /// any entry that moved.
    pub(super) fn fix_offsets(&mut self, from: usize, to: usize) {
        for b in from.max(1)..=to.min(self.slots / BLOCK - 1) {
            let end = self.last_end(b * BLOCK - 1);
            self.set_offset(b, (end + 1 - (b * BLOCK) as isize).max(0) as usize);
        }
    }

    /// Inserts `(x, v)`: after the values of `x`'s run that are at most
    /// `v`. [`Error::Full`] (nothing changed) when no slot is free after
    /// the run.
    ///
    /// One rank and one select find where the entry goes (in `x`'s run, or
    /// a new run just after the runs of the quotients before `x`); the
    /// entries from there to the first empty slot move one slot on; and the
    /// offset of every block whose first slot lies after `x` and up to that
    /// empty slot grows by one (the runs of the quotients before it now end
    /// one slot later: either they include the new entry or they moved).
    #[cfg(test)]
    pub(crate) fn insert(&mut self, x: usize, v: u64) -> Result<(), Error> {
        self.insert_by(Broadword, x, v)
    }

    /// [`insert`](Self::insert) with `sel`'s select.
    #[inline(always)]
    pub(crate) fn insert_by<S: Select>(&mut self, sel: S, x: usize, v: u64) -> Result<(), Error> {
        debug_assert!(x < self.canonical() && v <= low_mask(self.width));
        let b = x / BLOCK;
        let occupied = self.occupied(b);
        let offset = self.offset(b);
        let d = (occupied & super::upto(x)).count_ones();
        // Slot `x` is free when the runs of its block's quotients up to `x`
        // all end after the runs from earlier blocks and before `x`: as
        // many run ends in `offset..x` as occupied quotients up to `x` (a
        // run end there is one of theirs: later quotients' runs start
        // after `x`). Then the entry goes there and nothing moves; at
        // loads near half, most inserts end here, with no select.
        let i = x % BLOCK;
        if offset <= i && d == (self.runends(b) & (super::upto(x) >> 1) >> offset << offset).count_ones() {
            self.set_value(x, v);
            self.set_runend(x, true);
            self.set_occupied_bit(x, true);
            self.len += 1;
            return Ok(());
        }
        let base = b * BLOCK + offset;
        let has_run = occupied >> i & 1 != 0;
        // `pos`: where the entry goes; `search`: the first slot that may be
        // empty; `appends_to`: the run end the entry takes over.
        let (pos, search, appends_to) = if has_run {
            let end = self.nth_runend_by(sel, base, d - 1);
            let start = self.start_before(x, end);
            match (start..=end).find(|&s| self.value(s) > v) {
                Some(pos) => (pos, end + 1, None),
                None => (end + 1, end + 1, Some(end)),
            }
        } else {
            // The runs of the quotients before `x` end just before here.
            let prev_end = match d {
                0 => base as isize - 1,
                d => self.nth_runend_by(sel, base, d - 1) as isize,
            };
            let pos = x.max((prev_end + 1) as usize);
            (pos, pos, None)
        };
        let empty = self.first_empty_from(sel, search).ok_or(Error::Full)?;
        self.shift_right(pos, empty);
        self.set_value(pos, v);
        self.set_runend(pos, !has_run || appends_to.is_some());
        if let Some(old_end) = appends_to {
            self.set_runend(old_end, false);
        }
        self.set_occupied_bit(x, true);
        self.len += 1;
        for block in b + 1..=empty / BLOCK {
            self.bump_offset(block);
        }
        Ok(())
    }

    /// Adds one to block `b`'s offset (a saturated byte stays saturated:
    /// its exact value is recomputed when read).
    fn bump_offset(&mut self, b: usize) {
        let at = b * self.stride();
        if self.bytes[at] != super::SATURATED {
            self.bytes[at] += 1;
        }
    }

    /// Removes the entry in slot `s` of quotient `x`'s run, shifting the
    /// entries after it that are not in their own quotient's slot back by
    /// one.
    #[cfg(test)]
    pub(crate) fn remove_at(&mut self, x: usize, s: usize) {
        let run = self.run(x).expect("remove_at: quotient has a run");
        debug_assert!(run.contains(&s));
        self.remove_slot(Broadword, x, run.start() == run.end(), *run.end(), s);
    }

    /// Removes one entry `(x, v)`, if there is one, with `sel`'s select:
    /// whether there was. The run is searched from its end back, as
    /// [`contains_by`](Table::contains_by) does.
    #[inline(always)]
    pub(crate) fn remove_by<S: Select>(&mut self, sel: S, x: usize, v: u64) -> bool {
        let b = x / BLOCK;
        let occupied = self.occupied(b);
        if occupied >> (x % BLOCK) & 1 == 0 {
            return false;
        }
        let base = b * BLOCK + self.offset(b);
        let d = (occupied & super::upto(x)).count_ones();
        let end = self.nth_runend_by(sel, base, d - 1);
        // Whether slot `s` starts the run: it is `x`'s own, or a run ends
        // just before it.
        let first = |t: &Self, s: usize| s == x || t.runend(s - 1);
        let mut s = end;
        loop {
            let w = self.value(s);
            if w == v {
                break;
            }
            if w < v || first(self, s) {
                return false;
            }
            s -= 1;
        }
        let alone = s == end && first(self, s);
        self.remove_slot(sel, x, alone, end, s);
        true
    }

    /// Removes the entry of quotient `x`'s run with the highest
    /// `score(value)` (the first of equals; values scored `None` are never
    /// removed), with `sel`'s select: the value removed, if any.
    #[inline(always)]
    pub(crate) fn remove_best_by<S: Select>(
        &mut self,
        sel: S,
        x: usize,
        score: impl Fn(u64) -> Option<u32>,
    ) -> Option<u64> {
        let run = self.run_by(sel, x)?;
        let (start, end) = (*run.start(), *run.end());
        let mut best: Option<(u32, usize)> = None;
        for s in start..=end {
            if let Some(v) = score(self.value(s)) {
                if best.is_none_or(|(b, _)| v > b) {
                    best = Some((v, s));
                }
            }
        }
        let (_, s) = best?;
        let v = self.value(s);
        self.remove_slot(sel, x, start == end, end, s);
        Some(v)
    }

    /// Removes the entry in slot `s` of quotient `x`'s run, which ends at
    /// `end` and holds only that entry when `alone`. The entries after it
    /// move back one slot up to the first run that sits at its own
    /// quotient (or an empty slot); the offset of every
    /// block whose first slot lies after `x` and up to the last slot that
    /// moved shrinks by one where it was not 0 (the runs of the quotients
    /// before it end one slot earlier).
    #[inline(always)]
    fn remove_slot<S: Select>(&mut self, sel: S, x: usize, alone: bool, end: usize, s: usize) {
        // The last slot that moves back: the end of the runs of the
        // quotients up to `end`, then up to that, and so on until it stays
        // put; the entries between sit after their own quotients. A run
        // that ends in its own quotient's slot is that one slot, and no
        // entry after it is shifted: nothing moves back.
        let mut last = end;
        if end != x {
            loop {
                let e = self.last_end_by(sel, last);
                if e <= last as isize {
                    break;
                }
                last = e as usize;
            }
        }
        let removed_end = self.runend(s);
        self.shift_left(s, last);
        self.set_value(last, 0);
        self.set_runend(last, false);
        if alone {
            self.set_occupied_bit(x, false);
        } else if removed_end {
            // The run's last entry went: the one before it ends the run now.
            self.set_runend(s - 1, true);
        }
        self.len -= 1;
        for b in x / BLOCK + 1..=last / BLOCK {
            let at = b * self.stride();
            match self.bytes[at] {
                0 => {}
                super::SATURATED => {
                    let exact = (self.last_end_by(sel, b * BLOCK - 1) + 1 - (b * BLOCK) as isize).max(0);
                    self.set_offset(b, exact as usize);
                }
                _ => self.bytes[at] -= 1,
            }
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
        Table::from_sorted_into(Table::new(quotient_bits, width)?, entries)
    }

    /// [`from_sorted`](Self::from_sorted) into `t`, an empty table of any
    /// shape.
    pub(crate) fn from_sorted_into(
        mut t: Table,
        entries: impl IntoIterator<Item = (usize, u64)>,
    ) -> Result<Self, Error> {
        debug_assert_eq!(t.len, 0);
        let width = t.width;
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
                        t.set_runend(next - 1, true);
                    }
                    next = next.max(x);
                    t.set_occupied_bit(x, true);
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
            t.set_runend(next - 1, true);
        }
        t.fix_offsets(1, t.slots / BLOCK - 1);
        Ok(t)
    }
}
