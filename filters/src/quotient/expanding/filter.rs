//! [`ExpandingQuotientFilter`]: a quotient filter that doubles when full,
//! keeping its FPR within a bound at every size.

use alloc::boxed::Box;

use super::fingerprint;
use super::schedule::{Schedule, MAX_HORIZON, MAX_LENGTH};
use crate::error::invalid;
use crate::quotient::filter::{capacity, quotient_bits_for};
use crate::quotient::kernel::Kernel;
use crate::quotient::table::{Table, MAX_QUOTIENT_BITS};
use crate::sizing::check_keys;
use crate::{Error, Filter, FilterKind, Insert, KeyHash, Remove};

/// The expansions [`ExpandingOptions::new`] plans for.
const DEFAULT_HORIZON: u32 = 18;

/// How an [`ExpandingQuotientFilter`] starts and how far it plans to grow.
///
/// ```
/// use amq::quotient::ExpandingOptions;
/// let mut o = ExpandingOptions::new(0.01);
/// o.max_keys = Some(1_000_000);
/// assert_eq!((o.initial_keys, o.horizon), (1_000, 18));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ExpandingOptions {
    /// The target FPR `ε`, in `(0, 0.25]`: the expected FPR stays at or below
    /// it for `horizon` expansions, and below about `1.5ε` at any size.
    pub fpr: f64,
    /// Keys the first table holds before it doubles (default 1,000).
    pub initial_keys: usize,
    /// The expansions planned for (default 18: a 262,144-fold growth from
    /// `initial_keys`, a thousand keys to a quarter of a billion). Each
    /// one planned costs about `log2((H + 3)/(H + 2))` bits per slot from
    /// the start; past them the FPR creeps towards `1.5ε` and new slots
    /// widen (see the type's docs). At most 64.
    pub horizon: u32,
    /// A cap: inserts past this many keys return [`Error::Full`], and the
    /// horizon shrinks to the expansions that reach it (so smaller
    /// fingerprints keep `ε`). `None` (the default): no limit.
    pub max_keys: Option<usize>,
}

impl ExpandingOptions {
    /// The defaults for target FPR `fpr`.
    ///
    /// ```
    /// use amq::quotient::ExpandingOptions;
    /// assert_eq!(ExpandingOptions::new(0.001).max_keys, None);
    /// ```
    pub fn new(fpr: f64) -> Self {
        ExpandingOptions {
            fpr,
            initial_keys: 1_000,
            horizon: DEFAULT_HORIZON,
            max_keys: None,
        }
    }
}

