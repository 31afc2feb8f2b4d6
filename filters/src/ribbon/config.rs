//! Construction parameters, and the geometry they resolve to for one shard:
//! how many slots, how many columns, and which blocks carry an extra column.

use crate::error::invalid;
use crate::Error;

use super::layout::{Columns, MAX_RESULT_BITS, PERIOD_BLOCKS};
use super::solution::BLOCK_SLOTS;
use super::table::ATTEMPTS_PER_SIZE;

/// Target keys per shard: the key set is split into `ceil(n / SHARD_KEYS)`
/// shards, each solved on its own.
pub const SHARD_KEYS: usize = 8192;

/// Slots added to a shard above `keys · ratio` at least, so tiny shards have
/// room for the end of the band, where no row starts.
const MIN_EXTRA_SLOTS: f64 = 64.0;

/// What the caller asked for, resolved into a geometry (slots, columns) per shard once
/// the shard's number of distinct keys is known.
///
/// ```
/// use amq::RibbonParams;
/// assert!(RibbonParams::with_result_bits(7).is_ok());
/// assert!(RibbonParams::with_result_bits(0).is_err());
/// assert!(RibbonParams::with_result_bits(33).is_err());
/// assert!(RibbonParams::with_fpr(0.01).is_ok());
/// assert!(RibbonParams::with_fpr(f64::NAN).is_err());
/// assert!(RibbonParams::with_bits_per_key(7.5).is_ok());
/// assert!(RibbonParams::with_bits_per_key(0.5).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RibbonParams {
    target: Target,
    slots_per_key: f64,
    /// The two-line layout (`lines.rs`) instead of 128-slot rows in blocks.
    two_lines: bool,
    /// Bumping (`bumped.rs`, `bumped_lines.rs`): equal shards loaded past
    /// their slots, the excess keys in a second filter.
    bumped: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Target {
    /// Exactly this many columns everywhere.
    ResultBits(u32),
    /// `r` columns, and `r + 1` for this share of the starts.
    Fpr { r: u32, share: f64 },
    /// Total bits per key (slot overhead included).
    BitsPerKey(f64),
}

impl RibbonParams {
    /// The parameters [`Ribbon::build`](crate::Ribbon::build) uses for
    /// `sizing`: [`with_fpr`](Self::with_fpr) or
    /// [`with_bits_per_key`](Self::with_bits_per_key).
    ///
    /// ```
    /// use amq::{FilterSizing, RibbonParams};
    /// assert_eq!(
    ///     RibbonParams::for_sizing(FilterSizing::Fpr(0.01))?,
    ///     RibbonParams::with_fpr(0.01)?
    /// );
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn for_sizing(sizing: crate::FilterSizing) -> Result<Self, Error> {
        match sizing {
            crate::FilterSizing::BitsPerKey(b) => Self::with_bits_per_key(b),
            crate::FilterSizing::Fpr(p) => Self::with_fpr(p),
        }
    }

    /// `r` result bits per key (FPR `2^-r`), for integer `r` in `1..=32`.
    pub fn with_result_bits(r: u32) -> Result<Self, Error> {
        if !(1..=MAX_RESULT_BITS).contains(&r) {
            return Err(invalid("result_bits", "must be in 1..=32"));
        }
        Ok(Self::new(Target::ResultBits(r)))
    }

    /// The false-positive rate `p`, for `p` in `[2^-32, 1)`.
    ///
    /// With `r = floor(log2(1/p))`, a share `f = 2(1 - p·2^r)` of the key
    /// starts gets `r + 1` columns and the rest `r`, so the expected FPR
    /// `(1 - f)·2^-r + f·2^-(r+1)` equals `p` (up to the 64-slot block
    /// granularity). At `p >= 1/2` the filter uses one column (FPR 1/2).
    pub fn with_fpr(p: f64) -> Result<Self, Error> {
        if !(p > 0.0 && p < 1.0) {
            return Err(invalid("fpr", "must be strictly between 0 and 1"));
        }
        if p < libm::exp2(-(MAX_RESULT_BITS as f64)) {
            return Err(invalid("fpr", "below 2^-32 needs more than 32 result bits"));
        }
        let (r, share) = columns_for_fpr(p);
        Ok(Self::new(Target::Fpr { r, share }))
    }

