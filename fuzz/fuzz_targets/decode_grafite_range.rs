//! `GrafiteRange::from_bytes` and its views on arbitrary (and re-sealed) bytes: see `amq_fuzz::range`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| amq_fuzz::range::decode_grafite(data));
