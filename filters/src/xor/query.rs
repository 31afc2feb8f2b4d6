//! The query shared by the xor and binary fuse filters, single and batched.

use super::fingerprint::{Fingerprint, Table};
use super::peel::Geometry;
use crate::hash::remix;

/// Where a key's slots lie, from its hash: what a query needs of a layout.
pub(crate) trait Locate<const A: usize> {
    /// The key's mixed hash (its fingerprint's source) and its `A` slots,
    /// for a filter built with `seed`.
    fn locate(&self, seed: u64, hash: u64) -> (u64, [usize; A]);
}

/// A single table: the hash remixed with the filter's seed, then placed by
/// the geometry construction peeled with.
impl<G: Geometry<A>, const A: usize> Locate<A> for G {
    #[inline(always)]
    fn locate(&self, seed: u64, hash: u64) -> (u64, [usize; A]) {
        let mixed = remix(hash, seed);
        (mixed, self.slots(mixed))
    }
}

/// Keys in flight in [`contains_many`]: at 3–4 lines per key, about as many
/// lines as the CPU keeps outstanding. Chosen by measurement at 100M keys
/// (`benches/examples/batch_depth.rs`).
const DEPTH: usize = 8;

/// Whether the key with hash `hash` may be in the table: the xor of its slots
/// equals its fingerprint. An empty table holds no key. `fingerprints` is
/// an owned table or a serialized one read in place ([`Table`]).
#[inline(always)]
pub(crate) fn contains<F, T, G, const A: usize>(fingerprints: &T, geometry: &G, seed: u64, hash: u64) -> bool
where
    F: Fingerprint,
    T: Table<F> + ?Sized,
    G: Locate<A> + ?Sized,
{
    if fingerprints.num_slots() == 0 {
        return false;
    }
    let (mixed, slots) = geometry.locate(seed, hash);
    matches(fingerprints, &slots, mixed)
}

/// Starts loading the slots [`contains`] will read for `hash`.
#[inline(always)]
pub(crate) fn prefetch_slots<F, T, G, const A: usize>(fingerprints: &T, geometry: &G, seed: u64, hash: u64)
where
    F: Fingerprint,
    T: Table<F> + ?Sized,
    G: Locate<A> + ?Sized,
{
    if fingerprints.num_slots() == 0 {
        return;
    }
    for s in geometry.locate(seed, hash).1 {
        fingerprints.prefetch(s);
    }
}

#[inline(always)]
fn matches<F, T, const A: usize>(fingerprints: &T, slots: &[usize; A], mixed: u64) -> bool
where
    F: Fingerprint,
    T: Table<F> + ?Sized,
{
    let mut x = fingerprints.key_fingerprint(mixed);
    for &s in slots {
        x = x ^ fingerprints.at(s);
    }
    x == F::default()
}

/// `out[i] = contains(hashes[i])`, as a software pipeline
/// ([`pipelined`](crate::prefetch::pipelined)): the slots of key `i + DEPTH`
/// are computed and prefetched just before key `i` is read, so the cache
/// misses of [`DEPTH`] keys overlap.
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
    G: Locate<A> + ?Sized,
{
    assert_eq!(hashes.len(), out.len(), "contains_many: length mismatch");
    if fingerprints.num_slots() == 0 {
        out.fill(false);
        return;
    }
    crate::prefetch::pipelined::<_, DEPTH>(
        hashes,
        out,
        |h| {
            let (mixed, slots) = geometry.locate(seed, h);
            for &s in &slots {
                fingerprints.prefetch(s);
            }
            Prepared { mixed, slots }
        },
        |p| matches(fingerprints, &p.slots, p.mixed),
    );
}

/// A key whose slots [`contains_many`] has computed and prefetched.
#[derive(Clone, Copy)]
struct Prepared<const A: usize> {
    mixed: u64,
    slots: [usize; A],
}

impl<const A: usize> Default for Prepared<A> {
    fn default() -> Self {
        Prepared {
            mixed: 0,
            slots: [0; A],
        }
    }
}
