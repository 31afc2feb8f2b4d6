//! What a two-line filter's lines hold: each line ([`Line`](super::lines::Line),
//! 64 bytes) stores `r` columns of the solution for `64 + E` slots, and a
//! filter mixes lines of `r` and `r + 1` columns to reach a fractional
//! result width (the 6.64 bits of FPR 1%).
//!
//! # One line of `r` columns ([`LineKind`])
//!
//! ```text
//!   words 0..r    column j of the line's slots 0..64 (bit k = Z[k][j])
//!   words r..8    E more slots per column: column j's at bits
//!                 E·(j mod p) .. E·(j mod p) + E of word 7 − j div p
//! ```
//!
//! with `p = floor(64 / E)` pieces per spare word and `E` the most that
//! fits `r` pieces whole into the `8 − r` spare words: `r = 8`: no spare
//! word, 64 slots; `r = 7`: `E = 9`, one word, 73 slots (one bit unused);
//! `r = 6`: `E = 21`, two words, 85 slots (two bits unused). A row of 64
//! slots starting at offset `o` of line `L` covers the end of `L` and, when
//! `o > E`, slots `0 .. o − E` of `L + 1`, all in its column words: never
//! more than two lines.
//!
//! # Mixing two widths ([`LineGeometry`])
//!
//! In each shard of `n` lines the first `u = floor(n · upper / 256)` lines
//! hold `r + 1` columns, the rest `r`. Every slot is solved for `r + 1`
//! columns (keys that check `r` have their extra result bit 0, one more
//! consistent equation), so each line stores the columns it holds of one
//! solution. A key checks `r + 1` columns when its row's lines both hold
//! them (it starts in one of the first `u − 1` lines), else `r`: it never
//! reads a column its lines lack. Keys start uniformly over the shard's
//! slots whatever the lines' kinds, so the load is the same everywhere.
//!
//! Which line a start falls in is two multiplications by reciprocals
//! (lines of both kinds, then a select): no division in the query.

use super::layout::Columns;

/// Fewest and most columns a line holds.
pub(crate) const MIN_LINE_COLUMNS: u32 = 6;
pub(crate) const MAX_LINE_COLUMNS: u32 = 8;

/// Starts in a shard stay below this, so that [`LineKind::split`]'s
/// reciprocal is exact; a build or a frame needing more is refused.
pub(crate) const MAX_SHARD_SLOTS: usize = 1 << 24;

/// Shift of the reciprocals: `floor(t / s) = (t · ceil(2^40 / s)) >> 40`
/// for every `t < 2^24` and `s <= 128` (the error `t · (ceil(2^40/s)·s −
/// 2^40) / 2^40 < 2^24 · 128 / 2^40` stays below `1 / s`).
const RECIPROCAL_SHIFT: u32 = 40;

/// One kind of line: its columns and where its slots are (module docs).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct LineKind {
    /// Columns, `r`.
    pub(crate) columns: u32,
    /// Slots: 64 in the column words, `extra` more in the spare words.
    pub(crate) slots: usize,
    /// `E`: slots per column in the spare words.
    pub(crate) extra: u32,
    /// The low `extra` bits.
    pub(crate) extra_mask: u64,
    /// For lane `j < columns`: the word holding column `j`'s extra slots
    /// (7 for the lanes past `columns`, which callers mask away).
    pub(crate) word: [u64; 8],
    /// For lane `j`: the first bit of its extra slots in that word.
    pub(crate) shift: [u64; 8],
    /// The same words as pairs of 32-bit lanes of the line's upper half
    /// (words 4..8), for AVX2's `vpermd`.
    pub(crate) word32: [u32; 16],
    /// Bumping thresholds by two-bit code, in slots of the line: keys that
    /// start below it in their line are bumped (`bumped_lines.rs`).
    pub(crate) thresholds: [u32; 4],
    reciprocal: u64,
}

