/work/wt-prefix/target-fuzz/debug/deps/libfuzzer_sys-c2f2843e4b4a999a.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/libfuzzer-sys-0.4.13/src/lib.rs

/work/wt-prefix/target-fuzz/debug/deps/liblibfuzzer_sys-c2f2843e4b4a999a.rmeta: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/libfuzzer-sys-0.4.13/src/lib.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/libfuzzer-sys-0.4.13/src/lib.rs:
