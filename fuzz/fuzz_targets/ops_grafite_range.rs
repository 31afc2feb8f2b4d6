//! Builds from arbitrary keys and sizings, range queries against a model, round trips: see `amq_fuzz::range`.
#![no_main]
libfuzzer_sys::fuzz_target!(|input: amq_fuzz::range::RangeInput| amq_fuzz::range::grafite_ops(input));
