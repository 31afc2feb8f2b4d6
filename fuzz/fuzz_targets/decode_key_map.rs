//! `KeyMap::from_bytes` on arbitrary (and re-sealed) bytes, and queries of any map it decodes: see `amq_fuzz::keymap`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| amq_fuzz::keymap::decode_key_map(data));
