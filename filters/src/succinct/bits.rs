//! Bit-level building blocks of the succinct structures: where their words
//! live ([`Words`]: an owned `[u64]` or the little-endian bytes of a frame),
//! packed fixed-width fields, and select inside one word.
//!
//! Every read goes through [`Words::word`], which answers 0 past the end
//! instead of panicking: a structure read in place from bytes whose lengths
//! were checked in O(1) (a view) can then meet any content without reading
//! out of bounds. On a structure whose contents were checked the reads never
//! go past the end, so the 0 is never seen.

/// Where a structure's `u64` words live. The queries are written once over
/// this, for owned filters and for views of a frame's bytes alike.
pub(crate) trait Words {
    /// Word `i`, or 0 past the last word.
    fn word(&self, i: usize) -> u64;

    /// A hint to start loading word `i` (nothing past the last word, and
    /// nothing where the words are not in memory as `u64`s).
    #[inline(always)]
    fn prefetch(&self, _i: usize) {}
}

impl Words for [u64] {
    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        self.get(i).copied().unwrap_or(0)
    }

    #[inline(always)]
    fn prefetch(&self, i: usize) {
        if let Some(w) = self.get(i) {
            crate::prefetch::prefetch(w);
        }
    }
}

impl Words for alloc::vec::Vec<u64> {
    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        self.get(i).copied().unwrap_or(0)
    }

    #[inline(always)]
    fn prefetch(&self, i: usize) {
        self.as_slice().prefetch(i);
    }
}

/// Little-endian `u64` words in place in a byte slice (a frame's payload),
/// read with unaligned loads. The slice's length is a multiple of 8
/// (checked by whoever made it; a partial last word would read as 0).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeWords<'a> {
    bytes: &'a [u8],
}

impl<'a> LeWords<'a> {
    /// The words of `bytes` (`bytes.len()` a multiple of 8).
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        LeWords { bytes }
    }
}

impl Words for LeWords<'_> {
    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        match i.checked_mul(8).and_then(|s| self.bytes.get(s..s + 8)) {
            Some(b) => b.try_into().map_or(0, u64::from_le_bytes),
            None => 0,
        }
    }
}

/// The `width`-bit field (`width <= 63`) starting at bit `pos` of the bit
/// string the words `start..` hold (bit `j` is bit `j % 64` of word
/// `start + j / 64`). Reads two words, so the array must have one word
/// after the last field for the read to be in bounds (a padding word); past
/// the end it reads zeros (see [`Words::word`]).
#[inline(always)]
pub(crate) fn read_field<W: Words + ?Sized>(words: &W, start: usize, pos: u64, width: u32) -> u64 {
    let w = start.wrapping_add((pos / 64) as usize);
    let shift = (pos % 64) as u32;
    let two = (words.word(w.wrapping_add(1)) as u128) << 64 | words.word(w) as u128;
    ((two >> shift) as u64) & low_mask(width)
}

/// Writes the `width`-bit field `value` (already less than `2^width`) at bit
/// `pos` of `words`, which must hold the bits it covers (ORs: the field's
/// bits must be zero before).
pub(crate) fn write_field(words: &mut [u64], pos: u64, width: u32, value: u64) {
    if width == 0 {
        return;
    }
    let w = (pos / 64) as usize;
    let shift = (pos % 64) as u32;
    words[w] |= value << shift;
    if shift + width > 64 {
        words[w + 1] |= value >> (64 - shift);
    }
}

/// A mask of the `width` low bits (`width <= 64`).
#[inline(always)]
pub(crate) const fn low_mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// `SELECT_IN_BYTE[8 b + r]` is the position of the `r`-th set bit (from 0)
/// of the byte `b`, for `r` below its popcount (8 where there is none).
static SELECT_IN_BYTE: [u8; 2048] = select_in_byte_table();

