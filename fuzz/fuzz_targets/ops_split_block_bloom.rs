//! Operation sequences on one filter against a model: see `amq_fuzz::ops`.
#![no_main]
libfuzzer_sys::fuzz_target!(|input: amq_fuzz::ops::DynInput| amq_fuzz::ops::split_block_bloom(input));
