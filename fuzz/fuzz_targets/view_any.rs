//! `FilterView::new` / `trusted` on arbitrary (and re-sealed) bytes: see `amq_fuzz::view`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| amq_fuzz::view::view(data));
