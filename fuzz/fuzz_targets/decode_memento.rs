//! `MementoFilter::from_bytes` on arbitrary (and re-sealed) bytes: see `amq_fuzz::memento`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| amq_fuzz::memento::decode_memento(data));
