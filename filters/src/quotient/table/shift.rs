//! Moving a stretch of slots one slot up (an insert makes room) or down (a
//! remove closes the gap) a block at a time: the run-end bits with one
//! shift of the block's word, the values a word at a time, and only the
//! slot that crosses a block boundary on its own.
//!
//! A block's value area is `w` 64-bit words (64 values of `w` bits), so a
//! move by one slot is the area's bit string shifted by `w` bits: each
//! word of the stretch becomes its own bits shifted and the neighbour's
//! that cross into it, one read and one write per word. Words are read and
//! written whole at their own bytes, as [`Table::value`] reads them, so
//! no read waits on a store it only partly overlaps.
//!
//! At the 95% load a quotient filter runs at, an insert moves tens of
//! slots. The slot-by-slot moves stay in the tests as the oracle.

use super::{Table, BLOCK, HEADER};

/// The bits of word `t` (bits `64t..64t + 64` of a string) that fall in
/// `from..to`.
#[inline(always)]
fn word_mask(t: usize, from: usize, to: usize) -> u64 {
    let lo = from.max(64 * t) - 64 * t;
    let hi = to.min(64 * t + 64) - 64 * t;
    bits_between(lo, hi)
}

/// The bits `i..j` of a word (`j ≤ 64`; none when `i ≥ j`, which includes
/// `i = 64`).
#[inline(always)]
fn bits_between(i: usize, j: usize) -> u64 {
    if i >= j {
        0
    } else {
        (u64::MAX >> (64 - (j - i))) << i
    }
}

impl Table {
    /// The byte where block `b`'s value area starts.
    #[inline(always)]
    fn area(&self, b: usize) -> usize {
        b * self.stride() + HEADER
    }

    /// Moves the values of slots `i..j` of block `b` (`i ≤ j < 64`) to
    /// `i + 1 ..= j`: bits `iw..jw` of the area to `(i+1)w..(j+1)w`, the
    /// highest word first (each takes bits from the word below, not yet
    /// written).
    #[inline(always)]
    fn move_values_up(&mut self, b: usize, i: usize, j: usize) {
        let w = self.width as usize;
        let (from, to) = ((i + 1) * w, (j + 1) * w);
        if from >= to {
            return;
        }
        let area = self.area(b);
        let first = from / 64;
        let mut t = (to - 1) / 64;
        let mut word = self.word_at(area + 8 * t);
        loop {
            let below = if t == 0 {
                0
            } else {
                self.word_at(area + 8 * (t - 1))
            };
            let shifted = if w == 64 {
                below
            } else {
                word << w | below >> (64 - w)
            };
            let mask = word_mask(t, from, to);
            self.set_word_at(area + 8 * t, (word & !mask) | (shifted & mask));
            if t == first {
                return;
            }
            word = below;
            t -= 1;
        }
    }

    /// Moves the values of slots `i + 1 ..= j` of block `b` (`i ≤ j < 64`)
    /// to `i..j`: bits `(i+1)w..(j+1)w` of the area to `iw..jw`, the lowest
    /// word first (each takes bits from the word above, not yet written).
    #[inline(always)]
    fn move_values_down(&mut self, b: usize, i: usize, j: usize) {
        let w = self.width as usize;
        let (from, to) = (i * w, j * w);
        if from >= to {
            return;
        }
        let area = self.area(b);
        let last = (to - 1) / 64;
        let mut t = from / 64;
        let mut word = self.word_at(area + 8 * t);
        loop {
            // The area's last word takes nothing from above it.
            let above = if t + 1 == w {
                0
            } else {
                self.word_at(area + 8 * (t + 1))
            };
            let shifted = if w == 64 {
                above
            } else {
                word >> w | above << (64 - w)
            };
            let mask = word_mask(t, from, to);
            self.set_word_at(area + 8 * t, (word & !mask) | (shifted & mask));
            if t == last {
                return;
            }
            word = above;
            t += 1;
        }
    }

    /// Moves slots `i..j` of block `b` (`i ≤ j < 64`) to `i + 1 ..= j`:
    /// values and run-end bits; slot `i` keeps its value and loses its
    /// run-end bit.
    #[inline(always)]
    fn move_up_in_block(&mut self, b: usize, i: usize, j: usize) {
        self.move_values_up(b, i, j);
        let at = b * self.stride() + 9;
        let ends = self.word_at(at);
        let moved = ends & bits_between(i, j);
        self.set_word_at(at, (ends & !(moved | bits_between(i, j + 1))) | moved << 1);
    }

