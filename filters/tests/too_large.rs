//! A filter too large for the memory the process may use is
//! `Error::TooLarge`, never an aborted process: this test re-runs itself in a
//! child process limited to 2 GB of address space (`ulimit -v`), where every
//! request below needs more.

#![cfg(target_os = "linux")]

use std::process::Command;

use amq::{BinaryFuse8, CountingBloom, CuckooFilter, Error, FilterSizing, KeyHash, StandardBloom, Xor8};

/// Set in the child: run the allocations instead of spawning.
const CHILD: &str = "AMQ_TOO_LARGE_CHILD";
/// The child's address-space limit in KiB (2 GB).
const LIMIT_KIB: u64 = 2_000_000;

/// The requests, each over the limit; run only in the limited child.
fn oversized_requests() {
    // 2^31 keys at 95% load: 565M buckets, 4.5 GB at 16 bits and 2.3 GB at
    // 8 (the process used to abort: "memory allocation of 4521018216 bytes
    // failed").
    for bits in [16, 12, 8] {
        assert_eq!(
            CuckooFilter::with_fingerprint_bits(1 << 31, bits),
            Err(Error::TooLarge),
            "{bits}-bit cuckoo"
        );
    }
    assert_eq!(
        StandardBloom::new(1 << 31, FilterSizing::BitsPerKey(10.0)),
        Err(Error::TooLarge)
    );
    assert_eq!(
        CountingBloom::new(1 << 31, FilterSizing::BitsPerKey(40.0)),
        Err(Error::TooLarge)
    );
    // 100M keys: 800 MB of input, fitting under the limit, but the working
    // arrays of the static builds do not (an 800 MB ordered copy, then about
    // 1 GB of slot state or more).
    let keys: Vec<KeyHash> = (0..100_000_000u64)
        .map(|i| KeyHash::from_well_mixed(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
        .collect();
    assert_eq!(Xor8::build(&keys).map(|_| ()), Err(Error::TooLarge));
    assert_eq!(BinaryFuse8::build(&keys).map(|_| ()), Err(Error::TooLarge));
    // Still usable afterwards: a filter that fits builds.
    assert!(Xor8::build(&keys[..1000]).is_ok());
}

#[test]
fn allocation_failure_is_too_large_not_an_abort() {
    if std::env::var_os(CHILD).is_some() {
        oversized_requests();
        return;
    }
    let exe = std::env::current_exe().expect("test binary path");
    // Lower the limit only: a shell may not raise one that is already lower.
    let script = format!(
        "cur=$(ulimit -v); \
         if [ \"$cur\" = unlimited ] || [ \"$cur\" -gt {LIMIT_KIB} ]; then ulimit -v {LIMIT_KIB} || exit 90; fi; \
         exec \"$0\" --exact allocation_failure_is_too_large_not_an_abort --test-threads=1 --nocapture"
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(&exe)
        .env(CHILD, "1")
        .output()
        .expect("run sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child under a {LIMIT_KIB} KiB limit failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}
