//! The scan model on the key shapes engines store, which every table's
//! range filter sees through a key map fitted to the table's keys:
//! composite `t{tenant:06}:{row:08}` keys (tenants interleaved, so every
//! flushed table spans the key space, and rows with gaps), 20-digit decimal
//! timestamps about a second apart, dense 8-byte big-endian integers
//! (consecutive, stride 4, runs of 1,000 apart), and mixed-length keys
//! (prefixes of one another, keys ending in 0x00, keys that differ only
//! after a 44-byte head, keys whose differences need more than 64 bits).
//!
//! Random scans of every `Bound` kind (in either order), narrow scans
//! around keys (ends at a key, at `key + 0x00`, just before it, at its
//! prefix, at its numeric neighbours), narrow scans inside gaps, and scans
//! over a whole (mostly absent) tenant, between puts, deletes, flushes,
//! compactions and reopens that change the range filter policy (none, 2 to
//! 64 bits per key, FPR sizings of short and huge ranges, and one whose
//! filters tables of three keys or more cannot have). Tables written after
//! scans have their key maps fitted (coarsened) to them. Every scan must
//! equal a `BTreeMap`'s, and on every shape range filters must have skipped
//! tables.

use std::collections::BTreeMap;
use std::ops::Bound;

use amq::hash::remix;
use amq::range::RangeSizing;
use amq::{FilterKind, FilterSizing};
use amq_lsm::{CompactionStyle, Db, FilterPolicy, LevelRangeFilter, RangeFilterPolicy};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};

use super::{model_range, read_both_ways};
use crate::common::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `t{tenant:06}:{row:08}`: key `i` is tenant `TENANTS[i % 8]`, its
    /// `i / 8`-th row; rows are about 10 apart.
    Composite,
    /// `ev:{t:020}`, `t` nanoseconds, about one second apart.
    Decimal,
    /// Consecutive integers, 8 bytes big-endian.
    Consecutive,
    /// Every fourth integer.
    Stride4,
    /// Runs of 1,000 consecutive integers, a million apart.
    Runs,
    /// Mixed lengths, in five families (see [`Shape::key`]).
    Mixed,
    /// `o/{a}{b}`: `a` one of 12 random 8-byte ids, `b` a random 8-byte id,
    /// so tables' key maps read `a` as one digit of its values.
    RandomIds,
}

const SHAPES: [Shape; 7] = [
    Shape::Composite,
    Shape::Decimal,
    Shape::Consecutive,
    Shape::Stride4,
    Shape::Runs,
    Shape::Mixed,
    Shape::RandomIds,
];

/// The tenants that have rows; every other one is absent.
const TENANTS: [u64; 8] = [2, 3, 5, 8, 13, 21, 34, 55];
const ROWS: u64 = 100_000_000;
const DENSE_BASE: u64 = 0x0000_0187_4a00_0000;

impl Shape {
    /// How many keys the shape has: `key(0..universe())`.
    fn universe(self) -> u32 {
        match self {
            Shape::Runs => 2400,
            Shape::Mixed => 300,
            _ => 800,
        }
    }

    /// The number key `i` is written from (`None`: not a numeric shape).
    fn coord(self, i: u32) -> Option<u64> {
        let i = u64::from(i);
        Some(match self {
            Shape::Composite => {
                let row = i / 8 * 10 + i / 8 % 3;
                TENANTS[(i % 8) as usize] * ROWS + row
            }
            Shape::Decimal => 1_700_000_000_000_000_000 + i * 1_000_000_000 + remix(i, 1) % 50_000_000,
            Shape::Consecutive => DENSE_BASE + i,
            Shape::Stride4 => DENSE_BASE + 4 * i,
            Shape::Runs => DENSE_BASE + i / 1000 * 1_000_000 + i % 1000,
            Shape::Mixed | Shape::RandomIds => return None,
        })
    }

    /// The key of number `c` (numeric shapes).
    fn render(self, c: u64) -> Vec<u8> {
        match self {
            Shape::Composite => format!("t{:06}:{:08}", c / ROWS, c % ROWS).into_bytes(),
            Shape::Decimal => format!("ev:{c:020}").into_bytes(),
            _ => c.to_be_bytes().to_vec(),
        }
    }

