//! `serde` support (feature `serde`): every filter serializes as the bytes of
//! its `to_bytes` ([`Filter::to_bytes`](crate::Filter::to_bytes)), so serde
//! users get the same versioned, checksummed, validated format as everyone
//! else.

use alloc::vec::Vec;
use core::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::Deserializer;

#[allow(unused_imports)] // the trait methods `via_bytes!` calls
use crate::{range::RangeFilter, Error, Filter, FromBytes};

/// Reads the bytes of a serialized filter and decodes them with `decode`.
struct BytesVisitor<F>(fn(&[u8]) -> Result<F, Error>);

impl<'de, F> Visitor<'de> for BytesVisitor<F> {
    type Value = F;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the bytes of a serialized amq filter")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<F, E> {
        (self.0)(v).map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<F, A::Error> {
        // Formats without a bytes type (JSON) send a sequence of u8. Grow the
        // buffer as elements arrive, so a lying size hint allocates nothing.
        let mut bytes = Vec::new();
        while let Some(b) = seq.next_element::<u8>()? {
            bytes.push(b);
        }
        (self.0)(&bytes).map_err(de::Error::custom)
    }
}

fn deserialize<'de, F, D: Deserializer<'de>>(
    d: D,
    decode: fn(&[u8]) -> Result<F, Error>,
) -> Result<F, D::Error> {
    d.deserialize_bytes(BytesVisitor(decode))
}

/// Implements `Serialize`/`Deserialize` through the byte format.
macro_rules! via_bytes {
    ($($t:ty),* $(,)?) => {$(
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.to_bytes())
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                deserialize(d, <$t>::from_bytes)
            }
        }
    )*};
}

via_bytes!(
    crate::StandardBloom,
    crate::BlockedBloom,
    crate::AtomicBlockedBloom,
    crate::SplitBlockBloom,
    crate::CountingBloom,
    crate::CuckooFilter,
    crate::Ribbon,
    crate::Xor8,
    crate::Xor16,
    crate::BinaryFuse8,
    crate::BinaryFuse16,
    crate::BinaryFuse32,
    crate::PackedBinaryFuse,
    crate::ParquetBloom,
    crate::AnyFilter,
    crate::range::GrafiteRange,
    crate::range::MementoFilter,
    crate::quotient::QuotientFilter,
    crate::quotient::ExpandingQuotientFilter,
);
