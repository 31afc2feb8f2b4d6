//! Construction shared by the xor and binary fuse filters: hypergraph
//! peeling, then back-assignment of fingerprints.
//!
//! Both filters store a table `T` of fingerprints and answer a query for the
//! mixed hash `x` with `fingerprint(x) == T[s0(x)] ^ T[s1(x)] ^ ... ^ T[s(A-1)(x)]`.
//! They differ only in *where* the `A` slots of a key lie, which is what a
//! [`Geometry`] says. Everything else is here, written once:
//!
//! 1. **Seed.** Attempt `k` mixes every key hash with seed `attempt_seed(k)`
//!    through [`remix`] (a bijection, so distinct hashes stay distinct).
//! 2. **Order.** Keys are counting-sorted by the top bits of the mixed hash.
//!    Both geometries pick their first slot from those top bits, so the
//!    table is then filled and peeled roughly front to back, which keeps the
//!    working set in cache at 10M keys (the trick of Graf & Lemire 2022, §5).
//! 3. **Count.** Each slot keeps how many keys touch it and the xor of
//!    their mixed hashes ([`SlotState`]). A slot with count 1 therefore
//!    *names* its one remaining key: the xor is that key's hash.
//! 4. **Peel.** Repeatedly take a slot of count 1, record (key, slot) on a
//!    stack and remove the key from all its slots, which may free others
//!    (Molloy 2005; Botelho, Pagh & Ziviani 2007). If every key is peeled the
//!    hypergraph is acyclic in the needed sense and the table can be filled.
//! 5. **Assign.** Walk the stack backwards: a key's recorded slot is touched
//!    by no key assigned before it, so setting it to
//!    `fingerprint ^ (xor of the key's other slots)` satisfies the key and
//!    disturbs no earlier one.
//!
//! **Failure and duplicates.** Two copies of one hash share all `A` slots, so
//! no slot is ever alone for them and peeling stalls; a count that
//! overflows (hundreds of copies, with `u8` counts) also fails the attempt.
//! After the first failed attempt the key hashes are deduplicated once
//! ([`sorted_distinct`], expected linear time for hashes) and the next
//! attempts use the distinct set. Each later failure retries with a fresh
//! seed, at most [`MAX_ATTEMPTS`] times in all, then returns
//! [`Error::BuildFailed`]. Every loop is bounded by the number of keys or
//! slots, so construction cannot hang. A successful peel proves the keys were
//! distinct (a duplicate can never be peeled), so the key count of a filter
//! is its distinct-key count.
//!
//! **Memory.** One attempt holds, besides the finished table: per slot the
//! [`SlotState`] (9 bytes split, 16 joint) and a `u32` queue entry; per key
//! the `u64` ordered hash, reused as the peel stack, and a `u8` slot index
//! (9 bytes). Binary fuse (split state, 1.125 slots per key): about 24 bytes
//! per key. Xor (joint state, 1.23 slots per key): about 34. Input with
//! duplicates adds the distinct copy (8 bytes per key) and, while it is made,
//! a scratch copy (8 more).

use alloc::vec::Vec;

use super::fingerprint::Fingerprint;
use crate::hash::remix;
use crate::zeroed::zeroed_vec;
use crate::Error;

/// Attempts (seeds) tried before construction gives up. Each attempt
/// succeeds with probability well above 1/2 for every size the geometries
/// produce (measured; see each filter's module), so 64 failures in a row
/// mean the input cannot be built, not bad luck.
pub(crate) const MAX_ATTEMPTS: u32 = 64;

/// Where the `A` slots of a key lie in a table.
pub(crate) trait Geometry<const A: usize> {
    /// How peeling stores its per-slot state for this layout.
    type State: SlotState;

    /// Whether a key's slots are scattered over the whole table (xor) rather
    /// than near each other (binary fuse). Scattered layouts peel in FIFO
    /// order: consecutive queue entries are unrelated, so their cache misses
    /// overlap (measured 20–40% faster at 3M keys). Local layouts peel LIFO,
    /// following the slots just freed, which are in cache (10–15% faster).
    const SCATTERED: bool;

    /// Number of slots in the table.
    fn num_slots(&self) -> usize;

    /// The `A` slots of the key with mixed hash `mixed`: pairwise distinct
    /// and each `< num_slots()`. The first is monotone in `mixed` (so sorting
    /// keys by their top bits sorts them by first slot). Must be exactly the
    /// function the query uses.
    fn slots(&self, mixed: u64) -> [usize; A];
}

/// Peeling's per-slot state: how many unpeeled keys touch a slot and the
/// xor of their mixed hashes. The algorithm is the same for every layout;
/// which memory layout of this state is fastest is not (see the two impls).
pub(crate) trait SlotState {
    /// State for `num_slots` empty slots ([`Error::TooLarge`] if it cannot
    /// be allocated).
    fn zeroed(num_slots: usize) -> Result<Self, Error>
    where
        Self: Sized;
    /// Adds a key; true if the slot's count overflowed (the attempt fails).
    fn add(&mut self, slot: usize, mixed: u64) -> bool;
    /// Removes a key that was added.
    fn remove(&mut self, slot: usize, mixed: u64);
    /// Whether exactly one unpeeled key touches the slot.
    fn is_alone(&self, slot: usize) -> bool;
    /// The xor of the mixed hashes of the slot's unpeeled keys.
    fn xor(&self, slot: usize) -> u64;
    /// Marks the slot empty (its last key was peeled through it).
    fn clear(&mut self, slot: usize);
}

/// Counts and xors in separate arrays (9 bytes per slot). For layouts with
/// locality (binary fuse): most accesses only read a count, and a byte per
/// slot stays in cache where 16 would not.
pub(crate) struct SplitState {
    xors: Vec<u64>,
    counts: Vec<u8>,
}

impl SlotState for SplitState {
    fn zeroed(num_slots: usize) -> Result<Self, Error> {
        Ok(SplitState {
            xors: zeroed_vec(num_slots)?,
            counts: zeroed_vec(num_slots)?,
        })
    }
    #[inline(always)]
    fn add(&mut self, slot: usize, mixed: u64) -> bool {
        self.xors[slot] ^= mixed;
        self.counts[slot] = self.counts[slot].wrapping_add(1);
        self.counts[slot] == 0
    }
    #[inline(always)]
    fn remove(&mut self, slot: usize, mixed: u64) {
        self.xors[slot] ^= mixed;
        self.counts[slot] = self.counts[slot].wrapping_sub(1);
    }
    #[inline(always)]
    fn is_alone(&self, slot: usize) -> bool {
        self.counts[slot] == 1
    }
    #[inline(always)]
    fn xor(&self, slot: usize) -> u64 {
        self.xors[slot]
    }
    #[inline(always)]
    fn clear(&mut self, slot: usize) {
        self.counts[slot] = 0;
    }
}

/// Count and xor side by side (16 bytes per slot). For layouts whose slots
/// are scattered over the whole table (xor): every access is a cache miss
/// anyway, and this makes it one miss instead of two.
pub(crate) struct JointState(Vec<Joint>);

#[derive(Clone, Copy, Default, bytemuck::Zeroable)]
pub(crate) struct Joint {
    xor: u64,
    count: u32,
}

impl SlotState for JointState {
    fn zeroed(num_slots: usize) -> Result<Self, Error> {
        Ok(JointState(zeroed_vec(num_slots)?))
    }
    #[inline(always)]
    fn add(&mut self, slot: usize, mixed: u64) -> bool {
        let j = &mut self.0[slot];
        j.xor ^= mixed;
        j.count = j.count.wrapping_add(1);
        j.count == 0
    }
    #[inline(always)]
    fn remove(&mut self, slot: usize, mixed: u64) {
        let j = &mut self.0[slot];
        j.xor ^= mixed;
        j.count = j.count.wrapping_sub(1);
    }
    #[inline(always)]
    fn is_alone(&self, slot: usize) -> bool {
        self.0[slot].count == 1
    }
    #[inline(always)]
    fn xor(&self, slot: usize) -> u64 {
        self.0[slot].xor
    }
    #[inline(always)]
    fn clear(&mut self, slot: usize) {
        self.0[slot].count = 0;
    }
}