const fn select_in_byte_table() -> [u8; 2048] {
    let mut t = [8u8; 2048];
    let mut b = 0;
    while b < 256 {
        let mut seen = 0;
        let mut bit = 0;
        while bit < 8 {
            if b >> bit & 1 == 1 {
                t[b * 8 + seen] = bit as u8;
                seen += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    t
}

const ONES_STEP_8: u64 = 0x0101_0101_0101_0101;
const MSBS_STEP_8: u64 = 0x8080_8080_8080_8080;

/// The position of the `rank`-th set bit (from 0) of `x`, for
/// `rank < x.count_ones()`; 64 or more otherwise (never a panic).
///
/// Broadword selection in the manner of Vigna, "Broadword Implementation of
/// Rank/Select Queries" (WEA 2008): the popcount of each byte, summed into
/// running totals by one multiplication; the byte holding the bit is the
/// number of running totals not above `rank`, found for all eight bytes at
/// once by a byte-wise comparison (every total is at most 64, so setting
/// each byte's top bit before the subtraction keeps the bytes from
/// borrowing from each other); the bit inside that byte comes from a
/// 2 KiB table. No branch, no loop.
#[inline(always)]
pub(crate) fn select_in_word(x: u64, rank: u32) -> u32 {
    // Popcount of every byte, in that byte.
    let mut s = x - ((x >> 1) & 0x5555_5555_5555_5555);
    s = (s & 0x3333_3333_3333_3333) + ((s >> 2) & 0x3333_3333_3333_3333);
    s = (s + (s >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    // Byte j: the set bits of bytes 0..=j.
    let running = s.wrapping_mul(ONES_STEP_8);
    let r = (rank & 0x7f) as u64;
    // Byte j's top bit: whether running_j <= rank.
    let not_above = ((r * ONES_STEP_8) | MSBS_STEP_8).wrapping_sub(running) & MSBS_STEP_8;
    let byte = not_above.count_ones(); // the byte of the bit; 8 if there is none
    if byte >= 8 || rank >= 64 {
        return 64;
    }
    // Set bits before that byte: running total of the byte below (0 for byte 0).
    let before = ((running << 8) >> (8 * byte)) & 0xff;
    let in_byte = (x >> (8 * byte)) & 0xff;
    let k = (r - before) as usize; // < popcount of the byte, so < 8
    byte * 8 + SELECT_IN_BYTE[(in_byte as usize) * 8 + (k & 7)] as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::remix;

    fn naive_select(x: u64, rank: u32) -> u32 {
        let mut seen = 0;
        for bit in 0..64 {
            if x >> bit & 1 == 1 {
                if seen == rank {
                    return bit;
                }
                seen += 1;
            }
        }
        64
    }

    #[test]
    fn select_in_word_agrees_with_a_scan() {
        let mut words = alloc::vec![
            0u64,
            1,
            u64::MAX,
            1 << 63,
            0x8000_0000_0000_0001,
            0x00ff_0000_ff00_00ff
        ];
        for i in 0..20_000u64 {
            let a = remix(i, 7);
            // Dense, sparse and middling words.
            words.extend([
                a,
                a & remix(i, 8),
                a | remix(i, 9),
                a & remix(i, 8) & remix(i, 10),
            ]);
        }
        for x in words {
            for rank in 0..x.count_ones() {
                assert_eq!(select_in_word(x, rank), naive_select(x, rank), "{x:#x} {rank}");
            }
            // Past the last set bit: 64 or more, no panic.
            for rank in x.count_ones()..70 {
                assert!(select_in_word(x, rank) >= 64, "{x:#x} {rank}");
            }
        }
    }

    #[test]
    fn fields_round_trip_across_word_boundaries() {
        for width in [0u32, 1, 5, 13, 31, 32, 33, 62, 63] {
            let n = 50u64;
            let mut words = alloc::vec![0u64; ((n * width as u64).div_ceil(64) + 1) as usize];
            let value = |i: u64| remix(i, width as u64) & low_mask(width);
            for i in 0..n {
                write_field(&mut words, i * width as u64, width, value(i));
            }
            for i in 0..n {
                assert_eq!(read_field(words.as_slice(), 0, i * width as u64, width), value(i));
            }
            let bytes: alloc::vec::Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
            let le = LeWords::new(&bytes);
            for i in 0..n {
                assert_eq!(read_field(&le, 0, i * width as u64, width), value(i));
            }
        }
    }

    #[test]
    fn reads_past_the_end_are_zero() {
        let bytes = [0xffu8; 16];
        let le = LeWords::new(&bytes);
        assert_eq!(le.word(1), u64::MAX);
        assert_eq!(le.word(2), 0);
        assert_eq!(le.word(usize::MAX), 0);
        assert_eq!(read_field(&le, usize::MAX, u64::MAX, 63), 0);
        let words = [u64::MAX];
        assert_eq!(words[..].word(1), 0);
        assert_eq!(low_mask(64), u64::MAX);
    }
}
