//! [`MementoFilter`]: a range filter that inserts, deletes and grows with
//! no size given (the design of Eslami and Dayan, "Memento Filter: A Fast,
//! Dynamic, and Robust Range Filter", SIGMOD 2025, on amq's expanding
//! quotient table).
//!
//! The key space is cut into partitions of `2^m` keys. A key's partition
//! number (its *prefix*, `key >> m`) is hashed like a point key into a
//! quotient and a fingerprint; its low `m` bits (its *memento*) are kept
//! as they are, under the fingerprint, in the same slot. A run of the
//! table holds its entries sorted by fingerprint, then memento, so the
//! entries of one partition sit together in memento order. A range of up
//! to `2^m` keys touches at most two partitions: the query hashes each and
//! looks in its run for a matching fingerprint whose memento lies in the
//! range's part of that partition. A false positive needs another
//! partition's entry to share the quotient and the fingerprint *and* to
//! have its memento in that part. A range of `ℓ` keys covers each memento
//! value at most `c = ⌈ℓ/2^m⌉` times over all its partitions, so each entry
//! can match at most `c` of the probes, and an empty range is a false
//! positive with probability about `1 − e^(−cλ)`, `λ` the expected matches
//! of one point probe, whatever the keys and the ranges
//! (`expected_fpr`): ranges of up to `2^m` keys cost no more than points.
//!
//! Growth is the expanding quotient filter's
//! ([`ExpandingQuotientFilter`](crate::quotient::ExpandingQuotientFilter)):
//! when the table fills it doubles, each fingerprint's first bit joining
//! the quotient, the memento riding along unchanged; fingerprints carry
//! their length, new ones get the schedule's length, and an entry whose
//! fingerprint runs out is kept, void, in both halves. So the FPR stays at
//! or below the target for the planned expansions, below about 1.5 times
//! it however far the filter grows.
//!
//! * `mod.rs` (here): the options, the type, its sizes and its bounds;
//! * `update.rs`: inserts, removals and the bulk build (growth is the
//!   shared `quotient/expanding/growing.rs`);
//! * `query.rs`: the range query, its batch, and [`RangeFilter`](crate::range::RangeFilter);
//! * `codec.rs`: its byte format.
//!
//! The paper also packs the mementos of one partition behind a single
//! fingerprint; this filter spends a fingerprint per key instead, which
//! costs nothing when keys are spread (about one key per partition) and
//! `log2(1/ε)` bits more per key when many keys share a partition.

mod codec;
mod query;
mod update;

use crate::error::invalid;
use crate::quotient::expanding::growing::{capacity, planned_horizon, GrowingTable};
use crate::quotient::expanding::schedule::{Schedule, MAX_FPR};
use crate::quotient::table::MAX_QUOTIENTS;
use crate::sizing::check_keys;
use crate::Error;

/// The expansions [`MementoOptions::new`] plans for.
const DEFAULT_HORIZON: u32 = 18;

/// The most memento bits: partitions of up to `2^40` keys.
pub const MAX_MEMENTO_BITS: u32 = 40;

/// The most partitions one range query probes: a longer range answers
/// `true` (its FPR bound would pass `64ε` anyway).
pub const MAX_PARTITIONS: u64 = 64;

