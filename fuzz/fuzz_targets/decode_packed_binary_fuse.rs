//! `PackedBinaryFuse::from_bytes` on arbitrary (and re-sealed) bytes: see `amq_fuzz::decode`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| amq_fuzz::decode::decode::<amq::PackedBinaryFuse>(
    data,
    Some(amq::FilterKind::PackedBinaryFuse)
));
