//! The two-line layout: 64-slot rows in 64-byte lines of 73
//! slots, so every query reads at most two cache lines.
//!
//! # Why
//!
//! At 100M keys a Ribbon query costs what its cache lines cost. A 128-slot
//! row at `r = 7` covers 112 bytes and spans three or four lines in the
//! blocked layout (`solution.rs`). Here a row covers **64** consecutive
//! slots, and a line ([`Line`], 64 bytes, 64-byte aligned) holds
//! [`LINE_SLOTS`] = 73 slots of 7 bits:
//!
//! ```text
//!   words 0..7   column j of the line's slots 0..64 (bit k = Z[k][j])
//!   word 7       bits 9j .. 9j+9 = column j of the slots 64..73; bit 63 is 0
//! ```
//!
//! so a row starting at offset `o` of line `L` covers slots `o .. o + 64`:
//! line `L` alone when `o ≤ 9`, else the end of `L` and slots `0 .. o − 9`
//! of `L + 1`, which are in its column words. Never more than two lines,
//! and the second one's ninth word is never needed.
//!
//! # Price
//!
//! A narrower band needs more slack to stay solvable: measured with the
//! standalone simulation `filters/examples/ribbon_overhead64.rs` (binomial
//! shard sizes, 2,000 shards per cell), 64-slot rows in shards of
//! [`LINE_SHARD_KEYS`] = 4,096 keys at [`LINE_SLOTS_PER_KEY`] = 1.04 slots
//! per key fail 19% of first attempts, at 7.30 bits per key (the spare bit
//! per line, 0.2%, and the 5-byte shard table included), against 7.18 for
//! the blocked layout. Smaller shards need less slack for the same failure
//! share (the pile-up at a band's end grows with its length); 4,096 keys
//! keep the shard table at 122 KB for 100M keys, inside L2.
//!
//! Only `r = 7` exactly: the packing is specific to it ([`RibbonParams::
//! with_two_line_layout`](super::RibbonParams::with_two_line_layout) refuses
//! anything else).
//!
//! # Query
//!
//! Shard, seed and start come as in the blocked layout (`row.rs`; the 64
//! coefficient bits are the low half of the 128-bit ones, bit 0 set). With
//! the row shifted into place once, column `j` is the parity of
//!
//! ```text
//!   (A[j] & lo_a) ^ ((A[7] >> 9j) & hi_a) ^ (B[j] & lo_b)
//! ```
//!
//! for lines `A = L`, `B = L + 1`: eight such words (the eighth is masked
//! away) and one parity fold ([`portable_pair`]; `kernel.rs` has the AVX2
//! one, tested against it).

use super::banding::Banding;
use super::row::{coeff_of, locate_in_shard, result_of, seeded, spread, start_of, unmixed, Row};
use super::runs::Solver;
use super::solution::parities;
use super::table::{u32_at, ATTEMPTS_PER_SIZE, MAX_ATTEMPTS};
use crate::prefetch::prefetch;
use crate::{Error, FormatError};

/// Slots per line: 64 in the column words, 9 in the ninth word.
pub(crate) const LINE_SLOTS: usize = 73;
/// Width of a row in slots.
pub(crate) const LINE_ROW: usize = 64;
/// Result bits (columns) of the two-line layout.
pub(crate) const LINE_COLUMNS: u32 = 7;
/// Bits per column of the ninth word (slots 64..73 of a line).
const EXTRA: u32 = 9;

/// Target keys per shard of the two-line layout: fewer than the blocked
/// layout's [`SHARD_KEYS`](super::SHARD_KEYS), because 64-slot rows pile up
/// at a band's end sooner and a shorter band needs less slack for the same
/// failure share.
pub const LINE_SHARD_KEYS: usize = 4096;

/// Slots per key of the two-line layout (64-slot rows in shards of
/// [`LINE_SHARD_KEYS`] keys): a simulation of the banding
/// (`filters/examples/ribbon_overhead64.rs`, binomial shard sizes) put 19%
/// of first attempts failing here, at 7.30 bits per key with the 73-slot
/// packing and the shard table; measured builds agree (7.30 bits/key, 1.25
/// attempts per shard at 100M keys).
pub const LINE_SLOTS_PER_KEY: f64 = 1.04;

