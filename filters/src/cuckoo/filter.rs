//! [`CuckooFilter`]: the filter itself (sizing, insert with kicks and stash,
//! query, removal). The design is told in the [module docs](super).

use core::hint::select_unpredictable;

use super::table::{BucketTable, Lanes, SLOTS};
use super::{cuckoo_fpr, fingerprint_bits_for_sizing, shape, MAX_KICKS};
use crate::hash::reduce32;
use crate::{Error, Filter, FilterKind, FilterSizing, Insert, KeyHash, Remove};

/// Batch size of [`Filter::contains_hashes`]: enough outstanding prefetches to
/// cover memory latency, small enough to live on the stack.
const BATCH: usize = 32;

/// A cuckoo filter with 4-slot buckets and 8-, 12- or 16-bit fingerprints.
///
/// Supports insert, query and remove; a full table refuses new keys with
/// [`Error::Full`] but never forgets one it holds.
///
/// ```
/// use amq::{CuckooFilter, Filter, FilterSizing, Insert, Remove};
/// let n = 100_000;
/// let mut f = CuckooFilter::new(n, FilterSizing::Fpr(0.002)).unwrap();
/// assert_eq!(f.fingerprint_bits(), 12);
/// for i in 0..n as u64 {
///     f.insert(&i.to_le_bytes()).unwrap();
/// }
/// assert!((0..n as u64).all(|i| f.contains(&i.to_le_bytes())));
/// // Filled to capacity (95% of the slots): 12 / 0.95 = 12.6 bits per key.
/// assert!((f.bits_per_key() - 12.0 / 0.95).abs() < 0.01);
/// // Expected FPR 1 - (1 - 1/4095)^(8 · 0.95) = 0.185%.
/// assert!((f.expected_fpr() - 0.00185).abs() < 0.00001);
/// let fp = (n as u64..n as u64 + 1_000_000)
///     .filter(|i| f.contains(&i.to_le_bytes()))
///     .count();
/// assert!((1_600..2_150).contains(&fp), "{fp} false positives in 1M");
///
/// f.remove(&7u64.to_le_bytes()).unwrap();
/// assert_eq!(f.num_keys(), n - 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuckooFilter {
    pub(super) table: BucketTable,
    pub(super) stash: Stash,
    pub(super) num_keys: u64,
}

/// The one-entry victim stash: a fingerprint that found no slot, and one of
/// its two buckets. Fingerprint 0 means empty (a real one is never 0), so an
/// empty stash matches no query without a separate flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Stash {
    pub(super) fingerprint: u64,
    pub(super) bucket: u32,
}

impl Stash {
    pub(super) const EMPTY: Stash = Stash {
        fingerprint: 0,
        bucket: 0,
    };

    #[inline(always)]
    pub(super) fn is_occupied(&self) -> bool {
        self.fingerprint != 0
    }

    /// Whether the stash holds a copy of the key at `loc`: the same
    /// fingerprint in the same bucket pair. (`{b, alt(b)} = {i₁, i₂}` exactly
    /// when `b` is one of them, since `alt` is an involution.)
    #[inline(always)]
    fn holds(&self, loc: &Location) -> bool {
        self.fingerprint == loc.fingerprint && (self.bucket == loc.primary || self.bucket == loc.alternate)
    }
}

/// Where a key lives: its fingerprint and its two candidate buckets.
#[derive(Debug, Clone, Copy, Default)]
struct Location {
    fingerprint: u64,
    primary: u32,
    alternate: u32,
}

/// Runs `$body` with `$l` bound to the table's [`Lanes`] as a compile-time
/// constant: one copy of the (inlined) hot path per fingerprint width, with
/// masks and shifts as immediates. Only dispatch, no algorithm, lives here.
macro_rules! with_lanes {
    ($self:expr, $l:ident => $body:expr) => {
        match $self.table.lanes().bits() {
            8 => {
                const LANES: Lanes = Lanes::new(8);
                let $l = LANES;
                $body
            }
            12 => {
                const LANES: Lanes = Lanes::new(12);
                let $l = LANES;
                $body
            }
            _ => {
                const LANES: Lanes = Lanes::new(16);
                let $l = LANES;
                $body
            }
        }
    };
}

