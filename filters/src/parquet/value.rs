//! [`ParquetValue`]: a column value as Parquet hashes it for its Bloom
//! filters: XXH64 (seed 0) of the value's *plain encoding*.
//!
//! The plain encoding is that of the column's *physical* type, so a value
//! must be hashed as the type the column stores it in:
//!
//! | Rust value | Parquet physical type | bytes hashed |
//! |------------|-----------------------|--------------|
//! | `i32`, `u32`; `i8`, `i16` (sign-extended), `u8`, `u16` (zero-extended) | `INT32` | 4, little-endian |
//! | `i64`, `u64` | `INT64` | 8, little-endian |
//! | `f32` / `f64` | `FLOAT` / `DOUBLE` | 4 / 8, little-endian IEEE 754 bits |
//! | `[u8]`, `str`, `Vec<u8>`, `String` | `BYTE_ARRAY` | the bytes, without the length prefix |
//! | `[u8; N]` | `FIXED_LEN_BYTE_ARRAY` | the `N` bytes |
//!
//! An `INT8` logical column is stored as `INT32`, so its value `-1` is
//! hashed as the four bytes `ff ff ff ff`: that is why `i8` widens. Floats are
//! hashed by their bits, so `0.0` and `-0.0` (and NaNs with different
//! payloads) are different values, as in every Parquet writer.

use crate::hash::{parquet_hash, ParquetHash};

/// A value that can be looked up in (or added to) a Parquet Bloom filter:
/// it knows its plain encoding's hash.
///
/// ```
/// use amq::parquet::ParquetValue;
/// // An INT32 column: 4 little-endian bytes, whatever the Rust width.
/// assert_eq!(7i32.parquet_hash(), amq::hash::parquet_hash(&7i32.to_le_bytes()));
/// assert_eq!(7u8.parquet_hash(), 7i32.parquet_hash());
/// assert_eq!((-1i8).parquet_hash(), (-1i32).parquet_hash());
/// // A BYTE_ARRAY column: the raw bytes.
/// assert_eq!("a0".parquet_hash(), amq::hash::parquet_hash(b"a0"));
/// assert_eq!(b"a0".parquet_hash(), "a0".parquet_hash());
/// ```
pub trait ParquetValue {
    /// XXH64, seed 0, of the value's plain encoding.
    fn parquet_hash(&self) -> ParquetHash;
}

/// Integers and floats: their little-endian bytes, after widening to the
/// physical type (`$wide`).
macro_rules! fixed_width {
    ($($t:ty => $wide:ty),* $(,)?) => {$(
        impl ParquetValue for $t {
            #[inline]
            fn parquet_hash(&self) -> ParquetHash {
                parquet_hash(&(<$wide>::from(*self)).to_le_bytes())
            }
        }
    )*};
}

fixed_width!(
    i8 => i32,
    i16 => i32,
    i32 => i32,
    u8 => u32,
    u16 => u32,
    u32 => u32,
    i64 => i64,
    u64 => u64,
    f32 => f32,
    f64 => f64,
);

impl ParquetValue for [u8] {
    #[inline]
    fn parquet_hash(&self) -> ParquetHash {
        parquet_hash(self)
    }
}

impl ParquetValue for str {
    #[inline]
    fn parquet_hash(&self) -> ParquetHash {
        parquet_hash(self.as_bytes())
    }
}

impl<const N: usize> ParquetValue for [u8; N] {
    #[inline]
    fn parquet_hash(&self) -> ParquetHash {
        parquet_hash(self)
    }
}

impl ParquetValue for alloc::vec::Vec<u8> {
    #[inline]
    fn parquet_hash(&self) -> ParquetHash {
        parquet_hash(self)
    }
}

impl ParquetValue for alloc::string::String {
    #[inline]
    fn parquet_hash(&self) -> ParquetHash {
        parquet_hash(self.as_bytes())
    }
}

impl<T: ParquetValue + ?Sized> ParquetValue for &T {
    #[inline]
    fn parquet_hash(&self) -> ParquetHash {
        (**self).parquet_hash()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_encodings() {
        assert_eq!((-1i8).parquet_hash(), parquet_hash(&[0xff; 4]));
        assert_eq!(255u8.parquet_hash(), parquet_hash(&[0xff, 0, 0, 0]));
        assert_eq!((-2i16).parquet_hash(), (-2i32).parquet_hash());
        assert_eq!(u32::MAX.parquet_hash(), (-1i32).parquet_hash());
        assert_eq!(u64::MAX.parquet_hash(), (-1i64).parquet_hash());
        assert_eq!(
            1.5f64.parquet_hash(),
            parquet_hash(&1.5f64.to_bits().to_le_bytes())
        );
        assert_eq!(
            1.5f32.parquet_hash(),
            parquet_hash(&1.5f32.to_bits().to_le_bytes())
        );
        assert_ne!(0.0f64.parquet_hash(), (-0.0f64).parquet_hash());
        assert_eq!(
            alloc::string::String::from("x").parquet_hash(),
            "x".parquet_hash()
        );
        assert_eq!(alloc::vec![1u8, 2].parquet_hash(), [1u8, 2].parquet_hash());
        assert_eq!((&&"x").parquet_hash(), "x".parquet_hash());
        // An INT64 column's 7 is not an INT32 column's 7.
        assert_ne!(7i64.parquet_hash(), 7i32.parquet_hash());
    }
}
