//! `serde` support (feature `serde`): every filter serializes as the bytes of
//! [`Filter::to_bytes`](crate::Filter::to_bytes), so serde users get the same
//! versioned, checksummed, validated format as everyone else.

use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserializer, Serializer};

use crate::{Filter, FromBytes};

pub(crate) fn serialize<F: Filter, S: Serializer>(f: &F, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bytes(&f.to_bytes())
}

pub(crate) fn deserialize<'de, F: FromBytes, D: Deserializer<'de>>(d: D) -> Result<F, D::Error> {
    d.deserialize_bytes(BytesVisitor(PhantomData))
}

struct BytesVisitor<F>(PhantomData<F>);

impl<'de, F: FromBytes> Visitor<'de> for BytesVisitor<F> {
    type Value = F;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the bytes of a serialized amq filter")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<F, E> {
        F::from_bytes(v).map_err(E::custom)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<F, A::Error> {
        // Formats without a bytes type (JSON) send a sequence of u8. Grow the
        // buffer as elements arrive, so a lying size hint allocates nothing.
        let mut bytes = Vec::new();
        while let Some(b) = seq.next_element::<u8>()? {
            bytes.push(b);
        }
        F::from_bytes(&bytes).map_err(de::Error::custom)
    }
}

/// Implements `Serialize`/`Deserialize` through the byte format.
macro_rules! via_bytes {
    ($($t:ty),* $(,)?) => {$(
        impl serde::Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                serialize(self, s)
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                deserialize(d)
            }
        }
    )*};
}

via_bytes!(
    crate::StandardBloom,
    crate::BlockedBloom,
    crate::AtomicBlockedBloom,
    crate::CountingBloom,
    crate::CuckooFilter,
    crate::Ribbon,
    crate::Xor8,
    crate::Xor16,
    crate::BinaryFuse8,
    crate::BinaryFuse16,
    crate::BinaryFuse32,
    crate::ParquetBloom,
    crate::AnyFilter,
);
