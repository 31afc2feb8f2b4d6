//! The Grafite query, written once over where the Elias–Fano words live
//! (the owned filter's vector, or a frame's bytes for the view).
//!
//! A range `lo..=hi` touches one block of `2^k` keys, or two neighbouring
//! ones; each piece maps onto a circular interval of the reduced universe
//! (one interval, or two where it wraps past `r − 1`), and the filter says
//! yes when the Elias–Fano code holds a value in one of them: a successor
//! query per interval. A range over three blocks or more covers a whole
//! block and answers `true` (the bound promises nothing for it).

use super::hash::LocalityHash;
use crate::succinct::{DenseSelect, EfCore, Words};

/// Whether the code of `h(S)` holds a value in `h(lo..=hi)`.
#[inline]
pub(crate) fn may_contain_range<W: Words>(
    ef: &EfCore<W>,
    dense: &DenseSelect,
    hash: &LocalityHash,
    lo: u64,
    hi: u64,
) -> bool {
    if lo > hi || ef.len() == 0 {
        return false;
    }
    let k = hash.block_bits();
    let (first, last) = (lo >> k, hi >> k);
    if first == last {
        piece(ef, dense, hash, first, hash.offset(lo), hash.offset(hi))
    } else if last - first == 1 {
        let block_end = hash.offset(u64::MAX);
        piece(ef, dense, hash, first, hash.offset(lo), block_end)
            || piece(ef, dense, hash, last, 0, hash.offset(hi))
    } else {
        true
    }
}

/// Whether the code holds a value in the image of offsets `from..=to` of
/// block `block`: `(q(block) + from .. q(block) + to) mod r`, one interval
/// or, past `r − 1`, two. Each is one [`EfCore::contains_in_dense`]: a
/// successor query that reads low bits only where high parts do not
/// decide, through the dense blocks' directory where there is one.
#[inline(always)]
fn piece<W: Words>(
    ef: &EfCore<W>,
    dense: &DenseSelect,
    hash: &LocalityHash,
    block: u64,
    from: u64,
    to: u64,
) -> bool {
    let start = hash.block_start(block);
    let (a, b) = (hash.rotate(start, from), hash.rotate(start, to));
    if a <= b {
        ef.contains_in_dense(a, b, dense)
    } else {
        ef.contains_in_dense(a, hash.universe() - 1, dense) || ef.contains_in_dense(0, b, dense)
    }
}

/// Starts loading what [`may_contain_range`] reads first for a range
/// starting at `lo`: the Elias–Fano words of `h(lo)`'s bucket.
#[inline]
pub(crate) fn prefetch<W: Words>(ef: &EfCore<W>, hash: &LocalityHash, lo: u64) {
    let start = hash.block_start(lo >> hash.block_bits());
    ef.prefetch_bucket(hash.rotate(start, hash.offset(lo)) >> ef.layout.low_bits);
}

/// The bucket of `h(lo)`: what a query for a range starting at `lo` reads
/// first.
#[inline]
pub(crate) fn first_bucket<W: Words>(ef: &EfCore<W>, hash: &LocalityHash, lo: u64) -> u64 {
    let start = hash.block_start(lo >> hash.block_bits());
    hash.rotate(start, hash.offset(lo)) >> ef.layout.low_bits
}
