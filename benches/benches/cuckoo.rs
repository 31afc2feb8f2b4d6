//! Deletable-filter comparison: amq CuckooFilter with 8-, 12- and 16-bit
//! fingerprints (sized for n keys at its 95% design load) beside
//! cuckoofilter 0.5 and qfilter 0.3 (a quotient filter, 1% target), all
//! sized for n keys: insert (ns/key, into an empty filter), hit, miss and
//! remove (batches of present keys, re-inserted untimed).
//!
//! `cargo bench -p amq-bench --bench cuckoo` runs n = 1M;
//! `AMQ_BENCH_LARGE=1 cargo bench -p amq-bench --bench cuckoo` adds n = 10M.

use amq_bench::groups::{self, DeletableOp, Op};
use amq_bench::keys::{bench_sizes, KeySet, POOL};
use amq_bench::{cuckoo_filters, AsSubjects};
use criterion::{criterion_group, criterion_main, Criterion};

fn cuckoo(c: &mut Criterion) {
    for n in bench_sizes() {
        let keys = KeySet::new(n, POOL);
        groups::run_deletable(c, "cuckoo", DeletableOp::Insert, &keys, |v| cuckoo_filters(v));
        for op in [Op::Hit, Op::Miss] {
            groups::run(c, "cuckoo", op, &keys, |v| cuckoo_filters(&mut AsSubjects(v)));
        }
        groups::run_deletable(c, "cuckoo", DeletableOp::Remove, &keys, |v| cuckoo_filters(v));
    }
}

criterion_group! {
    name = benches;
    config = groups::config();
    targets = cuckoo
}
criterion_main!(benches);
