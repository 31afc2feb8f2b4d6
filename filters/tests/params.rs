//! Impossible construction parameters give a typed error, never a panic,
//! an abort or a hang, for every Bloom constructor.

use amq::{
    math, AnyFilter, AtomicBlockedBloom, BlockedBloom, CountingBloom, CuckooFilter, Error, Filter,
    FilterKind, FilterSizing, SplitBlockBloom, StandardBloom,
};

/// Every Bloom constructor that takes a target FPR, by name, reduced to
/// "did it build, and what does the formula promise at capacity".
type FprCtor = fn(usize, f64) -> Result<Box<dyn Filter>, Error>;
/// Every constructor that takes bits per key (of memory: four per counter
/// for the counting filter).
type BitsCtor = fn(usize, f64) -> Result<Box<dyn Filter>, Error>;

fn boxed<F: Filter + 'static>(r: Result<F, Error>) -> Result<Box<dyn Filter>, Error> {
    r.map(|f| Box::new(f) as Box<dyn Filter>)
}

const WITH_FPR: [(&str, FprCtor); 5] = [
    ("StandardBloom::new(Fpr)", |n, p| {
        boxed(StandardBloom::new(n, FilterSizing::Fpr(p)))
    }),
    ("BlockedBloom::new(Fpr)", |n, p| {
        boxed(BlockedBloom::new(n, FilterSizing::Fpr(p)))
    }),
    ("AtomicBlockedBloom::new(Fpr)", |n, p| {
        boxed(AtomicBlockedBloom::new(n, FilterSizing::Fpr(p)))
    }),
    ("SplitBlockBloom::new(Fpr)", |n, p| {
        boxed(SplitBlockBloom::new(n, FilterSizing::Fpr(p)))
    }),
    ("CountingBloom::new(Fpr)", |n, p| {
        boxed(CountingBloom::new(n, FilterSizing::Fpr(p)))
    }),
];

const WITH_BITS: [(&str, BitsCtor); 5] = [
    ("StandardBloom::new(BitsPerKey)", |n, b| {
        boxed(StandardBloom::new(n, FilterSizing::BitsPerKey(b)))
    }),
    ("BlockedBloom::new(BitsPerKey)", |n, b| {
        boxed(BlockedBloom::new(n, FilterSizing::BitsPerKey(b)))
    }),
    ("AtomicBlockedBloom::new(BitsPerKey)", |n, b| {
        boxed(AtomicBlockedBloom::new(n, FilterSizing::BitsPerKey(b)))
    }),
    ("SplitBlockBloom::new(BitsPerKey)", |n, b| {
        boxed(SplitBlockBloom::new(n, FilterSizing::BitsPerKey(b)))
    }),
    ("CountingBloom::new(BitsPerKey)", |n, b| {
        boxed(CountingBloom::new(n, FilterSizing::BitsPerKey(b)))
    }),
];

fn is_invalid(r: &Result<Box<dyn Filter>, Error>) -> bool {
    matches!(r, Err(Error::InvalidParameter { .. }))
}

fn is_too_large_or_invalid(r: &Result<Box<dyn Filter>, Error>) -> bool {
    matches!(r, Err(Error::TooLarge | Error::InvalidParameter { .. }))
}

fn describe(r: &Result<Box<dyn Filter>, Error>) -> String {
    match r {
        Ok(f) => format!("Ok({} bytes)", f.size_in_bytes()),
        Err(e) => format!("Err({e:?})"),
    }
}

const BAD_FPRS: [f64; 9] = [
    0.0,
    -0.0,
    1.0,
    -0.01,
    1.5,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
];

const BAD_BITS: [f64; 9] = [
    0.0,
    -0.0,
    -1.0,
    -f64::MIN_POSITIVE,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
    1000.5, // beyond any useful probe count
];

#[test]
fn zero_keys_is_invalid() {
    for (name, ctor) in WITH_FPR {
        let r = ctor(0, 0.01);
        assert!(is_invalid(&r), "{name}(0, 0.01): {}", describe(&r));
    }
    for (name, ctor) in WITH_BITS {
        let r = ctor(0, 10.0);
        assert!(is_invalid(&r), "{name}(0, 10.0): {}", describe(&r));
    }
}

#[test]
fn fpr_outside_zero_one_is_invalid() {
    for (name, ctor) in WITH_FPR {
        for p in BAD_FPRS {
            let r = ctor(1000, p);
            assert!(is_invalid(&r), "{name}(1000, {p}): {}", describe(&r));
            // Also when the key count is absurd: the FPR is checked either way.
            let r = ctor(usize::MAX, p);
            assert!(
                is_too_large_or_invalid(&r),
                "{name}(usize::MAX, {p}): {}",
                describe(&r)
            );
        }
    }
}