/// A quotient filter that grows without a limit set in advance (the
/// expansion of InfiniFilter, Dayan et al., SIGMOD 2023, and Aleph filter,
/// Dayan, Bercea and Pagh, VLDB 2024, on amq's rank-and-select table).
///
/// When an insert finds the table at [`MAX_LOAD`](crate::quotient::MAX_LOAD), the
/// table is rewritten at twice the quotients in one ordered pass: each
/// entry's first fingerprint bit becomes the low bit of its quotient, so
/// every entry keeps matching its keys, and queries stay one run of one
/// table (no chain of sub-filters to probe). Fingerprints carry their own
/// length (`expanding/fingerprint.rs`); new entries get the length the
/// schedule gives the current generation (`expanding/schedule.rs`): the
/// same for the `horizon` expansions planned, so the FPR stays at or below
/// `ε`, then 2 bits more each time the expansion count doubles, so it never
/// passes about `1.5ε` ([`fpr_bound`](Self::fpr_bound)). An entry whose
/// fingerprint runs out is copied into both halves of its quotient.
///
/// **Space.** Slots of `F0 + 1` bits (the fingerprint and its delimiter)
/// plus 2.125 bits of metadata, at a load between 0.475 and 0.95. For
/// `ε = 1%` and the default horizon, `F0 = 10`: 13.1 bits per slot, where a
/// [`QuotientFilter`](crate::quotient::QuotientFilter) sized in advance for the same
/// count takes `r + 2.125` with `r = ⌈log2(α/ε)⌉` (7 at `α = 0.745`): about
/// 1.44× the space for not knowing the count. A rewrite briefly holds the
/// old and the new table.
///
/// **Deletes and counts.** [`remove`](Remove::remove) takes away the
/// longest fingerprint that matches the key: any key whose entry that is
/// also matches the key's own, shorter or equal entry, so no inserted key
/// loses its last match. A key inserted `k` times counts `k` (or more).
/// Removing a key whose entry has gone void takes one of its copies; the
/// others stay (they cost FPR, not correctness). Remove only keys that were
/// inserted, as with every filter that deletes.
///
/// ```
/// use amq::quotient::{ExpandingOptions, ExpandingQuotientFilter};
/// use amq::{Filter, Insert, Remove};
/// let mut f = ExpandingQuotientFilter::new(ExpandingOptions::new(0.01))?;
/// for i in 0..100_000u64 {
///     f.insert(&i.to_le_bytes())?;
/// }
/// assert!(f.expansions() >= 6);
/// assert!((0..100_000u64).all(|i| f.contains(&i.to_le_bytes())));
/// assert!(f.expected_fpr() <= 0.01);
/// f.remove(&7u64.to_le_bytes())?;
/// assert_eq!(f.num_keys(), 99_999);
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ExpandingQuotientFilter {
    pub(super) table: Table,
    /// How queries run on this CPU: not part of what the filter holds.
    kernel: Kernel,
    pub(super) schedule: Schedule,
    /// Expansions so far: the generation of new entries.
    pub(super) expansions: u32,
    /// Keys inserted less keys removed.
    pub(super) keys: usize,
    pub(super) max_keys: Option<usize>,
    /// Entries by fingerprint length (void copies counted each).
    lengths: Box<[u64; 64]>,
}

impl PartialEq for ExpandingQuotientFilter {
    fn eq(&self, other: &Self) -> bool {
        (
            &self.table,
            self.schedule,
            self.expansions,
            self.keys,
            self.max_keys,
        ) == (
            &other.table,
            other.schedule,
            other.expansions,
            other.keys,
            other.max_keys,
        )
    }
}

impl Eq for ExpandingQuotientFilter {}

