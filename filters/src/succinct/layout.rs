//! The shape of an Elias–Fano code: its four parameters, the sizes they
//! imply, and their checks. One place computes every length, so the
//! builder, the decoder, the view and the size prediction agree.
//!
//! Words, in this order, all little-endian `u64`:
//!
//! | part    | words | holds |
//! |---------|-------|-------|
//! | upper   | `⌈(n + H + 1) / 64⌉` | value `i`'s high part `v_i >> l` in unary: bit `(v_i >> l) + i` set; `H = (u − 1) >> l`; bits from `n + H + 1` on are zero |
//! | lower   | `⌈n·l / 64⌉ + 1` | value `i`'s low `l` bits at bit `i·l`; then zeros, one whole word of them at least (so a field is always read as two words in bounds) |
//! | samples | `⌈(H + 1) / 2^q⌉` | sample `j`: the position in the upper bits of zero number `j·2^q` (from 0) |
//!
//! The upper bits hold `n` ones and exactly `H + 1` zeros, the last of them
//! its last bit.

use crate::format::{ByteWriter, Reader};
use crate::{Error, FormatError};

/// Largest universe: values are below `2^62`, so sums of two values fit a
/// `u64` with room to spare.
///
/// ```
/// use amq::succinct::{EliasFano, MAX_UNIVERSE};
/// assert!(EliasFano::new(&[MAX_UNIVERSE - 1], MAX_UNIVERSE).is_ok());
/// assert!(EliasFano::new(&[1], MAX_UNIVERSE + 1).is_err());
/// ```
pub const MAX_UNIVERSE: u64 = 1 << 62;
/// Most values a code holds (far beyond any memory).
pub(crate) const MAX_LEN: u64 = 1 << 56;
/// Largest count of low bits per value.
pub(crate) const MAX_LOW_BITS: u32 = 62;
/// Select samples every `2^q` zeros, for `q` in this range.
pub(crate) const SAMPLE_LOG2_RANGE: core::ops::RangeInclusive<u32> = 4..=24;

/// The parameters of a code and the word counts they imply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Values held, `n`.
    pub(crate) len: u64,
    /// Every value is below it, `u` (at least 1).
    pub(crate) universe: u64,
    /// Low bits per value, `l`.
    pub(crate) low_bits: u32,
    /// A select sample every `2^q` zeros of the upper bits.
    pub(crate) sample_log2: u32,
    /// Bits of the upper part: `n + H + 1`.
    pub(crate) upper_bits: u64,
    pub(crate) upper_words: usize,
    pub(crate) lower_words: usize,
    pub(crate) sample_words: usize,
}

