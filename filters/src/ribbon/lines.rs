//! The two-line layout: 64-slot rows in 64-byte lines of 64 to 85 slots,
//! so every query reads at most two cache lines.
//!
//! # Why
//!
//! At 100M keys a Ribbon query costs what its cache lines cost. A 128-slot
//! row at `r = 7` covers 112 bytes and spans three or four lines in the
//! blocked layout (`solution.rs`). Here a row covers **64** consecutive
//! slots, and a line ([`Line`], 64 bytes, 64-byte aligned) holds the
//! solution of `64 + E` slots in `r` columns (`line_kind.rs`: 73 slots of
//! 7 bits, 85 of 6, 64 of 8), lines of `r` and `r + 1` columns mixed for a
//! fractional width. A row starting at offset `o` of line `L` covers slots
//! `o .. o + 64`: line `L` alone when `o ≤ E`, else the end of `L` and
//! slots `0 .. o − E` of `L + 1`, which are in its column words. Never more
//! than two lines, and the second one's spare words are never needed.
//!
//! # Price
//!
//! A narrower band needs more slack to stay solvable: measured with the
//! standalone simulation `filters/examples/ribbon_overhead64.rs` (binomial
//! shard sizes, 2,000 shards per cell), 64-slot rows in shards of
//! [`LINE_SHARD_KEYS`] = 4,096 keys at [`LINE_SLOTS_PER_KEY`] = 1.04 slots
//! per key fail 19% of first attempts, at 7.30 bits per key at `r = 7`
//! (the spare bit per line, 0.2%, and the 5-byte shard table included),
//! against 7.18 for the blocked layout. Smaller shards need less slack for
//! the same failure share (the pile-up at a band's end grows with its
//! length); 4,096 keys keep the shard table at 122 KB for 100M keys,
//! inside L2. Bumping (`bumped_lines.rs`) brings it to 0.6–1.1% above
//! `r` bits per key at an integer `r`.
//!
//! # Query
//!
//! Shard, seed and start come as in the blocked layout (`row.rs`; the 64
//! coefficient bits are the low half of the 128-bit ones, bit 0 set), the
//! line and offset from the geometry (`line_kind.rs`). With the row
//! shifted into place once, column `j` is the parity of
//!
//! ```text
//!   (A[j] & lo_a) ^ ((A[w_j] >> s_j) & hi_a) ^ (B[j] & lo_b)
//! ```
//!
//! for lines `A = L`, `B = L + 1`, where word `w_j` of `A` holds column
//! `j`'s extra slots from bit `s_j`: eight such words (those past the
//! key's columns masked away) and one parity fold ([`portable_pair`];
//! `kernel.rs` has the AVX2 and AVX-512 ones, tested against it).

use super::banding::Banding;
use super::line_kind::{LineGeometry, LineKind, MAX_SHARD_SLOTS};
use super::row::{coeff_of, locate_in_shard, result_of, seeded, spread, start_of, unmixed, Row};
use super::runs::Solver;
use super::solution::parities;
use super::table::{u32_at, ATTEMPTS_PER_SIZE, MAX_ATTEMPTS};
use crate::prefetch::prefetch;
use crate::{Error, FormatError};

/// Width of a row in slots.
pub(crate) const LINE_ROW: usize = 64;

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

/// One 64-byte line: the solution of its slots in its columns
/// (`line_kind.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C, align(64))]
pub(crate) struct Line(pub(crate) [u64; 8]);

/// Where a query reads: its first line, the row's coefficients shifted
/// into place (`[lo_a, hi_a, lo_b]`, see the module docs), the first
/// line's kind and the columns the key checks (as a mask).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LineWindow {
    pub(crate) line: usize,
    pub(crate) coeff: [u64; 3],
    pub(crate) kind: &'static LineKind,
    pub(crate) mask: u32,
}

