//! [`QuotientFilter`]: the rank-and-select quotient filter over a key hash,
//! with inserts, deletes, counts, merges and a bulk build.

use alloc::vec::Vec;

use super::kernel::Kernel;
use super::table::{Table, MAX_QUOTIENT_BITS};
use crate::error::invalid;
use crate::sizing::{check_keys, FilterSizing};
use crate::{Error, Filter, FilterKind, Insert, KeyHash, Remove};

/// The most a table is filled: 95% of its `2^q` quotients, the load the
/// counting quotient filter is run at (past it clusters, and with them
/// every operation, grow quickly).
///
/// ```
/// use amq::quotient::{QuotientFilter, MAX_LOAD};
/// let f = QuotientFilter::with_bits(12, 8)?;
/// assert_eq!(f.capacity(), (MAX_LOAD * 4096.0) as usize);
/// # Ok::<(), amq::Error>(())
/// ```
pub const MAX_LOAD: f64 = 0.95;

/// Metadata bits per slot: the occupied and run-end bits, and an 8-bit
/// offset per 64 slots.
pub(crate) const METADATA_BITS: f64 = 2.125;

/// A quotient filter (Bender et al., "Don't Thrash: How to Cache Your Hash
/// on Flash", VLDB 2012; the rank-and-select layout of Pandey et al., "A
/// General-Purpose Counting Filter: Making Every Bit Count", SIGMOD 2017).
///
/// A key's hash splits into a quotient, its top `q` bits, and a remainder,
/// the next `r`; the filter stores the remainder in a table of `2^q`
/// slots, at the quotient's slot or just after it, in quotient order (see
/// `quotient/table/mod.rs`). A query reads the run of remainders stored for
/// its quotient, usually one or two cache lines. Unlike the Bloom family
/// it deletes, and unlike the cuckoo filter it keeps its entries in hash
/// order, so two filters merge in one pass and the table can be rebuilt at
/// twice the size from a scan.
///
/// It is a multiset: a key inserted `k` times is held `k` times,
/// [`count_hash`](QuotientFilter::count_hash) says `k` (or more, when other
/// keys share its quotient and remainder), and each
/// [`remove`](Remove::remove) takes one copy away. Removing a key that was
/// never inserted but matches another key's entry removes that entry (a
/// false negative for the other key), as in every filter that deletes:
/// remove only keys that were inserted.
///
/// **FPR.** An absent key is a false positive when one of the entries of its
/// quotient has its remainder: with a load of `α = n / 2^q` keys per
/// quotient, `1 − e^(−α·2^−r)` ([`expected_fpr`](Filter::expected_fpr)),
/// about `α·2^−r`. A table takes at most [`MAX_LOAD`] `· 2^q` keys; past
/// that, inserts return [`Error::Full`] and change nothing.
///
/// ```
/// use amq::quotient::QuotientFilter;
/// use amq::{Filter, FilterSizing, Insert, Remove};
/// let mut f = QuotientFilter::new(10_000, FilterSizing::Fpr(0.01))?;
/// f.insert(b"apple")?;
/// f.insert(b"apple")?;
/// assert!(f.contains(b"apple"));
/// assert_eq!(f.count(b"apple"), 2);
/// f.remove(b"apple")?;
/// assert_eq!(f.count(b"apple"), 1);
/// assert!(f.expected_fpr() < 0.01);
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct QuotientFilter {
    pub(super) table: Table,
    /// [`capacity`](QuotientFilter::capacity), kept: every insert checks it.
    capacity: usize,
    /// How queries run on this CPU (`kernel.rs`): not part of what the
    /// filter holds, so equality ignores it.
    kernel: Kernel,
}

impl PartialEq for QuotientFilter {
    fn eq(&self, other: &Self) -> bool {
        self.table == other.table
    }
}

impl Eq for QuotientFilter {}

