//! Parquet comparison: amq's ParquetBloom beside sbbf-rs and the parquet
//! crate's Sbbf, each fed INT64 values and hashing them with XXH64 inside
//! every operation (`amq_bench::adapters::parquet`).
//!
//! `cargo bench -p amq-bench --bench parquet` runs n = 1M;
//! `AMQ_BENCH_LARGE=1 cargo bench -p amq-bench --bench parquet` adds n = 10M.

use amq_bench::groups::{self, Op};
use amq_bench::keys::{bench_sizes, KeySet, POOL};
use criterion::{criterion_group, criterion_main, Criterion};

fn parquet(c: &mut Criterion) {
    for n in bench_sizes() {
        let keys = KeySet::new(n, POOL);
        for op in Op::ALL {
            groups::run(c, "parquet", op, &keys, |v| amq_bench::parquet_filters(v));
        }
    }
}

criterion_group! {
    name = benches;
    config = groups::config();
    targets = parquet
}
criterion_main!(benches);