    /// About `b` bits per distinct key in total, slot overhead included, for
    /// `b` in `[1, 40]`.
    ///
    /// Per shard the average column count is `b · keys / slots`; its
    /// fractional part becomes a share of 64-slot blocks with one extra
    /// column. It is clamped to `1..=32` columns, so a `b` that the slot
    /// overhead pushes below one column gives slightly more than `b`.
    pub fn with_bits_per_key(b: f64) -> Result<Self, Error> {
        if !(1.0..=40.0).contains(&b) {
            return Err(invalid("bits_per_key", "must be in [1, 40]"));
        }
        Ok(Self::new(Target::BitsPerKey(b)))
    }

    /// Overrides the measured slots-per-key ratio ([`SLOTS_PER_KEY`]) with
    /// `ratio` in `[1, 4]`. Less room makes each construction attempt fail
    /// more often (and construction slower); this exists to measure that.
    ///
    /// ```
    /// use amq::RibbonParams;
    /// let p = RibbonParams::with_result_bits(7).unwrap();
    /// assert!(p.with_slots_per_key(1.1).is_ok());
    /// assert!(p.with_slots_per_key(0.9).is_err());
    /// ```
    pub fn with_slots_per_key(self, ratio: f64) -> Result<Self, Error> {
        if !(1.0..=4.0).contains(&ratio) {
            return Err(invalid("slots_per_key", "must be in [1, 4]"));
        }
        Ok(RibbonParams {
            slots_per_key: ratio,
            ..self
        })
    }

    /// The default layout: bumped ([`with_bumping`](Self::with_bumping)),
    /// in the two-line layout for 6 to 8 result bits (an FPR from `2^-8` to
    /// `2^-6`, 1% included), where it is faster beyond the caches
    /// (`docs/results-amq.md`, "Ribbon"), in the blocked layout for
    /// anything else.
    fn new(target: Target) -> Self {
        let blocked = RibbonParams {
            target,
            slots_per_key: SLOTS_PER_KEY,
            two_lines: false,
            bumped: true,
        };
        blocked.with_two_line_layout().unwrap_or(blocked)
    }