    fn key(self, i: u32) -> Vec<u8> {
        if let Some(c) = self.coord(i) {
            return self.render(c);
        }
        if self == Shape::RandomIds {
            let a = remix(u64::from(i % 12), 3).to_be_bytes();
            return [&b"o/"[..], &a, &remix(u64::from(i), 4).to_be_bytes()].concat();
        }
        let j = u64::from(i / 5);
        // 25 decimal digits: 20 from a head shared by four keys, then 5
        // that tell the four apart (past 64 bits: they share a `u64`).
        let long = format!("{:020}{:05}", remix(j / 4, 2), (j % 4) * 12_345);
        match i % 5 {
            // Prefixes of one another, with 0x00 bytes appended.
            0 => {
                let mut k = b"m/".to_vec();
                k.extend_from_slice(&b"abcdefghijklmnopqrstuvwxyz"[..(j % 27) as usize]);
                k.resize(k.len() + (j / 27) as usize, 0);
                k
            }
            // Short binary keys, some ending in one or two 0x00 bytes.
            1 => {
                let mut k = vec![b'q', (j * 37 % 256) as u8];
                k.resize(k.len() + (j % 3) as usize, 0);
                k
            }
            // A 44-byte shared head, then the difference.
            2 => {
                let mut k = vec![b'H'; 44];
                k.extend_from_slice(format!("{:03}", j * 7).as_bytes());
                if j % 4 == 0 {
                    k.extend_from_slice(b"/x");
                }
                k
            }
            3 => format!("n:{long}").into_bytes(),
            // Prefixes of those.
            _ => format!("n:{}", &long[..10 + (j % 11) as usize]).into_bytes(),
        }
    }
}

/// The greatest byte string below `k` if `k` ends in 0x00 (its prefix),
/// else one just below it: `k` with its last byte lowered and four 0xff
/// appended.
fn just_before(k: &[u8]) -> Vec<u8> {
    match k.split_last() {
        None => Vec::new(),
        Some((0, head)) => head.to_vec(),
        Some((&last, head)) => {
            let mut v = head.to_vec();
            v.push(last - 1);
            v.extend_from_slice(&[0xff; 4]);
            v
        }
    }
}

fn with(k: &[u8], tail: &[u8]) -> Vec<u8> {
    [k, tail].concat()
}

fn bound(kind: u8, k: Vec<u8>) -> Bound<Vec<u8>> {
    match kind % 3 {
        0 => Bound::Included(k),
        1 => Bound::Excluded(k),
        _ => Bound::Unbounded,
    }
}

/// The store's range filter policy after each reopen.
fn range_policy(c: u8) -> RangeFilterPolicy {
    let bits = |b| RangeFilterPolicy::uniform(RangeSizing::BitsPerKey(b));
    let fpr = |fpr, max_range_len| RangeFilterPolicy::uniform(RangeSizing::Fpr { fpr, max_range_len });
    match c % 9 {
        0 => RangeFilterPolicy::none(),
        1 => bits(2.0),
        2 => bits(12.0),
        3 => bits(16.0),
        4 => bits(64.0),
        5 => fpr(0.01, 4),
        6 => fpr(0.001, 1 << 40),
        // Within the filter's domain for one key, past it from three:
        // tables are written without a range filter.
        7 => fpr(0.01, 1 << 54),
        _ => bits(16.0).with_first(LevelRangeFilter::new(
            FilterKind::GrafiteRange,
            RangeSizing::BitsPerKey(2.0),
        )),
    }
}

/// One end of a scan: a bound kind (included, excluded, unbounded), the
/// key it is taken from and a tweak of that key.
#[derive(Debug, Clone, Copy)]
struct End(u8, u32, u8);

#[derive(Debug, Clone)]
enum Op {
    Put(u32, u8),
    /// Keys `i..i + n` (for composite keys, `n / 8` rows of every tenant).
    PutRun(u32, u8),
    Delete(u32),
    DeleteRun(u32, u8),
    Get(u32),
    /// Any two ends, in any order, read from both ends in the order of the
    /// bits.
    Scan(End, End, u64),
    /// A narrow scan around keys: from the `p`-th key of the shape in order
    /// to the `p + d`-th (`d < 3`), each end tweaked as an [`End`] is but
    /// never unbounded (ranges ending just before or after a key, or at
    /// `key + 0x00`).
    Near(u32, u8, (u8, u8), (u8, u8), u64),
    /// A scan strictly between two neighbouring keys of the shape: from
    /// just past one to just before the other, each end in one of two
    /// forms (the neighbour itself excluded, or the nearest key inside
    /// included).
    Gap(u32, u8, u64),
    /// A whole tenant `t{x:06}:..t{x:06};` (another shape: everything
    /// under a prefix of one of its keys), each end included or excluded.
    Tenant(u8, u8, u64),
    Flush,
    Compact,
    Reopen(u8),
}

