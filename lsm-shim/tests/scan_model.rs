//! The scan model test: random sequences of put, delete, get, prefix
//! scans, bounded scans inside a prefix, scans across prefixes, narrow
//! scans near keys (each read from both ends in a random order), flush,
//! compact and reopen, where each reopen may change the prefix extractor,
//! whole-key filtering and the range filter policy, checked against a
//! `BTreeMap`: for every filter kind and none, leveled and tiered, whole and
//! partitioned filters. No row may be wrong or missing, whatever the
//! extractor and range filters the tables were written with.
//!
//! `shapes` runs the same check on the key shapes engines store (composite,
//! decimal, dense and mixed-length keys), which the range filters see
//! through their key maps.

mod common;
#[path = "scan_model/shapes.rs"]
mod shapes;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use amq::range::RangeSizing;
use amq::{CappedPrefix, DelimitedPrefix, ExtractorId, FilterKind, FixedPrefix, PrefixExtractor};
use amq_lsm::{CompactionStyle, Db, FilterPolicy, LevelRangeFilter, Options, RangeFilterPolicy, Scan};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};

use common::*;

const TENANTS: [&str; 8] = ["a", "ab", "b", "bb", "t1", "t10", "t2", "zz"];

/// The model's key `i`: a tenant, then a row behind a `:` (most keys), or
/// glued to the tenant (outside a delimiter's domain), or the bare `tenant:`
/// (a key equal to its own prefix).
fn key(i: u32) -> Vec<u8> {
    let tenant = TENANTS[(i % 8) as usize];
    let row = i / 8;
    match row % 6 {
        0..=3 => format!("{tenant}:{row:03}"),
        4 => format!("{tenant}{row}"),
        _ => format!("{tenant}:"),
    }
    .into_bytes()
}

/// The prefixes scans ask for: complete ones for some extractors and not
/// for others, the empty one, and absent ones.
fn prefix(i: u32) -> Vec<u8> {
    let tenant = TENANTS[(i % 8) as usize];
    match (i / 8) % 7 {
        0 | 1 => format!("{tenant}:"),
        2 => tenant.to_string(),
        3 => format!("{tenant}:00"),
        4 => tenant[..1].to_string(),
        5 => format!("x{tenant}:"),
        _ => String::new(),
    }
    .into_bytes()
}

/// The colon rule under a name of the user's own, with a version in its
/// parameters: the same prefixes as `DelimitedPrefix::new(b':')`, another
/// identity (a renamed extractor).
#[derive(Debug)]
struct RenamedColon(u8);

impl PrefixExtractor for RenamedColon {
    fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        DelimitedPrefix::new(b':').prefix(key)
    }
    fn is_complete(&self, prefix: &[u8]) -> bool {
        DelimitedPrefix::new(b':').is_complete(prefix)
    }
    fn id(&self) -> ExtractorId {
        ExtractorId::new("test.colon", &[self.0]).unwrap()
    }
}

/// The store's prefix configuration after each reopen: an extractor (or
/// none) and whether filters hold whole keys.
fn config(i: u8) -> (Option<Arc<dyn PrefixExtractor>>, bool) {
    let e: Option<Arc<dyn PrefixExtractor>> = match i % 8 {
        0 => None,
        1 | 2 => Some(Arc::new(DelimitedPrefix::new(b':'))),
        3 => Some(Arc::new(FixedPrefix::new(2))),
        4 => Some(Arc::new(CappedPrefix::new(3))),
        5 => Some(Arc::new(DelimitedPrefix::capped(b':', 3))),
        _ => Some(Arc::new(RenamedColon(i % 2))),
    };
    let whole_keys = e.is_none() || matches!(i % 8, 1 | 3);
    (e, whole_keys)
}

/// The store's range filter policy after each reopen (the bits above the
/// prefix configuration's).
fn range_policy(i: u8) -> RangeFilterPolicy {
    let grafite = |sizing| LevelRangeFilter::new(FilterKind::GrafiteRange, sizing);
    match (i >> 3) % 6 {
        0 => RangeFilterPolicy::none(),
        1 | 2 => RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(12.0)),
        3 => RangeFilterPolicy::uniform(RangeSizing::Fpr {
            fpr: 0.01,
            max_range_len: 1 << 20,
        }),
        4 => RangeFilterPolicy::per_level(vec![
            LevelRangeFilter::None,
            grafite(RangeSizing::BitsPerKey(16.0)),
        ])
        .unwrap(),
        _ => RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(20.0))
            .with_bottommost(LevelRangeFilter::None)
            .with_first(grafite(RangeSizing::BitsPerKey(8.0))),
    }
}

