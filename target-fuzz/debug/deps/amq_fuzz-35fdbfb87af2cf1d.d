/work/wt-prefix/target-fuzz/debug/deps/amq_fuzz-35fdbfb87af2cf1d.d: src/lib.rs src/alloc.rs src/decode.rs src/lsm.rs src/ops.rs src/parquet.rs src/view.rs

/work/wt-prefix/target-fuzz/debug/deps/libamq_fuzz-35fdbfb87af2cf1d.rmeta: src/lib.rs src/alloc.rs src/decode.rs src/lsm.rs src/ops.rs src/parquet.rs src/view.rs

src/lib.rs:
src/alloc.rs:
src/decode.rs:
src/lsm.rs:
src/ops.rs:
src/parquet.rs:
src/view.rs:
