//! The blocked Bloom filter's whole queries and inserts, single and
//! batched, in their portable form, and the entry points every SIMD kernel
//! module provides around its own block kernel.

use super::probe::{block_matches, block_of, set_probes, test_and_set_probes, Block};
use crate::prefetch::prefetch;

/// Batch size of the batched inserts: enough outstanding prefetches to cover
/// memory latency, small enough to live on the stack.
const BATCH: usize = 32;
/// Keys in flight in the batched queries (one line each), chosen by
/// measurement at 100M keys (`benches/examples/batch_depth.rs`).
pub(crate) const QUERY_DEPTH: usize = 32;

/// The four entry points of a SIMD kernel module (`avx2.rs`, `avx512.rs`),
/// around its `block_matches::<PROBES>` and `set_block::<PROBES>`: the whole
/// single query (block choice and probes, so the one call a query makes
/// through its kernel pointer covers all of it), the batched query with the
/// kernel inlined into `batch::batched`'s loop, and the same two for inserts
/// (`batch::batched_insert`; the single insert through the `set_block` form
/// named second, which may differ from the batch's). All are compiled with
/// the module's target features, which is what lets the kernel inline into
/// them; written once here so the modules' surfaces cannot drift apart.
#[cfg(all(target_arch = "x86_64", not(amq_portable)))]
macro_rules! simd_entry_points {
    ($features:literal, $set_block_single:ident) => {
        /// A whole single query for `PROBES` probes (0: any count, read from
        /// `num_probes`).
        ///
        /// # Safety
        /// The CPU must support this module's target features.
        #[target_feature(enable = $features)]
        pub(super) unsafe fn contains<const PROBES: u32>(
            blocks: &[Block],
            hash: u64,
            num_probes: u32,
        ) -> bool {
            let block = &blocks[block_of(hash, blocks.len() as u32)];
            // SAFETY: this function runs only with the features `block_matches` needs.
            unsafe { block_matches::<PROBES>(block, hash, num_probes) }
        }

        /// The batched query (`hashes.len() == out.len()`).
        ///
        /// # Safety
        /// The CPU must support this module's target features.
        #[target_feature(enable = $features)]
        pub(super) unsafe fn contains_many<const PROBES: u32>(
            blocks: &[Block],
            num_probes: u32,
            hashes: &[u64],
            out: &mut [bool],
        ) {
            // SAFETY (for the closure's call): this function runs only with
            // the features `block_matches` needs.
            super::batch::batched(blocks, hashes, out, |b, h| unsafe {
                block_matches::<PROBES>(b, h, num_probes)
            });
        }

        /// A whole single insert for `PROBES` probes (0: any count).
        ///
        /// # Safety
        /// The CPU must support this module's target features.
        #[target_feature(enable = $features)]
        pub(super) unsafe fn insert<const PROBES: u32>(blocks: &mut [Block], hash: u64, num_probes: u32) {
            let i = block_of(hash, blocks.len() as u32);
            // SAFETY: this function runs only with the features the module's
            // `set_block` forms need.
            unsafe { $set_block_single::<PROBES>(&mut blocks[i], hash, num_probes) }
        }

        /// The batched insert, with `set_block` inlined into
        /// `batch::batched_insert`'s loop.
        ///
        /// # Safety
        /// The CPU must support this module's target features.
        #[target_feature(enable = $features)]
        pub(super) unsafe fn insert_many<const PROBES: u32>(
            blocks: &mut [Block],
            num_probes: u32,
            hashes: &[u64],
        ) {
            // SAFETY (for the closure's call): this function runs only with
            // the features `set_block` needs.
            super::batch::batched_insert(blocks, hashes, |b, h| unsafe {
                set_block::<PROBES>(b, h, num_probes)
            });
        }
    };
}

/// The batched query loop, a software pipeline
/// ([`pipelined`](crate::prefetch::pipelined)): the block of key
/// `i + QUERY_DEPTH` is computed and prefetched just before key `i` is
/// probed, so the cache misses of that many keys overlap. `probe` is the
/// kernel (portable or SIMD); `hashes.len() == out.len()`.
#[inline(always)]
pub(super) fn batched(
    blocks: &[Block],
    hashes: &[u64],
    out: &mut [bool],
    probe: impl Fn(&Block, u64) -> bool,
) {
    let n = blocks.len() as u32;
    crate::prefetch::pipelined::<_, QUERY_DEPTH>(
        hashes,
        out,
        |h| {
            let i = block_of(h, n);
            prefetch(&blocks[i]);
            (i, h)
        },
        |(i, h)| probe(&blocks[i], h),
    );
}

/// The batched insert loop: for each batch of [`BATCH`] hashes, compute and
/// prefetch every block first, then set the bits, so the misses overlap.
/// `set` is the kernel (portable or SIMD).
#[inline(always)]
pub(super) fn batched_insert(blocks: &mut [Block], hashes: &[u64], set: impl Fn(&mut Block, u64)) {
    let n = blocks.len() as u32;
    let mut idx = [0usize; BATCH];
    for hs in hashes.chunks(BATCH) {
        for (i, &h) in hs.iter().enumerate() {
            idx[i] = block_of(h, n);
            prefetch(&blocks[idx[i]]);
        }
        for (i, &h) in hs.iter().enumerate() {
            set(&mut blocks[idx[i]], h);
        }
    }
}

/// The portable whole insert (the bits every SIMD insert must set).
#[inline(always)]
pub(super) fn insert_portable(blocks: &mut [Block], hash: u64, num_probes: u32) {
    let i = block_of(hash, blocks.len() as u32);
    set_probes(&mut blocks[i].0, hash, num_probes);
}

/// The whole insert that says whether the key's bits were all set before
/// (`check_and_insert_hash`): portable on every CPU, one block, one pass.
#[inline(always)]
pub(super) fn test_and_insert(blocks: &mut [Block], hash: u64, num_probes: u32) -> bool {
    let i = block_of(hash, blocks.len() as u32);
    test_and_set_probes(&mut blocks[i].0, hash, num_probes)
}

/// The portable batched insert.
pub(super) fn insert_many_portable(blocks: &mut [Block], num_probes: u32, hashes: &[u64]) {
    batched_insert(blocks, hashes, |block, h| set_probes(&mut block.0, h, num_probes));
}

/// The portable whole query (what every SIMD kernel must answer).
#[inline(always)]
pub(super) fn contains_portable(blocks: &[Block], hash: u64, num_probes: u32) -> bool {
    block_matches(&blocks[block_of(hash, blocks.len() as u32)].0, hash, num_probes)
}

/// The portable batched query.
pub(super) fn contains_many_portable(blocks: &[Block], num_probes: u32, hashes: &[u64], out: &mut [bool]) {
    batched(blocks, hashes, out, |block, h| {
        block_matches(&block.0, h, num_probes)
    });
}