#[derive(Debug, Clone)]
enum Op {
    Put(u32, Vec<u8>),
    Delete(u32),
    Get(u32),
    MultiGet(Vec<u32>),
    /// A prefix scan, read from both ends in the order of the bits.
    ScanPrefix(u32, u64),
    /// A scan inside one prefix: rows `a..b` behind prefix `p`, each end
    /// included or not.
    Inside(u32, u32, u32, bool, bool, u64),
    /// A scan from key `a` to key `b`, across prefixes.
    Across(u32, u32, u64),
    /// A narrow scan just past key `a`: from `a` with a byte appended to
    /// `a` with `w` appended, each end included or not (mostly empty
    /// ranges, which range filters rule out).
    Near(u32, u8, u8, bool, bool, u64),
    Flush,
    Compact,
    Reopen(u8),
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0u32..400;
    prop_oneof![
        40 => (k.clone(), proptest::collection::vec(any::<u8>(), 0..20)).prop_map(|(k, v)| Op::Put(k, v)),
        10 => k.clone().prop_map(Op::Delete),
        10 => k.clone().prop_map(Op::Get),
        3 => proptest::collection::vec(k.clone(), 0..30).prop_map(Op::MultiGet),
        12 => (0u32..56, any::<u64>()).prop_map(|(p, bits)| Op::ScanPrefix(p, bits)),
        6 => (0u32..56, 0u32..60, 0u32..60, any::<bool>(), any::<bool>(), any::<u64>())
            .prop_map(|(p, a, b, ia, ib, bits)| Op::Inside(p, a.min(b), a.max(b), ia, ib, bits)),
        4 => (k.clone(), k.clone(), any::<u64>()).prop_map(|(a, b, bits)| Op::Across(a, b, bits)),
        6 => (k, any::<u8>(), any::<u8>(), any::<bool>(), any::<bool>(), any::<u64>())
            .prop_map(|(a, x, w, ia, ib, bits)| Op::Near(a, x.min(w), x.max(w), ia, ib, bits)),
        3 => Just(Op::Flush),
        1 => Just(Op::Compact),
        2 => any::<u8>().prop_map(Op::Reopen),
    ]
}

/// Everything `scan` yields, reading the front when the next bit is 0 and
/// the back when it is 1, put back in key order.
fn read_both_ways(mut scan: Scan, mut bits: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let (mut front, mut back) = (Vec::new(), Vec::new());
    loop {
        let item = match bits & 1 {
            0 => scan.next(),
            _ => scan.next_back(),
        };
        let Some(item) = item else { break };
        match bits & 1 {
            0 => front.push(item.expect("scan")),
            _ => back.push(item.expect("scan")),
        }
        bits = bits.rotate_right(1);
    }
    back.reverse();
    front.extend(back);
    front
}

