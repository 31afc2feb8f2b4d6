//! How big a filter should be ([`FilterSizing`]), and the checks and
//! rounding every kind's sizing shares: key counts, FPRs, bits per key,
//! whole units of storage, and the saturating key count of the kinds that
//! count inserts.
//!
//! Below every kind: it names none of them.

use crate::error::invalid;
use crate::Error;

/// How big a filter should be: about this many bits per key, or a target
/// false-positive rate. Every constructor that sizes a filter takes one:
/// `new(expected_keys, sizing)` for the kinds that take inserts,
/// `build(hashes, sizing)` for Ribbon, and [`AnyFilter::new`](crate::AnyFilter::new) /
/// [`AnyFilter::build`](crate::AnyFilter::build) for a kind chosen at run time.
///
/// Xor and binary fuse filters have a fixed fingerprint width (8, 16 or 32
/// bits), which alone sets their space and false-positive rate, so their
/// `build` takes no sizing and [`AnyFilter::build`](crate::AnyFilter::build) ignores it for them.
///
/// ```
/// use amq::{BlockedBloom, FilterSizing};
/// assert!(FilterSizing::BitsPerKey(10.0).validate().is_ok());
/// assert!(FilterSizing::Fpr(0.01).validate().is_ok());
/// assert!(FilterSizing::Fpr(1.5).validate().is_err());
/// let f = BlockedBloom::new(1_000, FilterSizing::Fpr(0.01))?;
/// # Ok::<(), amq::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FilterSizing {
    /// About this many bits of filter per key, in `(0, 1000]`.
    BitsPerKey(f64),
    /// A target false-positive rate in `(0, 1)`: fastbloom's
    /// `with_false_pos(p).expected_items(n)` is `Kind::new(n, FilterSizing::Fpr(p))`.
    #[doc(alias = "with_false_pos", alias = "false_positive_rate")]
    Fpr(f64),
}

impl FilterSizing {
    /// Checks the number is in its domain: bits/key in `(0, 1000]`, an FPR in
    /// `(0, 1)`. Each kind may narrow the domain further when it builds.
    /// These are the checks every constructor makes on the figure it is
    /// given, with the same errors.
    ///
    /// ```
    /// use amq::FilterSizing;
    /// assert!(FilterSizing::BitsPerKey(f64::NAN).validate().is_err());
    /// assert!(FilterSizing::BitsPerKey(1000.0001).validate().is_err());
    /// ```
    pub fn validate(self) -> Result<Self, Error> {
        match self {
            FilterSizing::BitsPerKey(b) => check_bits_per_key(b)?,
            FilterSizing::Fpr(p) => check_fpr(p)?,
        }
        Ok(self)
    }
}

/// Checks a target false-positive rate: it must lie strictly in `(0, 1)`.
pub(crate) fn check_fpr(fpr: f64) -> Result<(), Error> {
    if fpr > 0.0 && fpr < 1.0 {
        Ok(())
    } else {
        Err(invalid("fpr", "must be strictly between 0 and 1"))
    }
}

/// Checks an expected key count used for sizing: at least one key.
pub(crate) fn check_keys(n: usize) -> Result<(), Error> {
    if n == 0 {
        Err(invalid("expected_keys", "must be at least 1"))
    } else {
        Ok(())
    }
}

/// Checks a bits-per-key figure: finite and positive, and at most 1,000
/// (beyond which no probe count helps).
pub(crate) fn check_bits_per_key(bits_per_key: f64) -> Result<(), Error> {
    if bits_per_key.is_finite() && bits_per_key > 0.0 && bits_per_key <= 1000.0 {
        Ok(())
    } else {
        Err(invalid("bits_per_key", "must be finite, > 0 and <= 1000"))
    }
}

/// Number of units (words, blocks) needed for `n * per_key` bits or
/// counters when a unit holds `per_unit` of them in `unit_bytes` bytes: at
/// least one, or [`Error::TooLarge`] beyond `limit` units or beyond what the
/// address space (`isize::MAX` bytes) can hold.
pub(crate) fn units_for(
    n: usize,
    per_key: f64,
    per_unit: u64,
    unit_bytes: u64,
    limit: u64,
) -> Result<u64, Error> {
    let wanted = libm::ceil(libm::ceil(n as f64 * per_key) / per_unit as f64).max(1.0);
    // Compare as integers: near 2^64 a float comparison would round the
    // limit up to the wanted size. `as` saturates, so sizes beyond u64 fail.
    let units = wanted as u64;
    if units > limit.min(isize::MAX as u64 / unit_bytes) {
        return Err(Error::TooLarge);
    }
    Ok(units)
}

/// Largest key count a Bloom-family filter with `cells` bits (or counters)
/// records: 64 keys per cell. Past it the expected FPR is 1.0 in `f64` for
/// every probe count (`1 - e^-64` rounds to 1), so the count saturates there
/// instead of overflowing, and decoding refuses a larger one: a count read
/// from bytes is then always one the filter could have reached.
pub(crate) fn max_keys(cells: u64) -> u64 {
    cells.saturating_mul(64)
}

/// `n` as a `usize`, saturating on targets where it does not fit.
pub(crate) fn count_as_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation() {
        assert!(check_fpr(0.0).is_err());
        assert!(check_fpr(1.0).is_err());
        assert!(check_fpr(f64::NAN).is_err());
        assert!(check_fpr(0.5).is_ok());
        assert!(check_bits_per_key(0.0).is_err());
        assert!(check_bits_per_key(-1.0).is_err());
        assert!(check_bits_per_key(f64::INFINITY).is_err());
        assert!(check_keys(0).is_err());
        assert_eq!(
            units_for(usize::MAX, 1000.0, 64, 8, u64::MAX),
            Err(Error::TooLarge)
        );
        assert_eq!(units_for(1, 0.001, 64, 8, u64::MAX), Ok(1));
        assert_eq!(units_for(100, 10.0, 64, 8, u64::MAX), Ok(16));
        // 2^64 bits is 2^58 words, one more than a u64 bit count allows;
        // as floats the two are equal.
        assert_eq!(
            units_for(usize::MAX, 1.0, 64, 8, u64::MAX / 64),
            Err(Error::TooLarge)
        );
        // 2^65 counters, 16 per word, are 2^61 words: addressable as 2-byte
        // units, not as 8-byte words.
        assert_eq!(units_for(usize::MAX / 2, 4.0, 16, 2, u64::MAX), Ok(1 << 61));
        assert_eq!(
            units_for(usize::MAX / 2, 4.0, 16, 8, u64::MAX),
            Err(Error::TooLarge)
        );
    }
}