/// Slots added to a shard above `keys · ratio` at least.
const MIN_EXTRA_SLOTS: f64 = 32.0;

/// One 64-byte line: 73 slots of 7 bits (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C, align(64))]
pub(crate) struct Line(pub(crate) [u64; 8]);

/// Where a query reads: its first line and the row's coefficients shifted
/// into place (`[lo_a, hi_a, lo_b]`, see the module docs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LineWindow {
    pub(crate) line: usize,
    pub(crate) coeff: [u64; 3],
}

impl LineWindow {
    /// The window of a row at shard-local `start` with 64 coefficient bits
    /// `coeff`, the shard starting at line `first`.
    #[inline(always)]
    pub(crate) fn new(first: usize, start: usize, coeff: u64) -> Self {
        let o = start % LINE_SLOTS;
        let wide = (coeff as u128) << o; // o ≤ 72; bits past 72 go to line B
        LineWindow {
            line: first + start / LINE_SLOTS,
            coeff: [
                wide as u64,
                (wide >> 64) as u64 & ((1 << EXTRA) - 1),
                ((coeff as u128) >> (LINE_SLOTS - o)) as u64,
            ],
        }
    }

    /// Whether the row reaches into the second line.
    #[inline(always)]
    pub(crate) fn two_lines(&self) -> bool {
        self.coeff[2] != 0
    }

    /// Asks for the line (or two) the query reads.
    #[inline(always)]
    pub(crate) fn prefetch(&self, lines: &[Line]) {
        prefetch(&lines[self.line]);
        if self.two_lines() {
            prefetch(&lines[self.line + 1]);
        }
    }

    /// Whether the fingerprint is `result` (7 bits), `pair` computing the
    /// parities of two lines; `lines` includes the padding line.
    #[inline(always)]
    pub(crate) fn matches(
        &self,
        lines: &[Line],
        result: u32,
        pair: impl Fn(&[u64; 8], &[u64; 8], [u64; 3]) -> u32,
    ) -> bool {
        // A row inside the first line (14% of keys: 10 of 73 starts) reads
        // no second line: `b` is line A again, and its coefficients are 0.
        let second = self.line + self.two_lines() as usize;
        let got = pair(&lines[self.line].0, &lines[second].0, self.coeff);
        (got ^ result) & ((1 << LINE_COLUMNS) - 1) == 0
    }
}

/// The portable parities of a line pair: bit `j` (for `j < 8`; bit 7 is
/// meaningless) is the parity of `(a[j] & c[0]) ^ ((a[7] >> 9j) & c[1]) ^
/// (b[j] & c[2])`.
#[inline(always)]
pub(crate) fn portable_pair(a: &[u64; 8], b: &[u64; 8], c: [u64; 3]) -> u32 {
    let extra = a[7];
    parities(core::array::from_fn(|j| {
        (a[j] & c[0]) ^ ((extra >> (EXTRA as usize * j)) & c[1]) ^ (b[j] & c[2])
    }))
}

/// The window and fingerprint of the key with this hash in a two-line
/// filter of `num_shards` shards, reading shard `i`'s first line, end line
/// and seed through `shard_at`; `None` when its shard holds no keys.
#[inline(always)]
pub(crate) fn locate_lines(
    num_shards: usize,
    shard_at: impl Fn(usize) -> (usize, usize, u8),
    hash: u64,
) -> Option<(LineWindow, u32)> {
    let (first, start, q, a) = locate_in_shard(num_shards, shard_at, hash, LINE_SLOTS, LINE_ROW)?;
    Some((
        LineWindow::new(first, start, coeff_of(q) as u64),
        result_of(a) & ((1 << LINE_COLUMNS) - 1),
    ))
}

