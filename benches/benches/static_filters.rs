//! Static-filter comparison: amq Xor8/16, BinaryFuse8/16/32 and Ribbon (r = 7)
//! beside xorf 0.13's Xor8, Xor16, BinaryFuse8, BinaryFuse16, BinaryFuse32.
//! Build is reported per key (throughput = n elements).
//!
//! `cargo bench -p amq-bench --bench static_filters` runs n = 1M;
//! `AMQ_BENCH_LARGE=1 cargo bench -p amq-bench --bench static_filters` adds n = 10M.

use amq_bench::groups::{self, Op};
use amq_bench::keys::{bench_sizes, KeySet, POOL};
use criterion::{criterion_group, criterion_main, Criterion};

fn static_filters(c: &mut Criterion) {
    for n in bench_sizes() {
        let keys = KeySet::new(n, POOL);
        for op in Op::ALL {
            groups::run(c, "static", op, &keys, |v| amq_bench::static_filters(v));
        }
    }
}

criterion_group! {
    name = benches;
    config = groups::config();
    targets = static_filters
}
criterion_main!(benches);
