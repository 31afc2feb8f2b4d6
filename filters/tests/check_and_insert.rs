//! `check_and_insert_hash` / `check_and_insert` of the Bloom kinds: one
//! insert that says whether the key was (probably) there already.
//!
//! Two checks for each kind. Exactly: the answer is `contains` before the
//! insert, and the filter after a stream of them is, byte for byte, the
//! filter `insert_hash` makes from the same stream. Statistically, against a
//! `HashSet` model: a key inserted before always answers `true`, and a
//! key's first insert answers `true` (a false "seen") about as often as the
//! kind's FPR formula says at the load of that moment, with fixed seeds.

mod common;

use std::collections::HashSet;

use amq::{
    hash_key, math, AtomicBlockedBloom, BlockedBloom, CountingBloom, Filter, FilterSizing, Insert, KeyHash,
    StandardBloom,
};

/// A Bloom kind under test: its checked insert, and its FPR formula for a
/// number of distinct keys.
trait Checked: Filter + Insert + Sized {
    const NAME: &'static str;
    fn sized(keys: usize, sizing: FilterSizing) -> Self;
    fn checked_hash(&mut self, hash: KeyHash) -> bool;
    fn checked_key(&mut self, key: &[u8]) -> bool;
    fn fpr_at(&self, distinct: u64) -> f64;
}

impl Checked for StandardBloom {
    const NAME: &'static str = "StandardBloom";
    fn sized(keys: usize, sizing: FilterSizing) -> Self {
        StandardBloom::new(keys, sizing).unwrap()
    }
    fn checked_hash(&mut self, hash: KeyHash) -> bool {
        self.check_and_insert_hash(hash)
    }
    fn checked_key(&mut self, key: &[u8]) -> bool {
        self.check_and_insert(key)
    }
    fn fpr_at(&self, distinct: u64) -> f64 {
        math::standard_bloom_fpr(self.num_bits(), self.num_probes(), distinct)
    }
}

impl Checked for BlockedBloom {
    const NAME: &'static str = "BlockedBloom";
    fn sized(keys: usize, sizing: FilterSizing) -> Self {
        BlockedBloom::new(keys, sizing).unwrap()
    }
    fn checked_hash(&mut self, hash: KeyHash) -> bool {
        self.check_and_insert_hash(hash)
    }
    fn checked_key(&mut self, key: &[u8]) -> bool {
        self.check_and_insert(key)
    }
    fn fpr_at(&self, distinct: u64) -> f64 {
        let bits = self.num_blocks() as u64 * 512;
        math::blocked_bloom_fpr(bits, 512, self.num_probes(), distinct)
    }
}

impl Checked for AtomicBlockedBloom {
    const NAME: &'static str = "AtomicBlockedBloom";
    fn sized(keys: usize, sizing: FilterSizing) -> Self {
        AtomicBlockedBloom::new(keys, sizing).unwrap()
    }
    fn checked_hash(&mut self, hash: KeyHash) -> bool {
        // Through `&self`, as concurrent callers do.
        AtomicBlockedBloom::check_and_insert_hash(self, hash)
    }
    fn checked_key(&mut self, key: &[u8]) -> bool {
        AtomicBlockedBloom::check_and_insert(self, key)
    }
    fn fpr_at(&self, distinct: u64) -> f64 {
        let bits = self.size_in_bytes() as u64 * 8;
        math::blocked_bloom_fpr(bits, 512, self.num_probes(), distinct)
    }
}

impl Checked for CountingBloom {
    const NAME: &'static str = "CountingBloom";
    fn sized(keys: usize, sizing: FilterSizing) -> Self {
        CountingBloom::new(keys, sizing).unwrap()
    }
    fn checked_hash(&mut self, hash: KeyHash) -> bool {
        self.check_and_insert_hash(hash)
    }
    fn checked_key(&mut self, key: &[u8]) -> bool {
        self.check_and_insert(key)
    }
    fn fpr_at(&self, distinct: u64) -> f64 {
        math::standard_bloom_fpr(self.num_counters(), self.num_probes(), distinct)
    }
}

/// Operation `i` of a stream over `universe` keys: key `remix(i) % universe`,
/// so keys repeat (about `ops / universe` times each) in no order.
fn key_of(i: u64, seed: u64, universe: u64) -> u64 {
    amq::hash::remix(i, seed) % universe
}

/// The answer is `contains` before the call, and the filter afterwards is
/// the one `insert_hash` / `insert` make: over a stream with repeats that
/// fills the filter to three times its design load (so every answer occurs
/// often, false positives included).
fn equals_query_then_insert<F: Checked>() {
    const KEYS: usize = 2_000;
    let sizing = FilterSizing::Fpr(0.01);
    let (mut checked, mut plain) = (F::sized(KEYS, sizing), F::sized(KEYS, sizing));
    let (mut seen, mut fresh) = (0, 0);
    for i in 0..4 * KEYS as u64 {
        let key = key_of(i, 11, 3 * KEYS as u64);
        let by_bytes = i % 2 == 0;
        let bytes = format!("key-{key}");
        let hash = if by_bytes {
            hash_key(bytes.as_bytes())
        } else {
            amq::hash_u64(key)
        };
        let before = plain.contains_hash(hash);
        let answer = if by_bytes {
            plain.insert(bytes.as_bytes()).unwrap();
            checked.checked_key(bytes.as_bytes())
        } else {
            plain.insert_hash(hash).unwrap();
            checked.checked_hash(hash)
        };
        assert_eq!(answer, before, "{}: op {i}, key {key}", F::NAME);
        if answer {
            seen += 1;
        } else {
            fresh += 1;
        }
    }
    assert!(
        seen > 1_000 && fresh > 1_000,
        "{}: {seen} seen, {fresh} fresh",
        F::NAME
    );
    assert_eq!(checked.num_keys(), 4 * KEYS, "{}", F::NAME);
    assert!(
        checked.to_bytes() == plain.to_bytes(),
        "{}: the filters differ",
        F::NAME
    );
}

/// Against a `HashSet`: a repeat is always `true`; a first insert is `true`
/// about as often as the FPR formula at that moment's load predicts.
///
/// About 98,600 distinct keys among 250,000 operations into a filter sized
/// for 100,000 at 1%. The expected number of false "seen" answers is
/// `λ = Σ fpr(distinct so far)` over the first inserts, 150 to 175; the
/// count is a sum of independent-enough Bernoulli trials, so its standard
/// deviation is at most `sqrt(λ)`. The bound allows five of them plus 5% of
/// `λ` for the formula (the blocked formula is within about 2% of
/// measurement): with fixed seeds a failure is a bug, not bad luck.
fn matches_a_hash_set<F: Checked>() {
    const KEYS: u64 = 100_000;
    const OPS: u64 = 250_000;
    let mut f = F::sized(KEYS as usize, FilterSizing::Fpr(0.01));
    let mut model: HashSet<u64> = HashSet::new();
    let (mut expected, mut false_seen, mut repeats) = (0.0, 0u64, 0u64);
    // Keys drawn from a universe a little larger than KEYS, so the stream
    // reaches about KEYS distinct keys with many repeats along the way.
    let universe = KEYS * 11 / 10;
    for i in 0..OPS {
        let key = key_of(i, 0x5eed, universe);
        let answer = f.checked_hash(amq::hash_u64(key));
        if model.contains(&key) {
            assert!(
                answer,
                "{}: op {i}: key {key} inserted before, answered new",
                F::NAME
            );
            repeats += 1;
        } else {
            expected += f.fpr_at(model.len() as u64);
            false_seen += answer as u64;
            model.insert(key);
        }
    }
    let distinct = model.len() as u64;
    assert!(
        (80_000..=KEYS).contains(&distinct),
        "{}: {distinct} distinct",
        F::NAME
    );
    assert!(repeats > 100_000, "{}: {repeats} repeats", F::NAME);
    let slack = 5.0 * expected.sqrt() + 0.05 * expected;
    assert!(
        (false_seen as f64 - expected).abs() <= slack,
        "{}: {false_seen} first inserts answered seen, {expected:.1} expected (± {slack:.1})",
        F::NAME
    );
}

#[test]
fn standard_bloom_equals_query_then_insert() {
    equals_query_then_insert::<StandardBloom>();
}

#[test]
fn blocked_bloom_equals_query_then_insert() {
    equals_query_then_insert::<BlockedBloom>();
}

#[test]
fn atomic_blocked_bloom_equals_query_then_insert() {
    equals_query_then_insert::<AtomicBlockedBloom>();
}

#[test]
fn counting_bloom_equals_query_then_insert() {
    equals_query_then_insert::<CountingBloom>();
}

#[test]
fn standard_bloom_matches_a_hash_set() {
    matches_a_hash_set::<StandardBloom>();
}

#[test]
fn blocked_bloom_matches_a_hash_set() {
    matches_a_hash_set::<BlockedBloom>();
}

#[test]
fn atomic_blocked_bloom_matches_a_hash_set() {
    matches_a_hash_set::<AtomicBlockedBloom>();
}

#[test]
fn counting_bloom_matches_a_hash_set() {
    matches_a_hash_set::<CountingBloom>();
}

/// The checked insert of the blocked filter sets the same bits as the
/// filter's own (SIMD where the CPU has it) insert, at every probe count.
#[test]
fn blocked_checked_insert_sets_the_kernels_bits_at_every_probe_count() {
    for k in 1..=24 {
        let mut checked = BlockedBloom::with_shape(64, k).unwrap();
        let mut plain = checked.clone();
        for i in 0..3_000u64 {
            let h = common::mixed(i, u64::from(k));
            checked.check_and_insert_hash(h);
            plain.insert_hash(h).unwrap();
        }
        assert_eq!(checked, plain, "k {k}");
    }
}

/// After `remove`, a counting filter's key is new again.
#[test]
fn counting_bloom_forgets_removed_keys() {
    use amq::Remove;
    let mut f = CountingBloom::new(1_000, FilterSizing::Fpr(0.001)).unwrap();
    let h = amq::hash_u64(42);
    assert!(!f.check_and_insert_hash(h));
    assert!(f.check_and_insert_hash(h));
    f.remove_hash(h).unwrap();
    assert!(f.check_and_insert_hash(h), "one copy is still in");
    f.remove_hash(h).unwrap();
    f.remove_hash(h).unwrap();
    assert!(!f.check_and_insert_hash(h));
}