/// Lines of a shard of `keys` keys (at least 1) at `ratio` slots per key,
/// attempt `attempt`: `keys + max(keys · (ratio − 1), 32)` slots, the extra
/// doubled every 8 attempts, rounded to the nearest line; at least one, and
/// never fewer slots than keys.
///
/// The last bound is the frame's invariant (a frame with more keys than
/// slots is rejected as corrupt), not the banding's: rounding down loses up
/// to 36 slots, more than the 32 extra, and a system with more rows than
/// columns can still solve when each surplus row reduces to zero with zero
/// result bits (1 in 128 per row). The fuzzer found such a filter (74 keys
/// in one line of 73 slots) whose own bytes then failed to decode.
pub(crate) fn lines_for(keys: usize, ratio: f64, attempt: u32) -> Result<usize, Error> {
    let growth = libm::exp2((attempt / ATTEMPTS_PER_SIZE) as f64);
    let extra = (keys as f64 * (ratio - 1.0)).max(MIN_EXTRA_SLOTS) * growth;
    let lines = libm::round((keys as f64 + extra) / LINE_SLOTS as f64);
    if !lines.is_finite() || lines >= u32::MAX as f64 {
        return Err(Error::TooLarge);
    }
    Ok((lines as usize).max(keys.div_ceil(LINE_SLOTS)).max(1))
}

/// The two-line layout's shard sizes, banding and solution, for the
/// construction loop of `runs.rs`: `slots_per_key` slots per key.
pub(crate) struct LineSolver(pub(crate) f64);

impl Solver for LineSolver {
    type Unit = Line;
    const POSITIONAL: bool = false;

    fn units(&self, keys: usize, attempt: u32) -> Result<usize, Error> {
        lines_for(keys, self.0, attempt)
    }

    fn storage(&self, from: usize, to: usize) -> Result<usize, Error> {
        Ok(to - from)
    }

    fn padding(&self) -> usize {
        1
    }

    fn band(
        &self,
        banding: &mut Banding,
        keys: &[u64],
        _: usize,
        lines: usize,
        seed: u8,
    ) -> Result<bool, Error> {
        band_shard(banding, keys, lines, seed)
    }

    fn store(&self, banding: &Banding, _: usize, _: usize, out: &mut [Line]) {
        solve_lines(banding, out);
    }
}

/// Bands one shard of `num_lines` lines with seed `seed`; `false` if the
/// system has no solution.
fn band_shard(banding: &mut Banding, keys: &[u64], num_lines: usize, seed: u8) -> Result<bool, Error> {
    let num_slots = num_lines * LINE_SLOTS;
    banding.reset(num_slots)?;
    let num_starts = (num_slots - (LINE_ROW - 1)) as u64;
    // Every row's 64 bits lie inside the shard: start + 63 < num_slots.
    Ok(banding.add_all(keys.iter().map(|&a| {
        let q = seeded(spread(unmixed(a)), seed);
        Row {
            start: start_of(q, num_starts),
            coeff: coeff_of(q) as u64 as u128,
            result: result_of(a) & ((1 << LINE_COLUMNS) - 1),
        }
    })))
}

/// Back-substitutes a banded shard into its (zeroed) lines: slots from
/// last to first, each column keeping a 64-slot window of the solution at
/// and above the current slot. Slots without a row get 0.
pub(crate) fn solve_lines(banding: &Banding, lines: &mut [Line]) {
    let mut window = [0u64; LINE_COLUMNS as usize];
    for slot in (0..lines.len() * LINE_SLOTS).rev() {
        let (coeff, result) = banding.row_at(slot);
        let coeff = coeff as u64;
        let line = &mut lines[slot / LINE_SLOTS].0;
        let pos = slot % LINE_SLOTS;
        for (j, w) in window.iter_mut().enumerate() {
            let above = *w << 1;
            let bit = ((result >> j) & 1) as u64 ^ ((coeff & above).count_ones() & 1) as u64;
            *w = above | bit;
            if pos < 64 {
                line[j] |= bit << pos;
            } else {
                line[7] |= bit << (EXTRA as usize * j + pos - 64);
            }
        }
    }
}