const fn kind(r: u32) -> LineKind {
    let spare = 8 - r;
    let extra = if spare == 0 {
        0
    } else {
        // The most bits per piece with `r` pieces in `spare` words.
        let mut e = 64;
        while e > 0 && (64 / e) * spare < r {
            e -= 1;
        }
        e
    };
    let per_word = match 64u32.checked_div(extra) {
        Some(p) => p,
        None => 1,
    };
    let mut word = [7u64; 8];
    let mut shift = [0u64; 8];
    let mut word32 = [6u32; 16];
    let mut j = 0;
    while j < 8 {
        if j < r as usize && extra > 0 {
            word[j] = 7 - (j as u64 / per_word as u64);
            shift[j] = extra as u64 * (j as u64 % per_word as u64);
        }
        word32[2 * j] = 2 * (word[j] as u32 - 4);
        word32[2 * j + 1] = 2 * (word[j] as u32 - 4) + 1;
        j += 1;
    }
    let slots = 64 + extra as usize;
    LineKind {
        columns: r,
        slots,
        extra,
        extra_mask: if extra == 0 { 0 } else { u64::MAX >> (64 - extra) },
        word,
        shift,
        word32,
        thresholds: [0, slots as u32 / 4, slots as u32 / 2, slots as u32],
        reciprocal: (1u64 << RECIPROCAL_SHIFT).div_ceil(slots as u64),
    }
}

/// The kinds, by columns from [`MIN_LINE_COLUMNS`].
static KINDS: [LineKind; 3] = [kind(6), kind(7), kind(8)];

impl LineKind {
    /// A kind for windows that read nothing.
    pub(crate) const NEVER: &'static LineKind = &KINDS[1];

    /// The kind of `r` columns, `r` in `6..=8`.
    pub(crate) fn of(r: u32) -> &'static LineKind {
        &KINDS[(r - MIN_LINE_COLUMNS) as usize]
    }

    /// `(t / slots, t % slots)` for `t < MAX_SHARD_SLOTS`.
    #[inline(always)]
    pub(crate) fn split(&self, t: usize) -> (usize, usize) {
        let q = ((t as u64 * self.reciprocal) >> RECIPROCAL_SHIFT) as usize;
        (q, t - q * self.slots)
    }
}

/// Where a start is in its shard: its line (shard-local), its offset in
/// the line, the line's kind, and the columns the key checks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placed {
    pub(crate) line: usize,
    pub(crate) offset: usize,
    pub(crate) kind: &'static LineKind,
    pub(crate) checks: u32,
}

/// A two-line filter's (or layer's) mix of line kinds (module docs): `r`
/// columns, and `r + 1` in the first `upper / 256` of each shard's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineGeometry {
    base: u32,
    upper: u32,
}

impl LineGeometry {
    /// `r` columns everywhere, `r` in `6..=8`.
    pub(crate) fn uniform(r: u32) -> Option<Self> {
        Self::new(r, 0)
    }

    /// The geometry a query compiled for shape `R` reads (`R` from
    /// [`shape`](Self::shape)): `R` columns everywhere for `R` in `6..=8`,
    /// a mix of `R − 10` and `R − 9` with this one's share of lines for `R`
    /// in `16..=17` (its kinds then constants), this one for `R` 0.
    #[inline(always)]
    pub(crate) fn compiled<const R: u32>(self) -> Self {
        match R {
            MIN_LINE_COLUMNS..=MAX_LINE_COLUMNS => LineGeometry { base: R, upper: 0 },
            16..=17 => LineGeometry {
                base: R - 10,
                upper: self.upper,
            },
            _ => self,
        }
    }

    /// The shape a query may be compiled for ([`compiled`](Self::compiled)).
    pub(crate) fn shape(&self) -> u32 {
        match self.upper {
            0 => self.base,
            _ => self.base + 10,
        }
    }

    /// `r` columns and `r + 1` in `upper / 256` of the lines; `None` out
    /// of range (`r + 1` past 8 columns included).
    pub(crate) fn new(base: u32, upper: u32) -> Option<Self> {
        let ok = (MIN_LINE_COLUMNS..=MAX_LINE_COLUMNS).contains(&base)
            && upper <= 256
            && (upper == 0 || base < MAX_LINE_COLUMNS);
        ok.then_some(LineGeometry { base, upper })
    }

    /// The geometry a frame's column rule describes: the blocked layout's
    /// `(r, upper_from)`, where `256 − upper_from` is the share of lines
    /// with `r + 1` columns.
    pub(crate) fn from_columns(c: Columns) -> Option<Self> {
        Self::new(c.base(), 256 - c.upper_from())
    }

    /// The column rule a frame stores ([`from_columns`](Self::from_columns)).
    pub(crate) fn to_columns(self) -> Columns {
        Columns::new(self.base, 256 - self.upper).expect("checked in new")
    }

    /// Most columns a key checks.
    pub(crate) fn max_columns(&self) -> u32 {
        self.base + (self.upper > 0) as u32
    }