/// A table that satisfies every key, with what is needed to query it.
pub(crate) struct Built<F, G> {
    pub(crate) fingerprints: Vec<F>,
    pub(crate) geometry: G,
    pub(crate) seed: u64,
    pub(crate) num_keys: usize,
}

/// The seed of attempt `attempt`: fixed, so builds are reproducible.
pub(crate) fn attempt_seed(attempt: u32) -> u64 {
    remix(attempt as u64, u64::from_le_bytes(*b"amq-xorf"))
}

/// Builds a table for the key hashes `hashes` (duplicates allowed).
/// `geometry_for(n)` gives the table shape for `n` distinct keys, `n >= 1`.
/// For no keys the table is empty.
pub(crate) fn build<F, G, const A: usize>(
    hashes: &[u64],
    geometry_for: impl Fn(usize) -> Result<G, Error>,
) -> Result<Built<F, G>, Error>
where
    F: Fingerprint,
    G: Geometry<A>,
{
    let mut distinct: Option<Vec<u64>> = None;
    for attempt in 0..MAX_ATTEMPTS {
        let keys = distinct.as_deref().unwrap_or(hashes);
        if keys.is_empty() {
            return Ok(Built {
                fingerprints: Vec::new(),
                geometry: geometry_for(0)?,
                seed: attempt_seed(0),
                num_keys: 0,
            });
        }
        let geometry = geometry_for(keys.len())?;
        let seed = attempt_seed(attempt);
        if let Some(fingerprints) = try_seed::<F, G, A>(keys, &geometry, seed)? {
            return Ok(Built {
                fingerprints,
                geometry,
                seed,
                num_keys: keys.len(),
            });
        }
        if distinct.is_none() {
            distinct = Some(sorted_distinct(hashes)?);
        }
    }
    Err(Error::BuildFailed {
        attempts: MAX_ATTEMPTS,
    })
}

