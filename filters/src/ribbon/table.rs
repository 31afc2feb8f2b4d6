//! The shard table (a start and a seed per shard) and the limits on the
//! seeds a shard tries.

use alloc::vec::Vec;

use crate::Error;

/// Seeds tried per shard before construction gives up with
/// [`Error::BuildFailed`]. The shard's extra slots double every 8 attempts,
/// so in practice the limit is never reached.
pub const MAX_ATTEMPTS: u32 = 64;

/// After this many failed attempts at one size, a shard's extra slots double,
/// so construction terminates for any key set.
pub(crate) const ATTEMPTS_PER_SIZE: u32 = 8;

/// Empty shard-table vectors with room for `num_shards` shards: a start per
/// shard plus the end (none for no shards), and a seed per shard; reserved
/// fallibly, so a size the allocator refuses is [`Error::TooLarge`].
pub(crate) fn shard_table(num_shards: usize) -> Result<(Vec<u32>, Vec<u8>), Error> {
    let mut starts = Vec::new();
    if num_shards > 0 {
        starts
            .try_reserve_exact(num_shards + 1)
            .map_err(|_| Error::TooLarge)?;
    }
    let mut seeds = Vec::new();
    seeds.try_reserve_exact(num_shards).map_err(|_| Error::TooLarge)?;
    Ok((starts, seeds))
}

/// Shard `i` of a shard table held in memory: its first unit, its end and
/// its seed, as the query's locate functions take them.
#[inline(always)]
pub(crate) fn shard_entry(starts: &[u32], seeds: &[u8], i: usize) -> (usize, usize, u8) {
    (starts[i] as usize, starts[i + 1] as usize, seeds[i])
}

/// The little-endian `u32` at index `i` of `bytes`.
#[inline(always)]
pub(crate) fn u32_at(bytes: &[u8], i: usize) -> u32 {
    let mut le = [0u8; 4];
    le.copy_from_slice(&bytes[4 * i..4 * i + 4]);
    u32::from_le_bytes(le)
}

/// Bytes of the compact shard table: a `u32` start per shard and one for
/// the end, a seed byte per shard.
pub(crate) fn shard_table_bytes(num_shards: usize) -> Option<usize> {
    num_shards.checked_add(1)?.checked_mul(4)?.checked_add(num_shards)
}
