//! Small programs a new user writes first, each with the answers it must
//! give: a dedup pre-check over integer ids, concurrent inserts from several
//! threads, a cuckoo filter with deletes, and one hash probed against
//! several filters (a Parquet filter among them, which cannot take it).

use amq::hash::parquet_hash;
use amq::plan::Planner;
use amq::{
    hash_key, hash_u64, AnyFilter, AtomicBlockedBloom, BlockedBloom, CuckooFilter, Error, Filter, FilterKind,
    FilterSizing, Insert, KeyHash, ParquetBloom, Remove, Ribbon, StandardBloom,
};

/// A dedup pre-check: ids stream in, the filter says "new" or "maybe seen"
/// before an expensive exact check. Sequential ids, the common case, go
/// through `hash_u64`: every repeat is caught, and new ids are taken for
/// repeats about as often as the FPR asked (not 100%, as raw ids would give).
#[test]
fn dedup_pre_check_over_sequential_ids() {
    let n = 200_000u64;
    let mut seen = BlockedBloom::new(n as usize, FilterSizing::Fpr(0.01)).unwrap();
    let mut new_but_maybe_seen = 0u64;
    for id in 0..n {
        let h = hash_u64(id);
        new_but_maybe_seen += u64::from(seen.contains_hash(h));
        seen.insert_hash(h).unwrap();
    }
    // While filling, the FPR climbs from 0 to 1%: about 0.3% on average.
    assert!(
        new_but_maybe_seen < n / 100,
        "{new_but_maybe_seen} new ids flagged"
    );
    // Every repeat is flagged.
    assert!((0..n).all(|id| seen.contains_hash(hash_u64(id))));
    // Absent ids once full: about 1% false positives.
    let fp = (n..n + 100_000)
        .filter(|&id| seen.contains_hash(hash_u64(id)))
        .count();
    assert!((500..1_500).contains(&fp), "{fp} of 100,000 absent ids");
}

/// Concurrent inserts: four threads fill one filter through `&self`; every
/// key is found afterwards, and the count is exact.
#[test]
fn concurrent_inserts_from_four_threads() {
    let plan = Planner::for_keys(40_000)
        .fpr(0.01)
        .concurrent_inserts(true)
        .plan()
        .unwrap();
    let f: AtomicBlockedBloom = plan.new_concurrent_filter().unwrap();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let f = &f;
            s.spawn(move || {
                for i in 0..10_000u64 {
                    f.insert_hash(hash_u64(t * 10_000 + i)).unwrap();
                }
            });
        }
    });
    assert_eq!(f.num_keys(), 40_000);
    assert!((0..40_000u64).all(|i| f.contains_hash(hash_u64(i))));
    let fp = (1u64 << 40..(1 << 40) + 100_000)
        .filter(|&i| f.contains_hash(hash_u64(i)))
        .count();
    assert!(fp < 1_500, "{fp}");
}

/// A cuckoo filter with deletes: sessions come and go; a removed session is
/// gone, the others stay, a full table refuses a key without losing any, and
/// the same key inserted too often is `TooManyCopies`, not `Full`.
#[test]
fn cuckoo_with_deletes() {
    let mut live = CuckooFilter::new(10_000, FilterSizing::Fpr(0.01)).unwrap();
    let session = |i: u64| format!("session-{i}").into_bytes();
    for i in 0..10_000 {
        live.insert(&session(i)).unwrap();
    }
    for i in (0..10_000).step_by(2) {
        live.remove(&session(i)).unwrap();
    }
    assert!((1..10_000).step_by(2).all(|i| live.contains(&session(i))));
    let still = (0..10_000)
        .step_by(2)
        .filter(|&i| live.contains(&session(i)))
        .count();
    assert!(still < 100, "{still} removed sessions still answer yes");
    assert_eq!(live.remove(b"never-inserted"), Err(Error::NotPresent));

    // One key over and over: refused once its buckets hold nothing else.
    let mut small = CuckooFilter::with_fingerprint_bits(1_000, 16).unwrap();
    let hot = hash_key(b"hot");
    let copies = (0..20).take_while(|_| small.insert_hash(hot).is_ok()).count();
    assert!((4..=8).contains(&copies), "{copies}");
    assert_eq!(small.insert_hash(hot), Err(Error::TooManyCopies));
    assert!(!small.is_full(), "a refused copy leaves room for other keys");
    small.insert(b"another key").unwrap();

    // A full table: `Full`, and every key inserted before is still found.
    let mut tiny = CuckooFilter::with_fingerprint_bits(100, 8).unwrap();
    let mut inserted = Vec::new();
    for i in 0..1_000u64 {
        match tiny.insert_hash(hash_u64(i)) {
            Ok(()) => inserted.push(hash_u64(i)),
            Err(Error::Full) => break,
            Err(e) => panic!("{e:?}"),
        }
    }
    assert!(tiny.is_full());
    assert!(inserted.iter().all(|&h| tiny.contains_hash(h)));
}

/// One hash, many filters: a key hashed once answers for filters of every
/// kind driven by `KeyHash`; a Parquet filter is not among them (it cannot
/// be made into a `Filter` or an `AnyFilter`) and answers for its own hash.
#[test]
fn one_hash_probed_against_several_filters() {
    let keys: Vec<&[u8]> = vec![b"apple", b"pear", b"plum"];
    let hashes: Vec<KeyHash> = keys.iter().map(|k| hash_key(k)).collect();
    let mut bloom = StandardBloom::new(100, FilterSizing::Fpr(0.01)).unwrap();
    bloom.insert_hashes(&hashes).unwrap();
    let ribbon = Ribbon::build(&hashes, FilterSizing::Fpr(0.01)).unwrap();
    let any = AnyFilter::build(FilterKind::BinaryFuse8, &hashes, FilterSizing::Fpr(0.01)).unwrap();
    let filters: [&dyn Filter; 3] = [&bloom, &ribbon, &any];
    for k in &keys {
        let h = hash_key(k);
        assert!(filters.iter().all(|f| f.contains_hash(h)), "{k:?}");
    }

    let mut parquet = ParquetBloom::new(100, FilterSizing::Fpr(0.01)).unwrap();
    for k in &keys {
        parquet.insert(*k).unwrap();
    }
    // Its own hash finds every value; an amq hash cannot even be passed.
    assert!(keys.iter().all(|k| parquet.contains_hash(parquet_hash(k))));
    assert!(matches!(
        AnyFilter::from_bytes(&parquet.to_bytes()),
        Err(Error::WrongHashScheme { .. })
    ));
}
