//! The per-shard descriptor of a version-1 frame that the compact layout
//! cannot express (`legacy.rs`): where a shard's words start, its own
//! geometry (result bits, extra-column start block) and the seed it was
//! solved with, packed into 16 bytes.

use super::row::ROW_WIDTH;
use super::solution::{Geometry, BLOCK_SLOTS};
use crate::Error;

/// Bits of `first_word` in the first packed word.
const FIRST_WORD_BITS: u32 = 48;

/// One shard of a [`Ribbon`](super::Ribbon).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shard {
    /// `first_word` (48 bits) | `base_columns` << 48 (6 bits) | `seed` << 56.
    location: u64,
    /// `num_starts` | `upper_start` << 32. The query needs the start count,
    /// not the block count, so it is stored ready to use.
    shape: u64,
}

impl Shard {
    /// A shard whose words begin at `first_word`. `TooLarge` if a field does
    /// not fit its packed width.
    pub(crate) fn new(first_word: usize, g: &Geometry, seed: u8) -> Result<Self, Error> {
        let fits = (first_word as u64) < 1 << FIRST_WORD_BITS
            && g.num_slots() <= u32::MAX as usize
            && g.upper_start <= g.num_blocks
            && (1..=32).contains(&g.base_columns);
        if !fits {
            return Err(Error::TooLarge);
        }
        Ok(Shard {
            location: first_word as u64 | (g.base_columns as u64) << 48 | (seed as u64) << 56,
            shape: g.num_starts() as u64 | (g.upper_start as u64) << 32,
        })
    }

    #[inline(always)]
    pub(crate) fn first_word(&self) -> usize {
        (self.location & ((1 << FIRST_WORD_BITS) - 1)) as usize
    }

    #[inline(always)]
    pub(crate) fn seed(&self) -> u8 {
        (self.location >> 56) as u8
    }

    /// Possible start slots (`Geometry::num_starts`); 0 for an empty shard.
    #[inline(always)]
    pub(crate) fn num_starts(&self) -> usize {
        self.shape as u32 as usize
    }

    #[inline(always)]
    pub(crate) fn geometry(&self) -> Geometry {
        // A shard with keys has at least two blocks, so `num_starts` is
        // `64·num_blocks − 127 > 0` and the division below inverts it.
        let num_blocks = match self.num_starts() {
            0 => 0,
            starts => (starts + ROW_WIDTH - 1) / BLOCK_SLOTS,
        };
        Geometry {
            num_blocks,
            base_columns: ((self.location >> 48) & 0x3f) as u32,
            upper_start: (self.shape >> 32) as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_and_unpacks() {
        let g = Geometry {
            num_blocks: (u32::MAX as usize) / BLOCK_SLOTS,
            base_columns: 32,
            upper_start: 17,
        };
        let s = Shard::new((1 << 48) - 1, &g, 255).unwrap();
        assert_eq!((s.first_word(), s.geometry(), s.seed()), ((1 << 48) - 1, g, 255));
        assert_eq!(s.num_starts(), g.num_starts());
        assert_eq!(Shard::new(1 << 48, &g, 0), Err(Error::TooLarge));
        let too_many_slots = Geometry {
            num_blocks: g.num_blocks + 1,
            ..g
        };
        assert_eq!(Shard::new(0, &too_many_slots, 0), Err(Error::TooLarge));
        for num_blocks in [0, 2, 3, 1000] {
            let g = Geometry {
                num_blocks,
                base_columns: 7,
                upper_start: num_blocks,
            };
            assert_eq!(Shard::new(0, &g, 0).unwrap().geometry(), g);
        }
    }
}