/// Xorshift64 step (Marsaglia 2003): the kick sequence's slot choices.
#[inline(always)]
fn xorshift(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

impl CuckooFilter {
    /// An empty filter for `expected_keys` keys.
    ///
    /// [`FilterSizing::Fpr`]: the smallest fingerprint width `f` of 8, 12,
    /// 16 whose FPR at 95% load ([`cuckoo_fpr`]) is at most the target
    /// (2.94%, 0.185%, 0.0116%). [`FilterSizing::BitsPerKey`]: the widest
    /// whose cost at that load (`f / 0.95` bits per key) fits, or 8 if none
    /// does. The table is sized as [`with_fingerprint_bits`](Self::with_fingerprint_bits)
    /// sizes it.
    ///
    /// Errors: `expected_keys` 0, an FPR not in `(0, 1)` or below what 16-bit
    /// fingerprints reach ([`Error::InvalidParameter`]); a table over `2^32`
    /// buckets ([`Error::TooLarge`]).
    ///
    /// ```
    /// use amq::{CuckooFilter, Error, FilterSizing};
    /// assert_eq!(CuckooFilter::new(1000, FilterSizing::Fpr(0.03)).unwrap().fingerprint_bits(), 8);
    /// assert_eq!(CuckooFilter::new(1000, FilterSizing::Fpr(0.01)).unwrap().fingerprint_bits(), 12);
    /// assert_eq!(CuckooFilter::new(1000, FilterSizing::Fpr(0.001)).unwrap().fingerprint_bits(), 16);
    /// assert!(matches!(CuckooFilter::new(1000, FilterSizing::Fpr(1e-6)), Err(Error::InvalidParameter { .. })));
    /// assert_eq!(CuckooFilter::new(1000, FilterSizing::BitsPerKey(13.0)).unwrap().fingerprint_bits(), 12);
    /// ```
    #[doc(alias = "with_capacity")]
    pub fn new(expected_keys: usize, sizing: FilterSizing) -> Result<Self, Error> {
        Self::with_fingerprint_bits(expected_keys, fingerprint_bits_for_sizing(sizing)?)
    }

    /// A filter for `expected_keys` keys with `bits`-bit fingerprints (8, 12
    /// or 16): `⌈expected_keys / (4 · 0.95)⌉` buckets, so with that many keys
    /// the table is 95%
    /// full and costs `bits / 0.95` bits per key.
    ///
    /// ```
    /// use amq::{CuckooFilter, Error, Filter};
    /// let f = CuckooFilter::with_fingerprint_bits(1_000_000, 16).unwrap();
    /// assert_eq!(f.num_buckets(), 263_158);
    /// // One 8-byte bucket each, and 8 bytes of read padding.
    /// assert_eq!(f.size_in_bytes(), 263_158 * 8 + 8);
    /// assert!(matches!(
    ///     CuckooFilter::with_fingerprint_bits(1000, 10),
    ///     Err(Error::InvalidParameter { .. })
    /// ));
    /// ```
    pub fn with_fingerprint_bits(expected_keys: usize, bits: u32) -> Result<Self, Error> {
        let (lanes, buckets) = shape(expected_keys, bits)?;
        Ok(CuckooFilter {
            table: BucketTable::new(lanes, buckets)?,
            stash: Stash::EMPTY,
            num_keys: 0,
        })
    }

    /// Fingerprint width `f` in bits.
    pub fn fingerprint_bits(&self) -> u32 {
        self.table.lanes().bits()
    }

    /// Number of buckets `m`.
    pub fn num_buckets(&self) -> u32 {
        self.table.num_buckets()
    }

    /// Number of slots, `4m` (not counting the stash).
    pub fn num_slots(&self) -> u64 {
        self.table.num_buckets() as u64 * SLOTS as u64
    }

    /// Keys held per slot, `num_keys / num_slots` (the stashed key counts).
    pub fn load_factor(&self) -> f64 {
        self.num_keys as f64 / self.num_slots() as f64
    }

    /// Whether the stash holds a fingerprint, that is, whether the table is
    /// full and [`insert`](Insert::insert) fails until a key is removed.
    pub fn is_full(&self) -> bool {
        self.stash.is_occupied()
    }

    /// The fingerprint and both buckets of a key hash.
    #[inline(always)]
    fn locate(&self, l: Lanes, hash: u64) -> Location {
        let fingerprint = reduce32(hash as u32, l.max_fingerprint() as u32) as u64 + 1;
        let primary = reduce32((hash >> 32) as u32, self.table.num_buckets());
        Location {
            fingerprint,
            primary,
            alternate: self.alternate(primary, fingerprint),
        }
    }

    /// The other bucket of `fingerprint` when it is in `bucket`:
    /// `(h(fp) - bucket) mod m`, an involution for every `m`.
    #[inline(always)]
    fn alternate(&self, bucket: u32, fingerprint: u64) -> u32 {
        let m = self.table.num_buckets();
        let offset = reduce32((fingerprint as u32).wrapping_mul(0x9E37_79B9), m);
        let (diff, borrow) = offset.overflowing_sub(bucket);
        if borrow {
            diff.wrapping_add(m)
        } else {
            diff
        }
    }

    /// Puts `fingerprint` into a free slot of `bucket`; false if it is full.
    #[inline(always)]
    fn try_place(&mut self, l: Lanes, bucket: u32, fingerprint: u64) -> bool {
        let value = self.table.bucket(l, bucket);
        let free = l.zero_lanes(value);
        if free == 0 {
            return false;
        }
        self.table
            .set_bucket(l, bucket, l.set(value, l.first_shift(free), fingerprint));
        true
    }

    /// Stores `fingerprint`, whose buckets `bucket` and its alternate are
    /// both full, by a walk of evictions. Always stores it: if the walk ends
    /// without a free slot, the last victim goes to the (empty) stash. `seed`
    /// drives the random slot choices.
    ///
    /// Each step first looks one move ahead: if any of the four fingerprints
    /// in `bucket` has room in its own other bucket, it moves there and
    /// `fingerprint` takes its slot. Only if none has room does a random one
    /// get evicted and the walk continue from its other bucket (known full).
    /// Looking ahead costs four bucket reads per step but shortens the walk
    /// near full load, which is where inserts spend their time, and finds
    /// room the plain random walk gives up on (measured in `docs/cuckoo.md`).
    ///
    /// Out of line and cold, reading the lanes from the table: the common
    /// insert never gets here, and then need not set up its arguments.
    #[cold]
    #[inline(never)]
    fn kick_in(&mut self, mut fingerprint: u64, mut bucket: u32, seed: u64) {
        debug_assert!(!self.stash.is_occupied());
        let l = self.table.lanes();
        let mut rng = seed | 1;
        for _ in 0..MAX_KICKS {
            let value = self.table.bucket(l, bucket);
            for lane in 0..SLOTS {
                let shift = l.lane_shift(lane);
                let resident = l.get(value, shift);
                // If `other == bucket` the bucket is full and this fails.
                let other = self.alternate(bucket, resident);
                if self.try_place(l, other, resident) {
                    self.table.set_bucket(l, bucket, l.set(value, shift, fingerprint));
                    return;
                }
            }
            rng = xorshift(rng);
            let shift = l.lane_shift((rng >> 62) as u32); // 0..4: SLOTS is 4
            let victim = l.get(value, shift);
            self.table.set_bucket(l, bucket, l.set(value, shift, fingerprint));
            fingerprint = victim;
            bucket = self.alternate(bucket, fingerprint);
        }
        self.stash = Stash { fingerprint, bucket };
    }

    /// Adds the key with this hash: see [`Insert::insert_hash`] for `CuckooFilter`.
    #[inline]
    fn put(&mut self, hash: u64) -> Result<(), Error> {
        if self.stash.is_occupied() {
            return Err(Error::Full);
        }
        with_lanes!(self, l => self.insert_with(l, hash))?;
        self.num_keys += 1;
        Ok(())
    }

    /// Places the key in the first of its buckets with a free slot.
    ///
    /// Both buckets are read before either is tested and the bucket is then
    /// picked without a branch (`select_unpredictable`, a conditional move):
    /// as the table fills, whether the first bucket has room is a coin flip
    /// the branch predictor loses, and a mispredicted branch behind a cache
    /// miss stalls the next inserts' loads too. See `docs/cuckoo.md`.
    #[inline(always)]
    fn insert_with(&mut self, l: Lanes, hash: u64) -> Result<(), Error> {
        let loc = self.locate(l, hash);
        let first = self.table.bucket(l, loc.primary);
        let second = self.table.bucket(l, loc.alternate);
        let free_first = l.zero_lanes(first);
        let (bucket, value, free) = select_unpredictable(
            free_first != 0,
            (loc.primary, first, free_first),
            (loc.alternate, second, l.zero_lanes(second)),
        );
        if free != 0 {
            let placed = l.set(value, l.first_shift(free), loc.fingerprint);
            self.table.set_bucket(l, bucket, placed);
            Ok(())
        } else {
            self.insert_full(l, &loc, first, second, hash)
        }
    }

    /// Both buckets are full: refuses the key if they hold only copies of its
    /// fingerprint, and otherwise evicts.
    #[cold]
    #[inline(never)]
    fn insert_full(
        &mut self,
        l: Lanes,
        loc: &Location,
        first: u64,
        second: u64,
        hash: u64,
    ) -> Result<(), Error> {
        let all = l.zero_lanes(0); // every lane's flag
        let copies_only = |bucket| l.matching_lanes(bucket, loc.fingerprint) == all;
        if copies_only(first) && copies_only(second) {
            return Err(Error::TooManyCopies);
        }
        let start = if hash & (1 << 31) == 0 {
            loc.primary
        } else {
            loc.alternate
        };
        self.kick_in(loc.fingerprint, start, hash);
        Ok(())
    }

    /// Whether the key with this hash may be in the set.
    #[inline]
    fn query(&self, hash: u64) -> bool {
        with_lanes!(self, l => self.probe(l, &self.locate(l, hash)))
    }

    /// Whether the key at `loc` may be in the set: both buckets are loaded
    /// before either is tested, so their cache misses overlap.
    #[inline(always)]
    fn probe(&self, l: Lanes, loc: &Location) -> bool {
        let first = self.table.bucket(l, loc.primary);
        let second = self.table.bucket(l, loc.alternate);
        let hits = l.matching_lanes(first, loc.fingerprint) | l.matching_lanes(second, loc.fingerprint);
        hits != 0 || self.stash.holds(loc)
    }

    /// How many copies of the key's fingerprint its two buckets and the
    /// stash hold: at least the number of times the key was inserted minus
    /// removed, more if other keys share its fingerprint and buckets.
    ///
    /// ```
    /// use amq::{CuckooFilter, Insert};
    /// let mut f = CuckooFilter::with_fingerprint_bits(1000, 16)?;
    /// let h = amq::hash_key(b"twice");
    /// f.insert_hash(h)?;
    /// f.insert_hash(h)?;
    /// assert_eq!(f.count_hash(h), 2);
    /// # Ok::<(), amq::Error>(())
    /// ```
    pub fn count_hash(&self, hash: KeyHash) -> usize {
        let l = self.table.lanes();
        let loc = self.locate(l, hash.get());
        let count = |bucket| {
            l.matching_lanes(self.table.bucket(l, bucket), loc.fingerprint)
                .count_ones() as usize
        };
        let mut total = count(loc.primary);
        if loc.alternate != loc.primary {
            total += count(loc.alternate);
        }
        total + self.stash.holds(&loc) as usize
    }

    /// Removes one copy of the key with this hash: see
    /// [`Remove::remove_hash`] for `CuckooFilter`.
    fn take(&mut self, hash: u64) -> Result<(), Error> {
        with_lanes!(self, l => self.remove_with(l, hash))?;
        self.num_keys -= 1;
        Ok(())
    }

    /// Takes one copy of the key's fingerprint out of the stash or, failing
    /// that, out of the first of its buckets that holds one. As in
    /// [`insert_with`](Self::insert_with), both buckets are read first and the
    /// bucket picked without a branch: which of the two holds a present key
    /// is a coin flip.
    #[inline(always)]
    fn remove_with(&mut self, l: Lanes, hash: u64) -> Result<(), Error> {
        let loc = self.locate(l, hash);
        if self.stash.holds(&loc) {
            self.stash = Stash::EMPTY;
            return Ok(());
        }
        let first = self.table.bucket(l, loc.primary);
        let second = self.table.bucket(l, loc.alternate);
        let in_first = l.matching_lanes(first, loc.fingerprint);
        let (bucket, value, found) = select_unpredictable(
            in_first != 0,
            (loc.primary, first, in_first),
            (loc.alternate, second, l.matching_lanes(second, loc.fingerprint)),
        );
        if found == 0 {
            return Err(Error::NotPresent);
        }
        self.table
            .set_bucket(l, bucket, l.set(value, l.first_shift(found), 0));
        if self.stash.is_occupied() {
            self.restore_stash();
        }
        Ok(())
    }

    /// After a slot was freed: moves the stashed fingerprint back into the
    /// table (if the kicks fail again, their last victim takes the stash, so
    /// nothing is lost either way).
    #[cold]
    #[inline(never)]
    fn restore_stash(&mut self) {
        let l = self.table.lanes();
        let Stash { fingerprint, bucket } = core::mem::replace(&mut self.stash, Stash::EMPTY);
        let other = self.alternate(bucket, fingerprint);
        if !self.try_place(l, bucket, fingerprint) && !self.try_place(l, other, fingerprint) {
            let seed = crate::hash::remix(fingerprint, bucket as u64);
            self.kick_in(fingerprint, bucket, seed);
        }
    }
}

impl Filter for CuckooFilter {
    #[inline]
    fn contains_hash(&self, hash: KeyHash) -> bool {
        self.query(hash.get())
    }

    #[inline]
    fn prefetch_hash(&self, hash: KeyHash) {
        with_lanes!(self, l => {
            let loc = self.locate(l, hash.get());
            self.table.prefetch_bucket(l, loc.primary);
            self.table.prefetch_bucket(l, loc.alternate);
        })
    }

    /// Locates and prefetches the buckets of a group of `BATCH` keys, then
    /// probes the group. (The rolling pipeline of the other kinds,
    /// `prefetch::pipelined`, pays only far beyond the caches and costs more
    /// below them, where the cuckoo query's arithmetic, not memory, sets the
    /// pace.)
    fn contains_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) {
        assert_eq!(hashes.len(), out.len(), "contains_hashes: length mismatch");
        let mut locs = [Location::default(); BATCH];
        for (hs, os) in hashes.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            with_lanes!(self, l => {
                for (loc, &h) in locs.iter_mut().zip(hs) {
                    *loc = self.locate(l, h.get());
                    self.table.prefetch_bucket(l, loc.primary);
                    self.table.prefetch_bucket(l, loc.alternate);
                }
                for (loc, o) in locs.iter().zip(os.iter_mut()) {
                    *o = self.probe(l, loc);
                }
            });
        }
    }

    /// The table's bytes, including the 8 zero bytes after it that let
    /// the last bucket be read with one 8-byte load.
    fn size_in_bytes(&self) -> usize {
        self.table.heap_bytes()
    }
    fn num_keys(&self) -> usize {
        self.num_keys as usize
    }
    fn expected_fpr(&self) -> f64 {
        cuckoo_fpr(self.fingerprint_bits(), self.load_factor())
    }
    fn kind(&self) -> FilterKind {
        FilterKind::CuckooFilter
    }
    fn to_bytes(&self) -> alloc::vec::Vec<u8> {
        self.encode()
    }
}

impl Insert for CuckooFilter {
    /// [`Error::Full`], with nothing changed, while the stash is occupied
    /// (see [`is_full`](CuckooFilter::is_full)). Otherwise the key is
    /// stored and will be found; if that needed the stash, the next insert
    /// fails.
    ///
    /// [`Error::TooManyCopies`], with nothing changed and the stash left
    /// free, when both of the key's buckets hold nothing but copies of its
    /// fingerprint (a key inserted `2b = 8` times, or 4 when its buckets
    /// coincide): no eviction can make room for another copy, and parking it
    /// in the stash would block every other key's insert.
    #[inline]
    fn insert_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        self.put(hash.get())
    }
}

/// [`Error::NotPresent`], with nothing changed, when neither bucket nor the
/// stash holds the key's fingerprint. Removing a key that was never
/// inserted but collides with one that was removes that one's fingerprint
/// (see the [module docs](super#removal)).
impl Remove for CuckooFilter {
    fn remove_hash(&mut self, hash: KeyHash) -> Result<(), Error> {
        self.take(hash.get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuckoo::DESIGN_LOAD;
    use crate::error::invalid;
    use crate::hash::remix;

    #[test]
    fn parameters_are_named_like_the_bloom_filters() {
        assert_eq!(
            CuckooFilter::with_fingerprint_bits(0, 8),
            Err(invalid("expected_keys", "must be at least 1"))
        );
        assert_eq!(
            CuckooFilter::new(0, FilterSizing::Fpr(0.01)),
            Err(invalid("expected_keys", "must be at least 1"))
        );
    }

    #[test]
    fn sizing_uses_the_design_load() {
        assert_eq!(DESIGN_LOAD, 0.95);
        assert_eq!(
            CuckooFilter::with_fingerprint_bits(380, 8).unwrap().num_buckets(),
            100
        );
        assert_eq!(
            CuckooFilter::with_fingerprint_bits(381, 8).unwrap().num_buckets(),
            101
        );
        assert_eq!(
            CuckooFilter::with_fingerprint_bits(1, 8).unwrap().num_buckets(),
            1
        );
    }

    #[test]
    fn alternate_is_an_involution_for_any_bucket_count() {
        for m in [1u32, 2, 3, 7, 100, 1 << 16, 1_000_003] {
            let f = CuckooFilter {
                table: BucketTable::new(Lanes::new(12), m).unwrap(),
                stash: Stash::EMPTY,
                num_keys: 0,
            };
            for i in 0..2000u64 {
                let loc = f.locate(f.table.lanes(), remix(i, 1));
                assert!(loc.primary < m && loc.alternate < m);
                assert_eq!(f.alternate(loc.alternate, loc.fingerprint), loc.primary);
                assert!((1..=4095).contains(&loc.fingerprint));
            }
        }
    }

    #[test]
    fn fingerprints_cover_every_nonzero_value() {
        let f = CuckooFilter::with_fingerprint_bits(100, 8).unwrap();
        let mut seen = [0u32; 256];
        for i in 0..100_000u64 {
            seen[f.locate(f.table.lanes(), remix(i, 2)).fingerprint as usize] += 1;
        }
        assert_eq!(seen[0], 0);
        // 100,000 / 255 = 392 per value; no value is doubled.
        assert!(seen[1..].iter().all(|&c| (300..500).contains(&c)), "{seen:?}");
    }

    #[test]
    fn stash_takes_the_victim_and_blocks_inserts() {
        // One bucket, four slots: the fifth key must go to the stash.
        let mut f = CuckooFilter::with_fingerprint_bits(1, 16).unwrap();
        assert_eq!(f.num_buckets(), 1);
        let keys: alloc::vec::Vec<u64> = (0..5).map(|i| remix(i, 3)).collect();
        for &k in &keys {
            f.put(k).unwrap();
        }
        assert!(f.is_full());
        assert!(keys.iter().all(|&k| f.query(k)));
        let before = f.clone();
        assert_eq!(f.put(remix(9, 3)), Err(Error::Full));
        assert_eq!(f, before);
        // Any removal frees a slot and the stashed fingerprint moves back.
        f.take(keys[0]).unwrap();
        assert!(!f.is_full());
        assert_eq!(f.num_keys, 4);
        assert_eq!(f.table.count_occupied(), 4);
        assert!(keys[1..].iter().all(|&k| f.query(k)));
    }

    /// A key inserted until its two buckets hold only its fingerprint is
    /// refused without taking the stash, so every other key still inserts.
    #[test]
    fn a_hot_duplicate_is_refused_without_blocking_the_table() {
        for bits in [8, 12, 16] {
            let mut f = CuckooFilter::with_fingerprint_bits(10_000, bits).unwrap();
            let hot = remix(1, 6);
            let loc = f.locate(f.table.lanes(), hot);
            let copies = if loc.primary == loc.alternate { 4 } else { 8 };
            for _ in 0..copies {
                f.put(hot).unwrap();
            }
            let before = f.clone();
            assert_eq!(f.put(hot), Err(Error::TooManyCopies));
            assert_eq!(f, before, "a refused insert changes nothing");
            assert!(!f.is_full());
            for i in 0..9_000u64 {
                f.put(remix(i, 7)).unwrap();
            }
            assert_eq!(f.count_hash(KeyHash::from_well_mixed(hot)), copies);
            for _ in 0..copies {
                f.take(hot).unwrap();
            }
            assert!((0..9_000u64).all(|i| f.query(remix(i, 7))));
        }
    }

    #[test]
    fn remove_of_an_absent_key_changes_nothing() {
        let mut f = CuckooFilter::with_fingerprint_bits(100, 16).unwrap();
        f.put(1).unwrap();
        let before = f.clone();
        assert_eq!(f.take(remix(5, 5)), Err(Error::NotPresent));
        assert_eq!(f, before);
    }
}