fn op(n: u32) -> impl Strategy<Value = Op> {
    let k = 0..n;
    let end = (0u8..3, k.clone(), any::<u8>()).prop_map(|(b, i, t)| End(b, i, t));
    prop_oneof![
        30 => (k.clone(), any::<u8>()).prop_map(|(i, v)| Op::Put(i, v)),
        6 => (k.clone(), 1u8..64).prop_map(|(i, len)| Op::PutRun(i, len)),
        8 => k.clone().prop_map(Op::Delete),
        2 => (k.clone(), 1u8..32).prop_map(|(i, len)| Op::DeleteRun(i, len)),
        4 => k.clone().prop_map(Op::Get),
        12 => (end.clone(), end, any::<u64>()).prop_map(|(a, b, bits)| Op::Scan(a, b, bits)),
        12 => (k.clone(), 0u8..3, any::<(u8, u8)>(), any::<(u8, u8)>(), any::<u64>())
            .prop_map(|(p, d, a, b, bits)| Op::Near(p, d, a, b, bits)),
        12 => (k, any::<u8>(), any::<u64>()).prop_map(|(g, form, bits)| Op::Gap(g, form, bits)),
        4 => (0u8..64, any::<u8>(), any::<u64>()).prop_map(|(x, kinds, bits)| Op::Tenant(x, kinds, bits)),
        4 => Just(Op::Flush),
        1 => Just(Op::Compact),
        2 => any::<u8>().prop_map(Op::Reopen),
    ]
}

/// The shape's keys: by index, and sorted (distinct) with their numbers.
struct Keys {
    shape: Shape,
    by_index: Vec<Vec<u8>>,
    sorted: Vec<(Vec<u8>, Option<u64>)>,
}

impl Keys {
    fn new(shape: Shape) -> Keys {
        let by_index: Vec<Vec<u8>> = (0..shape.universe()).map(|i| shape.key(i)).collect();
        let sorted: BTreeMap<Vec<u8>, Option<u64>> = (0..shape.universe())
            .map(|i| (shape.key(i), shape.coord(i)))
            .collect();
        Keys {
            shape,
            by_index,
            sorted: sorted.into_iter().collect(),
        }
    }

    fn key(&self, i: u32) -> &[u8] {
        &self.by_index[i as usize % self.by_index.len()]
    }

    /// A scan end: key `i` as it is, at `key + 0x00`, just before it, cut
    /// by one or two bytes, with its last byte raised, or (numeric shapes)
    /// at the numbers next to its own.
    fn end(&self, End(kind, i, tweak): End) -> Bound<Vec<u8>> {
        let c = self.shape.coord(i % self.shape.universe());
        bound(kind, self.tweak(self.key(i), c, tweak))
    }

