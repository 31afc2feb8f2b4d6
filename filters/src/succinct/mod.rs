//! Succinct integer codes, below every kind: [`EliasFano`], the code of a
//! sorted sequence of `u64`s in about `2 + log2(u/n)` bits per value that
//! answers "the smallest value at least `x`" ([`EliasFano::successor`]).
//! The range filters store their hashed keys in one.
//!
//! Which file holds what:
//!
//! * `bits.rs`: where words live (an owned `[u64]`, or the little-endian
//!   bytes of a frame read in place), packed fields, and broadword select in
//!   a word;
//! * `layout.rs`: a code's parameters, every length they imply, and their
//!   checks (shared by building, decoding, views and size predictions);
//! * `elias_fano.rs`: building, `successor`, iteration and the full check of
//!   decoded words.
//!
//! Decoding reads parameters first, checks that the payload holds exactly
//! the words they imply before allocating, and then checks the words
//! themselves; a code read in place is checked in O(1) and its queries never
//! read out of bounds or panic whatever its words hold.
//!
//! ```
//! use amq::succinct::EliasFano;
//! let primes = [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29];
//! let ef = EliasFano::new(&primes, 30)?;
//! assert_eq!(ef.successor(20), Some(23));
//! assert!(!ef.contains_in(24, 28));
//! # Ok::<(), amq::Error>(())
//! ```

pub(crate) mod bits;
mod dense;
mod elias_fano;
mod layout;

pub(crate) use bits::{LeWords, Words};
pub(crate) use dense::DenseSelect;
pub(crate) use elias_fano::EfCore;
pub use elias_fano::{EliasFano, DEFAULT_SAMPLE_LOG2};
pub(crate) use layout::Layout;
pub use layout::MAX_UNIVERSE;
