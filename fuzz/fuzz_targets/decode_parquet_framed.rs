//! Parquet's framing (Thrift `BloomFilterHeader` + bitset) on arbitrary bytes: see `amq_fuzz::parquet`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| amq_fuzz::parquet::decode_framed(data));