impl QuotientFilter {
    /// A filter for `expected_keys` keys: `2^q` quotients with `q` the
    /// smallest that keeps `expected_keys` within [`MAX_LOAD`], and
    /// remainders wide enough for the sizing at that many keys. For
    /// [`FilterSizing::Fpr`]`(ε)`, `r = ⌈log2(α/ε)⌉` with `α` the load at
    /// `expected_keys`; for [`FilterSizing::BitsPerKey`]`(b)`, the widest
    /// remainder whose table (remainders and 2.125 metadata bits per slot)
    /// costs at most `b` bits per expected key.
    ///
    /// Errors: [`Error::InvalidParameter`] for no keys, a sizing outside its
    /// domain, or one that leaves no remainder bit (or needs more than the
    /// hash's `64 − q`); [`Error::TooLarge`] past `2^40` quotients.
    ///
    /// ```
    /// use amq::quotient::QuotientFilter;
    /// use amq::FilterSizing;
    /// let f = QuotientFilter::new(1_000_000, FilterSizing::Fpr(0.01))?;
    /// assert_eq!((f.quotient_bits(), f.remainder_bits()), (21, 6));
    /// let g = QuotientFilter::new(1_000_000, FilterSizing::BitsPerKey(20.0))?;
    /// assert_eq!(g.remainder_bits(), 7);
    /// assert!(QuotientFilter::new(1_000, FilterSizing::BitsPerKey(2.0)).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    #[doc(alias = "with_capacity")]
    pub fn new(expected_keys: usize, sizing: FilterSizing) -> Result<Self, Error> {
        let (q, r) = bits_for(expected_keys, sizing)?;
        Self::with_bits(q, r)
    }

    /// An empty filter of `2^quotient_bits` quotients and `remainder_bits`
    /// bits per remainder (`quotient_bits + remainder_bits ≤ 64`, each
    /// remainder at least 1 bit).
    ///
    /// ```
    /// use amq::quotient::QuotientFilter;
    /// let f = QuotientFilter::with_bits(10, 8)?;
    /// assert_eq!(f.capacity(), 972);
    /// assert!(QuotientFilter::with_bits(60, 8).is_err());
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn with_bits(quotient_bits: u32, remainder_bits: u32) -> Result<Self, Error> {
        if quotient_bits > MAX_QUOTIENT_BITS {
            return Err(Error::TooLarge);
        }
        if remainder_bits == 0 || remainder_bits > 64 - quotient_bits {
            return Err(invalid("remainder_bits", "must be 1 to 64 − quotient bits"));
        }
        Ok(QuotientFilter::from_table(Table::new(
            quotient_bits,
            remainder_bits,
        )?))
    }

