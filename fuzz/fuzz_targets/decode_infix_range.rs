//! `InfixRange::from_bytes` on arbitrary (and re-sealed) bytes, and queries of any filter it decodes: see `amq_fuzz::infix`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| amq_fuzz::infix::decode_infix_range(data));