/// One attempt with one seed: the filled table, or `None` if peeling stalls
/// ([`Error::TooLarge`] if a working array cannot be allocated).
pub(crate) fn try_seed<F, G, const A: usize>(
    keys: &[u64],
    geometry: &G,
    seed: u64,
) -> Result<Option<Vec<F>>, Error>
where
    F: Fingerprint,
    G: Geometry<A>,
{
    let num_slots = geometry.num_slots();
    // Slot indices are stored as u32; geometries refuse larger tables.
    debug_assert!(num_slots <= u32::MAX as usize);

    let mut order = ordered_mixed_hashes(keys, seed)?;

    let mut state = G::State::zeroed(num_slots)?;
    let mut overflow = false;
    for &mixed in &order {
        for slot in geometry.slots(mixed) {
            overflow |= state.add(slot, mixed);
        }
    }
    if overflow {
        return Ok(None);
    }

    // Peel. A slot enters the queue only when its count is exactly one:
    // initially, or when it falls from two to one, which happens at most once
    // per slot (counts only fall). So `num_slots` entries always suffice; the
    // one spare lets the pushes below write unconditionally.
    let mut queue: Vec<u32> = zeroed_vec(num_slots + 1)?;
    let mut queued = 0usize;
    for slot in 0..num_slots {
        queue[queued] = slot as u32;
        queued += state.is_alone(slot) as usize;
    }
    let mut which: Vec<u8> = zeroed_vec(keys.len())?;
    let mut peeled = 0usize;
    let mut head = 0usize;
    while head < queued {
        // See `Geometry::SCATTERED` for why the order differs.
        let slot = if G::SCATTERED {
            head += 1;
            queue[head - 1]
        } else {
            queued -= 1;
            queue[queued]
        } as usize;
        if !state.is_alone(slot) {
            continue; // its key left through another slot
        }
        let mixed = state.xor(slot);
        let slots = geometry.slots(mixed);
        let mut index = A;
        for (i, &s) in slots.iter().enumerate() {
            if s == slot {
                index = i;
                continue;
            }
            state.remove(s, mixed);
            queue[queued] = s as u32;
            queued += state.is_alone(s) as usize;
        }
        if index == A || peeled == keys.len() {
            return Ok(None); // unreachable with exact counts; fail rather than trust it
        }
        state.clear(slot);
        // The stack overwrites `order` from the front: `peeled` never passes
        // the number of keys, and the ordered hashes are no longer needed.
        order[peeled] = mixed;
        which[peeled] = index as u8;
        peeled += 1;
    }
    if peeled != keys.len() {
        return Ok(None);
    }
    drop((state, queue));

    let mut table: Vec<F> = zeroed_vec(num_slots)?;
    for (&mixed, &index) in order.iter().zip(&which).rev() {
        let slots = geometry.slots(mixed);
        // table[slots[index]] is still zero here, so xoring it in is harmless.
        let mut fp = F::from_hash(mixed);
        for s in slots {
            fp = fp ^ table[s];
        }
        table[slots[index as usize]] = fp;
    }
    Ok(Some(table))
}