    /// A filter holding `hashes` (repeats held as often as they occur),
    /// sized by [`new`](Self::new) for `hashes.len()` keys, written in one
    /// pass over the sorted hashes instead of an insert each.
    ///
    /// ```
    /// use amq::quotient::QuotientFilter;
    /// use amq::{hash_u64, Filter, FilterSizing};
    /// let hashes: Vec<_> = (0..10_000u64).map(hash_u64).collect();
    /// let f = QuotientFilter::build(&hashes, FilterSizing::Fpr(0.01))?;
    /// assert!(hashes.iter().all(|&h| f.contains_hash(h)));
    /// assert_eq!(f.num_keys(), 10_000);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn build(hashes: &[KeyHash], sizing: FilterSizing) -> Result<Self, Error> {
        let empty = Self::new(hashes.len().max(1), sizing)?;
        let (q, r) = (empty.quotient_bits(), empty.remainder_bits());
        let mut split: Vec<(usize, u64)> = hashes.iter().map(|h| split(h.get(), q, r)).collect();
        split.sort_unstable();
        Ok(QuotientFilter::from_table(Table::from_sorted(q, r, split)?))
    }

    /// The filter over `table`, with the query kernel for this CPU.
    pub(super) fn from_table(table: Table) -> Self {
        QuotientFilter {
            capacity: capacity(table.quotient_bits()),
            table,
            kernel: Kernel::detect(),
        }
    }

    /// The query kernel this filter chose for the running CPU when it was
    /// made: `"bmi2"` where the CPU has BMI2 with a fast `pdep`, else
    /// `"popcnt"` where it has that instruction, else `"portable"`
    /// (`AMQ_KERNEL=portable` forces it; `crate::simd`). Every kernel
    /// answers the same.
    ///
    /// ```
    /// use amq::quotient::QuotientFilter;
    /// let f = QuotientFilter::with_bits(10, 8)?;
    /// assert!(["bmi2", "popcnt", "portable"].contains(&f.query_kernel()));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn query_kernel(&self) -> &'static str {
        self.kernel.name()
    }

    /// `q`: the filter has `2^q` quotients.
    pub fn quotient_bits(&self) -> u32 {
        self.table.quotient_bits()
    }

    /// `r`: bits of each remainder.
    pub fn remainder_bits(&self) -> u32 {
        self.table.width()
    }

    /// Keys the filter takes before [`Error::Full`]: [`MAX_LOAD`] `· 2^q`.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Keys held per quotient, `n / 2^q`.
    pub fn load_factor(&self) -> f64 {
        self.table.len() as f64 / (1u64 << self.quotient_bits()) as f64
    }

    #[inline(always)]
    fn split(&self, hash: KeyHash) -> (usize, u64) {
        split(hash.get(), self.quotient_bits(), self.remainder_bits())
    }

    /// How many entries match the key with this hash: the times it was
    /// inserted (less the times removed), plus those of other keys that
    /// share its quotient and remainder.
    ///
    /// ```
    /// use amq::quotient::QuotientFilter;
    /// use amq::{hash_key, FilterSizing, Insert};
    /// let mut f = QuotientFilter::new(100, FilterSizing::Fpr(0.001))?;
    /// for _ in 0..5 {
    ///     f.insert(b"k")?;
    /// }
    /// assert_eq!(f.count_hash(hash_key(b"k")), 5);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn count_hash(&self, hash: KeyHash) -> usize {
        let (x, v) = self.split(hash);
        match self.table.run(x) {
            Some(run) => run.filter(|&s| self.table.value(s) == v).count(),
            None => 0,
        }
    }

    /// [`count_hash`](Self::count_hash) of the key's hash.
    ///
    /// ```
    /// use amq::quotient::QuotientFilter;
    /// use amq::{FilterSizing, Insert};
    /// let mut f = QuotientFilter::new(100, FilterSizing::Fpr(0.001))?;
    /// f.insert(b"k")?;
    /// assert_eq!((f.count(b"k"), f.count(b"absent")), (1, 0));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn count(&self, key: &[u8]) -> usize {
        self.count_hash(crate::hash_key(key))
    }

    /// A filter holding the entries of both (a key in both is held as often
    /// as in the two together), written in one pass over the two tables in
    /// order. Both must have the same quotient and remainder bits
    /// ([`Error::InvalidParameter`] otherwise), and the sum must fit
    /// ([`Error::Full`] otherwise; neither filter changes).
    ///
    /// ```
    /// use amq::quotient::QuotientFilter;
    /// use amq::{Filter, FilterSizing, Insert};
    /// let (mut a, mut b) = (QuotientFilter::with_bits(12, 10)?, QuotientFilter::with_bits(12, 10)?);
    /// a.insert(b"x")?;
    /// b.insert(b"x")?;
    /// b.insert(b"y")?;
    /// let m = a.merge(&b)?;
    /// assert_eq!((m.count(b"x"), m.count(b"y"), m.num_keys()), (2, 1, 3));
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn merge(&self, other: &Self) -> Result<Self, Error> {
        let (q, r) = (self.quotient_bits(), self.remainder_bits());
        if (q, r) != (other.quotient_bits(), other.remainder_bits()) {
            return Err(invalid("other", "must have the same quotient and remainder bits"));
        }
        if self.table.len() + other.table.len() > self.capacity() {
            return Err(Error::Full);
        }
        let merged = Merge {
            a: self.table.entries().peekable(),
            b: other.table.entries().peekable(),
        };
        Ok(QuotientFilter::from_table(Table::from_sorted(q, r, merged)?))
    }
}

