//! Builds from arbitrary key sets, queries and round trips: see `amq_fuzz::ops`.
#![no_main]
libfuzzer_sys::fuzz_target!(|input: amq_fuzz::ops::StaticInput| amq_fuzz::ops::packed_binary_fuse(input));
