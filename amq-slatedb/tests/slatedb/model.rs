//! amq's policies inside SlateDB against a `BTreeMap` model: puts, deletes,
//! merges, memtable flushes, compactions, reopens with another policy list
//! and a `DbReader` beside the writer, checking `get`, scans (every bound
//! kind), prefix scans and scans inside a prefix after every step; then the
//! same with filters whose bytes were damaged (flipped, truncated, empty)
//! and with filters under a name the reader does not know. Every answer
//! must be the model's.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use crate::support::{Concat, Damage, Damaging, Rng, collect, flush, settings};
use amq::plan::Priority;
use amq::range::RangeSizing;
use amq::{DelimitedPrefix, FilterKind, FilterSizing};
use amq_slatedb::{PointFilterPolicy, PrefixFilterPolicy, RangeFilterPolicy};
use slatedb::config::DbReaderOptions;
use slatedb::object_store::ObjectStore;
use slatedb::object_store::memory::InMemory;
use slatedb::{Db, DbReader, DbReaderMode, FilterPolicy};
use slatedb_common::metrics::{DefaultMetricsRecorder, MetricValue};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
type Policies = Vec<Arc<dyn FilterPolicy>>;

/// Keys of several shapes: composite `t{tenant:02}:{row:04}`, keys that are
/// prefixes of others (`t03:`, `t03:0001`, `t03:00012`), and binary ones.
fn key(rng: &mut Rng) -> Vec<u8> {
    match rng.below(10) {
        0..=6 => format!("t{:02}:{:04}", rng.below(6), rng.below(120)).into_bytes(),
        7 => format!("t03:{}", ["", "0001", "00012", "000"][rng.below(4) as usize]).into_bytes(),
        _ => {
            let mut k = b"b".to_vec();
            k.extend_from_slice(&rng.next().to_be_bytes()[..1 + rng.below(8) as usize]);
            k
        }
    }
}

fn bound(rng: &mut Rng) -> Bound<Vec<u8>> {
    match rng.below(4) {
        0 => Bound::Unbounded,
        1 => Bound::Excluded(key(rng)),
        _ => Bound::Included(key(rng)),
    }
}

/// Whether a key may lie in `lo..hi` at all.
fn non_empty(lo: &Bound<Vec<u8>>, hi: &Bound<Vec<u8>>) -> bool {
    match (lo, hi) {
        (Bound::Included(a), Bound::Included(b)) => a <= b,
        (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) => a < b,
        _ => true,
    }
}

fn in_range(model: &Model, lo: &Bound<Vec<u8>>, hi: &Bound<Vec<u8>>) -> Vec<(Vec<u8>, Vec<u8>)> {
    if !non_empty(lo, hi) {
        return Vec::new();
    }
    model
        .range::<Vec<u8>, _>((lo.clone(), hi.clone()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Reads of one kind or another, from a writer or a reader.
enum Reads<'a> {
    Db(&'a Db),
    Reader(&'a DbReader),
}

impl Reads<'_> {
    async fn get(&self, k: &[u8]) -> Option<Vec<u8>> {
        match self {
            Reads::Db(d) => d.get(k).await.unwrap(),
            Reads::Reader(r) => r.get(k).await.unwrap(),
        }
        .map(|v| v.to_vec())
    }
    async fn scan(&self, lo: Bound<Vec<u8>>, hi: Bound<Vec<u8>>) -> Vec<(Vec<u8>, Vec<u8>)> {
        match self {
            Reads::Db(d) => collect(d.scan((lo, hi)).await.unwrap()).await,
            Reads::Reader(r) => collect(r.scan((lo, hi)).await.unwrap()).await,
        }
    }
    async fn scan_prefix(&self, p: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        match self {
            Reads::Db(d) => collect(d.scan_prefix(p, ..).await.unwrap()).await,
            Reads::Reader(r) => collect(r.scan_prefix(p, ..).await.unwrap()).await,
        }
    }
}

/// Every kind of read, checked against the model.
async fn check(reads: &Reads<'_>, model: &Model, rng: &mut Rng, what: &str) {
    for _ in 0..12 {
        let k = key(rng);
        assert_eq!(
            reads.get(&k).await,
            model.get(&k).cloned(),
            "{what}: get {:?}",
            String::from_utf8_lossy(&k)
        );
    }
    for (k, v) in model.iter().step_by(7) {
        assert_eq!(reads.get(k).await.as_ref(), Some(v), "{what}: get of a held key");
    }
    for _ in 0..4 {
        let (lo, hi) = (bound(rng), bound(rng));
        // SlateDB refuses (panics on) an empty range: only non-empty ones.
        if non_empty(&lo, &hi) {
            assert_eq!(
                reads.scan(lo.clone(), hi.clone()).await,
                in_range(model, &lo, &hi),
                "{what}: scan {lo:?}..{hi:?}"
            );
        }
    }
    // Scans inside one tenant, empty or not.
    let t = rng.below(7);
    let (a, b) = (rng.below(120), rng.below(120));
    let lo = Bound::Included(format!("t{t:02}:{:04}", a.min(b)).into_bytes());
    let hi = Bound::Excluded(format!("t{t:02}:{:04}", a.max(b) + 1).into_bytes());
    assert_eq!(
        reads.scan(lo.clone(), hi.clone()).await,
        in_range(model, &lo, &hi),
        "{what}: scan in a tenant"
    );
    for p in [
        format!("t{:02}:", rng.below(7)),
        format!("t{:02}:00{}", rng.below(7), rng.below(10)),
        "t0".into(),
        "b".into(),
        "t03:".into(),
    ] {
        let want: Vec<_> = model
            .iter()
            .filter(|(k, _)| k.starts_with(p.as_bytes()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        assert_eq!(
            reads.scan_prefix(p.as_bytes()).await,
            want,
            "{what}: scan_prefix {p}"
        );
    }
}

fn point(kind: FilterKind) -> Arc<dyn FilterPolicy> {
    Arc::new(PointFilterPolicy::new(kind, FilterSizing::Fpr(0.02)).unwrap())
}

fn prefix() -> Arc<dyn FilterPolicy> {
    Arc::new(
        PrefixFilterPolicy::new(
            DelimitedPrefix::new(b':'),
            FilterKind::BlockedBloom,
            FilterSizing::Fpr(0.02),
        )
        .unwrap(),
    )
}

fn range() -> Arc<dyn FilterPolicy> {
    Arc::new(RangeFilterPolicy::new(RangeSizing::BitsPerKey(12.0)).unwrap())
}

async fn open(
    store: &Arc<dyn ObjectStore>,
    policies: &Policies,
    compact: bool,
    metrics: &Arc<DefaultMetricsRecorder>,
) -> Db {
    Db::builder("db", Arc::clone(store))
        .with_metrics_recorder(metrics.clone())
        .with_settings(settings(compact))
        .with_filter_policies(policies.clone())
        .with_merge_operator(Arc::new(Concat))
        .build()
        .await
        .unwrap()
}

async fn reader(store: &Arc<dyn ObjectStore>, policies: &Policies) -> DbReader {
    DbReader::builder("db", Arc::clone(store))
        .with_reader_mode(DbReaderMode::FollowLatest)
        .with_options(DbReaderOptions {
            skip_wal_replay: true,
            ..DbReaderOptions::default()
        })
        .with_filter_policies(policies.clone())
        .with_merge_operator(Arc::new(Concat))
        .build()
        .await
        .unwrap()
}

/// One run: `steps` random operations with the writer's policies
/// `lists[0]`, a reopen (and each reader) taking the next list in turn.
async fn run(seed: u64, lists: &[Policies], compact: bool, steps: usize) -> Arc<DefaultMetricsRecorder> {
    let metrics = Arc::new(DefaultMetricsRecorder::new());
    let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
    let mut rng = Rng(seed);
    let mut model = Model::new();
    let mut list = 0;
    let mut db = open(&store, &lists[list], compact, &metrics).await;
    for step in 0..steps {
        match rng.below(100) {
            0..=44 => {
                let (k, v) = (key(&mut rng), format!("v{step}").into_bytes());
                db.put(&k, &v).await.unwrap();
                model.insert(k, v);
            }
            45..=56 => {
                let k = match rng.below(2) {
                    0 => model
                        .keys()
                        .nth(rng.below(model.len().max(1) as u64) as usize)
                        .cloned()
                        .unwrap_or_else(|| key(&mut rng)),
                    _ => key(&mut rng),
                };
                db.delete(&k).await.unwrap();
                model.remove(&k);
            }
            57..=64 => {
                let k = key(&mut rng);
                let operand = format!("+{step}").into_bytes();
                db.merge(&k, &operand).await.unwrap();
                model.entry(k).or_default().extend_from_slice(&operand);
            }
            65..=79 => flush(&db).await,
            80..=95 => {
                check(
                    &Reads::Db(&db),
                    &model,
                    &mut rng,
                    &format!("seed {seed} step {step}"),
                )
                .await
            }
            96..=97 => {
                // A reader with the next list, beside the writer.
                flush(&db).await;
                let r = reader(&store, &lists[(list + 1) % lists.len()]).await;
                check(
                    &Reads::Reader(&r),
                    &model,
                    &mut rng,
                    &format!("seed {seed} step {step}, reader"),
                )
                .await;
                r.close().await.unwrap();
            }
            _ => {
                db.close().await.unwrap();
                list = (list + 1) % lists.len();
                db = open(&store, &lists[list], compact, &metrics).await;
            }
        }
    }
    flush(&db).await;
    check(
        &Reads::Db(&db),
        &model,
        &mut rng,
        &format!("seed {seed} at the end"),
    )
    .await;
    db.close().await.unwrap();
    metrics
}

/// The writer's tables the filters ruled out, by target kind (SlateDB's
/// own counter).
fn negatives(metrics: &DefaultMetricsRecorder, kind: &str) -> u64 {
    match metrics
        .snapshot()
        .by_name_and_labels("slatedb.db.sst_filter_negative_count", &[("kind", kind)])
        .map(|m| &m.value)
    {
        Some(MetricValue::Counter(n)) => *n,
        _ => 0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_is_the_models_without_compaction() {
    let lists: Vec<Policies> = vec![
        vec![point(FilterKind::Ribbon), prefix(), range()],
        vec![range(), point(FilterKind::BlockedBloom)],
        vec![],
        vec![
            Arc::new(PointFilterPolicy::planned(0.01, Priority::Speed).unwrap()),
            Arc::new(slatedb::BloomFilterPolicy::new(10)),
        ],
    ];
    for seed in 0..4 {
        let metrics = run(seed, &lists, false, 400).await;
        // The filters were asked, and ruled tables out, for every target.
        for kind in ["point", "prefix", "range"] {
            assert!(negatives(&metrics, kind) > 0, "seed {seed}: no {kind} negatives");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_is_the_models_with_compaction() {
    let lists: Vec<Policies> = vec![
        vec![point(FilterKind::BinaryFuse8), prefix(), range()],
        vec![point(FilterKind::SplitBlockBloom), range()],
    ];
    for seed in 10..13 {
        run(seed, &lists, true, 400).await;
    }
}

/// Damaged filter bytes (SlateDB's checksum passes: the policy wrote them
/// so) decode to "may contain": every answer is still the model's, and the
/// policy counts them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_filter_bytes_never_give_a_wrong_answer() {
    for damage in [Damage::Flip, Damage::Truncate, Damage::Empty] {
        let p = Arc::new(PointFilterPolicy::new(FilterKind::Ribbon, FilterSizing::Fpr(0.02)).unwrap());
        let x = Arc::new(
            PrefixFilterPolicy::new(
                DelimitedPrefix::new(b':'),
                FilterKind::BlockedBloom,
                FilterSizing::Fpr(0.02),
            )
            .unwrap(),
        );
        let r = Arc::new(RangeFilterPolicy::new(RangeSizing::BitsPerKey(12.0)).unwrap());
        let damaging: Policies = [p.clone() as Arc<dyn FilterPolicy>, x.clone(), r.clone()]
            .into_iter()
            .map(|inner| Arc::new(Damaging { inner, damage }) as Arc<dyn FilterPolicy>)
            .collect();
        run(20 + damage as u64, &[damaging], false, 250).await;
        for (name, s) in [("point", p.stats()), ("prefix", x.stats()), ("range", r.stats())] {
            assert!(s.undecodable_filters > 0, "{damage:?} {name}: {s:?}");
            assert_eq!(
                s.filters_decoded, 0,
                "{damage:?} {name}: a damaged filter decoded: {s:?}"
            );
        }
    }
}

/// A writer's filters under names the reader does not know are dropped by
/// SlateDB (the reader reads those tables), and a reader's policies that no
/// table holds are never asked: every answer is the model's either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_lists_that_differ_between_writer_and_reader() {
    let extractor_a = DelimitedPrefix::new(b':');
    let extractor_b = DelimitedPrefix::new(b'0');
    let lists: Vec<Policies> = vec![
        vec![Arc::new(
            PrefixFilterPolicy::new(extractor_a, FilterKind::Ribbon, FilterSizing::Fpr(0.02)).unwrap(),
        )],
        vec![Arc::new(
            PrefixFilterPolicy::new(extractor_b, FilterKind::Ribbon, FilterSizing::Fpr(0.02)).unwrap(),
        )],
        vec![point(FilterKind::Xor8)],
        vec![range(), prefix()],
    ];
    for seed in 30..33 {
        run(seed, &lists, false, 300).await;
    }
}
