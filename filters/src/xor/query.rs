//! The query shared by the xor and binary fuse filters, single and batched.

use super::fingerprint::{Fingerprint, Table};
use super::peel::Geometry;
use crate::hash::remix;

/// Keys per batch in [`contains_many`]: enough outstanding prefetches to
/// cover memory latency (3–4 loads per key), small enough for the stack.
const BATCH: usize = 32;

/// Whether the key with hash `hash` may be in the table: the xor of its slots
/// equals its fingerprint. An empty table holds no key. `fingerprints` is
/// an owned table or a serialized one read in place ([`Table`]).
#[inline(always)]
pub(crate) fn contains<F, T, G, const A: usize>(fingerprints: &T, geometry: &G, seed: u64, hash: u64) -> bool
where
    F: Fingerprint,
    T: Table<F> + ?Sized,
    G: Geometry<A>,
{
    if fingerprints.num_slots() == 0 {
        return false;
    }
    let mixed = remix(hash, seed);
    matches(fingerprints, &geometry.slots(mixed), mixed)
}

/// Starts loading the slots [`contains`] will read for `hash`.
#[inline(always)]
pub(crate) fn prefetch_slots<F, T, G, const A: usize>(fingerprints: &T, geometry: &G, seed: u64, hash: u64)
where
    F: Fingerprint,
    T: Table<F> + ?Sized,
    G: Geometry<A>,
{
    if fingerprints.num_slots() == 0 {
        return;
    }
    for s in geometry.slots(remix(hash, seed)) {
        fingerprints.prefetch(s);
    }
}

#[inline(always)]
fn matches<F, T, const A: usize>(fingerprints: &T, slots: &[usize; A], mixed: u64) -> bool
where
    F: Fingerprint,
    T: Table<F> + ?Sized,
{
    let mut x = F::from_hash(mixed);
    for &s in slots {
        x = x ^ fingerprints.at(s);
    }
    x == F::default()
}

/// `out[i] = contains(hashes[i])`, computing and prefetching every slot of a
/// batch before reading any, so the cache misses of a batch overlap.
///
/// # Panics
/// If `hashes.len() != out.len()`.
pub(crate) fn contains_many<F, T, G, const A: usize>(
    fingerprints: &T,
    geometry: &G,
    seed: u64,
    hashes: &[u64],
    out: &mut [bool],
) where
    F: Fingerprint,
    T: Table<F> + ?Sized,
    G: Geometry<A>,
{
    assert_eq!(hashes.len(), out.len(), "contains_many: length mismatch");
    if fingerprints.num_slots() == 0 {
        out.fill(false);
        return;
    }
    let mut mixed = [0u64; BATCH];
    let mut slots = [[0usize; A]; BATCH];
    for (hs, os) in hashes.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
        for (i, &h) in hs.iter().enumerate() {
            mixed[i] = remix(h, seed);
            slots[i] = geometry.slots(mixed[i]);
            for &s in &slots[i] {
                fingerprints.prefetch(s);
            }
        }
        for (i, o) in os.iter_mut().enumerate() {
            *o = matches(fingerprints, &slots[i], mixed[i]);
        }
    }
}