    /// Builds with the two-line layout (the default from 6 to 8 result
    /// bits): 64-slot rows in 64-byte lines of 85, 73 or 64 slots (6, 7 or
    /// 8 columns; lines of two widths mixed for an FPR between), so a query
    /// reads at most two cache lines (three or four with the blocked
    /// layout's 128-slot rows), bumped at 0.6–1.1% above `log2(1/FPR)` at
    /// an integer width and 2.0% at 1%, where mixing two widths costs 1.15%
    /// by itself (7.06 bits per key at `r = 7`, where the blocked layout takes 7.03;
    /// without bumping 4.3% above, in shards of
    /// [`LINE_SHARD_KEYS`](super::LINE_SHARD_KEYS) keys at
    /// [`LINE_SLOTS_PER_KEY`](super::LINE_SLOTS_PER_KEY) slots per key,
    /// which a later [`with_slots_per_key`](Self::with_slots_per_key)
    /// overrides). Only for result bits from 6 to 8 or an FPR from `2^-8`
    /// to `2^-6`; anything else (a bits-per-key budget included) is
    /// [`Error::InvalidParameter`].
    ///
    /// ```
    /// use amq::{Filter, Ribbon, RibbonParams};
    /// let p = RibbonParams::with_fpr(0.01)?.with_two_line_layout()?;
    /// let keys: Vec<amq::KeyHash> = (0..50_000u64).map(amq::hash_u64).collect();
    /// let f = Ribbon::build_with(&keys, &p)?;
    /// assert!(f.is_two_line_layout());
    /// assert!(keys.iter().all(|&h| f.contains_hash(h)));
    /// assert!((f.expected_fpr() - 0.01).abs() < 0.0005, "{}", f.expected_fpr());
    /// assert!(RibbonParams::with_result_bits(9)?.with_two_line_layout().is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn with_two_line_layout(self) -> Result<Self, Error> {
        use super::line_kind::{MAX_LINE_COLUMNS as MAX, MIN_LINE_COLUMNS as MIN};
        let fits = match self.target {
            Target::ResultBits(r) => (MIN..=MAX).contains(&r),
            Target::Fpr { r, share } => (MIN..MAX).contains(&r) || (r == MAX && share == 0.0),
            Target::BitsPerKey(_) => false,
        };
        if !fits {
            return Err(invalid(
                "two_line_layout",
                "needs 6 to 8 result bits (an FPR from 2^-8 to 2^-6)",
            ));
        }
        let slots_per_key = if !self.two_lines && self.slots_per_key == SLOTS_PER_KEY {
            super::lines::LINE_SLOTS_PER_KEY
        } else {
            self.slots_per_key
        };
        Ok(RibbonParams {
            two_lines: true,
            slots_per_key,
            ..self
        })
    }

    /// The solver of a sharded two-line filter of `n` keys in `num_shards`
    /// shards: its line kinds chosen for shards of the mean size.
    pub(crate) fn line_solver(&self, n: usize, num_shards: usize) -> Result<super::lines::LineSolver, Error> {
        let keys = n.div_ceil(num_shards.max(1)).max(1);
        // Lines of a mean shard: its slots over the narrower lines' slots
        // first, then the mix's own.
        let guess = self.line_geometry(64)?;
        let lines = super::lines::lines_for(&guess, keys, self.slots_per_key, 0)?;
        Ok(super::lines::LineSolver {
            geometry: self.line_geometry(lines)?,
            slots_per_key: self.slots_per_key,
        })
    }

    /// The line kinds of a two-line filter (or layer) whose shards have
    /// about `n` lines: `r` columns, or the mix closest to the FPR target.
    pub(crate) fn line_geometry(&self, n: usize) -> Result<super::line_kind::LineGeometry, Error> {
        use super::line_kind::LineGeometry;
        let geometry = match self.target {
            Target::ResultBits(r) => LineGeometry::uniform(r),
            Target::Fpr { r, share } => LineGeometry::for_share(r, share, n),
            Target::BitsPerKey(_) => None,
        };
        geometry.ok_or(invalid(
            "two_line_layout",
            "needs 6 to 8 result bits (an FPR from 2^-8 to 2^-6)",
        ))
    }

    /// Builds with the blocked layout (128-slot rows in blocks of 64 slots,
    /// [`SHARD_KEYS`] keys per shard, [`SLOTS_PER_KEY`]), the layout of
    /// every FPR but those from `2^-8` to `2^-6`: at `r = 7` it takes 7.03 bits per key where
    /// the default two-line layout takes 7.06 (bumped; 7.18 and 7.30
    /// without), at three or four cache lines per query instead of at most
    /// two. Keeps a ratio set by
    /// [`with_slots_per_key`](Self::with_slots_per_key) (call that after
    /// this to change it).
    ///
    /// ```
    /// use amq::{Filter, Ribbon, RibbonParams};
    /// let keys: Vec<amq::KeyHash> = (0..50_000u64).map(amq::hash_u64).collect();
    /// let two = Ribbon::build_with(&keys, &RibbonParams::with_result_bits(7)?)?;
    /// let blocked = Ribbon::build_with(&keys, &RibbonParams::with_result_bits(7)?.with_blocked_layout())?;
    /// assert!(two.is_two_line_layout() && !blocked.is_two_line_layout());
    /// assert!(blocked.bits_per_key() < two.bits_per_key());
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn with_blocked_layout(self) -> Self {
        RibbonParams {
            two_lines: false,
            slots_per_key: self.standard_slots_per_key(),
            ..self
        }
    }

    /// Builds with bumping (BuRR: Dillinger, Hübschle-Schneider, Sanders &
    /// Walzer, SEA 2022; the layout's story is in the
    /// [module docs](crate::ribbon)): 128-slot rows in blocks as in the
    /// blocked layout, but in shards that all have the same size, holding
    /// about 3% more keys than slots; the keys that do not fit go to a
    /// small second filter (about 3% of them), and a two-bit threshold per
    /// 128 slots says which. About 0.4% above `log2(1/FPR)` at `r = 7`
    /// (7.03 bits per key, where the blocked layout takes 7.18), and a
    /// query finds its shard without a table. A ratio set by
    /// [`with_slots_per_key`](Self::with_slots_per_key) applies to the
    /// second filter.
    ///
    /// ```
    /// use amq::{Filter, Ribbon, RibbonParams};
    /// let keys: Vec<amq::KeyHash> = (0..200_000u64).map(amq::hash_u64).collect();
    /// let p = RibbonParams::with_result_bits(7)?.with_blocked_layout().with_bumping();
    /// let f = Ribbon::build_with(&keys, &p)?;
    /// assert!(f.is_bumped_layout());
    /// assert!(keys.iter().all(|&h| f.contains_hash(h)));
    /// assert!(f.bits_per_key() < 7.0 * 1.01, "{}", f.bits_per_key());
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn with_bumping(self) -> Self {
        RibbonParams { bumped: true, ..self }
    }

    /// Builds without bumping: shards sized to their keys, each with a
    /// start and a seed in a shard table, at about 2.7% above
    /// `log2(1/FPR)` (blocked layout) or 4.3% (two-line layout): the
    /// layouts of earlier versions.
    ///
    /// ```
    /// use amq::{Filter, Ribbon, RibbonParams};
    /// let keys: Vec<amq::KeyHash> = (0..50_000u64).map(amq::hash_u64).collect();
    /// let f = Ribbon::build_with(&keys, &RibbonParams::with_result_bits(9)?.without_bumping())?;
    /// assert!(!f.is_bumped_layout());
    /// assert!(keys.iter().all(|&h| f.contains_hash(h)));
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[must_use = "a builder returns the changed value; assign it"]
    pub fn without_bumping(self) -> Self {
        RibbonParams {
            bumped: false,
            ..self
        }
    }

    /// The ratio to keep when leaving the two-line layout: its default
    /// becomes the blocked one's, a ratio the caller set stays.
    fn standard_slots_per_key(&self) -> f64 {
        if self.two_lines && self.slots_per_key == super::lines::LINE_SLOTS_PER_KEY {
            SLOTS_PER_KEY
        } else {
            self.slots_per_key
        }
    }

    /// Whether these parameters build the two-line layout.
    pub(crate) fn two_lines(&self) -> bool {
        self.two_lines
    }

    /// Whether these parameters build the bumped layout.
    pub(crate) fn bumped(&self) -> bool {
        self.bumped
    }

    /// The column rule of a bumped layer: as [`columns`](Self::columns)
    /// over its equal shards, except that a bits-per-key budget is spread
    /// over the layer's slots and the second filter's (the layer holds
    /// more keys than slots, so its own slots would overspend it).
    pub(crate) fn bumped_columns(&self, n: usize, layer: &super::bumped::Layer) -> Columns {
        let keys = match self.target {
            Target::BitsPerKey(b) => {
                // What the layer's words may spend: the budget less the
                // codes and both query paddings, shared with the second
                // filter's expected slots (its keys, its ratio, and its
                // 64 extra slots at least) at one column rate.
                let slots = (layer.total_blocks() * BLOCK_SLOTS) as f64;
                let second_keys = n as f64 * super::bumped::SECOND_SHARE;
                let second = (second_keys * self.slots_per_key).max(second_keys + MIN_EXTRA_SLOTS);
                let padding = 2 * super::solution::padding_words(libm::ceil(b) as u32 + 1) * 64;
                let fixed = (2 * layer.num_buckets() + padding) as f64;
                let rate = ((b * n as f64 - fixed) / (slots + second)).max(1.0);
                libm::round(rate * slots / b) as usize
            }
            _ => n,
        };
        self.columns(keys, layer.num_shards, |_| layer.shard_blocks)
    }

    /// The column rule of a bumped filter's second filter, given its
    /// layer's: its own, chosen for its blocks (`None`), for an FPR target,
    /// so its keys meet the target too; the layer's for a bits-per-key
    /// budget, so its keys get the layer's FPR (its own would spread the
    /// budget over a small filter's relatively many spare slots).
    pub(crate) fn second_columns(&self, layer: Columns) -> Option<Columns> {
        matches!(self.target, Target::BitsPerKey(_)).then_some(layer)
    }

    /// Columns of an empty filter (no shard to size).
    pub(crate) fn empty_columns(&self) -> u32 {
        match self.target {
            Target::ResultBits(r) | Target::Fpr { r, .. } => r,
            Target::BitsPerKey(b) => (b as u32).clamp(1, MAX_RESULT_BITS),
        }
    }

    /// Blocks of a shard of `keys` distinct keys (at least 1) at its
    /// `attempt`-th construction attempt.
    pub(crate) fn blocks(&self, keys: usize, attempt: u32) -> Result<usize, Error> {
        blocks_for(keys, self.slots_per_key, attempt).ok_or(Error::TooLarge)
    }

    /// The filter-wide column rule for `num_keys` distinct keys in
    /// `num_shards` shards of `blocks_of(i)` blocks each, laid out one after
    /// another (see `layout.rs`).
    ///
    /// For an FPR between two powers of two it takes the extra-column start
    /// whose mean per-shard FPR is closest to the target; for bits per key,
    /// the one whose extra-column words come closest to the budget.
    pub(crate) fn columns(
        &self,
        num_keys: usize,
        num_shards: usize,
        blocks_of: impl Fn(usize) -> usize,
    ) -> Columns {
        match self.target {
            Target::ResultBits(r) => Columns::uniform(r),
            Target::Fpr { r, share } if share == 0.0 || r == MAX_RESULT_BITS => Columns::uniform(r),
            Target::Fpr { r, share } => {
                // Mean over the shards of the share of starts checking
                // `r + 1` columns; it never grows with `upper_from`.
                let achieved = |lo: u32| {
                    let c = Columns::new(r, lo).expect("r < 32, lo <= 256");
                    let (mut first, mut sum) = (0usize, 0.0);
                    for i in 0..num_shards {
                        let b = blocks_of(i);
                        let (starts, upper) = c.shard_starts(first, b);
                        if starts > 0 {
                            sum += upper as f64 / starts as f64;
                        }
                        first += b;
                    }
                    sum / num_shards.max(1) as f64
                };
                // The smallest `lo` at or below the target, or the one before.
                let (mut low, mut high) = (0u32, PERIOD_BLOCKS as u32);
                while low < high {
                    let mid = (low + high) / 2;
                    if achieved(mid) <= share {
                        high = mid;
                    } else {
                        low = mid + 1;
                    }
                }
                let best = if low > 0 && (achieved(low - 1) - share).abs() < (share - achieved(low)).abs() {
                    low - 1
                } else {
                    low
                };
                Columns::new(r, best).expect("r < 32, lo <= 256")
            }
            Target::BitsPerKey(b) => {
                let total_blocks: usize = (0..num_shards).map(&blocks_of).sum();
                if total_blocks == 0 {
                    return Columns::uniform(self.empty_columns());
                }
                let avg = (b * num_keys as f64 / (total_blocks * BLOCK_SLOTS) as f64)
                    .clamp(1.0, MAX_RESULT_BITS as f64);
                let r = avg as u32;
                if r == MAX_RESULT_BITS {
                    return Columns::uniform(r);
                }
                let want = (avg - r as f64) * total_blocks as f64;
                let lo = (0..=PERIOD_BLOCKS as u32)
                    .min_by(|&x, &y| {
                        let miss = |lo| {
                            let c = Columns::new(r, lo).expect("r < 32, lo <= 256");
                            (c.upper_blocks_before(total_blocks) as f64 - want).abs()
                        };
                        miss(x).total_cmp(&miss(y))
                    })
                    .unwrap_or(PERIOD_BLOCKS as u32);
                Columns::new(r, lo).expect("r < 32, lo <= 256")
            }
        }
    }
}