    /// A narrow range around the `p`-th key in order (see [`Op::Near`]).
    fn near(&self, p: u32, d: u8, lo: (u8, u8), hi: (u8, u8)) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
        let p = p as usize % self.sorted.len();
        let (a, ca) = &self.sorted[p];
        let (b, cb) = &self.sorted[(p + usize::from(d)).min(self.sorted.len() - 1)];
        (
            bound(lo.0 % 2, self.tweak(a, *ca, lo.1)),
            bound(hi.0 % 2, self.tweak(b, *cb, hi.1)),
        )
    }

    /// Key `k` (of number `c`) as a scan end takes it (see [`Keys::end`]).
    fn tweak(&self, k: &[u8], c: Option<u64>, tweak: u8) -> Vec<u8> {
        let cut = |n: usize| k[..k.len().saturating_sub(n)].to_vec();
        match (tweak % 8, c) {
            (0, _) => k.to_vec(),
            (1, _) => with(k, &[0]),
            (2, _) => just_before(k),
            (3, _) => cut(1),
            (4, _) => match k.split_last() {
                Some((&last, head)) if last < 0xff => with(head, &[last + 1]),
                _ => with(k, &[0xff]),
            },
            (5, Some(c)) => self.shape.render(c + 1),
            (6, Some(c)) => self.shape.render(c - 1),
            (5, None) => with(k, &[0, 0]),
            _ => cut(2),
        }
    }

    /// A range strictly between two neighbouring keys of the shape (see
    /// [`Op::Gap`]).
    fn gap(&self, g: u32, form: u8) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
        let p = g as usize % (self.sorted.len() - 1);
        let ((a, ca), (b, cb)) = (&self.sorted[p], &self.sorted[p + 1]);
        let (a_in, b_in) = match (ca, cb) {
            (Some(ca), Some(cb)) if cb - ca >= 2 => (self.shape.render(ca + 1), self.shape.render(cb - 1)),
            _ => (with(a, &[0]), just_before(b)),
        };
        let lo = match form & 1 {
            0 => Bound::Excluded(a.clone()),
            _ => Bound::Included(a_in),
        };
        let hi = match form & 2 {
            0 => Bound::Excluded(b.clone()),
            _ => Bound::Included(b_in),
        };
        (lo, hi)
    }

    /// A whole tenant (see [`Op::Tenant`]).
    fn tenant(&self, x: u8, kinds: u8) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
        let (lo, hi) = match self.shape {
            Shape::Composite => (format!("t{x:06}:").into_bytes(), format!("t{x:06};").into_bytes()),
            _ => {
                let k = self.key(u32::from(x) * (self.shape.universe() / 64));
                let p = &k[..k.len().saturating_sub(1 + usize::from(x % 3))];
                let hi = match p.split_last() {
                    Some((&last, head)) if last < 0xff => with(head, &[last + 1]),
                    _ => with(p, &[0xff; 4]),
                };
                (p.to_vec(), hi)
            }
        };
        let b = |k, excluded: bool| match excluded {
            false => Bound::Included(k),
            true => Bound::Excluded(k),
        };
        (b(lo, kinds & 1 != 0), b(hi, kinds & 2 != 0))
    }
}

/// What a shape's cases did, to prove they exercised the range filters.
#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    scans: u64,
    empty_scans: u64,
    range_probes: u64,
    range_negatives: u64,
    range_filters_not_built: u64,
    /// Tables whose keys' differences passed 64 bits, most at one time.
    tables_collapsing: usize,
    /// Tables whose key maps were coarsened to the scans seen, most at one
    /// time.
    tables_coarsened: usize,
    /// Tables with infix filters (keys past 64 bits), most at one time.
    tables_infix: usize,
}

impl Seen {
    fn count(&mut self, s: &amq_lsm::Stats) {
        self.range_probes += s.range_probes;
        self.range_negatives += s.range_negatives;
        self.range_filters_not_built += s.range_filters_not_built;
        let collapsing = s.levels.iter().map(|l| l.range_tables_collapsing).sum();
        self.tables_collapsing = self.tables_collapsing.max(collapsing);
        let coarsened = s.levels.iter().map(|l| l.range_tables_coarsened).sum();
        self.tables_coarsened = self.tables_coarsened.max(coarsened);
        let infix = s.levels.iter().map(|l| l.range_tables_infix).sum();
        self.tables_infix = self.tables_infix.max(infix);
    }

    fn add(&mut self, o: Seen) {
        self.scans += o.scans;
        self.empty_scans += o.empty_scans;
        self.range_probes += o.range_probes;
        self.range_negatives += o.range_negatives;
        self.range_filters_not_built += o.range_filters_not_built;
        self.tables_collapsing = self.tables_collapsing.max(o.tables_collapsing);
        self.tables_coarsened = self.tables_coarsened.max(o.tables_coarsened);
        self.tables_infix = self.tables_infix.max(o.tables_infix);
    }
}

