//! `size_in_bytes` is every heap byte a filter holds: measured with a
//! counting allocator, for every kind, built and decoded; and decoding a
//! key map takes no more heap than its bytes imply.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use amq::hash::ParquetHash;
use amq::{
    AnyFilter, AtomicBlockedBloom, BinaryFuse16, BinaryFuse32, BinaryFuse8, BlockedBloom, CountingBloom,
    CuckooFilter, Filter, FilterSizing, FuseParams, Insert, KeyHash, ParquetBloom, Ribbon, RibbonParams,
    SplitBlockBloom, StandardBloom, Xor16, Xor8,
};

/// The system allocator, counting the live bytes each thread allocated
/// (a thread's count, so tests running on other threads do not disturb it).
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(delta: isize) {
    // `try_with`: the count is gone while the thread exits; nothing to do then.
    let _ = LIVE.try_with(|c| {
        c.set(c.get() + delta);
        let _ = PEAK.try_with(|p| p.set(p.get().max(c.get())));
    });
}

/// What `make` returns, and the most heap it held at once above what was
/// live before it.
fn peak<T>(make: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(before));
    let value = make();
    (value, (PEAK.with(Cell::get) - before) as usize)
}

// SAFETY: every method forwards to `System` with the caller's arguments,
// which meet `System`'s requirements because they meet ours; the counting
// only touches a thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as isize));
        // SAFETY: forwarded contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            add(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// What `make` returns, and the heap bytes it still holds after returning
/// (everything it allocated and freed on the way does not count).
fn held<T>(make: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.with(Cell::get);
    let value = make();
    let after = LIVE.with(Cell::get);
    (value, (after - before) as usize)
}

/// Builds with `make`, then decodes the filter's bytes both by type and as
/// an `AnyFilter`, and checks each time that `size_in_bytes` is what is held.
fn check<F: Filter>(name: &str, make: impl FnOnce() -> F, decode: impl Fn(&[u8]) -> F) {
    let (f, bytes) = held(make);
    assert_eq!(f.size_in_bytes(), bytes, "{name}: built");
    let encoded = f.to_bytes();
    let (g, bytes) = held(|| decode(&encoded));
    assert_eq!(g.size_in_bytes(), bytes, "{name}: decoded");
    if name != "AtomicBlockedBloom" {
        let (a, bytes) = held(|| AnyFilter::from_bytes(&encoded).unwrap());
        assert_eq!(a.size_in_bytes(), bytes, "{name}: decoded as AnyFilter");
    }
}

#[test]
fn size_in_bytes_is_the_heap_held_by_every_kind() {
    use amq::FromBytes;
    let keys: Vec<KeyHash> = (0..100_000u64)
        .map(|i| KeyHash::from_well_mixed(amq::hash::remix(i, 12)))
        .collect();
    let insert = |f: &mut dyn FnMut(KeyHash)| keys.iter().for_each(|&h| f(h));
    check(
        "StandardBloom",
        || {
            let mut f = StandardBloom::new(keys.len(), FilterSizing::Fpr(0.01)).unwrap();
            insert(&mut |h| f.insert_hash(h).unwrap());
            f
        },
        |b| StandardBloom::from_bytes(b).unwrap(),
    );
    check(
        "BlockedBloom",
        || {
            let mut f = BlockedBloom::new(keys.len(), FilterSizing::Fpr(0.01)).unwrap();
            insert(&mut |h| f.insert_hash(h).unwrap());
            f
        },
        |b| BlockedBloom::from_bytes(b).unwrap(),
    );
    check(
        "SplitBlockBloom",
        || {
            let mut f = SplitBlockBloom::new(keys.len(), FilterSizing::Fpr(0.01)).unwrap();
            insert(&mut |h| f.insert_hash(h).unwrap());
            f
        },
        |b| SplitBlockBloom::from_bytes(b).unwrap(),
    );
    check(
        "AtomicBlockedBloom",
        || {
            let f = AtomicBlockedBloom::new(keys.len(), FilterSizing::Fpr(0.01)).unwrap();
            insert(&mut |h| f.insert_hash(h).unwrap());
            f
        },
        |b| AtomicBlockedBloom::from_bytes(b).unwrap(),
    );
    check(
        "CountingBloom",
        || {
            let mut f = CountingBloom::new(keys.len(), FilterSizing::Fpr(0.01)).unwrap();
            insert(&mut |h| f.insert_hash(h).unwrap());
            f
        },
        |b| CountingBloom::from_bytes(b).unwrap(),
    );
    for bits in [8, 12, 16] {
        check(
            "CuckooFilter",
            || {
                let mut f = CuckooFilter::with_fingerprint_bits(keys.len(), bits).unwrap();
                insert(&mut |h| f.insert_hash(h).unwrap());
                f
            },
            |b| CuckooFilter::from_bytes(b).unwrap(),
        );
    }
    check(
        "Xor8",
        || Xor8::build(&keys).unwrap(),
        |b| Xor8::from_bytes(b).unwrap(),
    );
    check(
        "Xor16",
        || Xor16::build(&keys).unwrap(),
        |b| Xor16::from_bytes(b).unwrap(),
    );
    check(
        "BinaryFuse8",
        || BinaryFuse8::build(&keys).unwrap(),
        |b| BinaryFuse8::from_bytes(b).unwrap(),
    );
    check(
        "BinaryFuse8 4-wise",
        || BinaryFuse8::build_with(&keys, &FuseParams::FOUR_WISE).unwrap(),
        |b| BinaryFuse8::from_bytes(b).unwrap(),
    );
    check(
        "BinaryFuse16",
        || BinaryFuse16::build(&keys).unwrap(),
        |b| BinaryFuse16::from_bytes(b).unwrap(),
    );
    check(
        "BinaryFuse32",
        || BinaryFuse32::build(&keys).unwrap(),
        |b| BinaryFuse32::from_bytes(b).unwrap(),
    );
    check(
        "PackedBinaryFuse",
        || amq::PackedBinaryFuse::build(&keys, FilterSizing::Fpr(0.001)).unwrap(),
        |b| amq::PackedBinaryFuse::from_bytes(b).unwrap(),
    );
    for params in [
        RibbonParams::with_fpr(0.01).unwrap(),
        RibbonParams::with_result_bits(7).unwrap(),
        RibbonParams::with_result_bits(7).unwrap().with_blocked_layout(),
        RibbonParams::with_bits_per_key(11.5).unwrap(),
    ] {
        check(
            "Ribbon",
            || Ribbon::build_with(&keys, &params).unwrap(),
            |b| Ribbon::from_bytes(b).unwrap(),
        );
    }
    // GrafiteRange is a range filter (`RangeFilter`), of ordered keys.
    {
        use amq::range::{GrafiteRange, RangeFilter, RangeSizing};
        let raw: Vec<u64> = keys.iter().map(|h| h.get()).collect();
        for sizing in [
            RangeSizing::BitsPerKey(16.0),
            RangeSizing::Fpr {
                fpr: 0.001,
                max_range_len: 1000,
            },
        ] {
            let (f, bytes) = held(|| GrafiteRange::build(&raw, sizing).unwrap());
            assert_eq!(f.size_in_bytes(), bytes, "GrafiteRange: built");
            let encoded = f.to_bytes();
            let (g, bytes) = held(|| GrafiteRange::from_bytes(&encoded).unwrap());
            assert_eq!(g.size_in_bytes(), bytes, "GrafiteRange: decoded");
        }
    }
    // ParquetBloom is not a `Filter` (nor in `AnyFilter`): its own API.
    let parquet: Vec<ParquetHash> = keys.iter().map(|h| ParquetHash::from_xxh64(h.get())).collect();
    let (f, bytes) = held(|| {
        let mut f = ParquetBloom::new(parquet.len(), FilterSizing::Fpr(0.01)).unwrap();
        f.insert_hashes(&parquet).unwrap();
        f
    });
    assert_eq!(f.size_in_bytes(), bytes, "ParquetBloom: built");
    let encoded = f.to_bytes();
    let (g, bytes) = held(|| ParquetBloom::from_bytes(&encoded).unwrap());
    assert_eq!(g.size_in_bytes(), bytes, "ParquetBloom: decoded");
    let parquet_encoded = f.to_parquet_bytes();
    let (g, bytes) = held(|| ParquetBloom::from_parquet_bytes(&parquet_encoded).unwrap());
    assert_eq!(
        g.size_in_bytes(),
        bytes,
        "ParquetBloom: decoded from Parquet's bytes"
    );
    // A shard that needs more than its first size: tiny slack forces retries
    // with more slots.
    let tight = RibbonParams::with_result_bits(7)
        .unwrap()
        .with_slots_per_key(1.0)
        .unwrap();
    check(
        "Ribbon, retried shards",
        || Ribbon::build_with(&keys, &tight).unwrap(),
        |b| Ribbon::from_bytes(b).unwrap(),
    );
}

/// A key map frame claiming 51 digits in 73 bytes (the `decode_key_map`
/// fuzzer's find, `tests/fuzz_regressions/decode_key_map-digit-reserve`):
/// the decoder reserved room for every digit claimed before reading one.
/// It reserves only what the bytes left can hold; every valid key map
/// decodes within the same bound.
#[test]
fn a_key_map_claiming_digits_its_bytes_cannot_hold_reserves_no_room_for_them() {
    use amq::range::KeyMap;
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fuzz_regressions/decode_key_map-digit-reserve"
    );
    let bytes = std::fs::read(path).unwrap();
    let (decoded, most) = peak(|| KeyMap::from_bytes(&bytes));
    assert!(decoded.is_err());
    assert!(
        most <= 4 * bytes.len() + 1024,
        "{most} bytes to refuse {} bytes",
        bytes.len()
    );
    let ids: Vec<Vec<u8>> = (0..300u64)
        .flat_map(|a| {
            (0..4u64).map(move |b| [amq::hash::remix(a, 1).to_be_bytes(), b.to_be_bytes()].concat())
        })
        .collect();
    for keys in [
        ids,
        (0..1_000u64)
            .map(|i| format!("t{:06}:{:08}", i % 7, i).into_bytes())
            .collect(),
    ] {
        let bytes = KeyMap::from_keys(keys.iter().map(Vec::as_slice)).to_bytes();
        let (decoded, most) = peak(|| KeyMap::from_bytes(&bytes).unwrap());
        assert!(
            most <= 5 * bytes.len() + 64 * 256,
            "{most} bytes to decode {} bytes",
            bytes.len()
        );
        drop(decoded);
    }
}
