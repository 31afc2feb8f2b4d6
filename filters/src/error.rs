//! Typed errors. Every fallible operation in the crate returns one of these;
//! none of them leaves a filter half-changed.

use core::fmt;

use crate::{FilterKind, HashScheme};

/// Why an operation on a filter failed. The filter is unchanged.
///
/// [`Error::Format`]'s `Display` names the [`FormatError`] (so printing the
/// error says what is wrong with the bytes), and `source()` is therefore
/// `None`: error-chain printers show the cause once.
///
/// ```
/// use amq::{Error, FilterSizing, StandardBloom};
/// assert!(matches!(
///     StandardBloom::new(1000, FilterSizing::Fpr(1.5)),
///     Err(Error::InvalidParameter { .. })
/// ));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A construction parameter is outside its valid range.
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The requested size does not fit in memory addressing (`usize`) or the
    /// filter's index type, or the allocator cannot provide it.
    TooLarge,
    /// The filter has no room for another key (cuckoo). Every key inserted
    /// before is still found.
    Full,
    /// The filter already holds this key as many times as one key can be
    /// held (a cuckoo filter: both of the key's buckets hold nothing but
    /// its fingerprint), so this copy is refused. Other keys can still be
    /// inserted, and every key inserted before is still found.
    TooManyCopies,
    /// The key is definitely not in the filter, so there is nothing to remove.
    NotPresent,
    /// Two filters cannot be combined because their parameters differ.
    Incompatible,
    /// A static filter could not be built within the bounded number of
    /// attempts (each with a fresh seed).
    BuildFailed {
        /// How many seeds were tried.
        attempts: u32,
    },
    /// Decoding bytes failed.
    Format(FormatError),
    /// A filter and hashes (or bytes) of two different hash schemes met.
    ///
    /// [`AnyFilter`](crate::AnyFilter) holds the kinds driven by amq's
    /// [`KeyHash`](crate::KeyHash), so building or decoding a
    /// [`ParquetBloom`](crate::ParquetBloom) (driven by Parquet's value hash)
    /// through it is this error: Parquet readers would otherwise miss every
    /// value, or the filter every key. Decoding a frame whose header names a
    /// scheme other than its kind's is this error too.
    WrongHashScheme {
        /// The scheme the filter (or the kind in the header) uses.
        expected: HashScheme,
        /// The scheme of the hashes or bytes offered.
        found: HashScheme,
    },
    /// The kind cannot do what was asked: insert into a static filter,
    /// remove from a filter that cannot forget, or read in place
    /// ([`FilterView`](crate::FilterView)) a kind without a view, or a
    /// Ribbon filter in format version 1 (whose shard records lack word
    /// offsets; decode it with
    /// [`AnyFilter::from_bytes`](crate::AnyFilter::from_bytes) instead). The
    /// filter is unchanged.
    Unsupported {
        /// The filter's kind.
        kind: FilterKind,
        /// What it cannot do: `"insert"`, `"remove"`, `"view"`, ...
        operation: &'static str,
    },
}