impl LineWindow {
    /// The window of a row placed at `p` with 64 coefficient bits `coeff`,
    /// the shard starting at line `first`.
    #[inline(always)]
    pub(crate) fn new(first: usize, p: super::line_kind::Placed, coeff: u64) -> Self {
        let (o, slots) = (p.offset, p.kind.slots);
        let wide = (coeff as u128) << o; // o < 85; bits past the line go to line B
        LineWindow {
            line: first + p.line,
            coeff: [
                wide as u64,
                (wide >> 64) as u64 & p.kind.extra_mask,
                ((coeff as u128) >> (slots - o)) as u64,
            ],
            kind: p.kind,
            mask: (1 << p.checks) - 1,
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

    /// Whether the fingerprint is `result` in the key's columns, `pair`
    /// computing the parities of two lines; `lines` includes the padding
    /// line.
    #[inline(always)]
    pub(crate) fn matches(
        &self,
        lines: &[Line],
        result: u32,
        pair: impl Fn(&Line, &Line, &Self) -> u32,
    ) -> bool {
        // A row inside the first line reads no second line: `b` is line A
        // again, and its coefficients are 0.
        let second = self.line + self.two_lines() as usize;
        let got = pair(&lines[self.line], &lines[second], self);
        (got ^ result) & self.mask == 0
    }
}

/// The portable parities of a line pair for a window: bit `j` is the
/// parity of `(a[j] & c[0]) ^ ((a[w_j] >> s_j) & c[1]) ^ (b[j] & c[2])`
/// (bits past the window's columns are meaningless).
#[inline(always)]
pub(crate) fn portable_pair(a: &Line, b: &Line, w: &LineWindow) -> u32 {
    let (a, b, c, k) = (&a.0, &b.0, w.coeff, w.kind);
    parities(core::array::from_fn(|j| {
        (a[j] & c[0]) ^ ((a[k.word[j] as usize & 7] >> k.shift[j]) & c[1]) ^ (b[j] & c[2])
    }))
}

/// The window and fingerprint of the key with this hash in a two-line
/// filter of `num_shards` shards laid out by `geometry`, reading shard
/// `i`'s first line, end line and seed through `shard_at`; `None` when its
/// shard holds no keys.
#[inline(always)]
pub(crate) fn locate_lines(
    num_shards: usize,
    geometry: &LineGeometry,
    shard_at: impl Fn(usize) -> (usize, usize, u8),
    hash: u64,
) -> Option<(LineWindow, u32)> {
    let (first, n, start, q, a) =
        locate_in_shard(num_shards, shard_at, hash, |n| geometry.slots(n), LINE_ROW)?;
    let p = geometry.place(n, start);
    Some((LineWindow::new(first, p, coeff_of(q) as u64), result_of(a)))
}

/// Lines of a shard of `keys` keys (at least 1) laid out by `geometry` at
/// `ratio` slots per key, attempt `attempt`: `keys + max(keys · (ratio −
/// 1), 32)` slots, the extra doubled every 8 attempts, rounded to the
/// nearest line; at least one, at least 16 slots more than keys past one
/// line, and never fewer slots than keys.
///
/// The last bound is the frame's invariant (a frame with more keys than
/// slots is rejected as corrupt), not the banding's: rounding down loses up
/// to half a line, more than the 32 extra, and a system with more rows than
/// columns can still solve when each surplus row reduces to zero with zero
/// result bits (1 in 128 per row at `r = 7`). The fuzzer found such a
/// filter (74 keys in one line of 73 slots) whose own bytes then failed to
/// decode.
pub(crate) fn lines_for(
    geometry: &LineGeometry,
    keys: usize,
    ratio: f64,
    attempt: u32,
) -> Result<usize, Error> {
    let growth = libm::exp2((attempt / ATTEMPTS_PER_SIZE) as f64);
    let extra = (keys as f64 * (ratio - 1.0)).max(MIN_EXTRA_SLOTS) * growth;
    let want = keys as f64 + extra;
    if !want.is_finite() || want >= MAX_SHARD_SLOTS as f64 {
        return Err(Error::TooLarge);
    }
    let per_line = geometry.slots_per_line(libm::ceil(want / 64.0) as usize);
    let mut lines = (libm::round(want / per_line) as usize).max(1);
    // Rounding down may take up to half a line (42 slots of 6 columns)
    // of the extra: keep half the least extra at least, and never fewer
    // slots than keys.
    let least = keys + (extra.min(MIN_EXTRA_SLOTS) / 2.0) as usize;
    while geometry.slots(lines) < least && lines > 1 || geometry.slots(lines) < keys {
        lines += 1;
    }
    match geometry.checked_slots(lines) {
        Some(_) => Ok(lines),
        None => Err(Error::TooLarge),
    }
}

/// The two-line layout's shard sizes, banding and solution, for the
/// construction loop of `runs.rs`: `slots_per_key` slots per key.
pub(crate) struct LineSolver {
    pub(crate) geometry: LineGeometry,
    pub(crate) slots_per_key: f64,
}

impl Solver for LineSolver {
    type Unit = Line;
    type Coeff = u64;
    const POSITIONAL: bool = false;

    fn units(&self, keys: usize, attempt: u32) -> Result<usize, Error> {
        lines_for(&self.geometry, keys, self.slots_per_key, attempt)
    }

    fn storage(&self, from: usize, to: usize) -> Result<usize, Error> {
        Ok(to - from)
    }

    fn padding(&self) -> usize {
        1
    }

    fn band(
        &self,
        banding: &mut Banding<u64>,
        keys: &[u64],
        _: usize,
        lines: usize,
        seed: u8,
    ) -> Result<bool, Error> {
        band_shard(banding, &self.geometry, keys, lines, seed)
    }

    fn store(&self, banding: &Banding<u64>, _: usize, _: usize, out: &mut [Line]) {
        solve_lines(banding, &self.geometry, out);
    }
}

/// Bands one shard of `num_lines` lines with seed `seed`; `false` if the
/// system has no solution.
fn band_shard(
    banding: &mut Banding<u64>,
    geometry: &LineGeometry,
    keys: &[u64],
    num_lines: usize,
    seed: u8,
) -> Result<bool, Error> {
    let num_slots = geometry.checked_slots(num_lines).ok_or(Error::TooLarge)?;
    banding.reset(num_slots)?;
    let num_starts = (num_slots - (LINE_ROW - 1)) as u64;
    // Every row's 64 bits lie inside the shard: start + 63 < num_slots.
    Ok(banding.add_all(keys.iter().map(|&a| {
        let q = seeded(spread(unmixed(a)), seed);
        let start = start_of(q, num_starts);
        Row {
            start,
            coeff: coeff_of(q) as u64,
            result: result_of(a) & ((1 << geometry.place(num_lines, start).checks) - 1),
        }
    })))
}

/// Back-substitutes a banded shard into its (zeroed) lines laid out by
/// `geometry`: slots from last to first, each column keeping a 64-slot
/// window of the solution at and above the current slot, every slot solved
/// for all the filter's columns and each line keeping the columns it
/// holds. Slots without a row get 0.
pub(crate) fn solve_lines(banding: &Banding<u64>, geometry: &LineGeometry, lines: &mut [Line]) {
    let n = lines.len();
    let columns = geometry.max_columns() as usize;
    let mut window = [0u64; 8];
    for (l, line) in lines.iter_mut().enumerate().rev() {
        let kind = geometry.kind_of(n, l);
        let first = geometry.line_start(n, l);
        let line = &mut line.0;
        for pos in (0..kind.slots).rev() {
            let (coeff, result) = banding.row_at(first + pos);
            for (j, w) in window.iter_mut().enumerate().take(columns) {
                let above = *w << 1;
                let bit = ((result >> j) & 1) as u64 ^ ((coeff & above).count_ones() & 1) as u64;
                *w = above | bit;
                if j >= kind.columns as usize {
                    continue;
                }
                if pos < 64 {
                    line[j] |= bit << pos;
                } else {
                    line[kind.word[j] as usize] |= bit << (kind.shift[j] as usize + pos - 64);
                }
            }
        }
    }
}
/// Checks a two-line shard table (`starts`: `num_shards + 1` little-endian
/// `u32`s, `seeds`: one byte per shard) of a filter laid out by
/// `geometry`: starts from 0, never falling, ending at `total_lines`; no
/// shard past [`MAX_SHARD_SLOTS`]; a seed below [`MAX_ATTEMPTS`], 0 for an
/// empty shard. Calls `each` as `check_shards` does; returns the sum over
/// the shards of their FPR (0 for an empty one).
pub(crate) fn check_line_shards(
    starts: &[u8],
    seeds: &[u8],
    total_lines: usize,
    geometry: &LineGeometry,
    mut each: impl FnMut(u32, Option<u8>),
) -> Result<f64, Error> {
    let bad = FormatError::InvalidParameters;
    let num_shards = seeds.len();
    if u32_at(starts, 0) != 0 || u32_at(starts, num_shards) as usize != total_lines {
        return Err(bad("shard starts do not span the lines").into());
    }
    let mut fpr = 0.0;
    for (i, &seed) in seeds.iter().enumerate() {
        let (start, end) = (u32_at(starts, i), u32_at(starts, i + 1));
        let n = end.checked_sub(start).ok_or(bad("shard starts fall"))? as usize;
        if seed as u32 >= MAX_ATTEMPTS || (n == 0 && seed != 0) {
            return Err(bad("invalid shard").into());
        }
        if n > 0 {
            let slots = geometry
                .checked_slots(n)
                .ok_or(bad("a shard has too many lines"))?;
            fpr += geometry.shard_fpr(n, slots - (LINE_ROW - 1));
        }
        each(start, Some(seed));
    }
    each(total_lines as u32, None);
    Ok(fpr)
}

#[cfg(test)]
mod tests {
    use super::super::banding::Added;
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;

    /// Every stored equation holds after back-substitution, for starts at
    /// every offset of a line (one-line and two-line rows), in every
    /// geometry; a flipped bit in a checked column does not.
    #[test]
    fn solution_satisfies_every_stored_row() {
        for (r, upper) in [(7, 0), (6, 0), (8, 0), (6, 190), (7, 128)] {
            let g = LineGeometry::new(r, upper).unwrap();
            let num_lines = 9;
            let num_slots = g.slots(num_lines);
            let num_starts = num_slots - (LINE_ROW - 1);
            let mut banding = Banding::<u64>::new(num_slots).unwrap();
            let mut rows = Vec::new();
            for i in 0..(num_slots as u64 * 9 / 10) {
                let a = crate::hash::remix(i, 77);
                let start = (i as usize * 11) % num_starts;
                let checks = g.place(num_lines, start).checks;
                let row = Row {
                    start,
                    coeff: a | 1,
                    result: (a >> 40) as u32 & ((1 << checks) - 1),
                };
                if banding.add(row) != Added::Contradiction {
                    rows.push(row);
                }
            }
            assert!(rows.len() * 10 > num_slots * 7, "{}", rows.len());
            let mut lines = vec![Line::default(); num_lines + 1];
            solve_lines(&banding, &g, &mut lines[..num_lines]);
            for (l, line) in lines[..num_lines].iter().enumerate() {
                let k = g.kind_of(num_lines, l);
                let used = k.slots * k.columns as usize;
                let ones: u32 = line.0.iter().map(|w| w.count_ones()).sum();
                assert!(ones as usize <= used, "{r} {upper}: line {l}");
            }
            let (mut one, mut two, mut upper_keys) = (0, 0, 0);
            for row in rows {
                let p = g.place(num_lines, row.start);
                let w = LineWindow::new(0, p, row.coeff);
                if w.two_lines() {
                    two += 1;
                } else {
                    one += 1;
                }
                upper_keys += (p.checks > r) as usize;
                assert!(
                    w.matches(&lines, row.result, portable_pair),
                    "{r} {upper} {row:?}"
                );
                let top = 1 << (p.checks - 1);
                assert!(!w.matches(&lines, row.result ^ top, portable_pair));
                assert!(!w.matches(&lines, row.result ^ 1, portable_pair));
            }
            assert!(one > 10 && two > 200, "{one} {two}");
            assert_eq!(upper_keys > 0, upper > 0, "{r} {upper}");
        }
    }

    /// The shifted coefficients cover exactly the row's 64 slots.
    #[test]
    fn window_splits_the_row_between_the_lines() {
        for r in 6..=8 {
            let g = LineGeometry::uniform(r).unwrap();
            let k = LineKind::of(r);
            for o in 0..k.slots {
                let p = g.place(10, 2 * k.slots + o);
                let w = LineWindow::new(5, p, u64::MAX);
                assert_eq!(w.line, 7);
                let ones = w.coeff.iter().map(|c| c.count_ones()).sum::<u32>();
                assert_eq!(ones, 64, "{o}");
                assert_eq!(w.coeff[0].trailing_zeros() as usize, o.min(64));
                assert_eq!(w.two_lines(), o > k.slots - LINE_ROW);
                assert!(w.coeff[1] & !k.extra_mask == 0);
                assert!(w.coeff[2] < 1 << 63);
            }
        }
    }

    #[test]
    fn lines_grow_on_retries() {
        let seven = LineGeometry::uniform(7).unwrap();
        assert_eq!(lines_for(&seven, 1, 1.04, 0).unwrap(), 1);
        assert_eq!(lines_for(&seven, 4096, 1.04, 0).unwrap(), 58); // 4096 · 1.04 / 73 = 58.4
        assert!(lines_for(&seven, 4096, 1.04, 8).unwrap() > 58);
        assert_eq!(lines_for(&seven, usize::MAX / 2, 1.04, 0), Err(Error::TooLarge));
        // Never fewer slots than keys, the decoder's invariant: 74 keys at
        // 1.04 round to one line of 73 slots without the bound.
        assert_eq!(lines_for(&seven, 74, 1.04, 0).unwrap(), 2);
        for g in [
            seven,
            LineGeometry::new(6, 180).unwrap(),
            LineGeometry::uniform(8).unwrap(),
        ] {
            for keys in 1..2000 {
                for ratio in [1.0, 1.04, 1.39, 2.0] {
                    let lines = lines_for(&g, keys, ratio, 0).unwrap();
                    assert!(g.slots(lines) >= keys, "{g:?}: {keys} keys at {ratio}");
                    let want = keys as f64 + (keys as f64 * (ratio - 1.0)).max(32.0);
                    assert!(
                        (g.slots(lines) as f64 - want).abs() <= 86.0,
                        "{g:?}: {keys} at {ratio}"
                    );
                }
            }
        }
    }
}
