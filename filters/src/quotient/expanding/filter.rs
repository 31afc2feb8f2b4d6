//! [`ExpandingQuotientFilter`]: a quotient filter that doubles when full,
//! keeping its FPR within a bound at every size.

use super::fingerprint;
use super::grow::OneVoidPerRun;
use super::growing::{planned_horizon, GrowingTable};
use super::schedule::{Schedule, MAX_LENGTH};
use crate::error::invalid;
use crate::quotient::filter::quotient_bits_for;
use crate::quotient::table::Table;
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
/// count takes `r + 2.125` with `r = ⌈log2(α/ε)⌉`: 7 at its higher loads,
/// 6 at its lower ones. So 1.44× or 1.62× the space for not knowing the
/// count (measured grown from 1,000 keys at each power of ten to 10^8:
/// 1.61, 1.61, 1.44, 1.62, 1.62, 1.44; `growth_report` in `amq-bench`).
/// A rewrite briefly holds the old and the new table.
///
/// **Deletes and counts.** Every copy of a key has its own entry, through
/// every expansion. [`remove`](Remove::remove) takes away the longest
/// fingerprint that matches the key: any key whose entry that is also
/// matches the key's own, shorter or equal entry, so no inserted key loses
/// its last match. A key inserted `k` times counts `k` (or more), and `k`
/// removals take `k` entries. An entry whose fingerprint ran out (void) was
/// copied into both halves of its quotient; the copy its key did not go to
/// stays after the key is removed (it costs FPR, not correctness), until
/// the last key's removal empties the filter. Remove only keys that were
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpandingQuotientFilter {
    /// The table, its schedule and counts (shared with the Memento range
    /// filter, which keeps payload bits under each code; none here).
    pub(super) g: GrowingTable,
}

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
        let q = quotient_bits_for(options.initial_keys)?;
        let horizon = planned_horizon(1 << q, options.horizon, options.max_keys)?;
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
        Ok(ExpandingQuotientFilter {
            g: GrowingTable::empty(1 << q, schedule, 0, max_keys)?,
        })
    }

    /// A filter around a decoded table and its void copies, its
    /// fingerprint lengths counted.
    pub(super) fn from_parts(
        table: Table,
        copies: impl IntoIterator<Item = ((usize, u64), u64)>,
        schedule: Schedule,
        expansions: u32,
        keys: usize,
        max_keys: Option<usize>,
    ) -> Result<Self, &'static str> {
        Ok(ExpandingQuotientFilter {
            g: GrowingTable::from_parts(table, copies, schedule, 0, expansions, keys, max_keys)?,
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
        self.g.expansions
    }

    /// `q`: the table has `2^q` quotients now.
    pub fn quotient_bits(&self) -> u32 {
        self.g.table.quotient_bits()
    }

    /// Fingerprint bits of the entries inserted now (older entries have
    /// fewer: one less per expansion since theirs).
    pub fn fingerprint_bits(&self) -> u32 {
        self.g.fingerprint_bits()
    }

    /// Entries the table holds before the next expansion: [`MAX_LOAD`](crate::quotient::MAX_LOAD) `· 2^q`.
    pub fn capacity(&self) -> usize {
        self.g.capacity()
    }

    /// The cap set in [`ExpandingOptions::max_keys`], if any.
    pub fn max_keys(&self) -> Option<usize> {
        self.g.max_keys
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
        self.g.schedule.fpr_bound()
    }

    /// The quotient and the `w` key bits after it.
    #[inline(always)]
    fn split(&self, hash: KeyHash) -> (usize, u64) {
        self.g.split(hash.get())
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
        match self.g.table.run(x) {
            Some(run) => {
                let entries = run
                    .filter(|&s| fingerprint::matches(self.g.table.value(s), key))
                    .count();
                // A void entry matches every key of its quotient, and so
                // do the copies it stands for.
                entries.saturating_add(usize::try_from(self.g.void_copies(x, 0)).unwrap_or(usize::MAX))
            }
            None => 0,
        }
    }

    /// [`count_hash`](Self::count_hash) of the key's hash.
    pub fn count(&self, key: &[u8]) -> usize {
        self.count_hash(crate::hash_key(key))
    }

    /// A filter holding the keys of both (every copy: counts add up): the
    /// one with fewer quotients expanded to the other's, both doubled
    /// until the sum of their entries fits, then the two tables merged in
    /// one ordered pass. [`Error::Full`] if the sum passes the cap or the
    /// table may not grow that far. Both must come from the
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
        if self.g.schedule != other.g.schedule {
            return Err(Error::Incompatible);
        }
        let keys = self.g.keys.checked_add(other.g.keys).ok_or(Error::Full)?;
        if self.g.max_keys.is_some_and(|m| keys > m) {
            return Err(Error::Full);
        }
        let (mut a, mut b) = (self.clone(), other.clone());
        while a.quotient_bits() < b.quotient_bits() {
            a.g.expand()?;
        }
        while b.quotient_bits() < a.quotient_bits() {
            b.g.expand()?;
        }
        // Sized for the sum: both doubled until their entries fit one
        // table's capacity (and again if the merged runs pass its last slot).
        let (table, copies) = loop {
            if a.g.table.len() + b.g.table.len() <= a.capacity() {
                let width = self.g.schedule.length(a.g.expansions.max(b.g.expansions)) + 1;
                let both = crate::quotient::filter::Merge {
                    a: super::grow::widened(&a.g.table, 0, width).peekable(),
                    b: super::grow::widened(&b.g.table, 0, width).peekable(),
                };
                let mut entries = OneVoidPerRun::new(both, 0, width, &a.g.copies, &b.g.copies);
                match Table::from_sorted(a.quotient_bits(), width, &mut entries) {
                    Err(Error::Full) => {}
                    built => break (built?, entries.copies),
                }
            }
            a.g.expand()?;
            b.g.expand()?;
        };
        let expansions = a.g.expansions.max(b.g.expansions);
        let g = GrowingTable::from_parts(
            table,
            copies,
            self.g.schedule,
            0,
            expansions,
            keys,
            self.g.max_keys,
        )
        .map_err(|_| Error::Incompatible)?;
        Ok(ExpandingQuotientFilter { g })
    }
}