impl Layout {
    /// The layout of `len` values below `universe` with `low_bits` low bits
    /// and a sample every `2^sample_log2` zeros, or why there is none.
    pub(crate) fn new(
        len: u64,
        universe: u64,
        low_bits: u32,
        sample_log2: u32,
    ) -> Result<Layout, &'static str> {
        if !(1..=MAX_UNIVERSE).contains(&universe) {
            return Err("universe must be in 1..=2^62");
        }
        if len > MAX_LEN {
            return Err("more than 2^56 values");
        }
        if low_bits > MAX_LOW_BITS {
            return Err("more than 62 low bits");
        }
        if !SAMPLE_LOG2_RANGE.contains(&sample_log2) {
            return Err("sample interval must be 2^4..=2^24 zeros");
        }
        // Each fits a u64 by the limits above: n ≤ 2^56, H < 2^62, n·l < 2^62.
        let zeros = ((universe - 1) >> low_bits) + 1;
        let upper_bits = len + zeros;
        let as_words =
            |bits: u64| usize::try_from(bits.div_ceil(64)).map_err(|_| "too large for this machine");
        let upper_words = as_words(upper_bits)?;
        let lower_words = as_words(len * low_bits as u64)?
            .checked_add(1)
            .ok_or("too large for this machine")?;
        let sample_words =
            usize::try_from(zeros.div_ceil(1 << sample_log2)).map_err(|_| "too large for this machine")?;
        let layout = Layout {
            len,
            universe,
            low_bits,
            sample_log2,
            upper_bits,
            upper_words,
            lower_words,
            sample_words,
        };
        // Every word addressable as bytes.
        layout
            .total_words()
            .and_then(|w| w.checked_mul(8))
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or("too large for this machine")?;
        Ok(layout)
    }

    /// The number of low bits that makes the code smallest for `len` values
    /// below `universe`: `⌊log2(u / n)⌋` (Elias 1974, Fano 1971), at most
    /// [`MAX_LOW_BITS`]; for no values, enough that the upper part is a word.
    pub(crate) fn best_low_bits(len: u64, universe: u64) -> u32 {
        let ratio = universe / len.max(1);
        if ratio == 0 {
            0
        } else {
            ratio.ilog2().min(MAX_LOW_BITS)
        }
    }

    /// Words in all, or `None` on overflow (never for a layout from
    /// [`Layout::new`]).
    pub(crate) fn total_words(&self) -> Option<usize> {
        self.upper_words
            .checked_add(self.lower_words)?
            .checked_add(self.sample_words)
    }

    /// The zeros of the upper part: `H + 1`.
    #[cfg(test)]
    pub(crate) fn zeros(&self) -> u64 {
        self.upper_bits - self.len
    }

    /// Where the lower part starts, in words.
    pub(crate) fn lower_start(&self) -> usize {
        self.upper_words
    }

    /// Where the samples start, in words.
    pub(crate) fn sample_start(&self) -> usize {
        self.upper_words + self.lower_words
    }

    /// Bytes of all the words.
    pub(crate) fn size_in_bytes(&self) -> usize {
        self.total_words().unwrap_or(usize::MAX).saturating_mul(8)
    }

    /// Writes the parameters: `u64` universe, `u64` length, `u8` low bits,
    /// `u8` sample interval (log2).
    pub(crate) fn write_params(&self, w: &mut ByteWriter) {
        w.u64(self.universe)
            .u64(self.len)
            .u8(self.low_bits as u8)
            .u8(self.sample_log2 as u8);
    }

    /// Reads what [`write_params`](Self::write_params) wrote, checking it.
    pub(crate) fn read_params(r: &mut Reader<'_>) -> Result<Layout, Error> {
        let universe = r.u64()?;
        let len = r.u64()?;
        let low_bits = r.u8()? as u32;
        let sample_log2 = r.u8()? as u32;
        Layout::new(len, universe, low_bits, sample_log2)
            .map_err(|why| FormatError::InvalidParameters(why).into())
    }

    /// Checks that `payload` holds exactly this layout's words, before
    /// anything is allocated for them.
    pub(crate) fn check_payload_len(&self, payload: &Reader<'_>) -> Result<(), Error> {
        match self.total_words().and_then(|w| w.checked_mul(8)) {
            Some(bytes) if bytes == payload.remaining() => Ok(()),
            _ => Err(FormatError::InvalidParameters(
                "payload length does not match the Elias-Fano parameters",
            )
            .into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_follow_the_parameters() {
        let l = Layout::new(1000, 1000 << 10, 10, 8).unwrap();
        assert_eq!(l.zeros(), 1000);
        assert_eq!(l.upper_bits, 2000);
        assert_eq!(l.upper_words, 32);
        assert_eq!(l.lower_words, 10_000usize.div_ceil(64) + 1);
        assert_eq!(l.sample_words, 4);
        assert_eq!(Layout::best_low_bits(1000, 1000 << 10), 10);
        assert_eq!(Layout::best_low_bits(1000, (1000 << 10) - 1), 9);
        assert_eq!(Layout::best_low_bits(0, 1 << 40), 40);
        assert_eq!(Layout::best_low_bits(10, 3), 0);
        assert_eq!(Layout::best_low_bits(1, MAX_UNIVERSE), 62);
        let empty = Layout::new(0, 1 << 40, 40, 8).unwrap();
        assert_eq!(
            (empty.upper_words, empty.lower_words, empty.sample_words),
            (1, 1, 1)
        );
    }

    #[test]
    fn impossible_parameters_are_refused() {
        assert!(Layout::new(1, 0, 0, 8).is_err());
        assert!(Layout::new(1, MAX_UNIVERSE + 1, 0, 8).is_err());
        assert!(Layout::new(MAX_LEN + 1, 1 << 20, 0, 8).is_err());
        assert!(Layout::new(1, 1 << 20, 63, 8).is_err());
        assert!(Layout::new(1, 1 << 20, 4, 3).is_err());
        assert!(Layout::new(1, 1 << 20, 4, 25).is_err());
        // The largest of everything is still a layout (or too large for a
        // 32-bit machine), never an overflow.
        let _ = Layout::new(MAX_LEN, MAX_UNIVERSE, MAX_LOW_BITS, 4);
        let _ = Layout::new(MAX_LEN, MAX_UNIVERSE, 0, 4);
    }
}
