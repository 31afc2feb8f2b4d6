//! Bloom comparison: amq StandardBloom and BlockedBloom at 10 bits/key beside
//! fastbloom (10 bits/key), sbbf-rs (10 bits/key) and bloomfilter (1% FPR).
//!
//! `cargo bench -p amq-bench --bench bloom` runs n = 1M;
//! `AMQ_BENCH_LARGE=1 cargo bench -p amq-bench --bench bloom` adds n = 10M.

use amq_bench::groups::{self, Op};
use amq_bench::keys::{bench_sizes, KeySet, POOL};
use criterion::{criterion_group, criterion_main, Criterion};

fn bloom(c: &mut Criterion) {
    for n in bench_sizes() {
        let keys = KeySet::new(n, POOL);
        for op in Op::ALL {
            groups::run(c, "bloom", op, &keys, |v| amq_bench::bloom_filters(v));
        }
    }
}

criterion_group! {
    name = benches;
    config = groups::config();
    targets = bloom
}
criterion_main!(benches);
