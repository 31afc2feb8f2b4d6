//! amq's static filters (xor, binary fuse, ribbon) as
//! [`Subject`](crate::Subject)s.

use amq::{BinaryFuse16, BinaryFuse32, BinaryFuse8, Xor16, Xor8};

/// Result bits of the Ribbon comparison (FPR 2^-7 ≈ 0.78%).
pub const RIBBON_RESULT_BITS: u32 = 7;

amq_subject!(Xor8, "amq-Xor8", |keys| Xor8::build(keys));
amq_subject!(Xor16, "amq-Xor16", |keys| Xor16::build(keys));
amq_subject!(BinaryFuse8, "amq-BinaryFuse8", |keys| BinaryFuse8::build(keys));
amq_subject!(BinaryFuse16, "amq-BinaryFuse16", |keys| BinaryFuse16::build(keys));
amq_subject!(BinaryFuse32, "amq-BinaryFuse32", |keys| BinaryFuse32::build(keys));

/// amq's binary fuse filter with 10-bit packed fingerprints (FPR 2^-10,
/// the width `FilterSizing::Fpr(0.001)` takes).
pub struct PackedFuse10(amq::PackedBinaryFuse);

amq_subject!(newtype PackedFuse10, "amq-PackedBinaryFuse10", |keys| {
    amq::PackedBinaryFuse::build_with(keys, &amq::xor::PackedFuseParams::with_bits(10)).map(PackedFuse10)
});

/// amq's standard Ribbon filter with r = 7 result bits.
pub struct Ribbon7(amq::Ribbon);

amq_subject!(newtype Ribbon7, "amq-Ribbon7", |keys| {
    amq::RibbonParams::with_result_bits(RIBBON_RESULT_BITS)
        .and_then(|params| amq::Ribbon::build_with(keys, &params))
        .map(Ribbon7)
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeySet;
    use crate::Subject;

    fn bits_per_key<S: Subject>(keys: &KeySet) -> f64 {
        let f = S::build(&keys.present).unwrap();
        assert!(
            keys.present.iter().all(|&k| f.contains(k)),
            "{} false negative",
            S::NAME
        );
        f.size_in_bytes() as f64 * 8.0 / keys.present.len() as f64
    }

    /// The adapters wire the right type and size: loose bounds here, the
    /// space targets themselves are the filter crate's tests.
    #[test]
    fn every_static_filter_builds_without_false_negatives_near_its_space() {
        let keys = KeySet::new(100_000, 0);
        for (bits, limit) in [
            (bits_per_key::<Xor8>(&keys), 10.5),
            (bits_per_key::<Xor16>(&keys), 21.0),
            (bits_per_key::<BinaryFuse8>(&keys), 10.0),
            (bits_per_key::<BinaryFuse16>(&keys), 20.0),
            (bits_per_key::<BinaryFuse32>(&keys), 40.0),
            (bits_per_key::<Ribbon7>(&keys), 8.0),
            (bits_per_key::<PackedFuse10>(&keys), 12.5),
        ] {
            assert!(bits < limit, "{bits} bits/key, limit {limit}");
        }
    }
}