fn model_range(
    model: &BTreeMap<Vec<u8>, Vec<u8>>,
    lo: Bound<Vec<u8>>,
    hi: Bound<Vec<u8>>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    model
        .iter()
        .filter(|(k, _)| {
            let above = match &lo {
                Bound::Included(l) => *k >= l,
                Bound::Excluded(l) => *k > l,
                Bound::Unbounded => true,
            };
            let below = match &hi {
                Bound::Included(h) => *k <= h,
                Bound::Excluded(h) => *k < h,
                Bound::Unbounded => true,
            };
            above && below
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// What the test counts over a run, to prove it exercised what it claims.
#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    prefix_probes: u64,
    prefix_negatives: u64,
    range_probes: u64,
    range_negatives: u64,
    flushes: u64,
}

impl std::ops::Add for Seen {
    type Output = Seen;
    fn add(self, o: Seen) -> Seen {
        Seen {
            prefix_probes: self.prefix_probes + o.prefix_probes,
            prefix_negatives: self.prefix_negatives + o.prefix_negatives,
            range_probes: self.range_probes + o.range_probes,
            range_negatives: self.range_negatives + o.range_negatives,
            flushes: self.flushes + o.flushes,
        }
    }
}

fn check(
    policy: &FilterPolicy,
    style: CompactionStyle,
    partitions: Option<usize>,
    first: u8,
    ops: &[Op],
) -> Result<Seen, TestCaseError> {
    let (_, env) = mem_env();
    let dir = std::path::Path::new("/db");
    let opts = |c: u8| -> Options {
        let (extractor, whole_keys) = config(c);
        let opts = small_options(env.clone(), policy.clone(), style)
            .filter_partition_bytes(partitions)
            .whole_key_filtering(whole_keys)
            .range_filter_policy(range_policy(c));
        match extractor {
            Some(e) => opts.prefix_extractor(e),
            None => opts,
        }
    };
    let mut db = Db::open(dir, opts(first)).unwrap();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut seen = Seen::default();
    let mut count = |s: amq_lsm::Stats| {
        seen = seen
            + Seen {
                prefix_probes: s.prefix_probes,
                prefix_negatives: s.prefix_negatives,
                range_probes: s.range_probes,
                range_negatives: s.range_negatives,
                flushes: s.flushes,
            };
    };
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Put(k, v) => {
                db.put(key(*k), v).unwrap();
                model.insert(key(*k), v.clone());
            }
            Op::Delete(k) => {
                db.delete(key(*k)).unwrap();
                model.remove(&key(*k));
            }
            Op::Get(k) => {
                let want = model.get(&key(*k)).cloned();
                prop_assert_eq!(db.get(key(*k)).unwrap(), want, "op {} {:?}", i, op);
            }
            Op::MultiGet(ks) => {
                let keys: Vec<Vec<u8>> = ks.iter().map(|&k| key(k)).collect();
                let want: Vec<_> = keys.iter().map(|k| model.get(k).cloned()).collect();
                prop_assert_eq!(db.multi_get(&keys).unwrap(), want, "op {} {:?}", i, op);
            }
            Op::ScanPrefix(p, bits) => {
                let p = prefix(*p);
                let got = read_both_ways(db.scan_prefix(&p), *bits);
                let want: Vec<_> = model
                    .iter()
                    .filter(|(k, _)| k.starts_with(&p))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                prop_assert_eq!(got, want, "op {} {:?}", i, op);
            }
            Op::Inside(p, a, b, ia, ib, bits) => {
                let p = prefix(*p);
                let at = |row: u32, included: bool| {
                    let mut k = p.clone();
                    k.extend_from_slice(format!("{row:03}").as_bytes());
                    match included {
                        true => Bound::Included(k),
                        false => Bound::Excluded(k),
                    }
                };
                let (lo, hi) = (at(*a, *ia), at(*b, *ib));
                let got = read_both_ways(db.scan((lo.clone(), hi.clone())), *bits);
                prop_assert_eq!(got, model_range(&model, lo, hi), "op {} {:?}", i, op);
            }
            Op::Across(a, b, bits) => {
                let (lo, hi) = (key(*a).min(key(*b)), key(*a).max(key(*b)));
                let got = read_both_ways(db.scan(lo.clone()..=hi.clone()), *bits);
                let want = model_range(&model, Bound::Included(lo), Bound::Included(hi));
                prop_assert_eq!(got, want, "op {} {:?}", i, op);
            }
            Op::Near(a, x, w, ia, ib, bits) => {
                let end = |b: u8, included: bool| {
                    let mut k = key(*a);
                    k.push(b);
                    match included {
                        true => Bound::Included(k),
                        false => Bound::Excluded(k),
                    }
                };
                let (lo, hi) = (end(*x, *ia), end(*w, *ib));
                let got = read_both_ways(db.scan((lo.clone(), hi.clone())), *bits);
                prop_assert_eq!(got, model_range(&model, lo, hi), "op {} {:?}", i, op);
            }
            Op::Flush => db.flush().unwrap(),
            Op::Compact => db.compact().unwrap(),
            Op::Reopen(c) => {
                count(db.stats());
                drop(db);
                db = Db::open(dir, opts(*c)).unwrap();
            }
        }
    }
    for k in 0..400 {
        prop_assert_eq!(db.get(key(k)).unwrap(), model.get(&key(k)).cloned());
    }
    prop_assert_eq!(contents(&db), model.clone());
    let mut backward: Vec<_> = db.iter().rev().map(|r| r.unwrap()).collect();
    backward.reverse();
    prop_assert_eq!(backward, model.into_iter().collect::<Vec<_>>());
    let s = db.stats();
    prop_assert_eq!(
        (
            s.untrusted_filters,
            s.untrusted_filter_partitions,
            s.untrusted_range_filters
        ),
        (0, 0, 0)
    );
    count(s);
    Ok(seen)
}

fn run(policy: FilterPolicy, style: CompactionStyle, cases: u32, seed: u64) -> Seen {
    let mut runner = TestRunner::new(Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    });
    let total = std::cell::Cell::new(Seen::default());
    runner
        .run(
            &(
                proptest::collection::vec(op(), 100..300),
                any::<bool>(),
                any::<u8>(),
            ),
            |(ops, partitioned, first)| {
                let partitions = partitioned.then_some(48);
                let s = check(&policy, style, partitions, first, &ops)?;
                total.set(total.get() + s);
                Ok(())
            },
        )
        .unwrap_or_else(|e| panic!("{} {style:?}: {e}", policy.describe()));
    total.get()
}

/// Cases per (policy, style): more with `AMQ_LSM_MODEL_CASES`.
fn cases() -> u32 {
    std::env::var("AMQ_LSM_MODEL_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6)
}

fn every_kind(style: CompactionStyle, seed: u64) {
    for (i, p) in policies().into_iter().enumerate() {
        let seen = run(p.clone(), style, cases(), seed + i as u64);
        assert!(seen.flushes > u64::from(cases()), "{seen:?}");
        // With a filter, prefix filters must have skipped tables, or the
        // test proves nothing about them.
        if p != FilterPolicy::none() {
            assert!(seen.prefix_negatives > 0, "{} {seen:?}", p.describe());
        } else {
            assert_eq!(seen.prefix_probes, 0);
        }
        // Range filters are on in most configurations, whatever the key
        // filter: they must have skipped tables too.
        assert!(seen.range_negatives > 0, "{} {seen:?}", p.describe());
    }
}

#[test]
fn scan_model_leveled_every_filter_kind() {
    every_kind(leveled(), 300);
}

#[test]
fn scan_model_tiered_every_filter_kind() {
    every_kind(tiered(), 400);
}
