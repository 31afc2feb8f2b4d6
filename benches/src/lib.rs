//! # amq-bench — one harness for every filter, ours and other crates'
//!
//! The criterion benches (`benches/*.rs`) and the comparison report
//! (`src/bin/report.rs`) measure many filters the same way. To write each
//! measurement once, every filter is wrapped in a [`Subject`]: build from a
//! slice of pre-hashed `u64` keys, query one key, query a batch, report its
//! size. Filters that take inserts and removals are also [`Deletable`].
//!
//! The lists [`bloom_filters`], [`static_filters`], [`cuckoo_filters`] and
//! [`parquet_filters`] name the filters of each comparison, one line per filter. A benchmark or
//! the report walks a list with a [`Visitor`], whose generic `visit::<S>()`
//! is monomorphised per filter: no dynamic dispatch in the timed loops.
//!
//! [`lsm`] holds the measurements of the `amq-lsm` store (hash sharing,
//! reads saved, write cost) for `benches/lsm.rs` and `src/bin/lsm_report.rs`;
//! [`partitioned`] its partitioned-filter comparison; [`prefix`] its prefix
//! seeks against fjall's.
//!
//! Keys are random `u64`s standing in for key hashes ([`keys`]). Filters
//! with a hash-based API (ours, `fastbloom`'s `contains_hash`, `sbbf-rs`,
//! `qfilter`'s `*_fingerprint`, `xorf`, which takes `u64` keys as its hashes)
//! are fed them directly, so no hashing is timed. `bloomfilter` and
//! `cuckoofilter` have no such API and hash every key again with SipHash;
//! their times include that (see [`Subject::NOTE`]).
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod adapters;
pub mod churn;
pub mod groups;
pub mod keys;
pub mod lsm;
pub mod partitioned;
pub mod prefix;
pub mod range;
pub mod range_scan;
pub mod report;
pub mod svg;
pub mod value;

/// Keeps amq's tables on ordinary pages: the crate turns on amq's
/// `huge-pages` feature so `examples/huge_pages.rs` and the report's
/// `--huge-pages` can measure it, but the other crates' tables never ask for
/// huge pages, so every other measurement calls this first to compare like
/// with like.
pub fn ordinary_pages() {
    #[cfg(target_os = "linux")]
    amq::huge_pages::set_enabled(false);
}

/// A filter under measurement, seen through the operations every filter has.
pub trait Subject: Sized + 'static {
    /// Name in benchmark ids and the report: `amq-...` for ours, the crate
    /// (and type) name for the others. No spaces or slashes.
    const NAME: &'static str;

    /// What a reader must know to compare this filter fairly ("" if nothing).
    const NOTE: &'static str = "";

    /// Whether [`contains_many`](Subject::contains_many) is a real batch
    /// query (prefetching, ...) rather than the default loop.
    const HAS_BATCH: bool = false;

    /// Builds the filter holding `keys` (distinct, pre-hashed), at the
    /// configuration the comparison uses (e.g. 10 bits/key for Bloom).
    fn build(keys: &[u64]) -> Result<Self, String>;

    /// Whether the pre-hashed `key` may be in the set.
    fn contains(&self, key: u64) -> bool;

    /// `out[i] = contains(keys[i])`.
    #[inline]
    fn contains_many(&self, keys: &[u64], out: &mut [bool]) {
        for (o, &k) in out.iter_mut().zip(keys) {
            *o = self.contains(k);
        }
    }

    /// Heap bytes of filter data.
    fn size_in_bytes(&self) -> usize;

    /// The FPR the filter's own formula predicts, if it offers one.
    fn expected_fpr(&self) -> Option<f64> {
        None
    }
}

/// A filter that takes inserts and removals (the cuckoo comparison).
pub trait Deletable: Subject {
    /// An empty filter sized for `keys` keys, at the configuration of the
    /// comparison.
    fn with_capacity(keys: usize) -> Result<Self, String>;

    /// Inserts a pre-hashed key; `false` if the filter refused it (full).
    fn insert(&mut self, key: u64) -> bool;

    /// Removes a pre-hashed key; `false` if it was not found.
    fn remove(&mut self, key: u64) -> bool;
}

/// Builds a [`Deletable`] by inserting every key, failing on the first
/// refused insert. [`Subject::build`] of deletable filters is this.
pub fn build_by_inserting<D: Deletable>(keys: &[u64]) -> Result<D, String> {
    let mut filter = D::with_capacity(keys.len())?;
    for (i, &k) in keys.iter().enumerate() {
        if !filter.insert(k) {
            return Err(format!("{}: insert {i} of {} refused", D::NAME, keys.len()));
        }
    }
    Ok(filter)
}

/// Something done once per filter of a list (a benchmark, a report row).
pub trait Visitor {
    /// Does it for filter type `S`.
    fn visit<S: Subject>(&mut self);
}

/// Something done once per filter of a list of [`Deletable`] filters.
pub trait DeletableVisitor {
    /// Does it for filter type `D`.
    fn visit<D: Deletable>(&mut self);
}

/// Lets a plain [`Visitor`] walk a list of deletable filters.
pub struct AsSubjects<'a, V>(pub &'a mut V);

impl<V: Visitor> DeletableVisitor for AsSubjects<'_, V> {
    fn visit<D: Deletable>(&mut self) {
        self.0.visit::<D>();
    }
}

/// The Bloom comparison: ours at 10 bits/key beside the other crates.
pub fn bloom_filters(v: &mut impl Visitor) {
    use adapters::competitors::{BloomfilterOnePercent, FastBloom10};
    use adapters::sbbf::SplitBlockBloom;
    v.visit::<amq::StandardBloom>();
    v.visit::<amq::BlockedBloom>();
    v.visit::<amq::SplitBlockBloom>();
    v.visit::<FastBloom10>();
    v.visit::<SplitBlockBloom>();
    v.visit::<BloomfilterOnePercent>();
}

/// The static-filter comparison: ours beside `xorf`, each width next to its
/// counterpart, then our binary fuse with 10-bit packed fingerprints (no
/// counterpart) and our Ribbon (r = 7) last.
pub fn static_filters(v: &mut impl Visitor) {
    v.visit::<amq::Xor8>();
    v.visit::<xorf::Xor8>();
    v.visit::<amq::Xor16>();
    v.visit::<xorf::Xor16>();
    v.visit::<amq::BinaryFuse8>();
    v.visit::<xorf::BinaryFuse8>();
    v.visit::<amq::BinaryFuse16>();
    v.visit::<xorf::BinaryFuse16>();
    v.visit::<amq::BinaryFuse32>();
    v.visit::<xorf::BinaryFuse32>();
    v.visit::<adapters::ours_static::PackedFuse10>();
    v.visit::<adapters::ours_static::Ribbon7>();
}

/// The deletable-filter comparison: ours (cuckoo at three widths, counting
/// Bloom at 1%, the quotient filter with `qfilter`'s parameters) beside
/// `cuckoofilter` and `qfilter`.
pub fn cuckoo_filters(v: &mut impl DeletableVisitor) {
    use adapters::competitors::{CuckooFilterCrate, QuotientFilter};
    use adapters::ours::{CountingBloomOnePercent, QuotientSameAsQfilter};
    use adapters::ours_cuckoo::{AmqCuckoo12, AmqCuckoo16, AmqCuckoo8};
    v.visit::<AmqCuckoo8>();
    v.visit::<AmqCuckoo12>();
    v.visit::<AmqCuckoo16>();
    v.visit::<CountingBloomOnePercent>();
    v.visit::<CuckooFilterCrate>();
    v.visit::<QuotientSameAsQfilter>();
    v.visit::<QuotientFilter>();
}

/// The Parquet comparison: three split-block Bloom filters fed `INT64`
/// values, each operation hashing its value as Parquet does (see
/// [`adapters::parquet`]).
pub fn parquet_filters(v: &mut impl Visitor) {
    use adapters::parquet::{AmqParquet, ParquetSbbf, SbbfRsValues};
    v.visit::<AmqParquet>();
    v.visit::<SbbfRsValues>();
    v.visit::<ParquetSbbf>();
}

/// Every filter of every comparison, for the report.
pub fn all_filters(v: &mut impl Visitor) {
    bloom_filters(v);
    static_filters(v);
    cuckoo_filters(&mut AsSubjects(v));
    parquet_filters(v);
}