/// `(r, f)` for target FPR `p`: `r` columns, and the share `f` in `[0, 1)` of
/// starts that get `r + 1`.
fn columns_for_fpr(p: f64) -> (u32, f64) {
    if p >= 0.5 {
        return (1, 0.0);
    }
    let r = (libm::floor(-libm::log2(p)) as u32).clamp(1, MAX_RESULT_BITS);
    if r == MAX_RESULT_BITS {
        return (r, 0.0);
    }
    (r, (2.0 * (1.0 - p * libm::exp2(r as f64))).clamp(0.0, 1.0))
}

/// Slots per key of a shard, from measurement (see the table in the
/// [module docs](crate::ribbon)).
pub const SLOTS_PER_KEY: f64 = 1.025;

/// Blocks for a shard of `keys` keys at `ratio` slots per key, attempt
/// `attempt`: `keys + extra` slots rounded to the nearest block, where
/// `extra = max(keys · (ratio - 1), 64)`, doubled every
/// [`ATTEMPTS_PER_SIZE`] attempts; at least two blocks (one row width).
fn blocks_for(keys: usize, ratio: f64, attempt: u32) -> Option<usize> {
    let growth = libm::exp2((attempt / ATTEMPTS_PER_SIZE) as f64);
    let extra = (keys as f64 * (ratio - 1.0)).max(MIN_EXTRA_SLOTS) * growth;
    let blocks = libm::round((keys as f64 + extra) / BLOCK_SLOTS as f64);
    if !blocks.is_finite() || blocks >= (isize::MAX as usize / BLOCK_SLOTS / 64) as f64 {
        return None;
    }
    Some((blocks as usize).max(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fpr_mix_hits_the_target() {
        for p in [0.4, 0.01, 0.0078125, 0.003, 1e-6] {
            let (r, f) = columns_for_fpr(p);
            let got = (1.0 - f) * libm::exp2(-(r as f64)) + f * libm::exp2(-(r as f64) - 1.0);
            assert!((got / p - 1.0).abs() < 1e-9, "{p}: {r} {f}");
        }
        assert_eq!(columns_for_fpr(0.75), (1, 0.0));
        assert_eq!(columns_for_fpr(1.0 / 128.0), (7, 0.0));
    }

    #[test]
    fn blocks_grow_on_retries() {
        let p = RibbonParams::with_bits_per_key(7.5).unwrap();
        for keys in [1usize, 2, 100, 10_000] {
            let b = p.blocks(keys, 0).unwrap();
            assert!(b >= 2);
            assert!(b * BLOCK_SLOTS >= keys + 32);
            assert!(p.blocks(keys, ATTEMPTS_PER_SIZE).unwrap() >= b);
        }
        assert_eq!(p.blocks(8192, 0).unwrap(), 131); // 8192 · 1.025 / 64 = 131.2
        assert_eq!(p.blocks(8192, ATTEMPTS_PER_SIZE).unwrap(), 134); // extra doubled
        assert_eq!(p.blocks(usize::MAX / 2, 0), Err(Error::TooLarge));
    }

    #[test]
    fn columns_follow_the_target() {
        let shards = |_| 131;
        assert_eq!(
            RibbonParams::with_result_bits(7)
                .unwrap()
                .columns(100_000, 12, shards),
            Columns::uniform(7)
        );
        assert_eq!(
            RibbonParams::with_fpr(1.0 / 128.0)
                .unwrap()
                .columns(100_000, 12, shards),
            Columns::uniform(7)
        );
        assert_eq!(
            RibbonParams::with_result_bits(32)
                .unwrap()
                .columns(100_000, 12, shards),
            Columns::uniform(32)
        );
        // 1%: r = 6 and about 72% of the starts with 7 columns.
        let c = RibbonParams::with_fpr(0.01).unwrap().columns(100_000, 12, shards);
        assert_eq!(c.base(), 6);
        let (mut first, mut fpr) = (0, 0.0);
        for _ in 0..12 {
            fpr += c.shard_fpr(first, 131) / 12.0;
            first += 131;
        }
        assert!((fpr - 0.01).abs() < 2e-5, "{fpr}");
        // 7.5 bits per key over 12 · 131 blocks of 8192 keys each: the words
        // come within one block of the budget.
        let c = RibbonParams::with_bits_per_key(7.5)
            .unwrap()
            .columns(12 * 8192, 12, shards);
        let words = c.word_of(12 * 131) as f64;
        assert!((words * 64.0 / (12.0 * 8192.0) - 7.5).abs() < 0.01, "{c:?}");
    }
}
