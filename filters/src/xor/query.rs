//! The query shared by the xor and binary fuse filters, single and batched.

use super::fingerprint::Fingerprint;
use super::peel::Geometry;
use crate::hash::remix;
use crate::prefetch::prefetch;

/// Keys per batch in [`contains_many`]: enough outstanding prefetches to
/// cover memory latency (3–4 loads per key), small enough for the stack.
const BATCH: usize = 32;

/// Whether the key with hash `hash` may be in the table: the xor of its slots
/// equals its fingerprint. An empty table holds no key.
#[inline(always)]
pub(crate) fn contains<F, G, const A: usize>(fingerprints: &[F], geometry: &G, seed: u64, hash: u64) -> bool
where
    F: Fingerprint,
    G: Geometry<A>,
{
    if fingerprints.is_empty() {
        return false;
    }
    let mixed = remix(hash, seed);
    matches(fingerprints, &geometry.slots(mixed), mixed)
}

/// Starts loading the slots [`contains`] will read for `hash`.
#[inline(always)]
pub(crate) fn prefetch_slots<F, G, const A: usize>(fingerprints: &[F], geometry: &G, seed: u64, hash: u64)
where
    F: Fingerprint,
    G: Geometry<A>,
{
    if fingerprints.is_empty() {
        return;
    }
    for s in geometry.slots(remix(hash, seed)) {
        prefetch(&fingerprints[s]);
    }
}

#[inline(always)]
fn matches<F: Fingerprint, const A: usize>(fingerprints: &[F], slots: &[usize; A], mixed: u64) -> bool {
    let mut x = F::from_hash(mixed);
    for &s in slots {
        x = x ^ fingerprints[s];
    }
    x == F::default()
}

/// `out[i] = contains(hashes[i])`, computing and prefetching every slot of a
/// batch before reading any, so the cache misses of a batch overlap.
///
/// # Panics
/// If `hashes.len() != out.len()`.
pub(crate) fn contains_many<F, G, const A: usize>(
    fingerprints: &[F],
    geometry: &G,
    seed: u64,
    hashes: &[u64],
    out: &mut [bool],
) where
    F: Fingerprint,
    G: Geometry<A>,
{
    assert_eq!(hashes.len(), out.len(), "contains_many: length mismatch");
    if fingerprints.is_empty() {
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
                prefetch(&fingerprints[s]);
            }
        }
        for (i, o) in os.iter_mut().enumerate() {
            *o = matches(fingerprints, &slots[i], mixed[i]);
        }
    }
}
