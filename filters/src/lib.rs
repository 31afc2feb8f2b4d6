//! # amq — approximate-membership filters
//!
//! The whole filter family behind one trait, each driven by one 64-bit key
//! hash so a caller can hash a key once and probe many filters with it.
//!
//! | filter | kind of set | bits/key at ~1% FPR | module |
//! |--------|-------------|---------------------|--------|
//! | [`StandardBloom`] | inserts | 9.6 | [`bloom`] |
//! | [`BlockedBloom`] | inserts, one cache miss per query | 10.0 | [`bloom`] |
//! | [`CountingBloom`] | inserts and removals | 38.3 | [`bloom`] |
//! | [`CuckooFilter`] | inserts and removals | 12.6 (0.19%) | [`cuckoo`] |
//! | [`Ribbon`] | built once from all keys | 6.9 | [`ribbon`] |
//! | [`Xor8`], [`Xor16`] | static (built once) | 9.84 (`Xor8`, 0.39%) | [`xor`] |
//! | [`BinaryFuse8`], [`BinaryFuse16`], [`BinaryFuse32`] | static (built once) | 9.0 (`BinaryFuse8`, 0.39%) | [`xor`] |
//!
//! ```
//! use amq::{hash_key, BlockedBloom, Filter, StandardBloom};
//!
//! let mut a = BlockedBloom::with_fpr(1_000, 0.01).unwrap();
//! let mut b = StandardBloom::with_fpr(1_000, 0.01).unwrap();
//! a.insert(b"apple");
//! b.insert(b"pear");
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
#[cfg(feature = "std")]
extern crate std;

mod any;
pub mod bloom;
pub mod cuckoo;
mod error;
mod filter;
pub mod format;
pub mod hash;
pub mod math;
mod prefetch;
pub mod ribbon;
#[cfg(feature = "serde")]
mod serde_impl;
pub mod xor;

pub use any::AnyFilter;
pub use bloom::{AtomicBlockedBloom, BlockedBloom, CountingBloom, StandardBloom};
pub use cuckoo::CuckooFilter;
pub use error::{Error, FormatError};
pub use filter::{Filter, FilterKind, FromBytes, Insert, Remove, StaticFilter};
pub use hash::{hash_key, HashScheme};
pub use ribbon::{Ribbon, RibbonParams};
pub use xor::{BinaryFuse16, BinaryFuse32, BinaryFuse8, FuseParams, Xor16, Xor8};

/// Probe count of a [`BlockedBloom`] for a bits-per-key figure (the measured table).
pub use bloom::blocked::probes_for_bits_per_key as bloom_blocked_probes;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
