//! A [`Table`]'s bytes, and the checks that a table read from bytes is one
//! that inserts could have made.

use alloc::vec::Vec;

use super::{Table, BLOCK, TAIL};
use crate::succinct::bits::low_mask;

impl Table {
    /// The blocks as the byte format stores them (the in-memory layout,
    /// without the zero tail).
    pub(crate) fn block_bytes(&self) -> &[u8] {
        &self.bytes[..self.bytes.len() - TAIL]
    }

    /// The table whose blocks are `blocks` (as [`block_bytes`](Self::block_bytes)
    /// gives them, of the length [`shape`](Self::shape) gives less the
    /// tail), if they are one that inserts could have made:
    ///
    /// * no quotient past `2^q` occupied;
    /// * a run end for every occupied quotient and no other, every run
    ///   inside the table, its values in order;
    /// * every slot outside the runs zero;
    /// * every offset byte what the runs imply (saturated at 255).
    ///
    /// Checked without panicking, for bytes from anywhere; allocates the
    /// table's bytes once.
    pub(crate) fn from_block_bytes(
        quotient_bits: u32,
        width: u32,
        blocks: &[u8],
    ) -> Result<Self, &'static str> {
        if quotient_bits > super::MAX_QUOTIENT_BITS {
            return Err("table shape");
        }
        Table::from_block_bytes_of(1 << quotient_bits, width, blocks)
    }

    /// [`from_block_bytes`](Self::from_block_bytes) of a table of
    /// `quotients` quotients.
    pub(crate) fn from_block_bytes_of(
        quotients: u64,
        width: u32,
        blocks: &[u8],
    ) -> Result<Self, &'static str> {
        let (slots, len) = Table::shape_of(quotients, width).map_err(|_| "table shape")?;
        if blocks.len() != len - TAIL {
            return Err("payload length does not match the table's shape");
        }
        let mut bytes: Vec<u8> = crate::zeroed::zeroed_vec(len).map_err(|_| "table too large")?;
        bytes[..blocks.len()].copy_from_slice(blocks);
        let mut t = Table {
            quotients: quotients as usize,
            width,
            mask: low_mask(width),
            slots,
            bytes,
            len: 0,
        };
        let canonical = t.canonical();
        for b in 0..slots / BLOCK {
            // Only quotients below 2^q exist.
            let valid = low_mask(canonical.saturating_sub(b * BLOCK).min(BLOCK) as u32);
            if t.occupied(b) & !valid != 0 {
                return Err("a quotient past the table is occupied");
            }
        }
        // Walk the runs in quotient order, finding each run's end from the
        // bits alone (not the offsets, which are checked after).
        let mut next = 0usize;
        let mut ends = 0u64;
        let mut x = t.next_occupied(0);
        while x < canonical {
            let start = next.max(x);
            if (next..start).any(|s| t.value(s) != 0) {
                return Err("a value outside every run");
            }
            let end = t.next_runend(start).ok_or("a run with no end")?;
            if (start..end).any(|s| t.value(s) > t.value(s + 1)) {
                return Err("a run's values out of order");
            }
            t.len += end - start + 1;
            ends += 1;
            next = end + 1;
            x = t.next_occupied(x + 1);
        }
        if (next..slots).any(|s| t.value(s) != 0) {
            return Err("a value outside every run");
        }
        let all_ends: u64 = (0..slots / BLOCK)
            .map(|b| u64::from(t.runends(b).count_ones()))
            .sum();
        if all_ends != ends {
            return Err("run ends that end no run");
        }
        // The offsets, recomputed in order from the runs, must be the ones
        // stored.
        let stored: Vec<u8> = (0..slots / BLOCK).map(|b| t.bytes[b * t.stride()]).collect();
        if stored[0] != 0 {
            return Err("offsets that do not match the runs");
        }
        t.fix_offsets(1, slots / BLOCK - 1);
        if (0..slots / BLOCK).any(|b| t.bytes[b * t.stride()] != stored[b]) {
            return Err("offsets that do not match the runs");
        }
        Ok(t)
    }

    /// Checks every invariant from scratch (runs in quotient order, each at
    /// or after its quotient, values sorted within a run, the runs found
    /// through the offsets where they are, no stray run end, offsets
    /// exact), panicking on the first that fails.
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let mut next = 0usize;
        let mut count = 0;
        let mut ends = 0;
        for x in 0..self.canonical() {
            if !self.is_occupied(x) {
                continue;
            }
            let start = next.max(x);
            let mut s = start;
            while !self.runend(s) {
                assert!(self.value(s) <= self.value(s + 1), "run of {x} unsorted");
                s += 1;
            }
            assert_eq!(self.run(x), Some(start..=s), "run of {x}");
            count += s - start + 1;
            ends += 1;
            next = s + 1;
        }
        assert_eq!(count, self.len);
        let all_ends: u32 = (0..self.slots / BLOCK)
            .map(|b| self.runends(b).count_ones())
            .sum();
        assert_eq!(all_ends, ends);
        let again = Table::from_block_bytes_of(self.quotients as u64, self.width, self.block_bytes());
        assert_eq!(again.as_ref(), Ok(self), "the bytes decode to the same table");
    }
}
