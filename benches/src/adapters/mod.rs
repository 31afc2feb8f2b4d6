//! [`Subject`](crate::Subject) implementations: ours in [`ours`] (Bloom),
//! [`ours_static`] and [`ours_cuckoo`], the other crates' in
//! [`competitors`], a safe owner for `sbbf-rs` in [`sbbf`], and the Parquet
//! split-block comparison (ours, `sbbf-rs`, `parquet`'s `Sbbf`, all hashing
//! values) in [`parquet`].

/// Implements [`Subject`](crate::Subject) for one of amq's filters, given its
/// name and how to build it from a slice of key hashes (`&[amq::KeyHash]`,
/// an expression returning `Result<Self, amq::Error>`). Queries go through
/// `contains_hash`, the batch query through `Filter::contains_hashes`. The
/// benchmark keys are random `u64`s standing in for key hashes, so they are
/// taken as well mixed ([`hashes`]): no hashing is timed, as for the other
/// crates' pre-hashed APIs.
///
/// `amq_subject!(Type, ...)` is for amq's type itself; `amq_subject!(newtype
/// Wrapper, ...)` for a one-field wrapper that fixes the type's parameters.
macro_rules! amq_subject {
    ($ty:ty, $name:literal, |$keys:ident| $build:expr) => {
        amq_subject!(@impl $ty, $name, |$keys| $build, |f| f);
    };
    (newtype $ty:ty, $name:literal, |$keys:ident| $build:expr) => {
        amq_subject!(@impl $ty, $name, |$keys| $build, |f| &f.0);
    };
    (@impl $ty:ty, $name:literal, |$keys:ident| $build:expr, |$f:ident| $inner:expr) => {
        impl $crate::Subject for $ty {
            const NAME: &'static str = $name;
            const HAS_BATCH: bool = true;

            fn build(keys: &[u64]) -> Result<Self, String> {
                let $keys = $crate::adapters::hashes(keys);
                $build.map_err(|e| format!("{}: {e:?}", $name))
            }

            #[inline]
            fn contains(&self, key: u64) -> bool {
                let $f = self;
                amq::Filter::contains_hash($inner, amq::KeyHash::from_well_mixed(key))
            }

            #[inline]
            fn contains_many(&self, keys: &[u64], out: &mut [bool]) {
                let $f = self;
                amq::Filter::contains_hashes($inner, $crate::adapters::hashes(keys), out)
            }

            fn size_in_bytes(&self) -> usize {
                let $f = self;
                amq::Filter::size_in_bytes($inner)
            }

            fn expected_fpr(&self) -> Option<f64> {
                let $f = self;
                Some(amq::Filter::expected_fpr($inner))
            }
        }
    };
}

/// The benchmark's random keys as amq key hashes (they are uniformly random
/// `u64`s, so well mixed), without a copy.
#[inline(always)]
pub fn hashes(keys: &[u64]) -> &[amq::KeyHash] {
    bytemuck::cast_slice(keys)
}

pub mod competitors;
pub mod ours;
pub mod ours_cuckoo;
pub mod ours_static;
pub mod parquet;
pub mod sbbf;
