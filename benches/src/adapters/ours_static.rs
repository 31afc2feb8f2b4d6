//! amq's static filters (xor, binary fuse, ribbon) as
//! [`Subject`](crate::Subject)s.

use amq::{BinaryFuse16, BinaryFuse32, BinaryFuse8, StaticFilter, Xor16, Xor8};

/// Result bits of the Ribbon comparison (FPR 2^-7 ≈ 0.78%).
pub const RIBBON_RESULT_BITS: u32 = 7;

amq_subject!(Xor8, "amq-Xor8", |keys| Xor8::build(keys));
amq_subject!(Xor16, "amq-Xor16", |keys| Xor16::build(keys));
amq_subject!(BinaryFuse8, "amq-BinaryFuse8", |keys| BinaryFuse8::build(keys));
amq_subject!(BinaryFuse16, "amq-BinaryFuse16", |keys| BinaryFuse16::build(keys));
amq_subject!(BinaryFuse32, "amq-BinaryFuse32", |keys| BinaryFuse32::build(keys));

/// amq's standard Ribbon filter with r = 7 result bits.
pub struct Ribbon7(amq::Ribbon);

amq_subject!(newtype Ribbon7, "amq-Ribbon7", |keys| {
    amq::RibbonParams::with_result_bits(RIBBON_RESULT_BITS)
        .and_then(|params| <amq::Ribbon as StaticFilter>::build(keys, &params))
        .map(Ribbon7)
});
