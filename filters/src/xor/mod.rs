//! Static filters that store one fingerprint per table slot and answer with
//! an xor: the [xor filter](Xor) and the [binary fuse filter](BinaryFuse).
//!
//! # The idea
//!
//! For a key with (seeded) hash `x`, choose `A` slots `s₀(x) … s_{A−1}(x)` in a
//! table `T` and require
//!
//! ```text
//! T[s₀(x)] ^ T[s₁(x)] ^ … ^ T[s_{A−1}(x)] = fingerprint(x)      (F bits)
//! ```
//!
//! for every key of the set. A query checks the same equation: keys always
//! pass (no false negatives), and a non-key passes when the xor of `A`
//! effectively random slots happens to equal its fingerprint, with
//! probability `2^-F`. The space is `F · (slots per key)` bits per key, against
//! the lower bound of `F` bits for FPR `2^-F`.
//!
//! Solving the equations is a linear system over GF(2)^F with one row per
//! key. If the hypergraph whose vertices are slots and whose edges are keys
//! can be *peeled* (repeatedly removing a key that is alone in some slot),
//! the system solves in linear time by assigning keys in reverse peel order
//! (`peel.rs`). Peeling succeeds with high probability
//! when there are enough slots per key:
//!
//! | filter | slots per key | bits/key, 8-bit | module |
//! |--------|---------------|-----------------|--------|
//! | [`Xor`] (3 random slots in 3 blocks) | 1.23 (+32) | 9.84 | `xor.rs` |
//! | [`BinaryFuse`], 3-wise (spatially coupled) | 1.125 | 9.0 | `binary_fuse.rs` |
//! | [`BinaryFuse`], 4-wise | 1.075 | 8.6 | `binary_fuse.rs` |
//! | [`PackedBinaryFuse`]: binary fuse, fingerprints of any width `w` packed | 1.125 (3-wise) | `1.125·w` | `packed.rs` |
//!
//! (At 1M keys and more; smaller sets need a little more, see each type.)
//!
//! # Invariants
//!
//! * A filter of `n >= 1` keys has a non-empty table and `n <= slots`; an
//!   empty filter has no slots and answers `false` to everything.
//! * Every slot a layout (`Geometry` in `peel.rs`) yields is in bounds for every 64-bit
//!   hash, so the decoder only needs to check the parameters, never the
//!   fingerprints, to make queries panic-free.
//! * The key count is the number of *distinct* hashes given to `build`.
//!
//! # Construction
//!
//! Duplicate hashes are tolerated: the first attempt runs on the input as
//! given; if it fails, the hashes are deduplicated once and later attempts
//! retry with fresh seeds (`remix(hash, seed)`), at most 64 in all, then
//! [`Error::BuildFailed`](crate::Error::BuildFailed). Temporary memory is
//! about 24 bytes per key for binary fuse and 34 for xor, plus 16 while
//! deduplicating an input that has duplicates.
//!
//! ```
//! use amq::{BinaryFuse8, Filter, Xor8};
//! let keys: Vec<amq::KeyHash> = (0..10_000u64).map(amq::hash_u64).collect();
//! let mut with_dups = keys.clone();
//! with_dups.extend_from_slice(&keys); // every key twice
//! let x = Xor8::build(&with_dups).unwrap();
//! let f = BinaryFuse8::build(&with_dups).unwrap();
//! assert_eq!((x.num_keys(), f.num_keys()), (10_000, 10_000));
//! assert!(keys.iter().all(|&h| x.contains_hash(h) && f.contains_hash(h)));
//! ```
//!
//! # Sharded binary fuse filters
//!
//! Building one table needs every hash at once: 8 bytes per key plus the
//! 24 of peeling, 32 GB at 10^9 keys. [`BinaryFuse::build_streamed`] reads
//! the keys from a source instead, and beyond [`FUSE_SHARD_KEYS`] (2^23)
//! keys it builds `⌈n / 2^23⌉` (rounded up to a power of two) independent
//! tables ("shards") of one common layout, chosen by the top bits of the key
//! hash and laid end to end, each with its own seed: a shard's start is one
//! multiplication, and the seeds (8 bytes per shard) stay in the L1 cache.
//! The shards are sized for the largest, about 0.1% more space than one
//! table; a query reads the same three (or four) slots as one table's, and
//! runs about ten more instructions, which far beyond the caches made
//! single queries 1.4–1.7× slower at 10^8 keys and batches within 1.1×.
//! Peak memory is the filter, one pass's hashes and one shard's peeling
//! state per thread (`sharded.rs`;
//! the measurements at 10^9 keys are in `docs/results-amq.md`).

mod binary_fuse;
mod fingerprint;
mod packed;
pub(crate) mod peel;
mod query;
mod segments;
mod shard_layout;
mod sharded;
mod view;
// The file is named after the filter, as its sibling `binary_fuse.rs` is.
#[allow(clippy::module_inception)]
mod xor;

pub use binary_fuse::{BinaryFuse, BinaryFuse16, BinaryFuse32, BinaryFuse8, FuseFingerprint, FuseParams};
pub use fingerprint::Fingerprint;
pub use packed::{
    packed_fingerprint_bits, PackedBinaryFuse, PackedBinaryFuseView, PackedFuseParams, MAX_FINGERPRINT_BITS,
};
pub use segments::{FuseArity, MAX_SEGMENT_LEN, MAX_START_LOAD};
pub use sharded::FUSE_SHARD_KEYS;
pub use view::{
    BinaryFuse16View, BinaryFuse32View, BinaryFuse8View, BinaryFuseView, Xor16View, Xor8View, XorView,
};
pub use xor::{Xor, Xor16, Xor8, XorFingerprint};

/// The planner's shape of a fingerprint filter of `slots` slots of `F`
/// holding `n` keys.
pub(crate) fn fingerprint_shape<F: Fingerprint>(slots: u64, n: usize) -> crate::cost::Shape {
    crate::cost::Shape {
        bytes: slots * F::BYTES as u64,
        fpr: fingerprint_fpr::<F>(n as u64),
        fpr_floor: 0.0,
        params: crate::cost::Params::Fingerprint { bits: F::BITS },
    }
}

/// `2^-F` for a filter with keys; 0 for an empty one.
pub(crate) fn fingerprint_fpr<F: Fingerprint>(num_keys: u64) -> f64 {
    if num_keys == 0 {
        0.0
    } else {
        libm::ldexp(1.0, -(F::BITS as i32))
    }
}