#[test]
fn bits_per_key_not_positive_and_finite_is_invalid() {
    for (name, ctor) in WITH_BITS {
        for b in BAD_BITS {
            let r = ctor(1000, b);
            assert!(is_invalid(&r), "{name}(1000, {b}): {}", describe(&r));
        }
    }
}

/// `FilterSizing::BitsPerKey` is `(0, 1000]` for every kind: the counting
/// filter once took up to 4000 (1000 counters of four bits), which
/// `AnyFilter::new` refused. The kind's own constructor and `AnyFilter::new`
/// now give the same error, and so does `FilterSizing::validate`.
#[test]
fn bits_per_key_domain_is_the_same_through_every_door() {
    for b in [1000.0001, 1000.5, 4000.0, f64::NAN, 0.0, -0.0, -1.0, -4000.0] {
        let sizing = FilterSizing::BitsPerKey(b);
        let own = CountingBloom::new(1000, sizing).map(|_| ());
        let any = AnyFilter::new(FilterKind::CountingBloom, 1000, sizing).map(|_| ());
        assert!(
            matches!(
                own,
                Err(Error::InvalidParameter {
                    name: "bits_per_key",
                    ..
                })
            ),
            "CountingBloom::new(1000, BitsPerKey({b})): {own:?}"
        );
        assert_eq!(own, any, "BitsPerKey({b})");
        assert_eq!(sizing.validate().map(|_| ()), own, "validate, BitsPerKey({b})");
        for (kind, err) in [
            ("StandardBloom", StandardBloom::new(1000, sizing).map(|_| ())),
            ("BlockedBloom", BlockedBloom::new(1000, sizing).map(|_| ())),
            ("SplitBlockBloom", SplitBlockBloom::new(1000, sizing).map(|_| ())),
            ("CuckooFilter", CuckooFilter::new(1000, sizing).map(|_| ())),
        ] {
            assert_eq!(err, own, "{kind}::new(1000, BitsPerKey({b}))");
        }
    }
    // The edge itself is in the domain, and the counting filter spends it as
    // memory: 1000 bits are 250 counters per key.
    let f = CountingBloom::new(1000, FilterSizing::BitsPerKey(1000.0)).unwrap();
    assert_eq!(f.num_counters(), 250_000);
    assert!(AnyFilter::new(FilterKind::CountingBloom, 1000, FilterSizing::BitsPerKey(1000.0)).is_ok());
}

#[test]
fn sizes_that_overflow_are_too_large() {
    for (name, ctor) in WITH_BITS {
        for n in [usize::MAX, usize::MAX / 2, usize::MAX / 64 + 1] {
            for b in [1.0, 10.0, 1000.0] {
                let r = ctor(n, b);
                assert!(
                    matches!(r, Err(Error::TooLarge)),
                    "{name}({n}, {b}): {}",
                    describe(&r)
                );
            }
        }
    }
    for (name, ctor) in WITH_FPR {
        for p in [0.5, 0.01, 1e-9] {
            let r = ctor(usize::MAX, p);
            assert!(
                matches!(r, Err(Error::TooLarge)),
                "{name}(usize::MAX, {p}): {}",
                describe(&r)
            );
        }
    }
}

/// Sizes whose arithmetic fits but whose memory cannot exist: more than the
/// 2^48 bytes of any 64-bit address space. An error, not an allocation
/// failure that aborts the process.
#[cfg(target_pointer_width = "64")]
#[test]
fn sizes_beyond_any_address_space_are_too_large() {
    let n = 1usize << 50; // 2^50 keys at 10 bits = 2^53.3 bytes
    for (name, ctor) in WITH_BITS {
        let r = ctor(n, 10.0);
        assert!(
            matches!(r, Err(Error::TooLarge)),
            "{name}(2^50, 10.0): {}",
            describe(&r)
        );
    }
    for (name, ctor) in WITH_FPR {
        let r = ctor(n, 0.01);
        assert!(
            matches!(r, Err(Error::TooLarge)),
            "{name}(2^50, 0.01): {}",
            describe(&r)
        );
    }
}

/// The smallest and largest valid parameters build (they are not
/// impossible) and behave.
#[test]
fn extreme_but_valid_parameters_build() {
    for (name, ctor) in WITH_BITS {
        for b in [f64::MIN_POSITIVE, 1e-9, 0.5, 1000.0] {
            let f = ctor(1, b).unwrap_or_else(|e| panic!("{name}(1, {b}): {e:?}"));
            assert!(f.size_in_bytes() > 0);
            assert_eq!(f.expected_fpr(), 0.0);
        }
    }
    for (name, ctor) in WITH_FPR {
        for p in [0.999_999, 0.5, 1e-6] {
            let f = ctor(1, p).unwrap_or_else(|e| panic!("{name}(1, {p}): {e:?}"));
            assert!(f.size_in_bytes() > 0);
        }
    }
}

/// Every target that builds is met by the filter's own formula at capacity,
/// and a target so small that no filter within 1000 bits per key reaches it
/// is an `InvalidParameter` error, not a filter that silently misses it.
#[test]
fn with_fpr_meets_its_target_or_errs() {
    let n = 1000usize;
    // The formula FPR at capacity of each kind built for `target`.
    let formulas = |target: f64| {
        [
            StandardBloom::new(n, FilterSizing::Fpr(target))
                .map(|f| math::standard_bloom_fpr(f.num_bits(), f.num_probes(), n as u64)),
            BlockedBloom::new(n, FilterSizing::Fpr(target))
                .map(|f| math::blocked_bloom_fpr(f.num_blocks() as u64 * 512, 512, f.num_probes(), n as u64)),
            CountingBloom::new(n, FilterSizing::Fpr(target))
                .map(|f| math::standard_bloom_fpr(f.num_counters(), f.num_probes(), n as u64)),
        ]
    };
    // Targets 0.99 down to 1e-12 in steps of 10^0.07, which crosses every
    // change of the probe count.
    for step in 0..=171 {
        let target = 10f64.powf(-0.005 - step as f64 * 0.07);
        for (i, r) in formulas(target).into_iter().enumerate() {
            let p = r.unwrap_or_else(|e| panic!("kind {i}, target {target:e}: {e:?}"));
            assert!(p <= target * 1.001, "kind {i}, target {target:e}: formula {p:e}");
        }
    }
    // Standard and counting filters reach 1e-45 with 30 probes within 1000
    // bits per key (about 934); blocked filters at least 1e-15.
    for target in [1e-15, 1e-30, 1e-45] {
        for (i, r) in formulas(target).into_iter().enumerate() {
            match r {
                Ok(p) => assert!(p <= target * 1.001, "kind {i}, target {target:e}: formula {p:e}"),
                Err(e) => assert!(i == 1 && target < 1e-15, "kind {i}, target {target:e}: {e:?}"),
            }
        }
    }
    for target in [1e-50, 1e-100, 1e-300, f64::MIN_POSITIVE, 5e-324] {
        for (name, ctor) in WITH_FPR {
            let r = ctor(n, target);
            assert!(is_invalid(&r), "{name}({n}, {target:e}): {}", describe(&r));
        }
    }
}

/// Every constructor that takes widths or counts as integers, at the ends
/// of their types, in a build with overflow checks (every test build):
/// an `Err` or a filter, never a panic (`QuotientFilter::with_bits(10,
/// u32::MAX)` once overflowed adding the two widths).
#[test]
fn integer_parameters_at_their_limits_never_panic() {
    use amq::quotient::QuotientFilter;
    use amq::xor::PackedFuseParams;
    use amq::{PackedBinaryFuse, RibbonParams};
    let ends32 = [
        0u32,
        1,
        7,
        31,
        32,
        33,
        63,
        64,
        65,
        u32::MAX / 2,
        u32::MAX - 1,
        u32::MAX,
    ];
    for &a in &[0u32, 1, 10, 40, 41, 64, u32::MAX] {
        for &b in &ends32 {
            if let Ok(f) = QuotientFilter::with_bits(a, b) {
                assert!(a <= 40 && b >= 1 && a + b <= 64, "{a}, {b}");
                assert!(!f.contains(b"x"));
            }
        }
    }
    let keys = [amq::hash_key(b"x")];
    for &b in &ends32 {
        let _ = CuckooFilter::with_fingerprint_bits(100, b);
        let _ = CuckooFilter::with_fingerprint_bits(usize::MAX, b);
        let _ = BlockedBloom::with_shape(1, b);
        let _ = BlockedBloom::with_shape(usize::MAX, b);
        let _ = StandardBloom::with_shape(64, b);
        let _ = StandardBloom::with_shape(u64::MAX, b);
        let _ = RibbonParams::with_result_bits(b);
        let _ = PackedBinaryFuse::build_with(&keys, &PackedFuseParams::with_bits(b));
        assert!((0.0..=1.0).contains(&amq::cuckoo::cuckoo_fpr(b, 0.95)));
        assert!((0.0..=1.0).contains(&math::standard_bloom_fpr(u64::MAX, b, u64::MAX)));
        assert!((0.0..=1.0).contains(&math::blocked_bloom_fpr(u64::MAX, b, b, u64::MAX)));
    }
}