impl ExpandingQuotientFilter {
    /// An empty filter: `2^q` quotients for `initial_keys`, fingerprints of
    /// the length that keeps `fpr` over `horizon` expansions.
    ///
    /// Errors: [`Error::InvalidParameter`] for an FPR outside `(0, 0.25]` or
    /// one that needs fingerprints over 62 bits, no initial keys, a
    /// horizon over 64, or a `max_keys` of 0.
    ///
    /// ```
    /// use amq::quotient::{ExpandingOptions, ExpandingQuotientFilter};
    /// let f = ExpandingQuotientFilter::new(ExpandingOptions::new(0.01))?;
    /// assert_eq!((f.quotient_bits(), f.fingerprint_bits()), (11, 10));
    /// assert!(ExpandingQuotientFilter::new(ExpandingOptions::new(0.5)).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn new(options: ExpandingOptions) -> Result<Self, Error> {
        check_keys(options.initial_keys)?;
        if options.horizon > MAX_HORIZON {
            return Err(invalid("horizon", "must be at most 64 expansions"));
        }
        let q = quotient_bits_for(options.initial_keys)?;
        let mut horizon = options.horizon;
        if let Some(max) = options.max_keys {
            if max == 0 {
                return Err(invalid("max_keys", "must be at least 1"));
            }
            let reach = quotient_bits_for(max).map_or(MAX_QUOTIENT_BITS, |m| m.max(q));
            horizon = horizon.min(reach - q);
        }
        let schedule = Schedule::for_fpr(options.fpr, horizon)?;
        Self::with_schedule(q, schedule, options.max_keys)
    }

    /// An empty filter of `2^q` quotients for `n` keys whose slots cost at
    /// most `bits_per_key` bits per key (fingerprints, delimiter and 2.125
    /// metadata bits per slot), and the longest horizon up to the default
    /// whose FPR stays within [`MAX_FPR`](super::schedule::MAX_FPR): the
    /// bits-per-key sizing of [`AnyFilter::new`](crate::AnyFilter::new).
    pub(crate) fn with_bits_per_key(n: usize, bits_per_key: f64) -> Result<Self, Error> {
        check_keys(n)?;
        let q = quotient_bits_for(n)?;
        let load = n as f64 / (1u64 << q) as f64;
        let base = libm::floor(bits_per_key * load - crate::quotient::filter::METADATA_BITS - 1.0);
        if !(1.0..=f64::from(MAX_LENGTH)).contains(&base) {
            return Err(invalid("sizing", "leaves no fingerprint bit, or needs over 62"));
        }
        let schedule = (0..=DEFAULT_HORIZON)
            .rev()
            .find_map(|h| Schedule::with_base(base as u32, h).ok())
            .ok_or_else(|| invalid("sizing", "too few bits: the FPR would pass 0.25"))?;
        Self::with_schedule(q, schedule, None)
    }

    fn with_schedule(q: u32, schedule: Schedule, max_keys: Option<usize>) -> Result<Self, Error> {
        let width = schedule.base + 1;
        if q + width > 64 {
            return Err(invalid("fpr", "needs more hash bits than a 64-bit hash has"));
        }
        Ok(ExpandingQuotientFilter {
            table: Table::new(q, width)?,
            kernel: Kernel::detect(),
            schedule,
            expansions: 0,
            keys: 0,
            max_keys,
            lengths: Box::new([0; 64]),
        })
    }

    /// A filter around a decoded table, its fingerprint lengths counted.
    pub(super) fn from_parts(
        table: Table,
        schedule: Schedule,
        expansions: u32,
        keys: usize,
        max_keys: Option<usize>,
    ) -> Result<Self, &'static str> {
        let lengths =
            super::grow::histogram(&table, 0).ok_or("an entry without a delimiter, or two voids in a run")?;
        // Copies whose fingerprints ran out share a void entry: keys may
        // outnumber entries, but not the cap.
        if max_keys.is_some_and(|m| keys > m) {
            return Err("more keys than the cap");
        }
        Ok(ExpandingQuotientFilter {
            table,
            kernel: Kernel::detect(),
            schedule,
            expansions,
            keys,
            max_keys,
            lengths,
        })
    }

    /// Expansions so far (each doubled the table).
    ///
    /// ```
    /// use amq::quotient::{ExpandingOptions, ExpandingQuotientFilter};
    /// use amq::Insert;
    /// let mut o = ExpandingOptions::new(0.01);
    /// o.initial_keys = 100;
    /// let mut f = ExpandingQuotientFilter::new(o)?;
    /// for i in 0..1_000u32 {
    ///     f.insert(&i.to_le_bytes())?;
    /// }
    /// assert_eq!(f.expansions(), 4);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn expansions(&self) -> u32 {
        self.expansions
    }

    /// `q`: the table has `2^q` quotients now.
    pub fn quotient_bits(&self) -> u32 {
        self.table.quotient_bits()
    }

    /// Fingerprint bits of the entries inserted now (older entries have
    /// fewer: one less per expansion since theirs).
    pub fn fingerprint_bits(&self) -> u32 {
        self.schedule.length(self.expansions)
    }

    /// Entries the table holds before the next expansion: [`MAX_LOAD`](crate::quotient::MAX_LOAD) `· 2^q`.
    pub fn capacity(&self) -> usize {
        capacity(self.quotient_bits())
    }

    /// The cap set in [`ExpandingOptions::max_keys`], if any.
    pub fn max_keys(&self) -> Option<usize> {
        self.max_keys
    }

    /// The expected FPR the filter never passes, however far it grows
    /// (about 1.5 times the target; the target itself holds for the
    /// horizon's expansions).
    ///
    /// ```
    /// use amq::quotient::{ExpandingOptions, ExpandingQuotientFilter};
    /// let f = ExpandingQuotientFilter::new(ExpandingOptions::new(0.01))?;
    /// assert!(f.fpr_bound() > 0.01 && f.fpr_bound() < 0.015);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn fpr_bound(&self) -> f64 {
        self.schedule.fpr_bound()
    }

    /// The quotient and the `w` key bits after it.
    #[inline(always)]
    fn split(&self, hash: KeyHash) -> (usize, u64) {
        let (q, w) = (self.table.quotient_bits(), self.table.width());
        let h = hash.get();
        let quotient = h.checked_shr(64 - q).unwrap_or(0) as usize;
        (quotient, (h << q) >> (64 - w))
    }

    /// How many entries match the key with this hash: the times it was
    /// inserted (less the times removed), plus entries of other keys that
    /// its bits match.
    ///
    /// ```
    /// use amq::quotient::{ExpandingOptions, ExpandingQuotientFilter};
    /// use amq::Insert;
    /// let mut f = ExpandingQuotientFilter::new(ExpandingOptions::new(0.001))?;
    /// for _ in 0..3 {
    ///     f.insert(b"k")?;
    /// }
    /// assert_eq!((f.count(b"k"), f.count(b"absent")), (3, 0));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn count_hash(&self, hash: KeyHash) -> usize {
        let (x, key) = self.split(hash);
        match self.table.run(x) {
            Some(run) => run
                .filter(|&s| fingerprint::matches(self.table.value(s), key))
                .count(),
            None => 0,
        }
    }

    /// [`count_hash`](Self::count_hash) of the key's hash.
    pub fn count(&self, key: &[u8]) -> usize {
        self.count_hash(crate::hash_key(key))
    }

    /// Doubles the table (see the type's docs). [`Error::Full`] when it may
    /// not grow: past `2^40` quotients, or when quotient and fingerprint
    /// would need more than the hash's 64 bits. Nothing changes then.
    pub(super) fn expand(&mut self) -> Result<(), Error> {
        let q = self.table.quotient_bits() + 1;
        let next = self.expansions + 1;
        let length = self.schedule.length(next);
        if q > MAX_QUOTIENT_BITS || length > MAX_LENGTH || q + length + 1 > 64 {
            return Err(Error::Full);
        }
        let (table, lengths) = super::grow::doubled(&self.table, 0, length + 1, &self.lengths)?;
        self.table = table;
        self.lengths = lengths;
        self.expansions = next;
        Ok(())
    }

    /// A filter holding the keys of both: the one with fewer quotients
    /// expanded to the other's, the two tables merged in one ordered pass
    /// (then doubled if the sum is past capacity). Both must come from the
    /// same target FPR and horizon ([`Error::Incompatible`] otherwise); the
    /// cap is the first filter's.
    ///
    /// ```
    /// use amq::quotient::{ExpandingOptions, ExpandingQuotientFilter};
    /// use amq::{Filter, Insert};
    /// let o = ExpandingOptions::new(0.01);
    /// let (mut a, mut b) = (ExpandingQuotientFilter::new(o)?, ExpandingQuotientFilter::new(o)?);
    /// for i in 0..5_000u32 {
    ///     a.insert(&i.to_le_bytes())?;
    /// }
    /// b.insert(b"x")?;
    /// let m = a.merge(&b)?;
    /// assert_eq!(m.num_keys(), 5_001);
    /// assert!(m.contains(b"x") && m.contains(&4_999u32.to_le_bytes()));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn merge(&self, other: &Self) -> Result<Self, Error> {
        if self.schedule != other.schedule {
            return Err(Error::Incompatible);
        }
        let keys = self.keys + other.keys;
        if self.max_keys.is_some_and(|m| keys > m) {
            return Err(Error::Full);
        }
        let (mut a, mut b) = (self.clone(), other.clone());
        while a.quotient_bits() < b.quotient_bits() {
            a.expand()?;
        }
        while b.quotient_bits() < a.quotient_bits() {
            b.expand()?;
        }
        let expansions = a.expansions.max(b.expansions);
        let width = self.schedule.length(expansions) + 1;
        let both = crate::quotient::filter::Merge {
            a: super::grow::widened(&a.table, 0, width).peekable(),
            b: super::grow::widened(&b.table, 0, width).peekable(),
        };
        let table = Table::from_sorted(
            a.quotient_bits(),
            width,
            super::grow::one_void_per_run(both, 0, width),
        )?;
        let lengths = super::grow::histogram(&table, 0).ok_or(Error::Incompatible)?;
        let mut merged = ExpandingQuotientFilter {
            table,
            kernel: self.kernel,
            schedule: self.schedule,
            expansions,
            keys,
            max_keys: self.max_keys,
            lengths,
        };
        while merged.table.len() > merged.capacity() {
            merged.expand()?;
        }
        Ok(merged)
    }
}

