//! On-the-fly Gaussian elimination of a banded system ("banding",
//! Dillinger & Walzer 2021, section 2.2).
//!
//! The system has one equation per key, `coeff · Z[start .. start + 128] =
//! result`, over GF(2). Equations are added one at a time and kept in an
//! upper-triangular form with *at most one row per slot*: the row stored at
//! slot `i` has its leading 1 at `i`. Adding an equation walks upward from its
//! start: at a free slot it is stored; at an occupied slot the stored row is
//! XORed in (clearing the leading 1) and the walk skips to the new leading 1.
//! Since every row only reaches 128 slots forward, each step touches a few
//! neighbouring slots, so sorted insertion is cache friendly and the work per
//! key is a handful of 128-bit XORs.
//!
//! If the coefficients cancel completely the equation was a combination of
//! earlier ones: it is satisfied for free when its result also cancelled
//! (identical duplicate keys always do), and the system is unsolvable when it
//! did not, so construction retries with a fresh seed.
//!
//! Memory: 32 bytes per slot (16 coefficient bytes, 4 result bytes, padding
//! to the `u128` alignment), 16 with 64-bit rows, for one shard at a time.

use alloc::vec::Vec;

use super::row::Row;
use crate::zeroed::zeroed_vec;
use crate::Error;

/// A row's coefficient bits: 128 (`u128`) or 64 (`u64`, rows of the
/// two-line layout, whose banding then takes half the memory and walks
/// with 64-bit shifts).
pub(crate) trait Coeff:
    Copy
    + Eq
    + core::fmt::Debug
    + core::ops::BitXor<Output = Self>
    + core::ops::Shr<u32, Output = Self>
    + bytemuck::Zeroable
{
    const ZERO: Self;
    fn trailing_zeros(self) -> u32;
}

impl Coeff for u128 {
    const ZERO: Self = 0;
    #[inline(always)]
    fn trailing_zeros(self) -> u32 {
        u128::trailing_zeros(self)
    }
}

impl Coeff for u64 {
    const ZERO: Self = 0;
    #[inline(always)]
    fn trailing_zeros(self) -> u32 {
        u64::trailing_zeros(self)
    }
}

/// What adding one equation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Added {
    /// Stored as the pivot row of a slot.
    Stored,
    /// Already implied by the stored rows (consistent): nothing to store.
    Redundant,
    /// Contradicts the stored rows: the system has no solution.
    Contradiction,
}

/// The triangular system under construction, of rows with `C` coefficient
/// bits.
#[derive(Debug)]
pub(crate) struct Banding<C: Coeff = u128> {
    /// `slots[i]`: the row whose leading 1 is at slot `i` (bit 0 = slot `i`)
    /// and its result bits, or `(0, 0)` if no row has its pivot there yet.
    /// Kept together so one elimination step touches one cache line.
    slots: Vec<(C, u32)>,
}

impl<C: Coeff> Banding<C> {
    /// An empty system over `num_slots` slots ([`Error::TooLarge`] if it
    /// cannot be allocated).
    pub(crate) fn new(num_slots: usize) -> Result<Self, Error> {
        Ok(Banding {
            slots: zeroed_vec(num_slots)?,
        })
    }

    /// Empties the system and resizes it to `num_slots` slots, keeping the
    /// allocation when it is large enough (construction reuses one banding
    /// for every shard) and otherwise replacing it with one of exactly
    /// `num_slots` slots.
    pub(crate) fn reset(&mut self, num_slots: usize) -> Result<(), Error> {
        if num_slots > self.slots.capacity() {
            self.slots = Vec::new(); // free the old one first
            self.slots = zeroed_vec(num_slots)?;
        } else {
            self.slots.clear();
            self.slots.resize(num_slots, (C::ZERO, 0)); // within capacity: no allocation
        }
        Ok(())
    }

    /// Adds `row`, whose result is already masked to its column count.
    ///
    /// The caller guarantees every coefficient bit lies inside the system
    /// (`start + 127 < num_slots`); then every slot the walk visits does too,
    /// because the walk only moves to bits that are set. (Construction adds
    /// rows through [`add_all`](Self::add_all) or [`add_where`](Self::add_where).)
    #[cfg(test)]
    pub(crate) fn add(&mut self, mut row: Row<C>) -> Added {
        loop {
            if let Some(done) = self.step(&mut row) {
                return done;
            }
        }
    }

    /// Adds every row, four at a time: each walk is a chain of dependent
    /// loads (the next slot depends on the XOR just done), so advancing four
    /// walks in turn lets the CPU overlap their latencies. This is still
    /// exact elimination: a walk's row stays a combination of its equation
    /// and stored rows whatever the other walk stores meanwhile.
    /// Returns `false` at the first contradiction.
    ///
    /// The four lanes are plain rows, refilled as walks end; when the rows
    /// run out, the other walks finish one at a time. (Keeping four
    /// `Option<Row>` lanes to the end and testing each per step measured
    /// slower.)
    pub(crate) fn add_all(&mut self, rows: impl Iterator<Item = Row<C>>) -> bool {
        self.add_all_noting(rows, &mut |_| {})
    }

    /// [`add_all`](Self::add_all), calling `stored(slot)` for each row it
    /// stores. On a contradiction it stops at once: the walks still in
    /// flight have stored nothing, so the slots noted are every change made
    /// to the system, and clearing them (in any order: the rows stored
    /// before the call were never modified) restores it.
    pub(crate) fn add_all_noting(
        &mut self,
        mut rows: impl Iterator<Item = Row<C>>,
        stored: &mut impl FnMut(usize),
    ) -> bool {
        let first = [rows.next(), rows.next(), rows.next(), rows.next()];
        let [Some(a), Some(b), Some(c), Some(d)] = first else {
            // Fewer than four rows: no walks to overlap.
            return first
                .into_iter()
                .flatten()
                .all(|row| self.add_noting(row, stored));
        };
        let mut lanes = [a, b, c, d];
        // The lanes by constant index, not a loop over `lanes`: with a loop
        // the compiler kept the walks on the stack in some callers, and
        // construction took 20% longer (measured at 1M and 3M keys).
        loop {
            if let Some(done) = self.advance(&mut lanes, 0, &mut rows, stored) {
                return done;
            }
            if let Some(done) = self.advance(&mut lanes, 1, &mut rows, stored) {
                return done;
            }
            if let Some(done) = self.advance(&mut lanes, 2, &mut rows, stored) {
                return done;
            }
            if let Some(done) = self.advance(&mut lanes, 3, &mut rows, stored) {
                return done;
            }
        }
    }

    /// Adds `row` through [`add_where`](Self::add_where), noting the slot
    /// where it is stored; `false` at a contradiction.
    #[inline(always)]
    fn add_noting(&mut self, row: Row<C>, stored: &mut impl FnMut(usize)) -> bool {
        match self.add_where(row) {
            Ok(Some(slot)) => {
                stored(slot);
                true
            }
            Ok(None) => true,
            Err(()) => false,
        }
    }

    /// One step of walk `i`; when it ends, the next row takes its lane.
    /// `Some(answer)` once the whole banding is decided: at a contradiction,
    /// or when the rows have run out (the other walks are then finished one
    /// at a time).
    #[inline(always)]
    fn advance(
        &mut self,
        lanes: &mut [Row<C>; 4],
        i: usize,
        rows: &mut impl Iterator<Item = Row<C>>,
        stored: &mut impl FnMut(usize),
    ) -> Option<bool> {
        match self.step(&mut lanes[i]) {
            None => None,
            Some(Added::Contradiction) => Some(false),
            Some(added) => {
                if added == Added::Stored {
                    stored(lanes[i].start);
                }
                match rows.next() {
                    Some(row) => {
                        lanes[i] = row;
                        None
                    }
                    None => Some(
                        (0..lanes.len())
                            .filter(|&j| j != i)
                            .all(|j| self.add_noting(lanes[j], stored)),
                    ),
                }
            }
        }
    }

    /// One elimination step of `row`'s walk: store it, finish it, or XOR
    /// the stored row in and move to the new leading 1.
    #[inline(always)]
    fn step(&mut self, row: &mut Row<C>) -> Option<Added> {
        let slot = &mut self.slots[row.start];
        if slot.0 == C::ZERO {
            *slot = (row.coeff, row.result);
            return Some(Added::Stored);
        }
        let coeff = row.coeff ^ slot.0;
        row.result ^= slot.1;
        if coeff == C::ZERO {
            return Some(if row.result == 0 {
                Added::Redundant
            } else {
                Added::Contradiction
            });
        }
        let skip = coeff.trailing_zeros();
        row.start += skip as usize;
        row.coeff = coeff >> skip;
        None
    }

    /// Adds `row` as [`add`](Self::add) does and says where it was stored
    /// (`Some(slot)`), that it was redundant (`None`), or that it
    /// contradicts the system (`Err`). A bumped layer needs the slot: the
    /// rows stored last can be taken out again ([`clear`](Self::clear)),
    /// because adding a row never changes the rows stored before it.
    #[inline(always)]
    pub(crate) fn add_where(&mut self, mut row: Row<C>) -> Result<Option<usize>, ()> {
        loop {
            match self.step(&mut row) {
                None => continue,
                Some(Added::Stored) => return Ok(Some(row.start)),
                Some(Added::Redundant) => return Ok(None),
                Some(Added::Contradiction) => return Err(()),
            }
        }
    }

    /// Takes the row stored at `slot` out of the system. Only correct for
    /// the rows stored last, in reverse order (see [`add_where`](Self::add_where)):
    /// no row stored after it may have been reduced by it.
    #[inline(always)]
    pub(crate) fn clear(&mut self, slot: usize) {
        self.slots[slot] = (C::ZERO, 0);
    }

