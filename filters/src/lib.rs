//! # amq — approximate-membership filters
//!
//! The family of approximate-membership filters (standard, blocked and
//! counting Bloom, cuckoo, xor, binary fuse, Ribbon) behind one trait
//! ([`Filter`]), each driven by one 64-bit key hash ([`KeyHash`]) so a
//! caller can hash a key once and probe many filters with it, and stored in
//! one versioned, checksummed byte format. The [`plan`] module picks the
//! kind for a key count, an FPR or a memory budget and the caller's needs.
//! [`ParquetBloom`] reads and writes Apache Parquet's split-block Bloom
//! filters bit for bit, with an API of its own (it is driven by Parquet's
//! value hash, not amq's). [`range`] holds range filters ("may a key lie in
//! `lo..=hi`?") over ordered `u64` keys behind [`range::RangeFilter`]:
//! [`range::GrafiteRange`], built once, on the Elias–Fano code of
//! [`succinct`]; [`range::MementoFilter`], which inserts, removes and grows
//! on the expanding quotient table.
//!
//! | filter | keys | bits/key at its usual setting (FPR) | module |
//! |--------|------|-------------------------------------|--------|
//! | [`StandardBloom`] | insert | 10.00 (0.819%) | [`bloom`] |
//! | [`BlockedBloom`], [`AtomicBlockedBloom`] | insert; one cache line per query | 10.00 (0.958%) | [`bloom`] |
//! | [`SplitBlockBloom`] | insert; half a cache line and one SIMD test per query | 10.00 (1.26%) | [`bloom`] |
//! | [`CountingBloom`] | insert, remove | 38.37 (1.000%) | [`bloom`] |
//! | [`CuckooFilter`] | insert, remove | 8.42 (2.94%), 12.63 (0.185%), 16.84 (0.0116%) | [`cuckoo`] |
//! | [`quotient::QuotientFilter`] | insert, remove, count, merge | 17.21 (0.742%) | [`quotient`] |
//! | [`quotient::ExpandingQuotientFilter`] | insert, remove, count, merge; grows with no size given | 13.1 per slot (≤ 1% while it grows 2^18-fold) | [`quotient`] |
//! | [`Xor8`], [`Xor16`] | built once | 9.84 (0.391%), 19.68 (0.00153%) | [`xor`] |
//! | [`BinaryFuse8`], [`BinaryFuse16`], [`BinaryFuse32`] | built once | 9.04 (0.391%), 18.09 (0.00153%), 36.18 (2.33e-8%) | [`xor`] |
//! | [`PackedBinaryFuse`] | built once; FPR `2^-w` for any `w` from 1 to 32 | 7.91 (0.781%), 11.31 (0.0977%) | [`xor`] |
//! | [`Ribbon`] | built once; any FPR | 6.76 (1.00%), 10.02 (0.100%) | [`ribbon`] |
//! | [`ParquetBloom`] | insert; Parquet's bytes and value hash | 10.53 (1%) | [`parquet`] |
//! | [`range::GrafiteRange`] | built once; ranges of `u64` keys | 16.00 (`ℓ/2^13.7` for a range of `ℓ` keys) | [`range`] |
//! | [`range::MementoFilter`] | insert, remove; ranges of `u64` keys; grows with no size given | 13.1 + `m` per slot (≤ 1% for ranges of up to `2^m` keys while it grows 2^18-fold) | [`range`] |
//!
//! Bits/key at 1M keys and the FPR of each kind's formula, as the planner
//! prints them (`cargo run --release -p amq --bin amq-plan -- --n 1000000`
//! with `--fpr 0.01`; `--budget 10 --inserts` for the Bloom filters at 10
//! bits/key; `--deletes --fpr P` for each cuckoo width; the quotient filter's
//! from `QuotientFilter::new(1_000_000, FilterSizing::Fpr(0.01))`). `ParquetBloom`'s,
//! the measured figures, the timings and the machine: `docs/results-amq.md`.
//! The information-theoretic minimum is `log2(1/FPR)`: 6.64 bits/key at 1%.
//!
//! ```
//! use amq::plan::Planner;
//! use amq::{hash_key, BlockedBloom, Filter, FilterKind, FilterSizing, Insert, StandardBloom};
//!
//! // Which filter? A static set of 1,000 keys at 1%: Ribbon.
//! let plan = Planner::for_keys(1_000).fpr(0.01).plan()?;
//! assert_eq!(plan.kind(), FilterKind::Ribbon);
//!
//! let mut a = BlockedBloom::new(1_000, FilterSizing::Fpr(0.01))?;
//! let mut b = StandardBloom::new(1_000, FilterSizing::Fpr(0.01))?;
//! a.insert(b"apple")?;
//! b.insert(b"pear")?;
//!
//! // One hash, many filters: what an LSM read does for each SSTable.
//! let h = hash_key(b"apple");
//! let filters: [&dyn Filter; 2] = [&a, &b];
//! let hits: Vec<bool> = filters.iter().map(|f| f.contains_hash(h)).collect();
//! assert!(hits[0]);
//! # Ok::<(), amq::Error>(())
//! ```
//!
//! # Key hashes
//!
//! Every filter takes a [`KeyHash`], never a bare `u64`: [`hash_key`] for a
//! key's bytes, [`hash_u64`] for an integer key, or
//! [`KeyHash::from_well_mixed`] for a hash the caller computed with a good
//! hash function of its own. Structured integers (ids, counters) passed as
//! hashes would break a filter silently (a blocked Bloom filter picks its
//! block from the high bits); the type makes that impossible by accident.
//! See [`hash`].
//!
//! # One word per operation
//!
//! * Dynamic kinds: `Kind::new(expected_keys, FilterSizing)`, then
//!   [`Insert::insert`] / [`Insert::insert_hash`] / [`Insert::insert_hashes`]
//!   (each returns a `Result`; a Bloom insert never fails). The Bloom kinds'
//!   own `check_and_insert` / `check_and_insert_hash` insert without a
//!   `Result` and say whether the key was (probably) there already, in one
//!   probe: deduplication ([`BlockedBloom::check_and_insert`]).
//! * Static kinds: `Kind::build(&hashes)` (fixed width) or
//!   [`Ribbon::build`]`(&hashes, FilterSizing)`; every kind's full
//!   parameters through [`StaticFilter::build_with`].
//! * A kind chosen at run time: [`AnyFilter::build`] and [`AnyFilter::new`].
//! * Queries: [`Filter::contains`] / [`Filter::contains_hash`] /
//!   [`Filter::contains_keys`] / [`Filter::contains_hashes`], and
//!   `contains_prepared` with a [`PreparedHash`] shared by many filters.
//! * The FPR a filter promises: [`Filter::expected_fpr`].
//!
//! Every filter serializes with [`Filter::to_bytes`] into the format of
//! `docs/format.md` and reads back with [`FromBytes::from_bytes`], or
//! [`AnyFilter::from_bytes`] when the kind is only known from the bytes;
//! [`FilterView`] answers queries from the bytes in place.
//!
//! `no_std` + `alloc`: disable the default `std` feature.
#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;
// The unit tests use `std` (CPU feature detection, threads) with or without
// the `std` feature.
#[cfg(any(feature = "std", test))]
extern crate std;

mod any;
pub mod bloom;
mod build;
mod cost;
pub mod cuckoo;
mod error;
mod filter;
pub mod format;
pub mod hash;
#[cfg(all(feature = "huge-pages", target_os = "linux"))]
pub mod huge_pages;
mod kind;
pub mod math;
pub mod parquet;
pub mod plan;
mod prefetch;
pub mod prefix;
pub mod quotient;
pub mod range;
pub mod ribbon;
#[cfg(feature = "serde")]
mod serde_impl;
mod simd;
mod sizing;
pub mod streamed;
pub mod succinct;
mod view;
pub mod xor;
mod zeroed;

pub use any::AnyFilter;
#[cfg(target_has_atomic = "64")]
pub use bloom::AtomicBlockedBloom;
pub use bloom::{
    BlockedBlocks, BlockedBloom, BlockedProbe, CountingBloom, PreparedHash, SplitBlockBloom, StandardBloom,
};
pub use cuckoo::CuckooFilter;
pub use error::{Error, FormatError};
pub use filter::{Filter, FromBytes, Insert, Remove, StaticFilter};
pub use hash::{hash_key, hash_prefix, hash_u64, HashScheme, KeyHash};
pub use kind::FilterKind;
pub use parquet::ParquetBloom;
pub use prefix::{CappedPrefix, DelimitedPrefix, ExtractorId, FixedPrefix, PrefixExtractor};
pub use ribbon::{Ribbon, RibbonParams};
pub use sizing::FilterSizing;
pub use view::FilterView;
pub use xor::{BinaryFuse16, BinaryFuse32, BinaryFuse8, FuseParams, PackedBinaryFuse, Xor16, Xor8};
