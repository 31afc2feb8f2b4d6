//! The per-shard descriptor: where a shard's words start, its geometry and
//! the seed it was solved with, packed into 16 bytes so the whole table of
//! a 10-million-key filter (1,221 shards) stays in L1/L2 cache.

use super::solution::Geometry;
use crate::Error;

/// Bits of `first_word` in the first packed word.
const FIRST_WORD_BITS: u32 = 48;

/// One shard of a [`Ribbon`](super::Ribbon).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shard {
    /// `first_word` (48 bits) | `base_columns` << 48 (6 bits) | `seed` << 56.
    location: u64,
    /// `num_blocks` | `upper_start` << 32.
    shape: u64,
}

impl Shard {
    /// A shard whose words begin at `first_word`. `TooLarge` if a field does
    /// not fit its packed width.
    pub(crate) fn new(first_word: usize, g: &Geometry, seed: u8) -> Result<Self, Error> {
        let fits = (first_word as u64) < 1 << FIRST_WORD_BITS
            && g.num_blocks <= u32::MAX as usize
            && g.upper_start <= g.num_blocks
            && (1..=32).contains(&g.base_columns);
        if !fits {
            return Err(Error::TooLarge);
        }
        Ok(Shard {
            location: first_word as u64 | (g.base_columns as u64) << 48 | (seed as u64) << 56,
            shape: g.num_blocks as u64 | (g.upper_start as u64) << 32,
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

    #[inline(always)]
    pub(crate) fn geometry(&self) -> Geometry {
        Geometry {
            num_blocks: self.shape as u32 as usize,
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
            num_blocks: u32::MAX as usize,
            base_columns: 32,
            upper_start: 17,
        };
        let s = Shard::new((1 << 48) - 1, &g, 255).unwrap();
        assert_eq!((s.first_word(), s.geometry(), s.seed()), ((1 << 48) - 1, g, 255));
        assert_eq!(Shard::new(1 << 48, &g, 0), Err(Error::TooLarge));
    }
}