    /// Moves slots `i + 1 ..= j` of block `b` (`i ≤ j < 64`) to `i..j`:
    /// values and run-end bits; slot `j` keeps its value and loses its
    /// run-end bit.
    #[inline(always)]
    fn move_down_in_block(&mut self, b: usize, i: usize, j: usize) {
        self.move_values_down(b, i, j);
        let at = b * self.stride() + 9;
        let ends = self.word_at(at);
        let moved = ends & bits_between(i + 1, j + 1);
        self.set_word_at(at, (ends & !bits_between(i, j + 1)) | moved >> 1);
    }

    /// Copies slot `from`'s value and run-end bit to slot `to`.
    #[inline(always)]
    fn copy_slot(&mut self, from: usize, to: usize) {
        let (value, end) = (self.value(from), self.runend(from));
        self.set_value(to, value);
        self.set_runend(to, end);
    }

    /// Moves the values and run-end bits of slots `from..to` one slot on
    /// (to `from + 1 ..= to`), the highest block first.
    #[inline(always)]
    pub(super) fn shift_right(&mut self, from: usize, to: usize) {
        if from >= to {
            return;
        }
        let first = from / BLOCK;
        let mut b = (to - 1) / BLOCK;
        loop {
            let start = from.max(b * BLOCK) - b * BLOCK;
            let mut end = to - b * BLOCK; // past the block's last source
            if end >= BLOCK {
                // Slot 63 goes to the next block's slot 0, which the
                // pass over that block has already moved on.
                self.copy_slot(b * BLOCK + BLOCK - 1, (b + 1) * BLOCK);
                end = BLOCK - 1;
            }
            self.move_up_in_block(b, start, end);
            if b == first {
                return;
            }
            b -= 1;
        }
    }

    /// Moves the values and run-end bits of slots `from + 1 ..= to` one
    /// slot back (to `from..to`), the lowest block first; slot `to` keeps
    /// its value and loses its run-end bit.
    #[inline(always)]
    pub(super) fn shift_left(&mut self, from: usize, to: usize) {
        if from >= to {
            return;
        }
        let last = to / BLOCK;
        let mut b = from / BLOCK;
        loop {
            let start = from.max(b * BLOCK) - b * BLOCK;
            if b < last {
                // The block's slots move down, and the next block's slot 0
                // comes into its slot 63 before that block moves.
                self.move_down_in_block(b, start, BLOCK - 1);
                self.copy_slot((b + 1) * BLOCK, b * BLOCK + BLOCK - 1);
            } else {
                self.move_down_in_block(b, start, to - b * BLOCK);
                return;
            }
            b += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::remix;

    /// The slot-by-slot moves: the oracle.
    fn shift_right_slowly(t: &mut Table, from: usize, to: usize) {
        for s in (from..to).rev() {
            t.copy_slot(s, s + 1);
        }
        if from < to {
            t.set_runend(from, false);
        }
    }

    fn shift_left_slowly(t: &mut Table, from: usize, to: usize) {
        for s in from..to {
            t.copy_slot(s + 1, s);
        }
        if from < to {
            t.set_runend(to, false);
        }
    }

    /// A table of random bytes where values and headers are (the shifts
    /// do not read the invariants, only move bits).
    fn noisy(width: u32, seed: u64) -> Table {
        let mut t = Table::new(9, width).unwrap();
        let n = t.bytes.len() - super::super::TAIL;
        for (i, b) in t.bytes[..n].iter_mut().enumerate() {
            *b = remix(i as u64, seed) as u8;
        }
        t
    }

    /// Every width, stretches inside a block, across one boundary and
    /// across several, empty and of one slot: the block-wise moves leave
    /// every byte as the slot-by-slot ones do.
    #[test]
    fn block_moves_agree_with_slot_moves() {
        for width in [1u32, 3, 7, 8, 9, 13, 31, 32, 57, 63, 64] {
            let slots = Table::new(9, width).unwrap().slots;
            for case in 0..300u64 {
                let r = remix(case, u64::from(width));
                let from = r as usize % (slots - 1);
                let span = match case % 4 {
                    0 => (r >> 32) as usize % 4,
                    1 => (r >> 32) as usize % 70,
                    _ => (r >> 32) as usize % 300,
                };
                let to = (from + span).min(slots - 1);
                let mut fast = noisy(width, case);
                let mut slow = fast.clone();
                fast.shift_right(from, to);
                shift_right_slowly(&mut slow, from, to);
                assert!(fast.bytes == slow.bytes, "right: width {width}, {from}..{to}");
                fast.shift_left(from, to);
                shift_left_slowly(&mut slow, from, to);
                assert!(fast.bytes == slow.bytes, "left: width {width}, {from}..{to}");
            }
        }
    }
}
