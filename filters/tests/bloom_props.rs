//! Property tests for the Bloom family against a `HashSet` (or multiset)
//! model: no false negatives for any key count and any sizing, with keys given
//! as byte strings or as hashes; batch queries agree with single ones; a
//! counting filter survives any sequence of inserts and removals; a union
//! keeps every key of both filters.
//!
//! Every test uses a fixed proptest seed (`common::proptest_config`), so runs
//! are reproducible.

mod common;

use std::collections::{HashMap, HashSet};

use amq::{
    hash_key, AnyFilter, AtomicBlockedBloom, BlockedBloom, CountingBloom, Error, Filter, FilterKind,
    FilterSizing, Insert, KeyHash, Remove, StandardBloom,
};
use proptest::collection::vec;
use proptest::prelude::*;

/// How a filter is sized: by target FPR or by bits (for the counting
/// filter, counters: `FilterSizing::BitsPerKey(4 · c)`) per key.
#[derive(Debug, Clone, Copy)]
enum Sizing {
    Fpr(f64),
    BitsPerKey(f64),
}

/// Target FPRs from 1e-6 to 0.89 (log-uniform), or 0.05 to 64 bits per key:
/// from filters that are almost all ones to filters that are almost empty.
fn sizing() -> impl Strategy<Value = Sizing> {
    prop_oneof![
        (-6.0f64..-0.05).prop_map(|e| Sizing::Fpr(10f64.powf(e))),
        (0.05f64..64.0).prop_map(Sizing::BitsPerKey),
    ]
}

/// How many keys to insert: none, one, a few, and a few thousand.
fn key_count() -> impl Strategy<Value = usize> {
    prop_oneof![
        1 => Just(0usize),
        1 => Just(1usize),
        3 => 2..64usize,
        1 => 1000..3000usize,
    ]
}

/// The key count a filter is sized for. Independent of how many keys are
/// inserted, so filters are also over-filled, up to thousands of times.
fn capacity() -> impl Strategy<Value = usize> {
    prop_oneof![Just(1usize), 1..5000usize]
}

/// Hashes at the edges of the range, where multiply-shift reduction and the
/// split into block and probe bits are most likely to go wrong.
const EDGE_HASHES: [u64; 7] = [
    0,
    1,
    u64::MAX,
    1 << 63,
    (1 << 32) - 1,
    1 << 32,
    u64::MAX - (1 << 32),
];

/// One filter of every Bloom kind, all sized alike.
struct Filters {
    standard: StandardBloom,
    blocked: BlockedBloom,
    atomic: AtomicBlockedBloom,
    counting: CountingBloom,
}

impl Filters {
    fn new(capacity: usize, sizing: Sizing) -> Filters {
        match sizing {
            Sizing::Fpr(p) => Filters {
                standard: StandardBloom::new(capacity, FilterSizing::Fpr(p)).unwrap(),
                blocked: BlockedBloom::new(capacity, FilterSizing::Fpr(p)).unwrap(),
                atomic: AtomicBlockedBloom::new(capacity, FilterSizing::Fpr(p)).unwrap(),
                counting: CountingBloom::new(capacity, FilterSizing::Fpr(p)).unwrap(),
            },
            Sizing::BitsPerKey(b) => Filters {
                standard: StandardBloom::new(capacity, FilterSizing::BitsPerKey(b)).unwrap(),
                blocked: BlockedBloom::new(capacity, FilterSizing::BitsPerKey(b)).unwrap(),
                atomic: AtomicBlockedBloom::new(capacity, FilterSizing::BitsPerKey(b)).unwrap(),
                counting: CountingBloom::new(capacity, FilterSizing::BitsPerKey(4.0 * b)).unwrap(),
            },
        }
    }

    /// Inserts one hash at a time (`insert_hash`) for even `i` and as a
    /// batch of one (`insert_hashes`) for odd `i`; the concurrent filter
    /// through its inherent `&self` method for even `i` and the `Insert`
    /// trait for odd `i`. So every path is exercised.
    fn insert_hash(&mut self, i: usize, h: KeyHash) {
        if i.is_multiple_of(2) {
            self.standard.insert_hash(h).unwrap();
            self.blocked.insert_hash(h).unwrap();
            self.counting.insert_hash(h).unwrap();
            self.atomic.insert_hash(h).unwrap();
        } else {
            self.standard.insert_hashes(&[h]).unwrap();
            self.blocked.insert_hashes(&[h]).unwrap();
            self.counting.insert_hashes(&[h]).unwrap();
            Insert::insert_hash(&mut self.atomic, h).unwrap();
        }
    }

    /// Byte keys through `Insert::insert`; the concurrent filter alternates
    /// between its inherent `&self` method and the trait.
    fn insert_bytes(&mut self, i: usize, key: &[u8]) {
        self.standard.insert(key).unwrap();
        self.blocked.insert(key).unwrap();
        self.counting.insert(key).unwrap();
        if i.is_multiple_of(2) {
            self.atomic.insert(key).unwrap();
        } else {
            Insert::insert(&mut self.atomic, key).unwrap();
        }
    }

    fn all(&self) -> [&dyn Filter; 4] {
        [&self.standard, &self.blocked, &self.atomic, &self.counting]
    }
}

/// Checks every filter against the model `keys` (inserted `inserts` times in
/// all, duplicates included), with `absent` as extra probes.
fn check_filters(fs: &Filters, keys: &[KeyHash], inserts: usize, absent: &[KeyHash]) {
    for f in fs.all() {
        common::assert_no_false_negatives(f, keys);
        // The count saturates at 64 keys per bit (counter), where the
        // expected FPR is already 1.0.
        let cells = match f.kind() {
            FilterKind::CountingBloom => f.size_in_bytes() * 2,
            _ => f.size_in_bytes() * 8,
        };
        assert_eq!(f.num_keys(), inserts.min(64 * cells), "{:?}", f.kind());
        let expected = f.expected_fpr();
        assert!(
            (0.0..=1.0).contains(&expected),
            "{:?}: expected FPR {expected}",
            f.kind()
        );
        let probes: Vec<KeyHash> = keys.iter().chain(absent).copied().collect();
        common::assert_contains_hashes_agrees(f, &probes);
        if inserts == 0 {
            // All bits or counters are zero: nothing can match.
            assert!(absent.iter().all(|&h| !f.contains_hash(h)), "{:?}", f.kind());
            assert_eq!(expected, 0.0);
        }
    }
    // The concurrent twin sets exactly the bits the plain filter sets.
    assert_eq!(fs.atomic.to_bytes(), fs.blocked.to_bytes());
    // Decoding as `AnyFilter` keeps every key, and its batch path agrees too.
    for f in [&fs.standard as &dyn Filter, &fs.blocked, &fs.counting] {
        let any = AnyFilter::from_bytes(&f.to_bytes()).unwrap();
        common::assert_no_false_negatives(&any, keys);
        common::assert_contains_hashes_agrees(&any, absent);
    }
}

/// Hash keys: `n` arbitrary hashes (duplicates possible).
fn hash_keys() -> impl Strategy<Value = Vec<KeyHash>> {
    key_count().prop_flat_map(|n| vec(any::<u64>().prop_map(KeyHash::from_well_mixed), n))
}

/// [`EDGE_HASHES`] as key hashes, bit for bit.
fn edge_hashes() -> Vec<KeyHash> {
    common::well_mixed(&EDGE_HASHES)
}

/// Byte-string keys: empty, short and longer-than-a-block (xxh3 switches
/// code paths at 16, 128 and 240 bytes).
fn byte_keys() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let key = prop_oneof![
        4 => vec(any::<u8>(), 0..24),
        1 => vec(any::<u8>(), 100..300),
    ];
    key_count().prop_flat_map(move |n| vec(key.clone(), n))
}

proptest! {
    #![proptest_config(common::proptest_config(96))]

    #[test]
    fn hashes_have_no_false_negatives(
        cap in capacity(),
        sizing in sizing(),
        hashes in hash_keys(),
        with_edges in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let mut keys = hashes;
        if with_edges {
            keys.extend(edge_hashes());
        }
        let mut fs = Filters::new(cap, sizing);
        for (i, &h) in keys.iter().enumerate() {
            fs.insert_hash(i, h);
        }
        let model: HashSet<KeyHash> = keys.iter().copied().collect();
        let absent = common::absent_hashes(seed, 100, &keys);
        let distinct: Vec<KeyHash> = model.into_iter().collect();
        check_filters(&fs, &distinct, keys.len(), &absent);
    }

    #[test]
    fn byte_keys_have_no_false_negatives(
        cap in capacity(),
        sizing in sizing(),
        keys in byte_keys(),
        seed in any::<u64>(),
    ) {
        let mut fs = Filters::new(cap, sizing);
        for (i, k) in keys.iter().enumerate() {
            fs.insert_bytes(i, k);
        }
        let model: HashSet<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        for k in &model {
            prop_assert!(fs.standard.contains(k));
            prop_assert!(fs.blocked.contains(k));
            prop_assert!(fs.atomic.contains(k));
            prop_assert!(fs.counting.contains(k));
            for f in fs.all() {
                prop_assert!(f.contains(k), "{:?}", f.kind());
            }
        }
        // The byte forms are exactly the hash forms on `hash_key`.
        let hashes: Vec<KeyHash> = model.iter().map(|k| hash_key(k)).collect();
        let absent = common::absent_hashes(seed, 100, &hashes);
        check_filters(&fs, &hashes, keys.len(), &absent);
    }
}

/// One step of a counting-filter workload on a small pool of keys.
#[derive(Debug, Clone, Copy)]
enum Op {
    Insert(usize),
    Remove(usize),
}

const POOL: usize = 24;

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        3 => (0..POOL).prop_map(Op::Insert),
        2 => (0..POOL).prop_map(Op::Remove),
    ];
    vec(op, 0..400)
}

/// Small counting filters, so keys share counters and counters saturate.
fn counting_sizing() -> impl Strategy<Value = (usize, Sizing)> {
    (
        1..48usize,
        prop_oneof![
            (0.05f64..20.0).prop_map(Sizing::BitsPerKey),
            (-4.0f64..-0.05).prop_map(|e| Sizing::Fpr(10f64.powf(e))),
        ],
    )
}

fn counting_filter(cap: usize, sizing: Sizing) -> CountingBloom {
    match sizing {
        Sizing::Fpr(p) => CountingBloom::new(cap, FilterSizing::Fpr(p)).unwrap(),
        Sizing::BitsPerKey(c) => CountingBloom::new(cap, FilterSizing::BitsPerKey(4.0 * c)).unwrap(),
    }
}

proptest! {
    #![proptest_config(common::proptest_config(256))]

    /// Multiset model: a key inserted more times than removed is always found;
    /// removing an inserted key never errs; removing a key the filter calls
    /// definitely absent errs and leaves the filter byte-identical.
    #[test]
    fn counting_filter_follows_a_multiset(
        (cap, sizing) in counting_sizing(),
        ops in ops(),
        seed in any::<u64>(),
    ) {
        let pool = common::hashes(seed, POOL);
        let mut f = counting_filter(cap, sizing);
        let empty = f.to_bytes();
        let mut model: HashMap<usize, usize> = HashMap::new();
        for (step, op) in ops.iter().enumerate() {
            match *op {
                Op::Insert(i) => {
                    if step % 2 == 0 {
                        f.insert_hash(pool[i]).unwrap();
                    } else {
                        f.insert_hashes(&[pool[i]]).unwrap();
                    }
                    *model.entry(i).or_default() += 1;
                }
                Op::Remove(i) => {
                    let count = model.entry(i).or_default();
                    if *count > 0 {
                        let removed = f.remove_hash(pool[i]);
                        prop_assert_eq!(removed, Ok(()), "step {}: removing an inserted key", step);
                        *count -= 1;
                    } else if !f.contains_hash(pool[i]) {
                        let before = f.to_bytes();
                        prop_assert_eq!(f.remove_hash(pool[i]), Err(Error::NotPresent));
                        prop_assert_eq!(f.to_bytes(), before, "step {}: failed removal changed the filter", step);
                    }
                    // Else the key is absent but the filter says "maybe":
                    // removing such a false positive can take counts from
                    // other keys (documented on `Remove`), so no caller may
                    // do it and the model does not either.
                }
            }
            for (&i, &c) in &model {
                if c > 0 {
                    prop_assert!(f.contains_hash(pool[i]), "step {}: key {} (count {}) lost", step, i, c);
                }
            }
            prop_assert_eq!(f.num_keys(), model.values().sum::<usize>());
        }
        // Drain the model: every remaining occurrence removes cleanly.
        for (&i, &c) in &model {
            for _ in 0..c {
                prop_assert_eq!(f.remove_hash(pool[i]), Ok(()));
            }
        }
        prop_assert_eq!(f.num_keys(), 0);
        // Without saturation the counters are exact, so the filter is empty
        // again, down to the byte. (A saturated counter never comes down.)
        if f.saturated_counters() == 0 {
            prop_assert_eq!(f.to_bytes(), empty);
            for &h in &pool {
                prop_assert!(!f.contains_hash(h));
                prop_assert_eq!(f.remove_hash(h), Err(Error::NotPresent));
            }
        }
    }

    /// `union` keeps every key of both filters, equals inserting both key sets
    /// into one filter, and refuses filters of another size without change.
    #[test]
    fn union_keeps_all_keys_of_both(
        cap in capacity(),
        sizing in sizing(),
        a_keys in hash_keys(),
        b_keys in hash_keys(),
    ) {
        let Filters { standard: mut sa, blocked: mut ba, .. } = Filters::new(cap, sizing);
        let Filters { standard: mut sb, blocked: mut bb, .. } = Filters::new(cap, sizing);
        let Filters { standard: mut s_all, blocked: mut b_all, .. } = Filters::new(cap, sizing);
        for &h in &a_keys {
            sa.insert_hash(h).unwrap();
            ba.insert_hash(h).unwrap();
        }
        for &h in &b_keys {
            sb.insert_hash(h).unwrap();
            bb.insert_hash(h).unwrap();
        }
        for &h in a_keys.iter().chain(&b_keys) {
            s_all.insert_hash(h).unwrap();
            b_all.insert_hash(h).unwrap();
        }

        // A filter one unit larger can never be combined.
        let s_other = StandardBloom::new(sa.num_bits() as usize / 64 + 1, FilterSizing::BitsPerKey(64.0)).unwrap();
        let b_other = BlockedBloom::new(ba.num_blocks() + 1, FilterSizing::BitsPerKey(512.0)).unwrap();
        let (s_before, b_before) = (sa.clone(), ba.clone());
        prop_assert_eq!(sa.union(&s_other), Err(Error::Incompatible));
        prop_assert_eq!(ba.union(&b_other), Err(Error::Incompatible));
        prop_assert_eq!(&sa, &s_before);
        prop_assert_eq!(&ba, &b_before);

        sa.union(&sb).unwrap();
        ba.union(&bb).unwrap();
        let all: Vec<KeyHash> = a_keys.iter().chain(&b_keys).copied().collect();
        common::assert_no_false_negatives(&sa, &all);
        common::assert_no_false_negatives(&ba, &all);
        // Counts saturate at 64 keys per bit.
        let total = a_keys.len() + b_keys.len();
        prop_assert_eq!(sa.num_keys(), total.min(64 * sa.num_bits() as usize));
        prop_assert_eq!(ba.num_keys(), total.min(64 * 512 * ba.num_blocks()));
        prop_assert_eq!(sa.to_bytes(), s_all.to_bytes());
        prop_assert_eq!(ba.to_bytes(), b_all.to_bytes());
    }
}

/// A filter sized for one key and filled with ten thousand: every bit ends up
/// set, and still nothing is lost (the extreme of over-filling).
#[test]
fn hugely_overfilled_filters_still_find_everything() {
    let keys = common::hashes(7, 10_000);
    let mut fs = Filters::new(1, Sizing::BitsPerKey(1.0));
    for (i, &h) in keys.iter().enumerate() {
        fs.insert_hash(i, h);
    }
    let absent = common::absent_hashes(7, 1000, &keys);
    check_filters(&fs, &keys, keys.len(), &absent);
    assert_eq!(fs.standard.fill_ratio(), 1.0);
    assert_eq!(fs.blocked.fill_ratio(), 1.0);
    assert!(fs.counting.saturated_counters() > 0);
    // Every counter is stuck at 15, so removing every key once (which is
    // legal: each was inserted) takes nothing away and all stay found.
    for &h in &keys {
        fs.counting.remove_hash(h).unwrap();
    }
    assert_eq!(fs.counting.num_keys(), 0);
    common::assert_no_false_negatives(&fs.counting, &keys);
}

proptest! {
    #![proptest_config(common::proptest_config(96))]

    /// `BlockedBloom::insert_hashes` (batched, prefetching) sets exactly the
    /// bits and count of one `insert_hash` per hash, for any sizing, any batch
    /// split (lengths around the batch of 32 included) and keys with
    /// repeats; and, against a `HashSet` model, loses no key.
    #[test]
    fn blocked_insert_hashes_equals_single_inserts(
        cap in capacity(),
        sizing in sizing(),
        hashes in hash_keys(),
        with_edges in any::<bool>(),
        cut in 0..100usize,
    ) {
        let mut keys = hashes;
        if with_edges {
            keys.extend(edge_hashes());
            keys.extend(edge_hashes());
        }
        let fs = Filters::new(cap, sizing);
        let (mut one, mut many) = (fs.blocked.clone(), fs.blocked);
        keys.iter().for_each(|&h| one.insert_hash(h).unwrap());
        let cut = cut.min(keys.len());
        many.insert_hashes(&keys[..cut]).unwrap();
        many.insert_hashes(&keys[cut..]).unwrap();
        prop_assert_eq!(&many, &one);
        prop_assert_eq!(many.num_keys(), one.num_keys());
        let model: HashSet<KeyHash> = keys.iter().copied().collect();
        for &h in &model {
            prop_assert!(many.contains_hash(h));
        }
    }
}
