//! # amq — approximate-membership filters
//!
//! The family of approximate-membership filters (Bloom, blocked and counting
//! Bloom, cuckoo, xor, binary fuse, Ribbon) behind one trait, each driven by
//! one 64-bit key hash so a caller can hash a key once and probe many filters
//! with it, and stored in one versioned byte format. The [`plan`] module
//! picks the kind for a key count, an FPR or a memory budget, and the
//! caller's needs, and builds it in one call.
//!
//! Measured at 1M keys by the comparison report
//! (`cargo run --release -p amq-bench --bin report -- --n 1000000 --absent 10000000 --runs 5`;
//! the README and `docs/choosing.md` have the timings):
//!
//! | filter | keys | bits/key (FPR measured) | module |
//! |--------|------|-------------------------|--------|
//! | [`StandardBloom`] | insert | 10.00 (0.819%) | [`bloom`] |
//! | [`BlockedBloom`], [`AtomicBlockedBloom`] | insert; one cache line per query | 10.00 (0.957%) | [`bloom`] |
//! | [`CountingBloom`] | insert, remove | 38.37 (0.998%) | [`bloom`] |
//! | [`CuckooFilter`] | insert, remove | 8.42 (2.95%), 12.63 (0.185%), 16.84 (0.0114%) | [`cuckoo`] |
//! | [`Xor8`], [`Xor16`] | built once | 9.84 (0.391%), 19.68 (0.0013%) | [`xor`] |
//! | [`BinaryFuse8`], [`BinaryFuse16`], [`BinaryFuse32`] | built once | 9.04 (0.391%), 18.09 (0.0016%), 36.18 | [`xor`] |
//! | [`Ribbon`] | built once; any FPR | 7.19 (0.780%) at 7 result bits | [`ribbon`] |
//! | [`ParquetBloom`] | insert; Apache Parquet's bytes and value hash | 10.53 (0.99%, by `cargo run --release -p amq --example tour`) | [`parquet`] |
//!
//! The information-theoretic minimum is `log2(1/FPR)`: 6.64 bits/key at 1%,
//! where Ribbon takes 6.90
//! (`cargo run --release -p amq --example plan -- --n 1000000 --fpr 0.01`).
//!
//! ```
//! use amq::plan::Planner;
//! use amq::{hash_key, BlockedBloom, Filter, FilterKind, FilterSizing, Insert, StandardBloom};
//!
//! // Which filter? A static set of 1,000 keys at 1%: Ribbon.
//! let plan = Planner::for_keys(1_000).fpr(0.01).plan().unwrap();
//! assert_eq!(plan.kind(), FilterKind::Ribbon);
//!
//! let mut a = BlockedBloom::new(1_000, FilterSizing::Fpr(0.01)).unwrap();
//! let mut b = StandardBloom::new(1_000, FilterSizing::Fpr(0.01)).unwrap();
//! a.insert(b"apple").unwrap();
//! b.insert(b"pear").unwrap();
//!
//! // One hash, many filters: what an LSM read does for each SSTable.
//! let h = hash_key(b"apple");
//! let filters: [&dyn Filter; 2] = [&a, &b];
//! let hits: Vec<bool> = filters.iter().map(|f| f.contains_hash(h)).collect();
//! assert_eq!(hits[0], true);
//! ```
//!
//! Every filter serializes with [`Filter::to_bytes`] into a versioned,
//! checksummed little-endian format (`docs/format.md`) and reads back with
//! [`FromBytes::from_bytes`], or [`AnyFilter::from_bytes`] when the kind is
//! only known from the bytes.
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
pub mod ribbon;
#[cfg(feature = "serde")]
mod serde_impl;
mod simd;
mod sizing;
mod view;
pub mod xor;
mod zeroed;

pub use any::AnyFilter;
#[cfg(target_has_atomic = "64")]
pub use bloom::AtomicBlockedBloom;
pub use bloom::{BlockedBlocks, BlockedBloom, BlockedProbe, CountingBloom, PreparedHash, StandardBloom};
pub use cuckoo::CuckooFilter;
pub use error::{Error, FormatError};
pub use filter::{Filter, FromBytes, Insert, Remove, StaticFilter};
pub use hash::{hash_key, hash_u64, HashScheme, KeyHash};
pub use kind::FilterKind;
pub use parquet::ParquetBloom;
pub use ribbon::{Ribbon, RibbonParams};
pub use sizing::FilterSizing;
pub use view::FilterView;
pub use xor::{BinaryFuse16, BinaryFuse32, BinaryFuse8, FuseParams, Xor16, Xor8};