/// Why a byte string is not a valid serialized filter.
///
/// ```
/// use amq::{AnyFilter, Error, FormatError};
/// assert_eq!(
///     AnyFilter::from_bytes(b"AMQ").unwrap_err(),
///     Error::Format(FormatError::Truncated)
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FormatError {
    /// Fewer bytes than the header and the lengths it declares.
    Truncated,
    /// More bytes than the header declares.
    TrailingBytes,
    /// The first four bytes are not the magic `AMQF`.
    BadMagic,
    /// A format version this build cannot read, or one older than the
    /// filter kind the frame names (kinds 12 to 17 exist from version 2).
    UnsupportedVersion(u16),
    /// A filter kind byte this build does not know.
    UnknownKind(u8),
    /// The bytes hold a different kind of filter than the one asked for.
    WrongKind {
        /// The kind the caller decoded into.
        expected: FilterKind,
        /// The kind in the header.
        found: FilterKind,
    },
    /// A hash scheme id this build does not know.
    UnknownHashScheme(u8),
    /// The checksum does not match the contents.
    ChecksumMismatch,
    /// The parameters are invalid, or do not agree with the payload length.
    InvalidParameters(&'static str),
    /// A Parquet Bloom filter header (Thrift compact `BloomFilterHeader`) is
    /// malformed: a bad type code or varint, a missing required field,
    /// nesting too deep, or a bitset length that is not a positive multiple
    /// of 32 bytes.
    InvalidParquetHeader(&'static str),
    /// A well-formed Parquet Bloom filter header names an algorithm, hash or
    /// compression other than the split-block / XXH64 / uncompressed one
    /// this build reads (the field is named). Parquet readers skip such a
    /// filter, which is what a caller should do too.
    UnsupportedParquetFilter(&'static str),
    /// The zero padding a version-2 frame puts before its payload (so the
    /// payload starts on a 64-byte boundary) holds a non-zero byte.
    NonZeroPadding,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidParameter { name, reason } => {
                write!(f, "invalid parameter `{name}`: {reason}")
            }
            Error::TooLarge => f.write_str("requested filter size is too large"),
            Error::Full => f.write_str("filter is full; no key was lost"),
            Error::TooManyCopies => {
                f.write_str("the filter holds as many copies of this key as it can; no key was lost")
            }
            Error::NotPresent => f.write_str("key is definitely not in the filter"),
            Error::Incompatible => f.write_str("filters have different parameters"),
            Error::BuildFailed { attempts } => {
                write!(f, "static filter construction failed after {attempts} seeds")
            }
            Error::Format(e) => write!(f, "invalid serialized filter: {e}"),
            Error::WrongHashScheme { expected, found } => {
                write!(f, "the filter takes {expected:?} hashes, not {found:?} hashes")
            }
            Error::Unsupported { kind, operation } => {
                write!(f, "a {kind:?} filter does not support {operation}")
            }
        }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::Truncated => f.write_str("truncated input"),
            FormatError::TrailingBytes => f.write_str("trailing bytes after the filter"),
            FormatError::BadMagic => f.write_str("bad magic (not an amq filter)"),
            FormatError::UnsupportedVersion(v) => write!(f, "unsupported format version {v}"),
            FormatError::UnknownKind(k) => write!(f, "unknown filter kind {k}"),
            FormatError::WrongKind { expected, found } => {
                write!(f, "expected a {expected:?} filter, found {found:?}")
            }
            FormatError::UnknownHashScheme(s) => write!(f, "unknown hash scheme {s}"),
            FormatError::ChecksumMismatch => f.write_str("checksum mismatch"),
            FormatError::InvalidParameters(why) => write!(f, "invalid parameters: {why}"),
            FormatError::NonZeroPadding => f.write_str("non-zero padding before the payload"),
            FormatError::InvalidParquetHeader(why) => write!(f, "invalid Parquet Bloom filter header: {why}"),
            FormatError::UnsupportedParquetFilter(field) => {
                write!(f, "Parquet Bloom filter with an unsupported {field}")
            }
        }
    }
}

impl From<FormatError> for Error {
    fn from(e: FormatError) -> Self {
        Error::Format(e)
    }
}

/// `source()` is `None` for every variant: [`Error::Format`] already prints
/// its [`FormatError`] in `Display`.
impl core::error::Error for Error {}

impl core::error::Error for FormatError {}

/// Shorthand for an [`Error::InvalidParameter`].
pub(crate) const fn invalid(name: &'static str, reason: &'static str) -> Error {
    Error::InvalidParameter { name, reason }
}

/// Shorthand for an [`Error::Unsupported`].
pub(crate) const fn unsupported(kind: FilterKind, operation: &'static str) -> Error {
    Error::Unsupported { kind, operation }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn the_format_cause_is_printed_once() {
        let e = Error::Format(FormatError::ChecksumMismatch);
        assert_eq!(e.to_string(), "invalid serialized filter: checksum mismatch");
        assert!(core::error::Error::source(&e).is_none());
        // `Eq`: errors can be keys and compared exactly.
        assert_eq!(e.clone(), e);
    }
}