impl Filter for ExpandingQuotientFilter {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        let (x, key) = self.split(hash);
        self.g.table.is_occupied(x) && self.g.kernel.contains_prefix(&self.g.table, x, key)
    }

    /// Loads the block of every key of a group of 32 first, then answers
    /// each, as [`QuotientFilter`](crate::quotient::QuotientFilter) does.
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        self.g.table.contains_grouped(
            hashes,
            out,
            |h| self.split(h),
            |x, key| self.g.table.is_occupied(x) && self.g.kernel.contains_prefix(&self.g.table, x, key),
        );
    }

    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        self.g.table.prefetch(self.split(hash).0);
    }

    fn size_in_bytes(&self) -> usize {
        self.g.table.size_in_bytes()
    }

    fn num_keys(&self) -> usize {
        self.g.keys
    }

    /// `1 − e^(−λ)`, `λ` the expected number of entries an absent key
    /// matches: the sum over entries of `2^−length`, over `2^q`.
    fn expected_fpr(&self) -> f64 {
        -libm::expm1(-self.g.expected_matches())
    }

    fn kind(&self) -> FilterKind {
        FilterKind::ExpandingQuotientFilter
    }

    fn to_bytes(&self) -> alloc::vec::Vec<u8> {
        self.encode()
    }
}

impl ExpandingQuotientFilter {
    /// Inserts one more copy of the key with this hash and says whether it
    /// was (probably) there already: a query of its run, then the insert
    /// into the same run (in cache). Errors as [`insert_hash`](Insert::insert_hash)
    /// ([`Error::Full`]: nothing changed).
    ///
    /// ```
    /// use amq::quotient::{ExpandingOptions, ExpandingQuotientFilter};
    /// use amq::hash_u64;
    /// let mut seen = ExpandingQuotientFilter::new(ExpandingOptions::new(0.01))?;
    /// let ids = [7u64, 8, 7, 9];
    /// let mut new = Vec::new();
    /// for id in ids {
    ///     if !seen.check_and_insert_hash(hash_u64(id))? {
    ///         new.push(id);
    ///     }
    /// }
    /// assert_eq!(new, [7, 8, 9]);
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "check_and_set", alias = "test_and_set")]
    pub fn check_and_insert_hash(&mut self, hash: KeyHash) -> Result<bool, Error> {
        let was = self.contains_hash(hash);
        self.insert_hash(hash)?;
        Ok(was)
    }

    /// [`check_and_insert_hash`](Self::check_and_insert_hash) of `key`,
    /// hashed once ([`hash_key`](crate::hash_key)).
    #[doc(alias = "check_and_set", alias = "test_and_set")]
    pub fn check_and_insert(&mut self, key: &[u8]) -> Result<bool, Error> {
        self.check_and_insert_hash(crate::hash_key(key))
    }
}

impl Insert for ExpandingQuotientFilter {
    /// Inserts one more copy of the key, doubling the table first when it
    /// is full. [`Error::Full`] (nothing changed) at the
    /// [`max_keys`](ExpandingOptions::max_keys) cap, or when the table may
    /// not grow (past `2^40` quotients).
    fn insert_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        self.g.insert(hash.get(), 0)
    }
}

impl Remove for ExpandingQuotientFilter {
    /// Removes the longest fingerprint that matches the key, a void entry
    /// if nothing longer does; removing the last key empties the filter.
    /// [`Error::NotPresent`] (nothing changed) if nothing matches.
    fn remove_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        let (x, key) = self.split(hash);
        let kernel = self.g.kernel;
        self.g
            .remove_copy(x, key, 0, |table| kernel.remove_longest(table, x, key))
    }
}
