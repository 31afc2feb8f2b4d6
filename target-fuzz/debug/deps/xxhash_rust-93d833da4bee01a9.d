/work/wt-prefix/target-fuzz/debug/deps/xxhash_rust-93d833da4bee01a9.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/utils.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/xxh32_common.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/xxh64_common.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/xxh64.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/xxh3_common.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/xxh3.rs

/work/wt-prefix/target-fuzz/debug/deps/libxxhash_rust-93d833da4bee01a9.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/utils.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/xxh32_common.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/xxh64_common.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/xxh64.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/xxh3_common.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/xxh3.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/lib.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/utils.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/xxh32_common.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/xxh64_common.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/xxh64.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/xxh3_common.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/xxhash-rust-0.8.19/src/xxh3.rs:
