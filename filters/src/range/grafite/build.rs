//! Building a Grafite filter: the distinct keys, their count sizing the
//! reduced universe; their hashes, sorted and without repeats, into an
//! Elias–Fano code.

use alloc::vec::Vec;

use super::hash::LocalityHash;
use super::sizing::shape;
use super::GrafiteRange;
use crate::range::RangeSizing;
use crate::succinct::EfCore;
use crate::zeroed::zeroed_vec;
use crate::Error;

/// Builds the filter of `keys` (any order, duplicates allowed) at `sizing`
/// with the hash of `seed`. One working vector of `keys.len()` words; two
/// sorts (one when the keys come sorted, as a table's keys do).
pub(super) fn build(keys: &[u64], sizing: RangeSizing, seed: u64) -> Result<GrafiteRange, Error> {
    let sizing = sizing.validate()?;
    let mut work: Vec<u64> = zeroed_vec(keys.len())?;
    work.copy_from_slice(keys);
    if !work.is_sorted() {
        work.sort_unstable();
    }
    work.dedup();
    let num_keys = work.len() as u64;
    let shape = shape(num_keys, sizing)?;
    let hash = LocalityHash::new(seed, shape.universe);
    for x in work.iter_mut() {
        *x = hash.hash(*x);
    }
    work.sort_unstable();
    // Keys of different blocks may share a value: the code holds it once.
    work.dedup();
    let ef = EfCore::build(
        &work,
        shape.universe,
        shape.layout.low_bits,
        shape.layout.sample_log2,
    )?;
    GrafiteRange::from_parts(ef, num_keys, seed)
}