impl Filter for ExpandingQuotientFilter {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        let (x, key) = self.split(hash);
        self.table.is_occupied(x) && self.kernel.contains_prefix(&self.table, x, key)
    }

    /// Loads the block of every key of a group of 32 first, then answers
    /// each, as [`QuotientFilter`](crate::quotient::QuotientFilter) does.
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        self.table.contains_grouped(
            hashes,
            out,
            |h| self.split(h),
            |x, key| self.table.is_occupied(x) && self.kernel.contains_prefix(&self.table, x, key),
        );
    }

    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        self.table.prefetch(self.split(hash).0);
    }

    fn size_in_bytes(&self) -> usize {
        self.table.size_in_bytes()
    }

    fn num_keys(&self) -> usize {
        self.keys
    }

    /// `1 − e^(−λ)`, `λ` the expected number of entries an absent key
    /// matches: the sum over entries of `2^−length`, over `2^q`.
    fn expected_fpr(&self) -> f64 {
        -libm::expm1(-super::grow::expected_matches(
            &self.lengths,
            self.table.quotients(),
        ))
    }

    fn kind(&self) -> FilterKind {
        FilterKind::ExpandingQuotientFilter
    }

    fn to_bytes(&self) -> alloc::vec::Vec<u8> {
        self.encode()
    }
}