    /// The row stored at `slot` (coefficients, result); `(0, 0)` when empty.
    #[inline(always)]
    pub(crate) fn row_at(&self, slot: usize) -> (C, u32) {
        self.slots[slot]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(start: usize, coeff: u128, result: u32) -> Row {
        Row { start, coeff, result }
    }

    #[test]
    fn duplicates_are_redundant_and_contradictions_are_caught() {
        let mut b = Banding::new(256).unwrap();
        assert_eq!(b.add(row(3, 0b1011, 5)), Added::Stored);
        assert_eq!(b.add(row(3, 0b1011, 5)), Added::Redundant);
        assert_eq!(b.add(row(3, 0b1011, 4)), Added::Contradiction);
        // 0b1011 ^ 0b0001 = 0b1010 -> leading 1 moves to slot 4, stored there.
        assert_eq!(b.add(row(3, 0b0001, 1)), Added::Stored);
        assert_eq!(b.row_at(4), (0b101, 4));
        assert_eq!(b.row_at(0), (0, 0));
    }

    #[test]
    fn add_all_matches_one_at_a_time() {
        let rows: Vec<Row> = (0..300u64)
            .map(|i| {
                let a = crate::hash::remix(i, 3);
                row(
                    (a % 300) as usize,
                    (a as u128) << 64 | (a.rotate_left(17) as u128) | 1,
                    (a >> 40) as u32 & 1,
                )
            })
            .collect();
        let mut one = Banding::new(512).unwrap();
        let solvable = rows.iter().all(|&r| one.add(r) != Added::Contradiction);
        let mut two = Banding::new(512).unwrap();
        assert_eq!(two.add_all(rows.iter().copied()), solvable);
        let mut dup = Banding::new(512).unwrap();
        assert!(dup.add_all([row(3, 0b11, 1), row(3, 0b11, 1), row(4, 1, 1)].into_iter()));
        assert!(!dup.add_all([row(3, 0b11, 0)].into_iter()));
    }

    /// The slots `add_all_noting` notes are exactly the ones it filled, and
    /// clearing them after a contradiction leaves the system as it was.
    #[test]
    fn noted_slots_are_every_change_and_clearing_them_undoes_the_call() {
        let rows = |salt: u64, n: u64| -> Vec<Row> {
            (0..n)
                .map(|i| {
                    let a = crate::hash::remix(i, salt);
                    row(
                        (a % 400) as usize,
                        (a as u128) << 64 | (a.rotate_left(9) as u128) | 1,
                        (a >> 40) as u32 & 3,
                    )
                })
                .collect()
        };
        let snapshot = |b: &Banding| (0..528).map(|i| b.row_at(i)).collect::<Vec<_>>();
        let mut b = Banding::new(528).unwrap();
        assert!(b.add_all(rows(5, 200).into_iter()));
        let before = snapshot(&b);
        // A batch that fits: the noted slots are the newly filled ones.
        let mut noted = Vec::new();
        let more = rows(6, 100);
        let ok = b.add_all_noting(more.iter().copied(), &mut |s| noted.push(s));
        assert!(ok);
        let after = snapshot(&b);
        let mut changed: Vec<usize> = (0..528).filter(|&i| before[i] != after[i]).collect();
        noted.sort_unstable();
        changed.sort_unstable();
        assert_eq!(noted, changed);
        assert!(noted.iter().all(|&i| before[i] == (0, 0)));
        // Batches that contradict (a row twice with another result): undone.
        let mut undone = 0;
        for salt in 7..40 {
            let before = snapshot(&b);
            let mut batch = rows(salt, 60);
            let mut twin = batch[30];
            twin.result ^= 1;
            batch.insert(45, twin);
            let mut noted = Vec::new();
            if !b.add_all_noting(batch.into_iter(), &mut |s| noted.push(s)) {
                noted.iter().for_each(|&s| b.clear(s));
                assert_eq!(snapshot(&b), before, "salt {salt}");
                undone += 1;
            }
        }
        assert!(undone > 25, "{undone}");
    }

    /// Rows of 64 coefficient bits band exactly as the same rows widened
    /// to 128: the same outcome for every row and the same stored system.
    #[test]
    fn narrow_rows_band_as_wide_ones() {
        let mut narrow = Banding::<u64>::new(600).unwrap();
        let mut wide = Banding::<u128>::new(600).unwrap();
        let (mut stored, mut contradictions) = (0, 0);
        for i in 0..700u64 {
            let a = crate::hash::remix(i, 21);
            let (start, coeff, result) = ((a % 537) as usize, a.rotate_left(29) | 1, (a >> 50) as u32 & 7);
            let got = narrow.add(Row { start, coeff, result });
            let want = wide.add(Row {
                start,
                coeff: coeff as u128,
                result,
            });
            assert_eq!(got, want, "row {i}");
            stored += (got == Added::Stored) as usize;
            contradictions += (got == Added::Contradiction) as usize;
        }
        assert!(stored > 400 && contradictions > 20, "{stored} {contradictions}");
        for slot in 0..600 {
            let (c, r) = narrow.row_at(slot);
            assert_eq!((c as u128, r), wide.row_at(slot), "slot {slot}");
        }
    }
}
