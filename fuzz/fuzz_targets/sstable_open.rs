//! A store whose table, manifest, WAL or CURRENT was damaged, opened and
//! read: see `amq_fuzz::lsm::damaged_files`.
#![no_main]
libfuzzer_sys::fuzz_target!(|input: amq_fuzz::lsm::FileInput| amq_fuzz::lsm::damaged_files(input));
