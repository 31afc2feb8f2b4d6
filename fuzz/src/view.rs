//! The borrowed-view target: arbitrary (optionally shaped and re-sealed)
//! bytes into `FilterView::new` and `FilterView::trusted`.
//!
//! Checks: never a panic, no allocation at all; a trusted view of any bytes
//! answers every query without panicking; and where the bytes also decode
//! to an owned filter, the checked view exists (unless the kind has none)
//! and answers exactly as the owned filter.

use amq::{AnyFilter, Error, Filter, FilterView, KeyHash, PreparedHash};

use crate::alloc::peak_during;
use crate::decode::effective_bytes;

fn probes() -> Vec<KeyHash> {
    (0..64u64).map(amq::hash_u64).collect()
}

/// Every query of a view, batch and single alike.
fn query(v: &FilterView<'_>, probes: &[KeyHash]) -> Vec<bool> {
    let mut out = vec![false; probes.len()];
    v.contains_hashes(probes, &mut out);
    for (&h, &o) in probes.iter().zip(&out) {
        v.prefetch_hash(h);
        assert_eq!(
            v.contains_hash(h),
            o,
            "contains_hashes disagrees with contains_hash"
        );
        assert_eq!(v.contains_prepared(&mut PreparedHash::new(h)), o);
    }
    assert!((0.0..=1.0).contains(&v.expected_fpr()));
    out
}

/// The whole view target.
pub fn view(data: &[u8]) {
    let Some(bytes) = effective_bytes(data, None) else {
        return;
    };
    let probes = probes();
    let ((checked, trusted), peak) = peak_during(|| (FilterView::new(&bytes), FilterView::trusted(&bytes)));
    assert_eq!(peak, 0, "making a view allocated");
    if let Ok(v) = &trusted {
        query(v, &probes);
    }
    match AnyFilter::from_bytes(&bytes) {
        Ok(owned) => match checked {
            Ok(v) => {
                let answers = query(&v, &probes);
                for (&h, &a) in probes.iter().zip(&answers) {
                    assert_eq!(owned.contains_hash(h), a, "view and owned filter disagree");
                }
                assert_eq!(v.kind(), owned.kind());
                assert_eq!(v.num_keys(), owned.num_keys());
                assert_eq!(v.to_bytes(), owned.to_bytes());
            }
            Err(Error::Unsupported { kind, .. }) => assert_eq!(kind, owned.kind()),
            Err(e) => panic!("decodes, but the checked view says {e:?}"),
        },
        Err(_) => assert!(checked.is_err(), "a view of bytes that do not decode"),
    }
}