/// The top `q` bits of `hash` and the `r` after them.
#[inline(always)]
fn split(hash: u64, q: u32, r: u32) -> (usize, u64) {
    let quotient = hash.checked_shr(64 - q).unwrap_or(0) as usize;
    let remainder = (hash << q) >> (64 - r);
    (quotient, remainder)
}

/// The quotient and remainder bits [`QuotientFilter::new`] chooses.
pub(super) fn bits_for(expected_keys: usize, sizing: FilterSizing) -> Result<(u32, u32), Error> {
    let sizing = sizing.validate()?;
    check_keys(expected_keys)?;
    let q = quotient_bits_for(expected_keys)?;
    let load = expected_keys as f64 / (1u64 << q) as f64;
    let r = match sizing {
        FilterSizing::Fpr(fpr) => libm::ceil(libm::log2(load / fpr)).max(1.0),
        FilterSizing::BitsPerKey(b) => libm::floor(b * load - METADATA_BITS),
    };
    if r < 1.0 || r > f64::from(64 - q) {
        return Err(invalid(
            "sizing",
            "needs no remainder bit or more than the hash has",
        ));
    }
    Ok((q, r as u32))
}

/// `1 − e^(−α·2^−r)`: the FPR at load `α` with `r`-bit remainders.
pub(crate) fn fpr(load: f64, remainder_bits: u32) -> f64 {
    -libm::expm1(-load * libm::exp2(-f64::from(remainder_bits)))
}

/// [`MAX_LOAD`] `· 2^q`, rounded down, in integers (it is asked on every
/// insert).
#[inline(always)]
pub(crate) fn capacity(quotient_bits: u32) -> usize {
    let slots = 1u64 << quotient_bits;
    (slots - slots.div_ceil(20)) as usize
}

/// The smallest `q` with `expected_keys ≤ MAX_LOAD · 2^q`.
pub(crate) fn quotient_bits_for(expected_keys: usize) -> Result<u32, Error> {
    let mut q = 0;
    while capacity(q) < expected_keys {
        q += 1;
        if q > MAX_QUOTIENT_BITS {
            return Err(Error::TooLarge);
        }
    }
    Ok(q)
}

/// Two ordered entry streams merged into one.
pub(crate) struct Merge<A: Iterator<Item = (usize, u64)>, B: Iterator<Item = (usize, u64)>> {
    pub(crate) a: core::iter::Peekable<A>,
    pub(crate) b: core::iter::Peekable<B>,
}

impl<A: Iterator<Item = (usize, u64)>, B: Iterator<Item = (usize, u64)>> Iterator for Merge<A, B> {
    type Item = (usize, u64);
    fn next(&mut self) -> Option<(usize, u64)> {
        match (self.a.peek(), self.b.peek()) {
            (Some(x), Some(y)) if y < x => self.b.next(),
            (Some(_), _) => self.a.next(),
            (None, _) => self.b.next(),
        }
    }
}

impl Filter for QuotientFilter {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        let (x, v) = self.split(hash);
        // No test of the occupied bit here before the call, though most
        // absent keys stop at it: a caller's loop with that test inlined
        // (an LTO build) measured twice as slow on tables larger than the
        // caches, the misses of consecutive queries no longer overlapping.
        self.kernel.contains(&self.table, x, v)
    }

    /// Loads the block of every key of a group of 32 first (header and
    /// values), then answers each: the misses of a group overlap instead of
    /// queueing.
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        self.table.contains_grouped(
            hashes,
            out,
            |h| self.split(h),
            |x, v| self.kernel.contains(&self.table, x, v),
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
        self.table.len()
    }

    /// The FPR at the table's load: every entry counts, so a key inserted
    /// `k` times counts `k` times (its copies occupy slots, yet match an
    /// absent key no more often than one copy would): for a multiset this
    /// overstates the FPR of the distinct keys.
    fn expected_fpr(&self) -> f64 {
        fpr(self.load_factor(), self.remainder_bits())
    }

    fn kind(&self) -> FilterKind {
        FilterKind::QuotientFilter
    }

    fn to_bytes(&self) -> Vec<u8> {
        self.encode()
    }
}

