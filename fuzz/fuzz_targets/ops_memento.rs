//! Inserts, removals, range queries and round trips against a multiset model: see `amq_fuzz::memento`.
#![no_main]
libfuzzer_sys::fuzz_target!(|input: amq_fuzz::memento::MementoInput| amq_fuzz::memento::memento_ops(input));
