//! Operation sequences with reopens and power cuts against a `BTreeMap`: see
//! `amq_fuzz::lsm::db_ops`.
#![no_main]
libfuzzer_sys::fuzz_target!(|input: amq_fuzz::lsm::DbInput| amq_fuzz::lsm::db_ops(input));