/// Checks a two-line shard table (`starts`: `num_shards + 1` little-endian
/// `u32`s, `seeds`: one byte per shard): starts from 0, never falling,
/// ending at `total_lines`; a seed below [`MAX_ATTEMPTS`], 0 for an empty
/// shard. Calls `each` as `check_shards` does; returns the number of
/// shards with keys.
pub(crate) fn check_line_shards(
    starts: &[u8],
    seeds: &[u8],
    total_lines: usize,
    mut each: impl FnMut(u32, Option<u8>),
) -> Result<usize, Error> {
    let bad = FormatError::InvalidParameters;
    let num_shards = seeds.len();
    if u32_at(starts, 0) != 0 || u32_at(starts, num_shards) as usize != total_lines {
        return Err(bad("shard starts do not span the lines").into());
    }
    let mut full = 0;
    for (i, &seed) in seeds.iter().enumerate() {
        let (start, end) = (u32_at(starts, i), u32_at(starts, i + 1));
        let n = end.checked_sub(start).ok_or(bad("shard starts fall"))?;
        if seed as u32 >= MAX_ATTEMPTS || (n == 0 && seed != 0) {
            return Err(bad("invalid shard").into());
        }
        full += (n > 0) as usize;
        each(start, Some(seed));
    }
    each(total_lines as u32, None);
    Ok(full)
}

#[cfg(test)]
mod tests {
    use super::super::banding::Added;
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;

    /// Every stored equation holds after back-substitution, for starts at
    /// every offset of a line (one-line and two-line rows).
    #[test]
    fn solution_satisfies_every_stored_row() {
        let num_lines = 9;
        let num_starts = num_lines * LINE_SLOTS - (LINE_ROW - 1);
        let mut banding = Banding::new(num_lines * LINE_SLOTS).unwrap();
        let mut rows = Vec::new();
        for i in 0..600u64 {
            let a = crate::hash::remix(i, 77);
            let row = Row {
                start: (i as usize * 11) % num_starts,
                coeff: (a | 1) as u128,
                result: (a >> 40) as u32 & 0x7f,
            };
            if banding.add(row) != Added::Contradiction {
                rows.push(row);
            }
        }
        assert!(rows.len() > 500, "{}", rows.len());
        let mut lines = vec![Line::default(); num_lines + 1];
        solve_lines(&banding, &mut lines[..num_lines]);
        assert!(lines.iter().all(|l| l.0[7] >> 63 == 0));
        let (mut one, mut two) = (0, 0);
        for row in rows {
            let w = LineWindow::new(0, row.start, row.coeff as u64);
            if w.two_lines() {
                two += 1;
            } else {
                one += 1;
            }
            assert!(w.matches(&lines, row.result, portable_pair), "{row:?}");
            assert!(!w.matches(&lines, row.result ^ 0x40, portable_pair));
        }
        assert!(one > 20 && two > 200, "{one} {two}");
    }

    /// The shifted coefficients cover exactly the row's 64 slots.
    #[test]
    fn window_splits_the_row_between_the_lines() {
        for o in 0..LINE_SLOTS {
            let w = LineWindow::new(5, 2 * LINE_SLOTS + o, u64::MAX);
            assert_eq!(w.line, 7);
            let ones = w.coeff.iter().map(|c| c.count_ones()).sum::<u32>();
            assert_eq!(ones, 64, "{o}");
            assert_eq!(w.coeff[0].trailing_zeros() as usize, o.min(64));
            assert_eq!(w.two_lines(), o > LINE_SLOTS - LINE_ROW);
            assert!(w.coeff[1] < 1 << EXTRA);
            assert!(w.coeff[2] < 1 << 63);
        }
    }

    #[test]
    fn lines_grow_on_retries() {
        assert_eq!(lines_for(1, 1.04, 0).unwrap(), 1);
        assert_eq!(lines_for(4096, 1.04, 0).unwrap(), 58); // 4096 · 1.04 / 73 = 58.4
        assert!(lines_for(4096, 1.04, 8).unwrap() > 58);
        assert_eq!(lines_for(usize::MAX / 2, 1.04, 0), Err(Error::TooLarge));
        // Never fewer slots than keys, the decoder's invariant: 74 keys at
        // 1.04 round to one line of 73 slots without the bound.
        assert_eq!(lines_for(74, 1.04, 0).unwrap(), 2);
        for keys in 1..2000 {
            for ratio in [1.0, 1.04, 1.39, 2.0] {
                assert!(
                    lines_for(keys, ratio, 0).unwrap() * LINE_SLOTS >= keys,
                    "{keys} keys at {ratio}"
                );
            }
        }
    }
}