impl QuotientFilter {
    /// Inserts one more copy of the key with this hash and says whether it
    /// was (probably) there already: a query of its run, then the insert
    /// into the same run (in cache). Errors as [`insert_hash`](Insert::insert_hash)
    /// ([`Error::Full`]: nothing changed).
    ///
    /// ```
    /// use amq::quotient::QuotientFilter;
    /// use amq::{hash_u64, FilterSizing};
    /// let mut seen = QuotientFilter::new(1_000, FilterSizing::Fpr(0.01))?;
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

impl Insert for QuotientFilter {
    /// Inserts one more copy of the key. [`Error::Full`] (nothing changed)
    /// once the filter holds [`capacity`](QuotientFilter::capacity) keys, or
    /// sooner when the run of a quotient near the end would pass the last
    /// slot (a key repeated hundreds of times there).
    // Out of line on purpose: inlined into a caller's loop of inserts (an
    // LTO build does that), it measured up to twice as slow on tables
    // larger than the caches, the misses of consecutive inserts no longer
    // overlapping; called, it is as fast as in a build without LTO.
    #[inline(never)]
    fn insert_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        if self.table.len() >= self.capacity() {
            return Err(Error::Full);
        }
        let (x, v) = self.split(hash);
        self.kernel.insert(&mut self.table, x, v)
    }

    /// The same entries as [`insert_hash`](Insert::insert_hash) on each in
    /// order, with the block of the key 16 places ahead prefetched before
    /// each insert, so that the cache misses of a batch
    /// overlap; stops at the first error (the keys before it are in, none
    /// after it).
    ///
    /// ```
    /// use amq::quotient::QuotientFilter;
    /// use amq::{hash_u64, FilterSizing, Insert, KeyHash};
    /// let hashes: Vec<KeyHash> = (0..10_000u64).map(hash_u64).collect();
    /// let mut batched = QuotientFilter::new(hashes.len(), FilterSizing::Fpr(0.01))?;
    /// batched.insert_hashes(&hashes)?;
    /// let mut one_by_one = QuotientFilter::new(hashes.len(), FilterSizing::Fpr(0.01))?;
    /// for &h in &hashes {
    ///     one_by_one.insert_hash(h)?;
    /// }
    /// assert_eq!(batched, one_by_one);
    /// # Ok::<(), amq::Error>(())
    /// ```
    fn insert_hashes(&mut self, hashes: &[KeyHash]) -> Result<(), Error> {
        for (i, &h) in hashes.iter().enumerate() {
            if let Some(&ahead) = hashes.get(i + INSERT_LOOKAHEAD) {
                self.table.prefetch(self.split(ahead).0);
            }
            self.insert_hash(h)?;
        }
        Ok(())
    }
}

/// How far ahead [`QuotientFilter::insert_hashes`] prefetches: enough
/// inserts to cover a miss to memory, few enough that the lines are still
/// in cache when their turn comes.
const INSERT_LOOKAHEAD: usize = 16;

impl Remove for QuotientFilter {
    /// Removes one copy of the key: [`Error::NotPresent`] (nothing changed)
    /// if no entry matches it.
    fn remove_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        let (x, v) = self.split(hash);
        match self.kernel.remove(&mut self.table, x, v) {
            true => Ok(()),
            false => Err(Error::NotPresent),
        }
    }
}