impl Insert for ExpandingQuotientFilter {
    /// Inserts one more copy of the key, doubling the table first when it
    /// is full. [`Error::Full`] (nothing changed) at the
    /// [`max_keys`](ExpandingOptions::max_keys) cap, or when the table may
    /// not grow (past `2^40` quotients).
    fn insert_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        if self.max_keys.is_some_and(|m| self.keys >= m) {
            return Err(Error::Full);
        }
        if self.table.len() >= self.capacity() {
            self.expand()?;
        }
        let length = loop {
            let (x, key) = self.split(hash);
            let length = self.fingerprint_bits();
            let v = fingerprint::entry(key, self.table.width(), length);
            match self.kernel.insert(&mut self.table, x, v) {
                Ok(()) => break length,
                // A run near the end of the table passed its last slot (a
                // key repeated hundreds of times): double and try again.
                Err(Error::Full) => self.expand()?,
                Err(e) => return Err(e),
            }
        };
        self.lengths[length as usize] += 1;
        self.keys += 1;
        Ok(())
    }
}

impl Remove for ExpandingQuotientFilter {
    /// Removes the longest fingerprint that matches the key. When only the
    /// quotient's void entry matches, it stays (other copies of the key,
    /// or other keys, may be all it stands for now) and only the key count
    /// falls. [`Error::NotPresent`] (nothing changed) if nothing matches.
    fn remove_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        let (x, key) = self.split(hash);
        match self.kernel.remove_longest(&mut self.table, x, key) {
            Some(v) => self.lengths[fingerprint::length(v, self.table.width()) as usize] -= 1,
            None if self.table.is_occupied(x) && self.kernel.contains_prefix(&self.table, x, key) => {}
            None => return Err(Error::NotPresent),
        }
        self.keys = self.keys.saturating_sub(1);
        Ok(())
    }
}