fn check(keys: &Keys, style: CompactionStyle, first: u8, ops: &[Op]) -> Result<Seen, TestCaseError> {
    let (_, env) = mem_env();
    let dir = std::path::Path::new("/db");
    let policy = FilterPolicy::uniform(FilterKind::BlockedBloom, FilterSizing::Fpr(0.01));
    let opts = |c: u8| small_options(env.clone(), policy.clone(), style).range_filter_policy(range_policy(c));
    let mut db = Db::open(dir, opts(first)).unwrap();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut seen = Seen::default();
    let n = keys.shape.universe();
    let run = |i: u32, len: u8| (i..(i + u32::from(len)).min(n)).map(|i| keys.key(i).to_vec());
    for (at, op) in ops.iter().enumerate() {
        let range = match op {
            Op::Put(i, v) => {
                let v = vec![*v; usize::from(v % 16)];
                db.put(keys.key(*i), &v).unwrap();
                model.insert(keys.key(*i).to_vec(), v);
                continue;
            }
            Op::PutRun(i, len) => {
                for k in run(*i, *len) {
                    let v = (at as u32).to_le_bytes().to_vec();
                    db.put(&k, &v).unwrap();
                    model.insert(k, v);
                }
                continue;
            }
            Op::Delete(i) => {
                db.delete(keys.key(*i)).unwrap();
                model.remove(keys.key(*i));
                continue;
            }
            Op::DeleteRun(i, len) => {
                for k in run(*i, *len) {
                    db.delete(&k).unwrap();
                    model.remove(&k);
                }
                continue;
            }
            Op::Get(i) => {
                let k = keys.key(*i);
                prop_assert_eq!(db.get(k).unwrap(), model.get(k).cloned(), "op {} {:?}", at, op);
                continue;
            }
            Op::Flush => {
                db.flush().unwrap();
                continue;
            }
            Op::Compact => {
                db.compact().unwrap();
                continue;
            }
            Op::Reopen(c) => {
                seen.count(&db.stats());
                drop(db);
                db = Db::open(dir, opts(*c)).unwrap();
                continue;
            }
            Op::Scan(a, b, bits) => (keys.end(*a), keys.end(*b), *bits),
            Op::Near(p, d, a, b, bits) => {
                let (lo, hi) = keys.near(*p, *d, *a, *b);
                (lo, hi, *bits)
            }
            Op::Gap(g, form, bits) => {
                let (lo, hi) = keys.gap(*g, *form);
                (lo, hi, *bits)
            }
            Op::Tenant(x, kinds, bits) => {
                let (lo, hi) = keys.tenant(*x, *kinds);
                (lo, hi, *bits)
            }
        };
        let (lo, hi, bits) = range;
        let want = model_range(&model, lo.clone(), hi.clone());
        let got = read_both_ways(db.scan((lo.clone(), hi.clone())), bits);
        prop_assert_eq!(&got, &want, "op {} {:?}: {:?}..{:?}", at, op, lo, hi);
        seen.scans += 1;
        seen.empty_scans += u64::from(want.is_empty());
    }
    prop_assert_eq!(contents(&db), model.clone());
    let s = db.stats();
    prop_assert_eq!(s.untrusted_range_filters, 0);
    seen.count(&s);
    Ok(seen)
}

/// Cases per (shape, compaction style): more with `AMQ_LSM_MODEL_CASES`.
fn cases() -> u32 {
    std::env::var("AMQ_LSM_MODEL_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8)
}

fn run(shape: Shape, style: CompactionStyle, seed: u64) -> Seen {
    let keys = Keys::new(shape);
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    });
    let total = std::cell::Cell::new(Seen::default());
    let strategy = (
        proptest::collection::vec(op(shape.universe()), 150..300),
        any::<u8>(),
    );
    runner
        .run(&strategy, |(ops, first)| {
            let s = check(&keys, style, first, &ops)?;
            let mut t = total.get();
            t.add(s);
            total.set(t);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{shape:?} {style:?}: {e}"));
    total.get()
}

fn every_shape(style: CompactionStyle, seed: u64) {
    let (mut not_built, mut coarsened) = (0, 0);
    for (i, shape) in SHAPES.into_iter().enumerate() {
        let seen = run(shape, style, seed + i as u64);
        assert!(
            seen.empty_scans > 0 && seen.empty_scans < seen.scans,
            "{shape:?} {seen:?}"
        );
        // Range filters must have skipped tables, or the test proves
        // nothing about the key maps that made these keys dense.
        assert!(seen.range_negatives > 0, "{shape:?} {seen:?}");
        if shape == Shape::Mixed {
            // Keys past 64 bits of differences: tables whose keys share
            // range filter `u64`s were scanned (sizings too small for an
            // infix filter's heads), and tables with infix filters.
            assert!(seen.tables_collapsing > 0, "{shape:?} {seen:?}");
            assert!(seen.tables_infix > 0, "{shape:?} {seen:?}");
        }
        not_built += seen.range_filters_not_built;
        coarsened += seen.tables_coarsened;
    }
    // The sizing past the filter's domain wrote tables without one.
    assert!(not_built > 0);
    // Tables written after scans were fitted to them, and gave the model's
    // rows all the same.
    assert!(coarsened > 0);
}

#[test]
fn scan_model_key_shapes_leveled() {
    every_shape(leveled(), 500);
}

#[test]
fn scan_model_key_shapes_tiered() {
    every_shape(tiered(), 600);
}