    fn lower(&self) -> &'static LineKind {
        LineKind::of(self.base)
    }

    /// The kind of the lines of `r + 1` columns (of `r` at `r = 8`, where
    /// there are none): a constant for a constant `r`.
    fn higher(&self) -> &'static LineKind {
        LineKind::of((self.base + 1).min(MAX_LINE_COLUMNS))
    }

    /// Lines of a shard of `n` that hold `r + 1` columns (the first ones).
    #[inline(always)]
    pub(crate) fn upper_lines(&self, n: usize) -> usize {
        (n * self.upper as usize) >> 8
    }

    /// `u` (the upper lines of some shard), or 0 when no line holds
    /// `r + 1` columns: a constant for a query compiled for one width.
    #[inline(always)]
    pub(crate) fn upper_lines_of(&self, u: usize) -> usize {
        if self.upper == 0 {
            0
        } else {
            u
        }
    }

    /// The kind of line `line` of a shard of `n` lines.
    pub(crate) fn kind_of(&self, n: usize, line: usize) -> &'static LineKind {
        match line < self.upper_lines(n) {
            true => self.higher(),
            false => self.lower(),
        }
    }

    /// Slots of a shard of `n` lines.
    pub(crate) fn slots(&self, n: usize) -> usize {
        let u = self.upper_lines(n);
        u * self.higher().slots + (n - u) * self.lower().slots
    }

    /// Slots of a shard of `n` lines, `None` past [`MAX_SHARD_SLOTS`].
    pub(crate) fn checked_slots(&self, n: usize) -> Option<usize> {
        (n <= MAX_SHARD_SLOTS / 64)
            .then(|| self.slots(n))
            .filter(|&s| s <= MAX_SHARD_SLOTS)
    }

    /// The first slot of line `line` of a shard of `n` lines.
    pub(crate) fn line_start(&self, n: usize, line: usize) -> usize {
        let u = self.upper_lines(n);
        let hi = line.min(u);
        hi * self.higher().slots + (line - hi) * self.lower().slots
    }

    /// Where start `start` (below [`MAX_SHARD_SLOTS`]) is in a shard of `n`
    /// lines.
    #[inline(always)]
    pub(crate) fn place(&self, n: usize, start: usize) -> Placed {
        self.place_after(self.upper_lines(n), start)
    }

    /// [`place`](Self::place) in a shard whose first `u` lines hold
    /// `r + 1` columns (`u = upper_lines(n)`, which a layer keeps).
    #[inline(always)]
    pub(crate) fn place_after(&self, u: usize, start: usize) -> Placed {
        let (lo, hi) = (self.lower(), self.higher());
        let boundary = u * hi.slots;
        // A branch, not selects of both quotients: mispredicted for a
        // share of the keys, it still measured faster (1M keys at 1%:
        // 13.7 ns a query against 15 with `select_unpredictable`), as
        // the core runs ahead to the line's load on the guess.
        let upper = start < boundary;
        let (line, offset, kind) = match upper {
            true => {
                let (q, o) = hi.split(start);
                (q, o, hi)
            }
            false => {
                let (q, o) = lo.split(start - boundary);
                (u + q, o, lo)
            }
        };
        Placed {
            line,
            offset,
            kind,
            checks: self.base + (upper & (line + 1 < u)) as u32,
        }
    }

    /// Of the `num_starts` starts of a shard of `n` lines, how many check
    /// `r + 1` columns ([`place`](Self::place)).
    pub(crate) fn upper_starts(&self, n: usize, num_starts: usize) -> usize {
        let u = self.upper_lines(n);
        (u.saturating_sub(1) * self.higher().slots).min(num_starts)
    }

    /// Mean FPR of the starts of a shard of `n` lines (`num_starts > 0`).
    pub(crate) fn shard_fpr(&self, n: usize, num_starts: usize) -> f64 {
        let upper = self.upper_starts(n, num_starts) as f64 / num_starts as f64;
        libm::exp2(-(self.base as f64)) * (1.0 - upper / 2.0)
    }

    /// The mix for `r` columns and `r + 1` for a share `share` of the
    /// starts, in shards of about `n` lines: the `upper` whose share comes
    /// closest; `None` when no line kind holds `r` (or `r + 1`, for a
    /// share above 0).
    pub(crate) fn for_share(r: u32, share: f64, n: usize) -> Option<Self> {
        if share <= 0.0 {
            return Self::uniform(r);
        }
        Self::new(r, 256)?;
        let n = n.max(2);
        let achieved = |upper: u32| {
            let g = LineGeometry { base: r, upper };
            let starts = g.slots(n) - 63;
            g.upper_starts(n, starts) as f64 / starts as f64
        };
        let best = (0..=256u32)
            .min_by(|&x, &y| {
                (achieved(x) - share)
                    .abs()
                    .total_cmp(&(achieved(y) - share).abs())
            })
            .unwrap_or(0);
        Self::new(r, best)
    }

    /// Most slots a line of this mix holds.
    pub(crate) fn max_slots_per_line(&self) -> usize {
        self.lower().slots
    }

    /// Average slots per line in a shard of about `n` lines.
    pub(crate) fn slots_per_line(&self, n: usize) -> f64 {
        let n = n.max(1);
        self.slots(n) as f64 / n as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_fill_their_lines() {
        let spare = [(6, 85, 21), (7, 73, 9), (8, 64, 0)];
        for (r, slots, extra) in spare {
            let k = LineKind::of(r);
            assert_eq!((k.columns, k.slots, k.extra), (r, slots, extra));
            assert!(k.slots * r as usize <= 512 && k.slots * r as usize > 512 - r as usize);
            // Every column's pieces are disjoint and inside the spare words.
            let mut used = [0u64; 8];
            for j in 0..r as usize {
                used[j] = u64::MAX;
                if extra > 0 {
                    let (w, s) = (k.word[j] as usize, k.shift[j]);
                    assert!(w >= r as usize && s + extra as u64 <= 64, "{r} {j}");
                    let piece = k.extra_mask << s;
                    assert_eq!(used[w] & piece, 0, "{r} {j}");
                    used[w] |= piece;
                }
            }
        }
    }

    #[test]
    fn reciprocals_divide_exactly() {
        for k in &KINDS {
            for t in (0..MAX_SHARD_SLOTS)
                .step_by(7)
                .chain(MAX_SHARD_SLOTS - 300..MAX_SHARD_SLOTS)
            {
                assert_eq!(k.split(t), (t / k.slots, t % k.slots), "{} {t}", k.slots);
            }
        }
    }

    /// `place` agrees with walking the lines one by one, for every start.
    #[test]
    fn place_walks_the_lines() {
        for (r, upper) in [(6, 0), (6, 100), (6, 256), (7, 0), (7, 180), (8, 0)] {
            let g = LineGeometry::new(r, upper).unwrap();
            for n in [1, 2, 3, 7, 58, 131] {
                let u = g.upper_lines(n);
                let (mut line, mut offset) = (0, 0);
                let mut upper_starts = 0;
                let num_starts = g.slots(n) - 63;
                for start in 0..g.slots(n) {
                    let p = g.place(n, start);
                    let kind = g.kind_of(n, line);
                    assert_eq!((p.line, p.offset), (line, offset), "{r} {upper} {n} {start}");
                    assert_eq!(p.kind, kind);
                    assert_eq!(g.line_start(n, line) + offset, start);
                    let both = line + 1 < u;
                    assert_eq!(p.checks, r + both as u32);
                    upper_starts += (start < num_starts && both) as usize;
                    offset += 1;
                    if offset == kind.slots {
                        (line, offset) = (line + 1, 0);
                    }
                }
                assert_eq!(line, n);
                assert_eq!(g.upper_starts(n, num_starts), upper_starts);
            }
        }
    }

    #[test]
    fn geometry_round_trips_through_columns_and_refuses_the_impossible() {
        for (r, upper) in [(6, 0), (6, 184), (7, 256), (8, 0)] {
            let g = LineGeometry::new(r, upper).unwrap();
            assert_eq!(LineGeometry::from_columns(g.to_columns()), Some(g));
        }
        assert!(LineGeometry::new(5, 0).is_none());
        assert!(LineGeometry::new(9, 0).is_none());
        assert!(LineGeometry::new(8, 1).is_none());
        assert!(LineGeometry::new(7, 257).is_none());
        // FPR 1%: 72% of the starts check 7 columns.
        let g = LineGeometry::for_share(6, 0.72, 850).unwrap();
        let starts = g.slots(850) - 63;
        let share = g.upper_starts(850, starts) as f64 / starts as f64;
        assert!((share - 0.72).abs() < 0.005, "{share}");
        assert_eq!(LineGeometry::for_share(8, 0.5, 100), None);
        assert_eq!(LineGeometry::for_share(8, 0.0, 100), LineGeometry::uniform(8));
    }
}
