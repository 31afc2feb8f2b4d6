//! amq's filters as [`Subject`]s: every query goes through `contains_hash`
//! and the batch query through [`Filter::contains_many`].

use amq::{BlockedBloom, Filter, StandardBloom};

use crate::Subject;

/// Bits per key of the Bloom comparison.
pub const BLOOM_BITS_PER_KEY: f64 = 10.0;

/// Implements [`Subject`] for an amq filter type, given its name and how to
/// build it from a key slice (an expression returning `Result<Self, amq::Error>`).
macro_rules! amq_subject {
    ($ty:ty, $name:literal, |$keys:ident| $build:expr) => {
        impl Subject for $ty {
            const NAME: &'static str = $name;
            const HAS_BATCH: bool = true;

            fn build($keys: &[u64]) -> Result<Self, String> {
                $build.map_err(|e| format!("{}: {e:?}", $name))
            }

            #[inline]
            fn contains(&self, key: u64) -> bool {
                Filter::contains_hash(self, key)
            }

            #[inline]
            fn contains_many(&self, keys: &[u64], out: &mut [bool]) {
                Filter::contains_many(self, keys, out)
            }

            fn size_in_bytes(&self) -> usize {
                Filter::size_in_bytes(self)
            }

            fn expected_fpr(&self) -> Option<f64> {
                Some(Filter::expected_fpr(self))
            }
        }
    };
}

amq_subject!(StandardBloom, "amq-StandardBloom", |keys| {
    StandardBloom::with_bits_per_key(keys.len(), BLOOM_BITS_PER_KEY).map(|mut f| {
        keys.iter().for_each(|&k| f.insert_hash(k));
        f
    })
});

amq_subject!(BlockedBloom, "amq-BlockedBloom", |keys| {
    BlockedBloom::with_bits_per_key(keys.len(), BLOOM_BITS_PER_KEY).map(|mut f| {
        keys.iter().for_each(|&k| f.insert_hash(k));
        f
    })
});
