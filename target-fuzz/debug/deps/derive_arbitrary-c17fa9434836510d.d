/work/wt-prefix/target-fuzz/debug/deps/derive_arbitrary-c17fa9434836510d.d: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/derive_arbitrary-1.5.0/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/derive_arbitrary-1.5.0/src/container_attributes.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/derive_arbitrary-1.5.0/src/field_attributes.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/derive_arbitrary-1.5.0/src/variant_attributes.rs

/work/wt-prefix/target-fuzz/debug/deps/libderive_arbitrary-c17fa9434836510d.so: /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/derive_arbitrary-1.5.0/src/lib.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/derive_arbitrary-1.5.0/src/container_attributes.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/derive_arbitrary-1.5.0/src/field_attributes.rs /root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/derive_arbitrary-1.5.0/src/variant_attributes.rs

/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/derive_arbitrary-1.5.0/src/lib.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/derive_arbitrary-1.5.0/src/container_attributes.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/derive_arbitrary-1.5.0/src/field_attributes.rs:
/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/derive_arbitrary-1.5.0/src/variant_attributes.rs:
