//! Operation targets: arbitrary sequences of inserts, removes, queries,
//! unions and encode/decode round trips on one filter, checked against a set
//! (or multiset) model. The invariants: no false negative, ever; errors only
//! where documented (a full cuckoo table, impossible parameters); after a
//! failed insert nothing inserted before is lost.

use std::collections::HashMap;

use amq::{
    hash_key, BinaryFuse16, BinaryFuse32, BinaryFuse8, BlockedBloom, CountingBloom, CuckooFilter, Error,
    Filter, FilterSizing, FromBytes, Insert, KeyHash, ParquetBloom, Remove, Ribbon, RibbonParams,
    SplitBlockBloom, StandardBloom, StaticFilter, Xor16, Xor8,
};
use arbitrary::Arbitrary;

/// Keys come from a small space so that repeats and removals meet.
fn h(k: u16) -> KeyHash {
    hash_key(&k.to_le_bytes())
}

/// One step on a dynamic filter.
#[derive(Debug, Arbitrary)]
pub enum Op {
    Insert(u16),
    Remove(u16),
    Query(u16),
    RoundTrip,
    Union(Vec<u16>),
}

/// Sizing of a dynamic filter.
#[derive(Debug, Arbitrary)]
pub struct DynInput {
    pub expected: u16,
    pub bits: u8,
    pub ops: Vec<Op>,
}

fn assert_documented(e: &Error) {
    assert!(
        matches!(e, Error::InvalidParameter { .. } | Error::TooLarge),
        "undocumented construction error {e:?}"
    );
}

fn round_trip<F: Filter + FromBytes>(f: &F) -> F {
    let bytes = f.to_bytes();
    let g = F::from_bytes(&bytes).expect("a filter's own bytes decode");
    assert_eq!(g.to_bytes(), bytes);
    g
}

/// Standard, blocked and split-block Bloom: inserts, unions with a filter of the same
/// shape, round trips; the model is a set.
fn bloom_ops<F: Insert + FromBytes>(
    input: DynInput,
    new: impl Fn(usize, FilterSizing) -> Result<F, Error>,
    union: impl Fn(&mut F, &F) -> Result<(), Error>,
) {
    let (n, bits) = (
        usize::from(input.expected).max(1),
        FilterSizing::BitsPerKey(f64::from(input.bits % 40) + 0.5),
    );
    let mut f = match new(n, bits) {
        Ok(f) => f,
        Err(e) => return assert_documented(&e),
    };
    let mut model = Vec::new();
    for op in input.ops {
        match op {
            Op::Insert(k) => {
                f.insert_hash(h(k)).expect("Bloom inserts never fail");
                model.push(k);
            }
            Op::Query(k) => assert!(!model.contains(&k) || f.contains_hash(h(k)), "false negative"),
            Op::RoundTrip => f = round_trip(&f),
            Op::Union(keys) => {
                let mut g = new(n, bits).expect("same parameters build again");
                for &k in &keys {
                    g.insert_hash(h(k)).expect("Bloom inserts never fail");
                }
                union(&mut f, &g).expect("same shapes unite");
                model.extend(keys);
            }
            Op::Remove(_) => {}
        }
    }
    assert!(
        model.iter().all(|&k| f.contains_hash(h(k))),
        "false negative at the end"
    );
}

pub fn standard_bloom(input: DynInput) {
    bloom_ops(input, StandardBloom::new, StandardBloom::union);
}

pub fn blocked_bloom(input: DynInput) {
    bloom_ops(input, BlockedBloom::new, BlockedBloom::union);
}

pub fn split_block_bloom(input: DynInput) {
    bloom_ops(input, SplitBlockBloom::new, SplitBlockBloom::union);
}

/// Parquet's split-block Bloom filter, driven by values (each key an INT32
/// value, hashed as Parquet does): single and batched inserts and queries,
/// unions, and round trips alternating amq's frame and Parquet's framing;
/// the model is a set. (`Remove` stands for a batched query here.)
pub fn parquet_bloom(input: DynInput) {
    let (n, bits) = (
        usize::from(input.expected).max(1),
        f64::from(input.bits % 40) + 0.5,
    );
    let mut f = match ParquetBloom::new(n, FilterSizing::BitsPerKey(bits)) {
        Ok(f) => f,
        Err(e) => return assert_documented(&e),
    };
    let mut model: Vec<u16> = Vec::new();
    let mut through_parquet = false;
    for op in input.ops {
        match op {
            Op::Insert(k) => {
                f.insert(&k).expect("Bloom inserts never fail");
                model.push(k);
            }
            Op::Query(k) => assert!(!model.contains(&k) || f.contains(&k), "false negative"),
            Op::Remove(k) => {
                let mut out = [false];
                f.contains_values(&[k], &mut out);
                assert_eq!(out[0], f.contains(&k), "batched and single queries disagree");
            }
            Op::RoundTrip => {
                through_parquet = !through_parquet;
                if through_parquet {
                    let g = ParquetBloom::from_parquet_bytes(&f.to_parquet_bytes())
                        .expect("a filter's own Parquet bytes decode");
                    assert_eq!(g.parquet_bitset(), f.parquet_bitset());
                    f = g;
                } else {
                    let bytes = f.to_bytes();
                    let g = ParquetBloom::from_bytes(&bytes).expect("a filter's own bytes decode");
                    assert_eq!(g.to_bytes(), bytes);
                    f = g;
                }
            }
            Op::Union(keys) => {
                let mut g = ParquetBloom::with_num_bytes(f.num_bytes()).expect("same size builds again");
                g.insert_values(&keys).expect("Bloom inserts never fail");
                f.union(&g).expect("same sizes unite");
                model.extend(keys);
            }
        }
    }
    let mut out = vec![false; model.len()];
    f.contains_values(&model, &mut out);
    assert!(out.iter().all(|&o| o), "false negative at the end");
}

/// Counting Bloom and cuckoo: the model is a multiset; only inserted keys
/// are removed (removing another key is documented to cause false negatives).
fn multiset_ops<F: Remove + FromBytes>(input: DynInput, mut f: F, may_fill: bool) {
    let mut model: HashMap<u16, u32> = HashMap::new();
    for op in input.ops {
        match op {
            Op::Insert(k) => match f.insert_hash(h(k)) {
                Ok(()) => *model.entry(k).or_default() += 1,
                Err(Error::Full | Error::TooManyCopies) if may_fill => {
                    // Refused: every key inserted before is still there.
                    assert!(
                        model.keys().all(|&k| f.contains_hash(h(k))),
                        "a failed insert lost a key"
                    );
                }
                Err(e) => panic!("undocumented insert error {e:?}"),
            },
            Op::Remove(k) => {
                if let Some(c) = model.get_mut(&k) {
                    f.remove_hash(h(k)).expect("removing an inserted key succeeds");
                    *c -= 1;
                    if *c == 0 {
                        model.remove(&k);
                    }
                }
            }
            Op::Query(k) => assert!(!model.contains_key(&k) || f.contains_hash(h(k)), "false negative"),
            Op::RoundTrip => f = round_trip(&f),
            Op::Union(_) => {}
        }
    }
    assert!(
        model.keys().all(|&k| f.contains_hash(h(k))),
        "false negative at the end"
    );
}

pub fn counting_bloom(input: DynInput) {
    let bits_per_key = 4.0 * (f64::from(input.bits % 16) + 0.5);
    match CountingBloom::new(
        usize::from(input.expected).max(1),
        FilterSizing::BitsPerKey(bits_per_key),
    ) {
        Ok(f) => multiset_ops(input, f, false),
        Err(e) => assert_documented(&e),
    }
}

pub fn cuckoo(input: DynInput) {
    let bits = [8, 12, 16][usize::from(input.bits) % 3];
    // Small capacities, so tables fill and the `Full` path is exercised.
    match CuckooFilter::with_fingerprint_bits(usize::from(input.expected % 512).max(1), bits) {
        Ok(f) => multiset_ops(input, f, true),
        Err(e) => assert_documented(&e),
    }
}

/// The keys an input inserts, in order.
fn inserted(input: &DynInput) -> Vec<u16> {
    input
        .ops
        .iter()
        .filter_map(|o| match o {
            Op::Insert(k) => Some(*k),
            _ => None,
        })
        .collect()
}

/// Inserts `keys` into `f` until it is full: the keys it took.
fn fill_until_full<F: Insert>(f: &mut F, keys: &[u16]) -> Vec<u16> {
    let mut held = Vec::new();
    for &k in keys {
        match f.insert_hash(h(k)) {
            Ok(()) => held.push(k),
            Err(Error::Full) => break,
            Err(e) => panic!("undocumented insert error {e:?}"),
        }
    }
    held
}

/// The quotient filter: the multiset model as for the cuckoo filter, on
/// small tables (so runs shift across blocks and the table fills), then a
/// merge of a filter holding the inserted keys with itself, checked against
/// the counts: the merge of a filter with itself holds every entry twice.
pub fn quotient(input: DynInput) {
    let q = u32::from(input.expected % 11);
    let r = u32::from(input.bits % 20) + 1;
    let f = match amq::quotient::QuotientFilter::with_bits(q, r) {
        Ok(f) => f,
        Err(e) => return assert_documented(&e),
    };
    let keys = inserted(&input);
    multiset_ops(input, f.clone(), true);
    // A merge with a filter of the same shape holding the first keys.
    let mut other = f.clone();
    let held = fill_until_full(&mut other, &keys);
    let merged = other.merge(&other);
    match merged {
        Ok(m) => {
            for &k in &held {
                assert_eq!(m.count_hash(h(k)), 2 * other.count_hash(h(k)), "merged counts");
            }
            assert_eq!(
                m.to_bytes(),
                amq::quotient::QuotientFilter::from_bytes(&m.to_bytes())
                    .unwrap()
                    .to_bytes()
            );
        }
        Err(e) => assert_eq!(e, Error::Full),
    }
}

/// The expanding quotient filter against a multiset model, from a table of
/// a few slots through many expansions (short fingerprints, so entries go
/// void), with a cap on some inputs (so `Full` is exercised). `Union(keys)`
/// here grows the filter by as many distinct filler keys as it lists times
/// 64 (held too), so keys inserted before lose their fingerprint bits and
/// later removes take void entries. After every step: each held key counts
/// at least its copies; a query of a key not held, inserted and removed
/// again, leaves the filter exactly as it was (unless that insert doubled
/// it). At the end: every copy removed, the filter is empty and matches
/// nothing; and a merge of a filter with itself holds its keys twice.
pub fn expanding(input: DynInput) {
    use amq::quotient::{ExpandingOptions, ExpandingQuotientFilter};
    let mut o = ExpandingOptions::new([0.25, 0.1, 0.01, 0.001][usize::from(input.bits % 4)]);
    o.initial_keys = usize::from(input.expected % 64) + 1;
    o.horizon = u32::from(input.bits / 4 % 4);
    if input.expected & 0x8000 != 0 {
        o.max_keys = Some(usize::from(input.expected % 512) + 1);
    }
    let mut f = match ExpandingQuotientFilter::new(o) {
        Ok(f) => f,
        Err(e) => return assert_documented(&e),
    };
    let keys = inserted(&input);
    // Keys of the ops are `u16`s, fillers `u32`s past them: disjoint.
    let key = |k: u32| match u16::try_from(k) {
        Ok(k) => h(k),
        Err(_) => hash_key(&k.to_le_bytes()),
    };
    let mut model: HashMap<u32, usize> = HashMap::new();
    let mut next_filler = 1u32 << 16;
    let insert = |f: &mut ExpandingQuotientFilter, model: &mut HashMap<u32, usize>, k: u32| {
        let before = f.to_bytes();
        match f.insert_hash(key(k)) {
            Ok(()) => *model.entry(k).or_default() += 1,
            Err(Error::Full) => {
                assert!(
                    o.max_keys.is_some_and(|m| f.num_keys() >= m) || f.quotient_bits() >= 30,
                    "Full below the cap"
                );
                assert_eq!(f.to_bytes(), before, "a refused insert changed the filter");
            }
            Err(e) => panic!("undocumented insert error {e:?}"),
        }
    };
    for op in input.ops.into_iter().take(2_000) {
        match op {
            Op::Insert(k) => insert(&mut f, &mut model, u32::from(k)),
            Op::Union(fillers) => {
                // At most 2^16 fillers per input, so a run stays fast.
                for _ in 0..fillers.len().min(64) * 64 {
                    if next_filler >= 1 << 17 {
                        break;
                    }
                    insert(&mut f, &mut model, next_filler);
                    next_filler += 1;
                }
            }
            Op::Remove(k) => {
                let k = u32::from(k);
                if let Some(c) = model.get_mut(&k) {
                    f.remove_hash(key(k)).expect("removing an inserted key succeeds");
                    *c -= 1;
                    if *c == 0 {
                        model.remove(&k);
                    }
                }
            }
            Op::Query(k) => {
                let k = u32::from(k);
                assert!(
                    !model.contains_key(&k) || f.contains_hash(key(k)),
                    "false negative"
                );
                if !model.contains_key(&k) && o.max_keys.is_none_or(|m| f.num_keys() < m) {
                    let mut g = f.clone();
                    if g.insert_hash(key(k)).is_ok() && g.quotient_bits() == f.quotient_bits() {
                        g.remove_hash(key(k))
                            .expect("removing a key just inserted succeeds");
                        assert_eq!(g, f, "an insert and its remove changed the filter");
                    }
                }
            }
            Op::RoundTrip => f = round_trip(&f),
        }
        if let Some((&k, &c)) = model.iter().next() {
            assert!(f.count_hash(key(k)) >= c, "a count below the copies inserted");
        }
        assert_eq!(f.num_keys(), model.values().sum::<usize>());
    }
    for (&k, &c) in &model {
        assert!(f.count_hash(key(k)) >= c, "a count below the copies inserted");
    }
    let mut emptied = f.clone();
    for (&k, &c) in &model {
        for _ in 0..c {
            emptied
                .remove_hash(key(k))
                .expect("removing an inserted key succeeds");
        }
    }
    assert_eq!(emptied.num_keys(), 0);
    assert!(
        (0..64u32)
            .chain(model.keys().copied())
            .all(|k| !emptied.contains_hash(key(k))),
        "an emptied filter matched a key"
    );
    let mut other = ExpandingQuotientFilter::new(o).expect("built before");
    let held = fill_until_full(&mut other, &keys);
    match other.merge(&other) {
        Ok(m) => {
            assert!(held.iter().all(|&k| m.contains_hash(h(k))), "a merge lost a key");
            assert_eq!(m.num_keys(), 2 * held.len());
            for &k in &held {
                assert!(m.count_hash(h(k)) >= 2 * held.iter().filter(|&&j| j == k).count());
            }
            assert_eq!(
                m.to_bytes(),
                ExpandingQuotientFilter::from_bytes(&m.to_bytes())
                    .unwrap()
                    .to_bytes()
            );
        }
        Err(e) => assert_eq!(e, Error::Full),
    }
}

/// A static filter's input: a key set with repeats, and a parameter byte.
#[derive(Debug, Arbitrary)]
pub struct StaticInput {
    pub param: u8,
    pub keys: Vec<u16>,
    pub probes: Vec<u16>,
}

fn static_ops<F: StaticFilter + FromBytes>(input: &StaticInput, params: &F::Params) {
    let hashes: Vec<KeyHash> = input.keys.iter().map(|&k| h(k)).collect();
    let f = F::build_with(&hashes, params).expect("a static filter builds for every key set");
    let mut distinct = input.keys.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(f.num_keys(), distinct.len(), "duplicates must count once");
    assert!(distinct.iter().all(|&k| f.contains_hash(h(k))), "false negative");
    let g = round_trip(&f);
    for &p in &input.probes {
        assert_eq!(f.contains_hash(h(p)), g.contains_hash(h(p)));
    }
    assert!(
        distinct.iter().all(|&k| g.contains_hash(h(k))),
        "false negative after a round trip"
    );
}

pub fn xor8(input: StaticInput) {
    static_ops::<Xor8>(&input, &());
}
pub fn xor16(input: StaticInput) {
    static_ops::<Xor16>(&input, &());
}
pub fn binary_fuse8(input: StaticInput) {
    static_ops::<BinaryFuse8>(&input, &amq::FuseParams::default());
}
pub fn binary_fuse16(input: StaticInput) {
    let p = if input.param & 1 == 0 {
        amq::FuseParams::THREE_WISE
    } else {
        amq::FuseParams::FOUR_WISE
    };
    static_ops::<BinaryFuse16>(&input, &p);
}
pub fn binary_fuse32(input: StaticInput) {
    static_ops::<BinaryFuse32>(&input, &amq::FuseParams::default());
}
/// Any width and either arity, from the input's parameter byte.
pub fn packed_binary_fuse(input: StaticInput) {
    use amq::xor::{FuseArity, PackedFuseParams};
    let bits = u32::from(input.param >> 1) % 32 + 1;
    let arity = if input.param & 1 == 0 {
        FuseArity::Three
    } else {
        FuseArity::Four
    };
    static_ops::<amq::PackedBinaryFuse>(&input, &PackedFuseParams::with_bits(bits).arity(arity));
}

pub fn ribbon(input: StaticInput) {
    let p = input.param;
    let params = match p % 4 {
        0 => RibbonParams::with_result_bits(u32::from(p >> 2)),
        1 => RibbonParams::with_fpr(f64::from(p >> 2) / 64.0),
        2 => RibbonParams::with_bits_per_key(f64::from(p >> 2) * 0.7),
        // The two-line layout at 6, 7 or 8 result bits or an FPR between
        // (lines of two widths), its slack from the input (1.0 makes shards
        // retry with the next seed and grow); one value in eight asks it of
        // r = 9, which must be a documented error.
        _ => match (p >> 2) & 7 {
            7 => RibbonParams::with_result_bits(9).and_then(|q| q.with_two_line_layout()),
            w => match w {
                0..=2 => RibbonParams::with_result_bits(6 + u32::from(w)),
                _ => RibbonParams::with_fpr(0.004 + f64::from(w - 3) * 0.003),
            }
            .and_then(|q| q.with_two_line_layout())
            .and_then(|q| q.with_slots_per_key(1.0 + f64::from(p >> 5) / 32.0)),
        },
    };
    // One input in seven (by its first key) also holds a run of
    // `BUMPED_MIN_KEYS` consecutive keys from there, so the bumped layouts
    // (built from that many keys on) meet the fuzzer's keys, repeats and
    // parameters too.
    let mut input = input;
    if let Some(&first) = input.keys.first().filter(|&&k| k % 7 == 0) {
        let run = (0..amq::ribbon::BUMPED_MIN_KEYS as u16).map(|i| first.wrapping_add(i));
        input.keys.extend(run);
    }
    match params {
        Ok(params) => static_ops::<Ribbon>(&input, &params),
        Err(e) => assert_documented(&e),
    }
}