/// The mixed hashes `remix(h, seed)` of `keys`, counting-sorted by their top
/// bits into about `keys.len() / 256` buckets (at most 2^12, so every
/// bucket's write position stays in cache).
fn ordered_mixed_hashes(keys: &[u64], seed: u64) -> Result<Vec<u64>, Error> {
    let bucket_bits = bucket_bits(keys.len(), 8, 12);
    let mut starts: Vec<usize> = zeroed_vec((1 << bucket_bits) + 1)?;
    for &h in keys {
        starts[top_bits(remix(h, seed), bucket_bits) + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut order: Vec<u64> = zeroed_vec(keys.len())?;
    for &h in keys {
        let mixed = remix(h, seed);
        let b = top_bits(mixed, bucket_bits);
        order[starts[b]] = mixed;
        starts[b] += 1;
    }
    Ok(order)
}

/// `log2` of a bucket count giving about `2^per_bucket_bits` keys per bucket,
/// at most `2^max_bits` buckets.
fn bucket_bits(n: usize, per_bucket_bits: u32, max_bits: u32) -> u32 {
    let log_n = usize::BITS - n.leading_zeros();
    log_n.saturating_sub(per_bucket_bits).min(max_bits)
}

#[inline(always)]
fn top_bits(x: u64, bits: u32) -> usize {
    // `checked_shr` keeps `bits == 0` (one bucket) free of a shift by 64.
    x.checked_shr(64 - bits).unwrap_or(0) as usize
}

/// The distinct values of `hashes`, sorted. Buckets by the top bits first
/// (about four values per bucket), then sorts each bucket, so it takes
/// expected linear time on hash values and `O(n log n)` at worst (all values
/// in one bucket).
pub(crate) fn sorted_distinct(hashes: &[u64]) -> Result<Vec<u64>, Error> {
    let bits = bucket_bits(hashes.len(), 2, 24);
    let mut starts: Vec<usize> = zeroed_vec((1 << bits) + 1)?;
    for &h in hashes {
        starts[top_bits(h, bits) + 1] += 1;
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    let mut sorted: Vec<u64> = zeroed_vec(hashes.len())?;
    for &h in hashes {
        let b = top_bits(h, bits);
        sorted[starts[b]] = h;
        starts[b] += 1;
    }
    // Scattering moved each bucket's start to its end.
    let mut bucket_start = 0;
    for &bucket_end in &starts[..1 << bits] {
        sorted[bucket_start..bucket_end].sort_unstable();
        bucket_start = bucket_end;
    }
    sorted.dedup();
    sorted.shrink_to_fit();
    Ok(sorted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// Three slots in three equal blocks: the smallest geometry to test the
    /// core with, independent of either filter's sizing.
    struct Blocks(usize);

    impl Geometry<3> for Blocks {
        type State = SplitState;
        const SCATTERED: bool = true;
        fn num_slots(&self) -> usize {
            3 * self.0
        }
        fn slots(&self, mixed: u64) -> [usize; 3] {
            let b = self.0 as u64;
            [
                crate::hash::reduce(mixed, b) as usize,
                (b + crate::hash::reduce(mixed.rotate_left(21), b)) as usize,
                (2 * b + crate::hash::reduce(mixed.rotate_left(42), b)) as usize,
            ]
        }
    }

    fn blocks_for(n: usize) -> Result<Blocks, Error> {
        Ok(Blocks((n * 123 / 300 + 11).max(1)))
    }

    fn satisfied<const A: usize>(b: &Built<u16, impl Geometry<A>>, hashes: &[u64]) -> bool {
        hashes.iter().all(|&h| {
            let mixed = remix(h, b.seed);
            let x = b
                .geometry
                .slots(mixed)
                .iter()
                .fold(0u16, |x, &s| x ^ b.fingerprints[s]);
            x == u16::from_hash(mixed)
        })
    }

    #[test]
    fn builds_and_satisfies_every_key() {
        let hashes: Vec<u64> = (0..5000).map(|i| remix(i, 1)).collect();
        let b = build::<u16, _, 3>(&hashes, blocks_for).unwrap();
        assert_eq!(b.num_keys, 5000);
        assert!(satisfied(&b, &hashes));
    }

    #[test]
    fn duplicates_are_removed_and_counted_once() {
        let mut hashes: Vec<u64> = (0..3000).map(|i| remix(i, 2)).collect();
        hashes.extend_from_within(..1500);
        let b = build::<u16, _, 3>(&hashes, blocks_for).unwrap();
        assert_eq!(b.num_keys, 3000);
        assert!(satisfied(&b, &hashes));
        // 1,000 copies of one hash overflow a u8 count: still fine.
        let same = vec![7u64; 1000];
        let b = build::<u16, _, 3>(&same, blocks_for).unwrap();
        assert_eq!(b.num_keys, 1);
        assert!(satisfied(&b, &same));
    }

    #[test]
    fn empty_and_tiny() {
        let b = build::<u16, _, 3>(&[], blocks_for).unwrap();
        assert_eq!((b.num_keys, b.fingerprints.len()), (0, 0));
        for n in 1..20 {
            let hashes: Vec<u64> = (0..n).collect();
            let b = build::<u16, _, 3>(&hashes, blocks_for).unwrap();
            assert!(satisfied(&b, &hashes));
        }
    }

    #[test]
    fn impossible_table_fails_in_bounded_attempts() {
        // Four keys cannot be peeled from three slots.
        let hashes = [1u64, 2, 3, 4];
        let r = build::<u8, _, 3>(&hashes, |_| Ok(Blocks(1)));
        assert!(matches!(
            r,
            Err(Error::BuildFailed {
                attempts: MAX_ATTEMPTS
            })
        ));
    }

    #[test]
    fn sorted_distinct_matches_sort_dedup() {
        for n in [0usize, 1, 2, 5, 100, 10_000] {
            let mut v: Vec<u64> = (0..n as u64).map(|i| remix(i % 37, 5) ^ (i % 3)).collect();
            v.push(0);
            v.push(u64::MAX);
            v.push(u64::MAX);
            let got = sorted_distinct(&v).unwrap();
            v.sort_unstable();
            v.dedup();
            assert_eq!(got, v);
        }
    }
}