/// How a [`MementoFilter`] is sized, and how far it plans to grow.
///
/// ```
/// use amq::range::MementoOptions;
/// let o = MementoOptions::new(0.01, 64);
/// assert_eq!((o.initial_keys, o.horizon, o.max_keys), (1_000, 18, None));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct MementoOptions {
    /// The target FPR `ε` for an empty range of up to `max_range_len`
    /// keys, in `(0, 0.25]`.
    pub fpr: f64,
    /// The longest range `ε` is promised for, at least 1 and at most
    /// `2^40`. Partitions hold `2^m` keys, `m = ⌈log2(max_range_len)⌉`, so
    /// such a range covers each memento value at most once. A longer range
    /// of `ℓ` keys costs about `⌈ℓ/2^m⌉·ε` and probes every partition it
    /// touches (a range over [`MAX_PARTITIONS`] answers `true`). Bits per
    /// key grow with `log2(max_range_len/ε)`.
    pub max_range_len: u64,
    /// Keys the first table holds before it doubles (default 1,000); a
    /// [`build`](MementoFilter::build) sizes for at least its keys.
    pub initial_keys: usize,
    /// The expansions planned for (default 18, at most 64), as in
    /// [`ExpandingOptions`](crate::quotient::ExpandingOptions): each costs
    /// about `log2((H + 3)/(H + 2))` bits per slot from the start.
    pub horizon: u32,
    /// A cap: inserts past this many keys return [`Error::Full`]; the
    /// horizon shrinks to the expansions that reach it. `None`: no limit.
    pub max_keys: Option<usize>,
}

impl MementoOptions {
    /// The defaults for target FPR `fpr` on ranges of up to
    /// `max_range_len` keys.
    ///
    /// ```
    /// use amq::range::MementoOptions;
    /// assert_eq!(MementoOptions::new(0.01, 1).max_range_len, 1);
    /// ```
    pub fn new(fpr: f64, max_range_len: u64) -> Self {
        MementoOptions {
            fpr,
            max_range_len,
            initial_keys: 1_000,
            horizon: DEFAULT_HORIZON,
            max_keys: None,
        }
    }

    /// `m`, the memento bits, and the FPR one point probe may have (the
    /// target: a range of `2^m` keys matches each entry at most once).
    fn memento_bits_and_probe_fpr(&self) -> Result<(u32, f64), Error> {
        if self.max_range_len == 0 {
            return Err(invalid("max_range_len", "must be at least 1"));
        }
        let m = 64 - (self.max_range_len - 1).leading_zeros();
        if m > MAX_MEMENTO_BITS {
            return Err(invalid("max_range_len", "must be at most 2^40"));
        }
        if !(self.fpr > 0.0 && self.fpr <= MAX_FPR) {
            return Err(invalid("fpr", "must be in (0, 0.25]"));
        }
        Ok((m, self.fpr))
    }
}

/// The fewest quotients whose [`capacity`] holds `keys` (at least 1).
fn quotients_for(keys: usize) -> Result<u64, Error> {
    let keys = keys as u64;
    let mut n = (keys.saturating_mul(20) / 19).max(1);
    while capacity(n) < keys {
        n += 1;
    }
    if n > MAX_QUOTIENTS {
        return Err(Error::TooLarge);
    }
    Ok(n)
}

/// The partitions of `2^m` keys a range of `len ≥ 1` keys may touch at
/// worst: `1 + ⌈(len − 1)/2^m⌉`, the probes of its query.
fn probes(len: u64, m: u32) -> u64 {
    1 + (len - 1).div_ceil(1 << m)
}

/// The most times a range of `len` keys covers one memento value over the
/// partitions it touches: `⌈len/2^m⌉`.
fn coverage(len: u64, m: u32) -> u64 {
    len.div_ceil(1 << m)
}

/// A dynamic, expanding range filter over `u64` keys (Memento filter; see
/// the module docs for the design and its bound).
///
/// It inserts and removes keys one at a time and grows with them: no size
/// is given. A key inserted twice is held twice (remove it twice). Remove
/// only keys that were inserted.
///
/// **Space.** Slots of `F + 1 + m` bits (fingerprint, its delimiter and the
/// memento) plus 2.125 bits of metadata, at a load between 0.475 and 0.95,
/// with `F = ⌈log2(0.475·(H + 2)/ε)⌉` (10 bits for `ε` = 1% and the
/// default horizon: 13.125 + `m` bits per slot).
///
/// ```
/// use amq::range::{MementoFilter, MementoOptions, RangeFilter};
/// let mut f = MementoFilter::new(MementoOptions::new(0.01, 1_024))?;
/// for i in 0..100_000u64 {
///     f.insert(i * 1_000_003)?;
/// }
/// assert!(f.expansions() >= 6);
/// assert!(f.may_contain_range(1_000_000, 1_000_003));
/// assert!(f.may_contain(7 * 1_000_003));
/// let empty = (0..10_000u64).filter(|&i| f.may_contain_range(i * 1_000_003 + 1, i * 1_000_003 + 1_024)).count();
/// assert!(empty < 200, "{empty}");
/// f.remove(7 * 1_000_003)?;
/// assert_eq!(f.num_keys(), 99_999);
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MementoFilter {
    /// The expanding quotient filter's table, schedule and counts, each
    /// code over the `m`-bit memento (`g.payload`).
    g: GrowingTable,
}

impl MementoFilter {
    /// An empty filter for `options`.
    ///
    /// Errors: [`Error::InvalidParameter`] for an FPR or range length out of
    /// range (see [`MementoOptions`]), no initial keys, a horizon over 64, a
    /// `max_keys` of 0, or slots that would pass 63 bits.
    ///
    /// ```
    /// use amq::range::{MementoFilter, MementoOptions};
    /// let f = MementoFilter::new(MementoOptions::new(0.01, 64))?;
    /// assert_eq!((f.memento_bits(), f.fingerprint_bits()), (6, 10));
    /// assert!(MementoFilter::new(MementoOptions::new(0.01, 0)).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn new(options: MementoOptions) -> Result<Self, Error> {
        Self::for_keys(options, 0)
    }

    /// An empty filter for `options`, its first table for at least `n`
    /// keys.
    fn for_keys(options: MementoOptions, n: usize) -> Result<Self, Error> {
        let (m, probe) = options.memento_bits_and_probe_fpr()?;
        check_keys(options.initial_keys)?;
        let quotients = quotients_for(options.initial_keys.max(n))?;
        let horizon = planned_horizon(quotients, options.horizon, options.max_keys)?;
        let schedule = Schedule::for_fpr(probe, horizon)?;
        Ok(MementoFilter {
            g: GrowingTable::empty(quotients, schedule, m, options.max_keys)?,
        })
    }

    /// `m`: partitions hold `2^m` keys, and each entry keeps a key's low
    /// `m` bits.
    pub fn memento_bits(&self) -> u32 {
        self.g.payload
    }

    /// Expansions so far (each doubled the table).
    ///
    /// ```
    /// use amq::range::{MementoFilter, MementoOptions};
    /// let mut o = MementoOptions::new(0.01, 16);
    /// o.initial_keys = 100;
    /// let mut f = MementoFilter::new(o)?;
    /// for k in 0..1_000u64 {
    ///     f.insert(k << 20)?;
    /// }
    /// assert_eq!(f.expansions(), 4);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn expansions(&self) -> u32 {
        self.g.expansions
    }

    /// `N`: the table's quotients now (`N0·2^X` after `X` expansions, `N0`
    /// the smallest count whose 95% holds the initial keys).
    pub fn quotients(&self) -> u64 {
        self.g.quotients()
    }

    /// Fingerprint bits of the entries inserted now (older entries have
    /// one less per expansion since theirs).
    pub fn fingerprint_bits(&self) -> u32 {
        self.g.fingerprint_bits()
    }

    /// Entries the table holds before the next expansion:
    /// [`MAX_LOAD`](crate::quotient::MAX_LOAD) `· 2^q`.
    pub fn capacity(&self) -> usize {
        self.g.capacity()
    }

    /// The cap set in [`MementoOptions::max_keys`], if any.
    pub fn max_keys(&self) -> Option<usize> {
        self.g.max_keys
    }

    /// The FPR bound for an empty range of `range_len` keys that holds
    /// however far the filter grows: the expanding schedule's bound
    /// (about 1.5 times the target) for ranges up to
    /// [`MementoOptions::max_range_len`], as [`expected_fpr`](crate::range::RangeFilter::expected_fpr)
    /// scales it for longer ones.
    ///
    /// ```
    /// use amq::range::{MementoFilter, MementoOptions};
    /// let f = MementoFilter::new(MementoOptions::new(0.01, 64))?;
    /// assert!(f.fpr_bound(64) > 0.01 && f.fpr_bound(64) < 0.015);
    /// assert_eq!(f.fpr_bound(1), f.fpr_bound(64));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn fpr_bound(&self, range_len: u64) -> f64 {
        let lambda = -libm::log1p(-self.g.schedule.fpr_bound());
        self.for_range(range_len, lambda)
    }

    /// `1 − e^(−cλ)` for a range of `range_len` keys, `c` its
    /// [`coverage`]: 0 for an empty range, 1 past [`MAX_PARTITIONS`].
    fn for_range(&self, range_len: u64, lambda: f64) -> f64 {
        if range_len == 0 {
            return 0.0;
        }
        if probes(range_len, self.memento_bits()) > MAX_PARTITIONS {
            return 1.0;
        }
        -libm::expm1(-(coverage(range_len, self.memento_bits()) as f64) * lambda)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quotient::expanding::growing::address_bits;

    #[test]
    fn probes_count_the_partitions_a_range_can_touch() {
        assert_eq!(probes(1, 0), 1);
        assert_eq!(probes(2, 0), 2);
        assert_eq!(probes(1, 6), 1);
        assert_eq!(probes(2, 6), 2);
        assert_eq!(probes(64, 6), 2);
        assert_eq!(probes(65, 6), 2);
        assert_eq!(probes(66, 6), 3);
        assert_eq!(probes(u64::MAX, 40), 1 + (1 << 24));
    }

    #[test]
    fn tables_hold_their_keys_at_95_percent() {
        for keys in [0usize, 1, 2, 19, 20, 100, 1_000, 1_000_000, 999_999_937] {
            let n = quotients_for(keys).unwrap();
            assert!(
                capacity(n) >= keys as u64 && (n == 1 || capacity(n - 1) < keys as u64),
                "{keys}: {n}"
            );
        }
        assert_eq!(quotients_for(1_000).unwrap(), 1_053);
        assert_eq!(
            (
                address_bits(1),
                address_bits(2),
                address_bits(1_053),
                address_bits(1 << 20)
            ),
            (0, 1, 11, 20)
        );
    }

    #[test]
    fn coverage_counts_each_memento_value_at_most() {
        assert_eq!(
            (coverage(1, 6), coverage(64, 6), coverage(65, 6), coverage(128, 6)),
            (1, 1, 2, 2)
        );
        assert_eq!((coverage(1, 0), coverage(5, 0)), (1, 5));
    }

    #[test]
    fn options_give_memento_bits_and_probe_fpr() {
        let (m, p) = MementoOptions::new(0.01, 64)
            .memento_bits_and_probe_fpr()
            .unwrap();
        assert_eq!((m, p), (6, 0.01));
        let (m, p) = MementoOptions::new(0.01, 65)
            .memento_bits_and_probe_fpr()
            .unwrap();
        assert_eq!((m, p), (7, 0.01));
        let (m, p) = MementoOptions::new(0.2, 1).memento_bits_and_probe_fpr().unwrap();
        assert_eq!((m, p), (0, 0.2));
        assert!(MementoOptions::new(0.3, 1).memento_bits_and_probe_fpr().is_err());
        assert!(MementoOptions::new(0.3, 2).memento_bits_and_probe_fpr().is_err());
        assert!(MementoOptions::new(0.01, (1 << 40) + 1)
            .memento_bits_and_probe_fpr()
            .is_err());
        assert!(MementoOptions::new(f64::NAN, 4)
            .memento_bits_and_probe_fpr()
            .is_err());
    }
}
